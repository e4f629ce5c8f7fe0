/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What each MROCE_OP_* means to the library, in one table (lib/opcode.c):
 * the post path, the receive path and completions read it instead of
 * testing opcodes one by one. The wire layout of each opcode (which
 * extension headers follow the BTH) stays in include/mroce/proto.h's
 * mroce_op_layout(), which the XDP program's parser shares.
 */
#ifndef MROCE_OPCODE_H
#define MROCE_OPCODE_H

#include <stdbool.h>

#include "mroce/mroce.h"

enum mroce_op_kind {
	MROCE_OPK_INVALID = 0,	/* not an opcode of this protocol */
	MROCE_OPK_REQUEST,	/* requester to responder, in the requester's PSN space */
	MROCE_OPK_RESPONSE,	/* READ response, in the responder's PSN space */
	MROCE_OPK_ACK,
	MROCE_OPK_NACK,
};

/* How the responder places a packet of this opcode. */
enum mroce_op_place {
	MROCE_PLACE_NONE = 0,
	MROCE_PLACE_WRITE,	/* into the region its RETH names */
	MROCE_PLACE_SEND,	/* into the next posted receive */
	MROCE_PLACE_READ_REQ,	/* becomes a READ job */
	MROCE_PLACE_READ_RESP,	/* into the waiting READ's SG list */
	MROCE_PLACE_VOID,	/* nothing: the PSN only counts as received */
};

struct mroce_op_info {
	const char		*name;
	enum mroce_op_kind	kind;
	enum mroce_op_place	place;
	bool			consumes_recv;	/* takes a posted receive (and an MSN) */
	bool			has_reth;	/* names remote memory (raddr, rkey) */
	bool			has_imm;	/* carries immediate data */
	bool			has_payload;	/* data follows the headers */
	bool			awaits_resp;	/* done when its response is placed, not when acked */
	unsigned int		remote_access;	/* MROCE_ACCESS_REMOTE_* the target region needs */
	enum mroce_wc_opcode	send_wc;	/* requester's completion opcode */
	enum mroce_wc_opcode	recv_wc;	/* responder's receive completion (consumes_recv) */
};

/* The row of an opcode; unknown opcodes get a row of kind MROCE_OPK_INVALID. */
const struct mroce_op_info *mroce_op_info(__u8 op);
/* The wire opcode a work request posts, or 0 if wr_opcode is not one. */
__u8 mroce_op_from_wr(int wr_opcode);

/* The completion opcode of a send-queue request. */
static inline enum mroce_wc_opcode mroce_send_wc_opcode(__u8 op)
{
	return mroce_op_info(op)->send_wc;
}

#endif /* MROCE_OPCODE_H */
