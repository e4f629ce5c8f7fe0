// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The non-default versions rdma-core 44 still exports: 33 calls as they
 * were at IBVERBS_1.0 (libibverbs before 1.1, 2006, with other struct
 * layouts: rdma-core translates them to the current objects) and the
 * provider entry ibv_register_driver@IBVERBS_1.1. A binary linked against
 * a libibverbs that old would bind to them; mroce does not carry the 1.0
 * layouts, so each fails cleanly: ENOSYS in errno, NULL / -1 / ENOSYS as
 * that call reports failures, void ones do nothing. The arguments are the
 * old objects, only ever passed through: void pointers here.
 *
 * Each is a function of its own named mrv_compat_*, exported under
 * name@VERSION by a .symver directive; the version script's local: *
 * hides the mrv_compat_* names themselves (verbs/exports.sh says why that
 * "local: *" is not in the IBVERBS_1.0 node).
 */
#include <errno.h>
#include <stddef.h>

#include "private.h"

/* Stubs ignore their arguments by design. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* .symver in top-level asm, not the symver attribute: clang (make
 * ubsan-clang) has no such attribute. The function is exported (default
 * visibility) for the versioned alias to be. */
#define MRV_COMPAT(ver, name, fn)					\
	__asm__(".symver " #fn ", " #name "@" #ver);			\
	__attribute__((visibility("default"), used))

static void *mrv_compat_ptr(void)
{
	errno = ENOSYS;
	return NULL;
}

static int mrv_compat_err(void)		/* "0 or the value of errno" */
{
	errno = ENOSYS;
	return ENOSYS;
}

static int mrv_compat_neg(void)		/* "0 or -1 with errno" */
{
	errno = ENOSYS;
	return -1;
}

/* the device list */
MRV_COMPAT(IBVERBS_1.0, ibv_get_device_list, mrv_compat_get_device_list)
void *mrv_compat_get_device_list(int *num_devices)
{
	if (num_devices)
		*num_devices = 0;
	return mrv_compat_ptr();
}

MRV_COMPAT(IBVERBS_1.0, ibv_free_device_list, mrv_compat_free_device_list)
void mrv_compat_free_device_list(void **list) {}

MRV_COMPAT(IBVERBS_1.0, ibv_get_device_name, mrv_compat_get_device_name)
const char *mrv_compat_get_device_name(void *device) { return mrv_compat_ptr(); }

MRV_COMPAT(IBVERBS_1.0, ibv_get_device_guid, mrv_compat_get_device_guid)
__be64 mrv_compat_get_device_guid(void *device)
{
	errno = ENOSYS;
	return 0;
}

/* contexts */
MRV_COMPAT(IBVERBS_1.0, ibv_open_device, mrv_compat_open_device)
void *mrv_compat_open_device(void *device) { return mrv_compat_ptr(); }

MRV_COMPAT(IBVERBS_1.0, ibv_close_device, mrv_compat_close_device)
int mrv_compat_close_device(void *context) { return mrv_compat_neg(); }

MRV_COMPAT(IBVERBS_1.0, ibv_get_async_event, mrv_compat_get_async_event)
int mrv_compat_get_async_event(void *context, void *event) { return mrv_compat_neg(); }

MRV_COMPAT(IBVERBS_1.0, ibv_ack_async_event, mrv_compat_ack_async_event)
void mrv_compat_ack_async_event(void *event) {}

MRV_COMPAT(IBVERBS_1.0, ibv_query_device, mrv_compat_query_device)
int mrv_compat_query_device(void *context, void *attr) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_query_port, mrv_compat_query_port)
int mrv_compat_query_port(void *context, uint8_t port_num, void *attr) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_query_gid, mrv_compat_query_gid)
int mrv_compat_query_gid(void *context, uint8_t port_num, int index, void *gid)
{
	return mrv_compat_neg();
}

MRV_COMPAT(IBVERBS_1.0, ibv_query_pkey, mrv_compat_query_pkey)
int mrv_compat_query_pkey(void *context, uint8_t port_num, int index, void *pkey)
{
	return mrv_compat_neg();
}

