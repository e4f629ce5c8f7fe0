// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Responder placement: WRITE and SEND payloads go straight into registered
 * memory or posted receives, READ requests become READ jobs, and READ
 * responses land in the requester's SG list, each checked against the
 * region or request it names. Packets may arrive in any order.
 */
#include <errno.h>
#include <string.h>

#include "eng_int.h"

/*
 * Copy len bytes between a linear buffer and an SG list starting at byte
 * off, checking every SGE it touches against its region first (a region
 * may have been deregistered since the work request was posted).
 * -EPERM, with nothing of that SGE copied, if a region no longer grants it.
 */
int mroce_sg_copy(const struct mroce_pd *pd, const struct mroce_sge *sg, __u32 n, __u32 off,
		  void *lin, __u32 len, bool to_sg)
{
	__u8 *p = lin;

	for (__u32 i = 0; i < n && len; i++) {
		__u8 *at = (__u8 *)(unsigned long)sg[i].addr;
		__u32 chunk;

		if (off >= sg[i].length) {
			off -= sg[i].length;
			continue;
		}
		if (!mroce_mr_grants(pd, sg[i].lkey, false, sg[i].addr, sg[i].length,
				     to_sg ? MROCE_ACCESS_LOCAL_WRITE : 0))
			return -EPERM;
		chunk = sg[i].length - off < len ? sg[i].length - off : len;
		if (to_sg)
			memcpy(at + off, p, chunk);
		else
			memcpy(p, at + off, chunk);
		p += chunk;
		len -= chunk;
		off = 0;
	}
	return 0;
}

/*
 * Start or continue tracking a receive-consuming message in the receive it
 * takes on its stream (protocol.md, "Streams"); *rp is that receive. NULL:
 * *res says why. MROCE_RNR: no receive is posted for it on its stream, or
 * the copy is of an older attempt than the bytes kept (its sender gave
 * that attempt up, and answers the NACK with a VOID). MROCE_STALE: the
 * message is delivered already; a later attempt was under way before its
 * sender knew. MROCE_NAK_INVALID_REQ: the QP has no such stream, or the
 * packet's length disagrees with the message's.
 */
static struct mroce_msgslot *msg_slot(struct mroce_qp *qp, const struct mroce_hdr *h, __u32 psn,
				      struct mroce_rwqe **rp, int *res)
{
	struct mroce_stream *st;
	struct mroce_msgslot *m;
	struct mroce_rwqe *r;

	if (h->stream >= qp->attr.streams) {
		*res = MROCE_NAK_INVALID_REQ;
		return NULL;
	}
	st = &qp->streams[h->stream];
	if (!mroce_psn_before(h->msn, st->rq_tail)) {
		*res = MROCE_RNR;
		return NULL;
	}
	r = RWQE(st, h->msn);
	if (mroce_psn_before(h->msn, st->rq_head) || r->reported) {
		*res = MROCE_STALE;
		return NULL;
	}
	m = &r->msg;
	if (m->state != MSG_FREE && h->epoch != m->epoch) {
		if ((__s16)(h->epoch - m->epoch) < 0) {
			*res = MROCE_RNR;
			return NULL;
		}
		m->state = MSG_FREE;	/* a newer attempt: its bytes replace the older ones' */
	}
	if (m->state == MSG_FREE)
		*m = (struct mroce_msgslot){ .len = h->msg_len, .max_psn = psn, .imm = h->imm,
					     .epoch = h->epoch, .opcode = h->opcode,
					     .state = MSG_ACTIVE };
	/*
	 * Every packet of an attempt names the same length, and no more bytes
	 * than it has left (each has a PSN of its own): a peer's that does not
	 * would leave the count short of the length or past it for ever.
	 */
	if (h->msg_len != m->len || h->payload_len > m->len - m->got) {
		m->status = MROCE_WC_REM_INV_REQ_ERR;
		*res = MROCE_NAK_INVALID_REQ;
		return NULL;
	}
	if (mroce_psn_before(m->max_psn, psn))
		m->max_psn = psn;
	*rp = r;
	return m;
}

static void msg_account(struct mroce_qp *qp, struct mroce_rwqe *r, __u32 bytes)
{
	struct mroce_msgslot *m = &r->msg;

	m->got += bytes;
	if (m->got == m->len && m->state == MSG_ACTIVE) {
		m->state = MSG_WHOLE;
		if (qp->attr.order == MROCE_UNORDERED)
			mroce_report_recv(qp, r);
	}
}

static int place_write(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload,
		       __u32 psn)
{
	const struct mroce_op_info *op = mroce_op_info(h->opcode);
	struct mroce_rwqe *r = NULL;
	__u64 target = h->raddr + h->offset;
	int res;

	if (op->consumes_recv && !msg_slot(qp, h, psn, &r, &res))
		return res;
	if (h->msg_len) {
		if (target < h->raddr ||
		    !mroce_mr_grants(qp->pd, h->rkey, true, h->raddr, h->msg_len, op->remote_access))
			return MROCE_NAK_REMOTE_ACCESS;
		if (payload)	/* NULL: XDP placed it, after these same checks */
			memcpy((__u8 *)(unsigned long)target, payload, h->payload_len);
	}
	if (r)
		msg_account(qp, r, h->payload_len);
	return MROCE_PLACED;
}

