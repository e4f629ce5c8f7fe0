// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The opcode table (lib/opcode.h): every rule that depends on an opcode. */
#include "opcode.h"
#include "mroce/proto.h"

static const struct mroce_op_info ops[] = {
	[MROCE_OP_WRITE] = {
		.name = "WRITE", .kind = MROCE_OPK_REQUEST, .place = MROCE_PLACE_WRITE,
		.has_reth = true, .has_payload = true,
		.remote_access = MROCE_ACCESS_REMOTE_WRITE, .send_wc = MROCE_WC_RDMA_WRITE,
	},
	[MROCE_OP_WRITE_IMM] = {
		.name = "WRITE_IMM", .kind = MROCE_OPK_REQUEST, .place = MROCE_PLACE_WRITE,
		.consumes_recv = true, .has_reth = true, .has_imm = true, .has_payload = true,
		.remote_access = MROCE_ACCESS_REMOTE_WRITE, .send_wc = MROCE_WC_RDMA_WRITE,
		.recv_wc = MROCE_WC_RECV_RDMA_WITH_IMM,
	},
	[MROCE_OP_SEND] = {
		.name = "SEND", .kind = MROCE_OPK_REQUEST, .place = MROCE_PLACE_SEND,
		.consumes_recv = true, .has_payload = true,
		.send_wc = MROCE_WC_SEND, .recv_wc = MROCE_WC_RECV,
	},
	[MROCE_OP_SEND_IMM] = {
		.name = "SEND_IMM", .kind = MROCE_OPK_REQUEST, .place = MROCE_PLACE_SEND,
		.consumes_recv = true, .has_imm = true, .has_payload = true,
		.send_wc = MROCE_WC_SEND, .recv_wc = MROCE_WC_RECV,
	},
	[MROCE_OP_READ_REQ] = {
		.name = "READ_REQ", .kind = MROCE_OPK_REQUEST, .place = MROCE_PLACE_READ_REQ,
		.has_reth = true, .awaits_resp = true,
		.remote_access = MROCE_ACCESS_REMOTE_READ, .send_wc = MROCE_WC_RDMA_READ,
	},
	[MROCE_OP_READ_RESP] = {
		.name = "READ_RESP", .kind = MROCE_OPK_RESPONSE, .place = MROCE_PLACE_READ_RESP,
		.has_payload = true,
	},
	[MROCE_OP_VOID] = {
		.name = "VOID", .kind = MROCE_OPK_REQUEST, .place = MROCE_PLACE_VOID,
	},
	[MROCE_OP_ACK] = { .name = "ACK", .kind = MROCE_OPK_ACK },
	[MROCE_OP_NACK] = { .name = "NACK", .kind = MROCE_OPK_NACK },
};

static const struct mroce_op_info invalid = { .name = "invalid", .kind = MROCE_OPK_INVALID };

const struct mroce_op_info *mroce_op_info(__u8 op)
{
	if (op >= sizeof(ops) / sizeof(ops[0]) || ops[op].kind == MROCE_OPK_INVALID)
		return &invalid;
	return &ops[op];
}

__u8 mroce_op_from_wr(int wr_opcode)
{
	static const __u8 wire[] = {
		[MROCE_WR_RDMA_WRITE]		= MROCE_OP_WRITE,
		[MROCE_WR_RDMA_WRITE_WITH_IMM]	= MROCE_OP_WRITE_IMM,
		[MROCE_WR_SEND]			= MROCE_OP_SEND,
		[MROCE_WR_SEND_WITH_IMM]	= MROCE_OP_SEND_IMM,
		[MROCE_WR_RDMA_READ]		= MROCE_OP_READ_REQ,
	};

	if (wr_opcode < 0 || (unsigned int)wr_opcode >= sizeof(wire) / sizeof(wire[0]))
		return 0;
	return wire[wr_opcode];
}
