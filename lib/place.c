// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Responder placement: WRITE and SEND payloads go straight into registered
 * memory or posted receives, READ requests become READ jobs, and READ
 * responses land in the requester's SG list, each checked against the
 * region or request it names. Packets may arrive in any order.
 */
#include <string.h>

#include "eng_int.h"

/* Copy len bytes between a linear buffer and an SG list starting at byte off. */
void mroce_sg_copy(const struct mroce_sge *sg, __u32 n, __u32 off, void *lin, __u32 len, bool to_sg)
{
	__u8 *p = lin;

	for (__u32 i = 0; i < n && len; i++) {
		__u32 chunk;

		if (off >= sg[i].length) {
			off -= sg[i].length;
			continue;
		}
		chunk = sg[i].length - off < len ? sg[i].length - off : len;
		if (to_sg)
			memcpy((__u8 *)(unsigned long)sg[i].addr + off, p, chunk);
		else
			memcpy(p, (const __u8 *)(unsigned long)sg[i].addr + off, chunk);
		p += chunk;
		len -= chunk;
		off = 0;
	}
}

/* Is [addr, addr + len) inside mr? Written so that nothing can overflow. */
static bool mr_covers(const struct mroce_mr *mr, __u64 addr, __u64 len)
{
	__u64 start = (__u64)(unsigned long)mr->addr;

	return addr >= start && addr - start <= mr->length && len <= mr->length - (addr - start);
}

/* Start or continue tracking a receive-consuming message; NULL means RNR. */
static struct mroce_msgslot *msg_slot(struct mroce_qp *qp, const struct mroce_hdr *h, __u32 psn)
{
	struct mroce_msgslot *m = MSG(qp, h->msn);

	if (!mroce_psn_before(h->msn, qp->rq_tail) || mroce_psn_before(h->msn, qp->rq_head))
		return NULL;
	if (m->state == MSG_FREE) {
		*m = (struct mroce_msgslot){ .msn = h->msn, .len = h->msg_len, .max_psn = psn,
					     .imm = h->imm, .opcode = h->opcode, .state = MSG_ACTIVE };
	} else if (m->msn != h->msn) {
		return NULL;	/* cannot happen with the window bound; be safe */
	}
	if (mroce_psn_before(m->max_psn, psn))
		m->max_psn = psn;
	return m;
}

static void msg_account(struct mroce_qp *qp, struct mroce_msgslot *m, __u32 bytes)
{
	m->got += bytes;
	if (m->got == m->len && m->state == MSG_ACTIVE) {
		m->state = MSG_WHOLE;
		if (qp->attr.order == MROCE_UNORDERED)
			mroce_report_recv(qp, m);
	}
}

static int place_write(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload,
		       __u32 psn)
{
	const struct mroce_op_info *op = mroce_op_info(h->opcode);
	struct mroce_mr *mr = mroce_mr_by_rkey(qp->dev, h->rkey);
	struct mroce_msgslot *m = NULL;
	__u64 target = h->raddr + h->offset;

	if (op->consumes_recv) {
		m = msg_slot(qp, h, psn);
		if (!m)
			return MROCE_RNR;
	}
	if (h->msg_len) {
		if (!mr || !(mr->access & op->remote_access) || target < h->raddr ||
		    !mr_covers(mr, h->raddr, h->msg_len))
			return MROCE_NAK_REMOTE_ACCESS;
		memcpy((__u8 *)(unsigned long)target, payload, h->payload_len);
	}
	if (m)
		msg_account(qp, m, h->payload_len);
	return MROCE_PLACED;
}

static int place_send(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload,
		      __u32 psn)
{
	struct mroce_msgslot *m = msg_slot(qp, h, psn);
	struct mroce_rwqe *r;

	if (!m)
		return MROCE_RNR;
	r = RWQE(qp, h->msn);
	if (h->msg_len > r->len) {
		/* The receive buffer is too small: its owner sees a length error. */
		struct mroce_wc wc = { .wr_id = r->wr_id, .qp_num = qp->qpn,
				       .status = MROCE_WC_LOC_LEN_ERR, .opcode = MROCE_WC_RECV };

		if (!r->reported) {
			mroce_cq_push(qp->recv_cq, &wc);
			r->reported = 1;
		}
		return MROCE_NAK_INVALID_REQ;
	}
	mroce_sg_copy(r->sge, r->num_sge, h->offset, (void *)payload, h->payload_len, true);
	msg_account(qp, m, h->payload_len);
	return MROCE_PLACED;
}

static int place_read_req(struct mroce_qp *qp, const struct mroce_hdr *h)
{
	struct mroce_mr *mr = mroce_mr_by_rkey(qp->dev, h->rkey);
	unsigned int need = mroce_op_info(h->opcode)->remote_access;
	__u64 src = h->raddr + h->offset;

	if (h->rd_len && (!mr || !(mr->access & need) || src < h->raddr ||
			  !mr_covers(mr, src, h->rd_len)))
		return MROCE_NAK_REMOTE_ACCESS;
	for (__u32 i = 0; i < MROCE_READ_JOBS; i++) {
		struct mroce_rjob *j = &qp->rjobs[i];

		if (j->used)
			continue;
		*j = (struct mroce_rjob){ .src = (const __u8 *)(unsigned long)src, .msn = h->msn,
					  .msg_len = h->msg_len, .base = h->offset, .len = h->rd_len,
					  .used = true };
		return MROCE_PLACED;
	}
	return MROCE_NOT_NOW;
}

static int place_read_resp(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload)
{
	struct mroce_swqe *w = SWQE(qp, h->msn);

	/* Must name a READ of ours that is still waiting, and stay inside it. */
	if (mroce_psn_before(h->msn, qp->sq_head) || !mroce_psn_before(h->msn, qp->sq_tail) ||
	    !mroce_op_info(w->opcode)->awaits_resp || w->msn != h->msn || w->done || h->msg_len != w->len)
		return MROCE_NAK_INVALID_REQ;
	mroce_sg_copy(w->sge, w->num_sge, h->offset, (void *)payload, h->payload_len, true);
	w->rd_got += h->payload_len;
	w->rd_seen = 1;
	/* A response proves the request arrived: count it acknowledged now. */
	if (!w->acked && w->emitted && !mroce_psn_before(w->first_psn, qp->snd_una)) {
		struct mroce_txpkt *rec = PKT(qp, w->first_psn);

		if ((rec->state == PKT_INFLIGHT || rec->state == PKT_LOST) && rec->wqe == h->msn)
			mroce_pkt_acked(qp, rec, qp->dev->ops->now_us(qp->dev->port));
	}
	mroce_read_maybe_done(w);
	return MROCE_PLACED;
}

/* Place one data packet by its opcode: a mroce_place_result or a MROCE_NAK_* code. */
int mroce_place(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload, __u32 psn)
{
	switch (mroce_op_info(h->opcode)->place) {
	case MROCE_PLACE_WRITE:
		return place_write(qp, h, payload, psn);
	case MROCE_PLACE_SEND:
		return place_send(qp, h, payload, psn);
	case MROCE_PLACE_READ_REQ:
		return place_read_req(qp, h);
	case MROCE_PLACE_READ_RESP:
		return place_read_resp(qp, h, payload);
	default:
		return MROCE_NAK_INVALID_REQ;
	}
}
