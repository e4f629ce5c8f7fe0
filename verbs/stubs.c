// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The public calls of rdma-core 44 (IBVERBS_1.x, declared in
 * infiniband/verbs.h), each as a weak definition that fails cleanly
 * (verbs/stubs.h): the device, context, PD, MR, CQ and QP calls are
 * replaced by verbs/device.c, context.c, mr.c, cq.c, qp.c ...; what mroce
 * does not have (SRQ, AH, multicast, imports, ECE, dmabuf MRs) stays here
 * and fails with EOPNOTSUPP. The prototypes are verbs.h's: the compiler
 * checks each definition against its declaration.
 */
#include <infiniband/verbs.h>

#include "stubs.h"

/* Stubs ignore their arguments by design. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* verbs.h wraps these in macros (an inline that adds a check, or adds the
 * optional access flags); the library exports the plain functions. */
#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

/* --- devices and contexts --- */

MRV_STUB struct ibv_device **ibv_get_device_list(int *num_devices)
{
	if (num_devices)
		*num_devices = 0;
	return mrv_unsupported_ptr();
}

MRV_STUB void ibv_free_device_list(struct ibv_device **list)
{
}

MRV_STUB const char *ibv_get_device_name(struct ibv_device *device)
{
	return mrv_unsupported_ptr();
}

MRV_STUB int ibv_get_device_index(struct ibv_device *device)
{
	return mrv_unsupported_neg();	/* "-1 if ... doesn't support device indexes" */
}

MRV_STUB __be64 ibv_get_device_guid(struct ibv_device *device)
{
	errno = EOPNOTSUPP;
	return 0;
}

MRV_STUB struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	return mrv_unsupported_ptr();
}

MRV_STUB int ibv_close_device(struct ibv_context *context)
{
	return mrv_unsupported_neg();	/* "0 on success, -1 on failure" */
}

MRV_STUB struct ibv_context *ibv_import_device(int cmd_fd)
{
	return mrv_unsupported_ptr();	/* no kernel command fd to import */
}

MRV_STUB int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	return mrv_unsupported_neg();
}

MRV_STUB void ibv_ack_async_event(struct ibv_async_event *event)
{
}

MRV_STUB int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			    struct _compat_ibv_port_attr *port_attr)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
			   union ibv_gid *gid)
{
	return mrv_unsupported_neg();	/* "0 on success, and -1 on error" */
}

MRV_STUB int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
			       uint32_t gid_index, struct ibv_gid_entry *entry, uint32_t flags,
			       size_t entry_size)
{
	return mrv_unsupported_err();
}

MRV_STUB ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
				      size_t max_entries, uint32_t flags, size_t entry_size)
{
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;		/* "a negative errno value on error" */
}

MRV_STUB int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
			    __be16 *pkey)
{
	return mrv_unsupported_neg();
}

MRV_STUB int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	return mrv_unsupported_neg();
}

/* --- fork support --- */

MRV_STUB int ibv_fork_init(void)
{
	return mrv_unsupported_err();
}

MRV_STUB enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_DISABLED;
}

/* --- PDs and MRs --- */

MRV_STUB struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	return mrv_unsupported_ptr();
}

MRV_STUB int ibv_dealloc_pd(struct ibv_pd *pd)
{
	return mrv_unsupported_err();
}

MRV_STUB struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	return mrv_unsupported_ptr();
}

MRV_STUB void ibv_unimport_pd(struct ibv_pd *pd)
{
}

MRV_STUB struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return mrv_unsupported_ptr();
}

MRV_STUB struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					uint64_t iova, int access)
{
	return mrv_unsupported_ptr();
}

MRV_STUB struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					 uint64_t iova, unsigned int access)
{
	return mrv_unsupported_ptr();
}

MRV_STUB struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
					  uint64_t iova, int fd, int access)
{
	return mrv_unsupported_ptr();	/* AF_XDP UMEM is host memory: no dmabuf */
}

MRV_STUB int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			  size_t length, int access)
{
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;	/* "old MR is valid", nothing changed */
}

MRV_STUB int ibv_dereg_mr(struct ibv_mr *mr)
{
	return mrv_unsupported_err();
}

MRV_STUB struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	return mrv_unsupported_ptr();
}

MRV_STUB void ibv_unimport_mr(struct ibv_mr *mr)
{
}

MRV_STUB struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	return mrv_unsupported_ptr();	/* no device memory */
}

MRV_STUB void ibv_unimport_dm(struct ibv_dm *dm)
{
}

/* --- completion channels and CQs --- */

MRV_STUB struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	return mrv_unsupported_ptr();
}

MRV_STUB int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	return mrv_unsupported_err();
}

MRV_STUB struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
				      struct ibv_comp_channel *channel, int comp_vector)
{
	return mrv_unsupported_ptr();
}

MRV_STUB int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_destroy_cq(struct ibv_cq *cq)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
			      void **cq_context)
{
	return mrv_unsupported_neg();	/* "0 on success, and -1 on error" */
}

MRV_STUB void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
}

/* --- QPs --- */

MRV_STUB struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	return mrv_unsupported_ptr();
}

MRV_STUB struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return mrv_unsupported_ptr();
}

MRV_STUB int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			  struct ibv_qp_init_attr *init_attr)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	return 0;	/* "0 otherwise": no in-order guarantee is promised */
}

MRV_STUB int ibv_destroy_qp(struct ibv_qp *qp)
{
	return mrv_unsupported_err();
}

/* Enhanced connection establishment: no ECE options to negotiate. */
MRV_STUB int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	return mrv_unsupported_err();
}

/* --- what mroce does not have: SRQ, address handles (UD), multicast --- */

MRV_STUB struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	return mrv_unsupported_ptr();
}

MRV_STUB int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_destroy_srq(struct ibv_srq *srq)
{
	return mrv_unsupported_err();
}

MRV_STUB struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	return mrv_unsupported_ptr();
}

MRV_STUB int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
				 struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	return mrv_unsupported_neg();	/* "0 on success, and -1 on error" */
}

MRV_STUB struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
					      struct ibv_grh *grh, uint8_t port_num)
{
	return mrv_unsupported_ptr();
}

MRV_STUB int ibv_destroy_ah(struct ibv_ah *ah)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mrv_unsupported_err();
}

MRV_STUB int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
					 uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	return mrv_unsupported_err();	/* for providers' AHs: none here */
}

/* --- strings: "unknown" is what libibverbs gives a value it does not know,
 * so a caller's printf never sees NULL (the core's wc.c etc. name them) --- */

MRV_STUB const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	return "unknown";
}

MRV_STUB const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	return "unknown";
}

MRV_STUB const char *ibv_event_type_str(enum ibv_event_type event)
{
	return "unknown";
}

MRV_STUB const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	return "unknown";
}
