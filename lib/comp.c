// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Completions: send-queue and receive-queue entries reported to their CQs. */
#include <string.h>

#include "eng_int.h"

/*
 * Ordered mode: a message that takes a receive is done only once the
 * cumulative ACK has passed its last packet, that is, once the receiver
 * placed everything before it and so will complete its receive. A
 * selective ACK only says its bytes arrived: the receiver may still fail
 * on an earlier message and flush this one.
 */
static void cum_acked_done(struct mroce_qp *qp, struct mroce_swqe *w)
{
	if (!w->done && w->acked == w->npkts && w->emitted == w->npkts &&
	    mroce_op_info(w->opcode)->consumes_recv && mroce_psn_before(w->last_psn, qp->snd_una)) {
		w->done = 1;
		w->status = MROCE_WC_SUCCESS;
	}
}

/*
 * Report finished requests; in ordered mode only in posting order within
 * each stream (a stream held for want of receives at the peer holds no other
 * stream's completions back). Every posted entry is looked at (one fully
 * sent stays at sq_next until the next transmit round). A failed one fails
 * the QP once all before it are reported, unless the failure is its
 * stream's alone (stream_err, ack.c stream_fail): that one is reported in
 * its stream's order like any other completion, and the QP goes on.
 */
static void complete_sq_done(struct mroce_qp *qp)
{
	bool ordered = qp->attr.order == MROCE_ORDERED, all_before = true;
	__u64 waiting[MROCE_MAX_STREAMS / 64] = { 0 };	/* streams with a request not done */

	for (__u32 i = qp->sq_head; i != qp->sq_tail && qp->state == MROCE_QPS_RTS; i++) {
		struct mroce_swqe *w = SWQE(qp, i);
		struct mroce_wc wc = { .wr_id = w->wr_id, .qp_num = qp->qpn };
		__u64 bit = 1ull << (w->stream % 64);

		if (ordered && (waiting[w->stream / 64] & bit))
			continue;	/* after one of its stream not done */
		if (ordered)
			cum_acked_done(qp, w);
		if (!w->done) {
			waiting[w->stream / 64] |= bit;
			all_before = false;
			continue;
		}
		if (w->reported)
			continue;
		if (w->status && !w->stream_err) {
			if (all_before)	/* else it fails in its turn */
				mroce_qp_fail(qp, (enum mroce_wc_status)w->status);
			return;
		}
		wc.status = (enum mroce_wc_status)w->status;
		wc.opcode = mroce_send_wc_opcode(w->opcode);
		wc.byte_len = w->status ? 0 : w->len;
		mroce_cq_push(qp->send_cq, &wc);
		w->reported = 1;
		qp->sq_reported++;
	}
}

/*
 * The oldest entry is a held stream's, and nothing of that stream is in
 * flight: every request of the stream not yet reported moves to the tail,
 * in order, leaving empty entries behind, so that a stream whose peer posts
 * no receives cannot fill the send queue behind it and stop the others.
 * That includes requests done but waiting for their turn in the stream's
 * order (a WRITE posted after the refused SEND, sent before the refusal):
 * every packet of theirs is acknowledged, no record names them any more.
 * (With streams the ring grows to twice sq_depth, qp.c.)
 */
static void sq_rotate_held(struct mroce_qp *qp, __u64 now)
{
	const struct mroce_swqe *head = SWQE(qp, qp->sq_head);
	const struct mroce_stream *st = &qp->streams[head->stream];
	__u16 s = head->stream;
	__u32 n = 0, end = qp->sq_tail;

	if (qp->attr.streams == 1 || head->done ||
	    !(now < st->hold_until_us || (st->probing && st->probe_sent)))
		return;
	for (__u32 i = qp->sq_head; i != end; i++) {
		const struct mroce_swqe *w = SWQE(qp, i);

		if (w->stream != s || w->reported)
			continue;
		if ((w->emitted && !w->done) || (w->flags & MROCE_SEND_FENCE))
			return;	/* something of it is in flight, or must stay in place */
		n++;
	}
	if (n == end - qp->sq_head - qp->sq_moved - qp->sq_reported ||
	    mroce_ring_reserve((void **)&qp->sq, &qp->sq_mask, qp->sq_max_mask, sizeof(*qp->sq),
			       qp->sq_head, end, end - qp->sq_head + n))
		return;	/* nothing else queued, or no room */
	for (__u32 i = qp->sq_head; i != end; i++) {
		struct mroce_swqe *w = SWQE(qp, i), *to;

		if (w->stream != s || w->reported)
			continue;
		to = SWQE(qp, qp->sq_tail);
		*to = *w;
		if (mroce_op_info(to->opcode)->awaits_resp)
			to->msn = qp->sq_tail;	/* a READ's id is its place in the queue */
		qp->sq_tail++;
		memset(w, 0, sizeof(*w));
		w->done = w->reported = w->moved = 1;
		w->stream = s;
		qp->sq_moved++;
	}
}

