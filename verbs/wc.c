// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Work completions: mroce's codes and fields in ibverbs' terms. */
#include <endian.h>
#include <string.h>

#include "mrv.h"

enum ibv_wc_status mrv_wc_status(enum mroce_wc_status s)
{
	switch (s) {
	case MROCE_WC_SUCCESS:		return IBV_WC_SUCCESS;
	case MROCE_WC_LOC_LEN_ERR:	return IBV_WC_LOC_LEN_ERR;
	case MROCE_WC_LOC_PROT_ERR:	return IBV_WC_LOC_PROT_ERR;
	case MROCE_WC_REM_ACCESS_ERR:	return IBV_WC_REM_ACCESS_ERR;
	case MROCE_WC_REM_INV_REQ_ERR:	return IBV_WC_REM_INV_REQ_ERR;
	case MROCE_WC_RNR_RETRY_EXC_ERR: return IBV_WC_RNR_RETRY_EXC_ERR;
	case MROCE_WC_RETRY_EXC_ERR:	return IBV_WC_RETRY_EXC_ERR;
	case MROCE_WC_WR_FLUSH_ERR:	return IBV_WC_WR_FLUSH_ERR;
	case MROCE_WC_REM_OP_ERR:	return IBV_WC_REM_OP_ERR;
	}
	return IBV_WC_GENERAL_ERR;	/* a code this file does not know yet */
}

enum ibv_wc_opcode mrv_wc_opcode(enum mroce_wc_opcode op)
{
	switch (op) {
	case MROCE_WC_SEND:		return IBV_WC_SEND;
	case MROCE_WC_RDMA_WRITE:	return IBV_WC_RDMA_WRITE;
	case MROCE_WC_RDMA_READ:	return IBV_WC_RDMA_READ;
	case MROCE_WC_RECV:		return IBV_WC_RECV;
	case MROCE_WC_RECV_RDMA_WITH_IMM: return IBV_WC_RECV_RDMA_WITH_IMM;
	}
	return IBV_WC_SEND;	/* unreachable for mroce's opcodes */
}

void mrv_wc_fill(struct mrv_cq *cq, const struct mroce_wc *in, struct ibv_wc *out)
{
	memset(out, 0, sizeof(*out));
	out->wr_id = in->wr_id;
	out->status = mrv_wc_status(in->status);
	out->opcode = mrv_wc_opcode(in->opcode);
	out->byte_len = in->byte_len;
	/* the verbs QPN carries the receive queue (mrv.h), the peer's view of the QP */
	out->qp_num = mrv_qpn(cq->ctx->queue, in->qp_num);
	if (in->wc_flags & MROCE_WC_WITH_IMM) {
		/* ibverbs hands immediate data over as it was on the wire: network order */
		out->imm_data = htobe32(in->imm_data);
		out->wc_flags |= IBV_WC_WITH_IMM;
	}
}
