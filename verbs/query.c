// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ibv_query_device: limits that are libmroce's own (an application sizing
 * its queues from them must not be refused later), a RoCE-like device
 * otherwise: one port, no atomics, no SRQ, no memory windows, no UD.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <mroce/dp_maps.h>

#include "mrv.h"

static void device_fill(struct mrv_context *ctx, struct ibv_device_attr *a)
{
	__be64 guid = ibv_get_device_guid(&ctx->dev->ibdev);

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "mroce %s", MROCE_VERSION_STRING);
	a->node_guid = guid;
	a->sys_image_guid = guid;
	a->max_mr_size = ~0ull;			/* any length the process can map */
	a->page_size_cap = ~0xfffull;		/* 4 KiB pages and larger */
	a->vendor_id = 0;			/* no IEEE OUI: no hardware vendor */
	a->vendor_part_id = 0;
	a->hw_ver = 0;
	a->max_qp = MRV_MAX_QP;
	a->max_qp_wr = MRV_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN;
	a->max_sge = MROCE_MAX_SGE;
	a->max_sge_rd = MROCE_MAX_SGE;
	a->max_cq = 65536;
	a->max_cqe = MRV_MAX_CQE;
	a->max_mr = MROCE_DMR_MAX;		/* the region table's size */
	a->max_pd = 65536;
	a->max_qp_rd_atom = MRV_MAX_RD_ATOM;	/* READs served at once, as responder */
	a->max_qp_init_rd_atom = MRV_MAX_RD_ATOM;	/* ... and outstanding as requester */
	a->max_res_rd_atom = MRV_MAX_QP * MRV_MAX_RD_ATOM;
	a->atomic_cap = IBV_ATOMIC_NONE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

MRV_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	if (!context || !device_attr)
		return EINVAL;
	device_fill(mrv_ctx(context), device_attr);
	return 0;
}

/* verbs_context.query_device_ex: what the inline ibv_query_device_ex() calls. */
int mrv_query_device_ex_op(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;

	if (!context || !attr || (input && input->comp_mask) ||
	    attr_size < sizeof(struct ibv_device_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	device_fill(mrv_ctx(context), &a.orig_attr);
	/* no ODP, timestamps, TSO, RSS, packet pacing, tag matching, device memory */
	a.phys_port_cnt_ex = 1;
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}