void mroce_complete_sq(struct mroce_qp *qp)
{
	complete_sq_done(qp);
	if (qp->state != MROCE_QPS_RTS)
		return;
	while (qp->sq_head != qp->sq_tail && SWQE(qp, qp->sq_head)->reported) {
		const struct mroce_swqe *h = SWQE(qp, qp->sq_head++);

		qp->sq_moved -= h->moved;
		qp->sq_reported -= !h->moved;
	}
	if (qp->sq_head != qp->sq_tail)
		sq_rotate_held(qp, qp->dev->ops->now_us(qp->dev->port));
	if (mroce_psn_before(qp->sq_next, qp->sq_head))
		qp->sq_next = qp->sq_head;	/* never packetise from a recycled slot */
	/* Requests failed at posting (local protection) complete in their turn. */
	while (qp->state == MROCE_QPS_RTS && qp->sq_head != qp->sq_tail) {
		struct mroce_swqe *w = SWQE(qp, qp->sq_head);

		if (!(w->done && w->status && !w->stream_err && qp->sq_head == qp->sq_next))
			break;
		mroce_qp_fail(qp, (enum mroce_wc_status)w->status);
	}
}

void mroce_report_recv(struct mroce_qp *qp, struct mroce_rwqe *r)
{
	const struct mroce_msgslot *m = &r->msg;
	const struct mroce_op_info *op = mroce_op_info(m->opcode);
	struct mroce_wc wc = { .wr_id = r->wr_id, .qp_num = qp->qpn, .byte_len = m->len };

	wc.opcode = op->recv_wc;
	if (op->has_imm) {
		wc.wc_flags = MROCE_WC_WITH_IMM;
		wc.imm_data = m->imm;
	}
	mroce_cq_push(qp->recv_cq, &wc);
	r->reported = 1;
}

/*
 * Receive completions. Ordered: in message order, and only once every PSN
 * up to the message's last one is placed (so an earlier WRITE is visible
 * before a later SEND completes). Unordered: as soon as a message is whole.
 */
static void complete_stream_rq(struct mroce_qp *qp, struct mroce_stream *st, __u32 base)
{
	while (st->rq_head != st->rq_tail) {
		struct mroce_rwqe *r = RWQE(st, st->rq_head);

		if (!r->reported) {
			if (r->msg.state != MSG_WHOLE)
				break;
			if (qp->attr.order == MROCE_ORDERED && !mroce_psn_before(r->msg.max_psn, base))
				break;
			mroce_report_recv(qp, r);
		} else if (r->msg.status) {
			break;	/* reported failed: the QP fails, what follows is flushed */
		}
		st->rq_head++;
	}
}

/* Receive completions, stream by stream: a stream's order is its own. */
void mroce_complete_rq(struct mroce_qp *qp)
{
	for (__u32 i = 0; i < qp->attr.streams; i++)
		complete_stream_rq(qp, &qp->streams[i], qp->flow->rx_base);
}

/*
 * A READ is finished once all of its response is placed and its request is
 * acknowledged: no in-flight record may still point at an SQ entry that
 * completion is about to recycle.
 */
void mroce_read_maybe_done(struct mroce_qp *qp, struct mroce_swqe *w)
{
	if (!w->done && w->rd_seen && w->rd_got == w->len && w->acked == w->npkts) {
		w->done = 1;
		w->status = MROCE_WC_SUCCESS;
		qp->rd_outstanding--;
	}
}