/* PDs, MRs, AHs */
MRV_COMPAT(IBVERBS_1.0, ibv_alloc_pd, mrv_compat_alloc_pd)
void *mrv_compat_alloc_pd(void *context) { return mrv_compat_ptr(); }

MRV_COMPAT(IBVERBS_1.0, ibv_dealloc_pd, mrv_compat_dealloc_pd)
int mrv_compat_dealloc_pd(void *pd) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_reg_mr, mrv_compat_reg_mr)
void *mrv_compat_reg_mr(void *pd, void *addr, size_t length, int access)
{
	return mrv_compat_ptr();
}

MRV_COMPAT(IBVERBS_1.0, ibv_dereg_mr, mrv_compat_dereg_mr)
int mrv_compat_dereg_mr(void *mr) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_create_ah, mrv_compat_create_ah)
void *mrv_compat_create_ah(void *pd, void *attr) { return mrv_compat_ptr(); }

MRV_COMPAT(IBVERBS_1.0, ibv_destroy_ah, mrv_compat_destroy_ah)
int mrv_compat_destroy_ah(void *ah) { return mrv_compat_err(); }

/* CQs */
MRV_COMPAT(IBVERBS_1.0, ibv_create_cq, mrv_compat_create_cq)
void *mrv_compat_create_cq(void *context, int cqe, void *cq_context, void *channel,
			   int comp_vector)
{
	return mrv_compat_ptr();
}

MRV_COMPAT(IBVERBS_1.0, ibv_resize_cq, mrv_compat_resize_cq)
int mrv_compat_resize_cq(void *cq, int cqe) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_destroy_cq, mrv_compat_destroy_cq)
int mrv_compat_destroy_cq(void *cq) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_get_cq_event, mrv_compat_get_cq_event)
int mrv_compat_get_cq_event(void *channel, void **cq, void **cq_context)
{
	return mrv_compat_neg();
}

MRV_COMPAT(IBVERBS_1.0, ibv_ack_cq_events, mrv_compat_ack_cq_events)
void mrv_compat_ack_cq_events(void *cq, unsigned int nevents) {}

/* SRQs */
MRV_COMPAT(IBVERBS_1.0, ibv_create_srq, mrv_compat_create_srq)
void *mrv_compat_create_srq(void *pd, void *attr) { return mrv_compat_ptr(); }

MRV_COMPAT(IBVERBS_1.0, ibv_modify_srq, mrv_compat_modify_srq)
int mrv_compat_modify_srq(void *srq, void *attr, int mask) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_query_srq, mrv_compat_query_srq)
int mrv_compat_query_srq(void *srq, void *attr) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_destroy_srq, mrv_compat_destroy_srq)
int mrv_compat_destroy_srq(void *srq) { return mrv_compat_err(); }

/* QPs and multicast */
MRV_COMPAT(IBVERBS_1.0, ibv_create_qp, mrv_compat_create_qp)
void *mrv_compat_create_qp(void *pd, void *attr) { return mrv_compat_ptr(); }

MRV_COMPAT(IBVERBS_1.0, ibv_modify_qp, mrv_compat_modify_qp)
int mrv_compat_modify_qp(void *qp, void *attr, int mask) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_query_qp, mrv_compat_query_qp)
int mrv_compat_query_qp(void *qp, void *attr, int mask, void *init_attr)
{
	return mrv_compat_err();
}

MRV_COMPAT(IBVERBS_1.0, ibv_destroy_qp, mrv_compat_destroy_qp)
int mrv_compat_destroy_qp(void *qp) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_attach_mcast, mrv_compat_attach_mcast)
int mrv_compat_attach_mcast(void *qp, void *gid, uint16_t lid) { return mrv_compat_err(); }

MRV_COMPAT(IBVERBS_1.0, ibv_detach_mcast, mrv_compat_detach_mcast)
int mrv_compat_detach_mcast(void *qp, void *gid, uint16_t lid) { return mrv_compat_err(); }

/* The provider entry before verbs_register_driver: accepted and dropped, as
 * verbs_register_driver_34 is (verbs/stubs_driver.c). */
MRV_COMPAT(IBVERBS_1.1, ibv_register_driver, mrv_compat_register_driver)
void mrv_compat_register_driver(const char *name, mrv_ibv_driver_init_func init_func) {}