/*
 * A SEND's payload into the next posted receive. A receive too small, or
 * whose region is gone, is the receiver's error: recorded in the message
 * slot, reported in its turn (rx.c), NACKed to the sender.
 */
static int place_send(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload,
		      __u32 psn)
{
	int res;
	struct mroce_rwqe *r = NULL;
	struct mroce_msgslot *m = msg_slot(qp, h, psn, &r, &res);

	if (!m)
		return res;
	if (h->msg_len > r->len) {
		m->status = MROCE_WC_LOC_LEN_ERR;
		return MROCE_NAK_INVALID_REQ;
	}
	if (mroce_sg_copy(qp->pd, r->sge, r->num_sge, h->offset, (void *)payload,
			  h->payload_len, true)) {
		m->status = MROCE_WC_LOC_PROT_ERR;
		return MROCE_NAK_REMOTE_OP;
	}
	msg_account(qp, r, h->payload_len);
	return MROCE_PLACED;
}

/*
 * A READ request becomes a job. Jobs name the region by key and address;
 * each packet checks them again (tx.c). The table holds twice what this
 * side advertises (MROCE_READ_ADVERTISED), so a requester keeping to its
 * limit finds a slot even while earlier jobs wait for their last ACKs; one
 * that does not is refused for now and resends the request.
 */
static int place_read_req(struct mroce_qp *qp, const struct mroce_hdr *h)
{
	unsigned int need = mroce_op_info(h->opcode)->remote_access;
	__u64 src = h->raddr + h->offset;

	if (src < h->raddr || !mroce_mr_grants(qp->pd, h->rkey, true, src, h->rd_len, need))
		return MROCE_NAK_REMOTE_ACCESS;
	for (__u32 i = 0; i < MROCE_READ_JOBS; i++) {
		struct mroce_rjob *j = &qp->rjobs[i];

		if (j->used)
			continue;
		*j = (struct mroce_rjob){ .raddr = src, .rkey = h->rkey, .req_psn = h->psn,
					  .msn = h->msn, .msg_len = h->msg_len, .base = h->offset,
					  .len = h->rd_len, .seq = qp->rjob_seq++, .used = true };
		qp->rjobs_live++;
		return MROCE_PLACED;
	}
	qp->dev->stats.rd_busy++;
	return MROCE_NOT_NOW;
}

/* The READ of ours a response names (its id is the READ's SQ sequence), or NULL. */
struct mroce_swqe *mroce_read_of(struct mroce_qp *qp, __u32 id)
{
	struct mroce_swqe *w = SWQE(qp, id);

	if (mroce_psn_before(id, qp->sq_head) || !mroce_psn_before(id, qp->sq_tail) ||
	    !mroce_op_info(w->opcode)->awaits_resp || w->msn != id || w->done)
		return NULL;
	return w;
}

static int place_read_resp(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload)
{
	struct mroce_swqe *w = mroce_read_of(qp, h->msn);
	__u64 now = qp->dev->ops->now_us(qp->dev->port);

	/*
	 * Must name a READ of ours that is still waiting, and stay inside it:
	 * no more bytes than are still owed (each response packet has a PSN of
	 * its own), or the count would pass the length and never equal it.
	 */
	if (!w || h->msg_len != w->len || h->payload_len > w->len - w->rd_got)
		return MROCE_NAK_INVALID_REQ;
	if (mroce_sg_copy(qp->pd, w->sge, w->num_sge, h->offset, (void *)payload,
			  h->payload_len, true)) {
		/* Our own region went away under the READ: it fails here, nothing lands. */
		w->done = 1;
		w->status = MROCE_WC_LOC_PROT_ERR;
		return MROCE_PLACED;
	}
	w->rd_got += h->payload_len;
	w->rd_seen = 1;
	qp->rd_progress_us = now;
	qp->rd_timeouts = 0;
	/* A response proves the request arrived: count it acknowledged now. */
	if (!w->acked && w->emitted && !mroce_psn_before(w->first_psn, qp->snd_una)) {
		struct mroce_txpkt *rec = PKT(qp, w->first_psn);

		if ((rec->state == PKT_INFLIGHT || rec->state == PKT_LOST) &&
		    rec->kind == PKT_REQ && rec->wqe == h->msn)
			mroce_pkt_acked(qp, rec, w->first_psn, now);
	}
	mroce_read_maybe_done(qp, w);
	return MROCE_PLACED;
}

/* Place one data packet by its opcode: a mroce_place_result or a MROCE_NAK_* code. */
int mroce_place(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload, __u32 psn)
{
	enum mroce_op_place k = mroce_op_info(h->opcode)->place;

	/* Only a WRITE's payload is ever placed by XDP (payload NULL). */
	if (!payload && h->payload_len && k != MROCE_PLACE_WRITE)
		return MROCE_NAK_INVALID_REQ;
	switch (k) {
	case MROCE_PLACE_WRITE:
		return place_write(qp, h, payload, psn);
	case MROCE_PLACE_SEND:
		return place_send(qp, h, payload, psn);
	case MROCE_PLACE_READ_REQ:
		return place_read_req(qp, h);
	case MROCE_PLACE_READ_RESP:
		return place_read_resp(qp, h, payload);
	case MROCE_PLACE_VOID:
		return MROCE_PLACED;	/* a refused request's PSN, given up */
	default:
		return MROCE_NAK_INVALID_REQ;
	}
}
