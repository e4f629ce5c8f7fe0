// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Completions: send-queue and receive-queue entries reported to their CQs. */
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
 * Report finished requests; in ordered mode only in posting order. Every
 * posted entry is looked at (one fully sent stays at sq_next until the next
 * transmit round). A failed one fails the QP once all before it are reported.
 */
static void complete_sq_done(struct mroce_qp *qp)
{
	bool ordered = qp->attr.order == MROCE_ORDERED, all_before = true;

	for (__u32 i = qp->sq_head; i != qp->sq_tail && qp->state == MROCE_QPS_RTS; i++) {
		struct mroce_swqe *w = SWQE(qp, i);
		struct mroce_wc wc = { .wr_id = w->wr_id, .qp_num = qp->qpn };

		if (ordered)
			cum_acked_done(qp, w);
		if (!w->done) {
			if (ordered)
				break;
			all_before = false;
			continue;
		}
		if (w->reported)
			continue;
		if (w->status) {
			if (all_before)	/* else it fails in its turn */
				mroce_qp_fail(qp, (enum mroce_wc_status)w->status);
			return;
		}
		wc.status = MROCE_WC_SUCCESS;
		wc.opcode = mroce_send_wc_opcode(w->opcode);
		wc.byte_len = w->len;
		mroce_cq_push(qp->send_cq, &wc);
		w->reported = 1;
	}
}

void mroce_complete_sq(struct mroce_qp *qp)
{
	complete_sq_done(qp);
	if (qp->state != MROCE_QPS_RTS)
		return;
	while (qp->sq_head != qp->sq_tail && SWQE(qp, qp->sq_head)->reported)
		qp->sq_head++;
	if (mroce_psn_before(qp->sq_next, qp->sq_head))
		qp->sq_next = qp->sq_head;	/* never packetise from a recycled slot */
	/* Requests failed at posting (local protection) complete in their turn. */
	while (qp->state == MROCE_QPS_RTS && qp->sq_head != qp->sq_tail) {
		struct mroce_swqe *w = SWQE(qp, qp->sq_head);

		if (!(w->done && w->status && qp->sq_head == qp->sq_next))
			break;
		mroce_qp_fail(qp, (enum mroce_wc_status)w->status);
	}
}

void mroce_report_recv(struct mroce_qp *qp, struct mroce_msgslot *m)
{
	struct mroce_rwqe *r = RWQE(qp, m->msn);
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
void mroce_complete_rq(struct mroce_qp *qp)
{
	__u32 base = qp->flow->rx_base;

	while (qp->rq_head != qp->rq_tail) {
		struct mroce_msgslot *m = MSG(qp, qp->rq_head);
		struct mroce_rwqe *r = RWQE(qp, qp->rq_head);

		if (!r->reported) {
			if (m->state != MSG_WHOLE || m->msn != qp->rq_head)
				break;
			if (qp->attr.order == MROCE_ORDERED && !mroce_psn_before(m->max_psn, base))
				break;
			mroce_report_recv(qp, m);
		}
		if (m->msn == qp->rq_head)
			m->state = MSG_FREE;
		qp->rq_head++;
	}
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
