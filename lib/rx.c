// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Receive dispatch: parse and check a frame, find its QP, hand ACKs and
 * NACKs to the completer, check data against the receive window, place
 * it, and decide when to acknowledge.
 */
#include <string.h>

#include "eng_int.h"

/*
 * Parse and check a frame. One XDP placed (placed_len > 0) ends where its
 * payload began: it is parsed as the whole frame it was, and must be a
 * WRITE whose payload was exactly that long and started exactly at the cut
 * (XDP checked its UDP checksum before it placed the payload).
 */
static bool rx_parse(struct mroce_dev *dev, const void *frame, __u32 len, __u32 placed_len,
		     struct mroce_pkt *pkt)
{
	const __u8 *end = (const __u8 *)frame + len;

	if (!placed_len)
		return mroce_parse(frame, end, dev->udp_port, pkt) == MROCE_STAT_RX &&
		       (dev->ops->csum_offload || mroce_frame_csum_ok(frame, pkt));
	/* Headers read within the len bytes there are, lengths checked against the whole. */
	if (placed_len > MROCE_FRAME_MAX)
		return false;
	return mroce_parse_mb(frame, end, len + placed_len, dev->udp_port, pkt) == MROCE_STAT_RX &&
	       pkt->reth && (pkt->layout & MROCE_EXT_PAYLOAD) &&
	       pkt->payload == (const void *)end && pkt->payload_len == placed_len;
}

/* The RTS QP a valid frame is for, with its header decoded; NULL: counted as bad. */
static struct mroce_qp *rx_qp(struct mroce_dev *dev, const void *frame, __u32 len,
			      __u32 placed_len, struct mroce_pkt *pkt, struct mroce_hdr *h)
{
	struct mroce_qp *qp;
	__u32 qpn;

	if (!rx_parse(dev, frame, len, placed_len, pkt)) {
		dev->stats.bad_pkts++;
		return NULL;
	}
	qpn = mroce_be32(pkt->bth->dqpn);
	qp = qpn < MROCE_MAX_QPS ? dev->qps[qpn] : NULL;
	if (!qp || qp->state != MROCE_QPS_RTS || pkt->bth->token != qp->token_be) {
		dev->stats.bad_pkts++;
		return NULL;
	}
	mroce_hdr_decode(pkt, h);
	return qp;
}

/* Receive window check of a data packet: false if it goes no further. */
static bool rx_window(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now)
{
	struct mroce_dev *dev = qp->dev;
	struct mroce_flow *f = qp->flow;
	int v = mroce_rxwin_check(f, h->psn);

	if (v == MROCE_RXWIN_DUP) {
		dev->stats.dup_pkts++;
		qp->ack_now = true;	/* our ACK may have been lost ... */
		qp->ack_again = true;	/* ... on a failed route: two ways back (tx.c) */
		/*
		 * The ACK it triggers echoes its time: echoing the newest packet
		 * placed, perhaps long ago, would hand the sender an RTT of all
		 * the time its ACKs were being lost.
		 */
		if (!(h->flags & MROCE_F_PLANE_PROBE)) {
			qp->ts_echo = h->ts;
			qp->ts_echo_at = now;
		}
		return false;
	}
	if (v == MROCE_RXWIN_BEYOND) {
		dev->stats.rx_dropped_window++;
		mroce_send_nack(qp, MROCE_NAK_OUT_OF_WINDOW, h->psn, h->msn);
		return false;
	}
	if (h->psn != f->rx_base) {
		dev->stats.ooo_pkts++;
		if (qp->attr.go_back_n) {
			/*
			 * One NACK per gap per interval (XDP passes up one
			 * packet past the gap per interval, dp_maps.h): the
			 * NACK or the resent packet may be lost too, and the
			 * sender must not be left to its timer.
			 */
			if (!qp->gbn_nak_sent || qp->gbn_nak_psn != f->rx_base ||
			    mroce_since(now, qp->gbn_nak_us) >= MROCE_ANSWER_GAP_NS / 1000) {
				mroce_send_nack(qp, MROCE_NAK_PSN_SEQ, f->rx_base, 0);
				qp->gbn_nak_psn = f->rx_base;
				qp->gbn_nak_us = now;
				qp->gbn_nak_sent = true;
			}
			return false;
		}
	}
	return true;
}

/*
 * A request refused for good (bad key, range, rights; a receive too small):
 * the receive it would have taken reports the error, the requester gets a
 * NACK, and this QP stops as an InfiniBand responder does, flushing the
 * receives behind it. Everything before it completes first.
 */
static void rsp_error_fire(struct mroce_qp *qp)
{
	/* a stream this QP does not have has no receives: stream 0's stand in, unused */
	struct mroce_stream *st = &qp->streams[qp->rsp_err_recv ? qp->rsp_err_stream : 0];
	struct mroce_rwqe *r = RWQE(st, qp->rsp_err_msn);
	struct mroce_msgslot *m = &r->msg;

	qp->rsp_err = false;
	/* what finished before the error is reported before it, on both queues */
	mroce_complete_sq(qp);
	mroce_complete_rq(qp);
	if (qp->rsp_err_recv && m->state != MSG_FREE && m->status &&
	    st->rq_head == qp->rsp_err_msn && st->rq_head != st->rq_tail) {
		struct mroce_wc wc = { .wr_id = r->wr_id, .qp_num = qp->qpn, .status = m->status,
				       .opcode = mroce_op_info(m->opcode)->recv_wc };

		mroce_cq_push(qp->recv_cq, &wc);
		r->reported = 1;
	}
	mroce_send_nack_on(qp, qp->rsp_err_code, qp->rsp_err_psn, qp->rsp_err_stream,
			   qp->rsp_err_msn);
	qp->dev->ops->tx_flush(qp->dev->port);
	mroce_qp_fail(qp, MROCE_WC_WR_FLUSH_ERR);
}

/*
 * Ordered mode: an error waits until its message is next to complete,
 * that is, until every PSN before it is placed (the refused packet is not
 * marked, so the sender resends it and the cumulative ACK cannot pass it):
 * an earlier message whose bytes all arrived completes before the error.
 */
static void rsp_error(struct mroce_qp *qp, const struct mroce_hdr *h, __u8 code)
{
	if (!qp->rsp_err || mroce_psn_before(h->psn, qp->rsp_err_psn)) {
		qp->rsp_err = true;
		qp->rsp_err_code = code;
		qp->rsp_err_psn = h->psn;
		qp->rsp_err_msn = h->msn;
		qp->rsp_err_recv = mroce_op_info(h->opcode)->consumes_recv &&
				   h->stream < qp->attr.streams;
		/* the NACK names the refused message's stream, one this QP lacks too */
		qp->rsp_err_stream = mroce_op_info(h->opcode)->consumes_recv ? h->stream : 0;
	}
	if (qp->attr.order == MROCE_UNORDERED || qp->rsp_err_psn == qp->flow->rx_base)
		rsp_error_fire(qp);
}

/* What placing refused: NACK it. False if the packet goes no further. */
static bool rx_refused(struct mroce_qp *qp, const struct mroce_hdr *h, int res)
{
	if (res == MROCE_NOT_NOW)
		return false;
	if (res == MROCE_RNR) {
		mroce_send_rnr(qp, h);
		return false;
	}
	if (res == MROCE_STALE) {
		qp->dev->stats.dup_pkts++;
		return true;	/* its PSN counts received: nothing more is owed on it */
	}
	if (res > 0) {
		rsp_error(qp, h, (__u8)res);
		return false;
	}
	return true;
}

/*
 * The last packet of a message is acknowledged at once: its sender
 * waits on it. Sprayed, it may come before the rest of its message: then
 * the packet that completes the message is acknowledged at once too, or
 * the sender, having heard of the last packet, would wait out the delayed
 * ACK for the others and at datacenter RTTs (a few microseconds) declare
 * them lost long before it (docs/scale.md). So is a CE-marked one (as a DCTCP receiver does): each
 * ACK then carries at most one mark, on the packet whose path slot it
 * echoes, and the sender can charge marks to paths. So is a resend (on
 * the next way back in turn, as every other ACK: one for a resent
 * duplicate may be all the sender gets, and a fixed way back could be
 * dead), and twice, on two ways back in turn: a window head resent after
 * a route failed waits on it, and the way back in turn may be on the
 * failed route too.
 */
static void rx_ack_policy(struct mroce_qp *qp, const struct mroce_hdr *h, bool ce, __u64 now)
{
	bool completes = false;	/* this packet completed a message whose last packet came first */

	qp->hole_reports = 0;	/* the peer is there: a hole may be reported again (tx.c) */
	for (__u8 i = 0; i < qp->nlast_early;) {
		if (mroce_psn_before(qp->last_early[i], qp->flow->rx_base)) {
			qp->last_early[i] = qp->last_early[--qp->nlast_early];
			completes = true;
		} else {
			i++;
		}
	}
	/*
	 * A last packet with the rest of its message still on its way, at most
	 * 8 ACKs' worth of PSNs behind it (a few-packet message, a collective's
	 * chunk). Further behind, on routes whose queues drain at their own
	 * pace, the extra ACK when the hole closes made the sender resend
	 * queued packets (2.4% in tests/test_paths.c's queued routes, against
	 * none): why is not understood yet, so the rule stays off there.
	 */
	if ((h->flags & MROCE_F_LAST) && !mroce_psn_before(h->psn, qp->flow->rx_base) &&
	    h->psn - qp->flow->rx_base < 8 * qp->attr.ack_every && qp->nlast_early < MROCE_LAST_EARLY)
		qp->last_early[qp->nlast_early++] = h->psn;
	if (ce) {
		qp->unacked++;
		qp->ack_now = true;	/* stays due if no transmit buffer is free now */
		qp->echo_mark = true;	/* the mark's ACK echoes the marked packet's slot */
		mroce_send_ack(qp, now);	/* now, before another packet changes the slot it echoes */
	} else if (h->flags & MROCE_F_RETX) {
		qp->unacked++;
		qp->ack_now = true;	/* a resend is waited on */
		qp->ack_again = true;	/* ... on two ways back: one may be a failed route's */
	} else if (++qp->unacked >= qp->attr.ack_every ||
		   (h->flags & (MROCE_F_ACK_REQ | MROCE_F_LAST)) || qp->attr.go_back_n) {
		qp->ack_now = true;
	} else if (completes) {
		qp->ack_now = true;
	} else if (!qp->ack_due_us) {
		qp->ack_due_us = now + qp->attr.ack_delay_us;
	}
}

/* The plane a frame came in on: the one whose MAC it was sent to. */
static __u8 rx_plane(const struct mroce_dev *dev, const void *frame)
{
	for (__u8 i = 1; i < dev->nplanes; i++)
		if (!memcmp(frame, dev->plane_local[i].src_mac, 6))
			return i;
	return 0;
}

/* ... of those this QP uses (0 for any other). */
static __u8 in_plane(const struct mroce_qp *qp, const void *frame)
{
	__u8 plane = rx_plane(qp->dev, frame);

	return plane < qp->nplanes ? plane : 0;
}

/* A probe came in on plane: an ACK, now, echoes its nonce (a duplicate's too): tx.c mroce_send_ack. */
static void probe_in(struct mroce_qp *qp, __u8 plane, const struct mroce_hdr *h, __u64 now)
{
	qp->probe_nonce[plane] = h->ts;
	qp->probe_nonce_at[plane] = now;
	qp->probe_echo[plane] = true;
	qp->ack_now = true;
}

/* Every plane's XDP program sees the same receive window (planes.c). */
static void rx_mark(struct mroce_qp *qp, __u32 psn)
{
	mroce_rxwin_mark(qp->flow, psn);
	mroce_rxwin_advance(qp->flow);
	for (__u32 i = 1; i < qp->nplanes; i++) {
		if (!qp->pflow[i])
			continue;
		mroce_rxwin_mark(qp->pflow[i], psn);
		mroce_rxwin_advance(qp->pflow[i]);
	}
}

void mroce_engine_rx(void *ctx, const void *frame, __u32 len, __u32 placed_len)
{
	struct mroce_dev *dev = ctx;
	struct mroce_pkt pkt;
	struct mroce_hdr h;
	struct mroce_qp *qp;
	struct mroce_rxpath *rxp;
	enum mroce_op_kind kind;
	__u64 now = dev->ops->now_us(dev->port);
	__u8 plane = 0;

	dev->stats.rx_pkts++;
	dev->stats.rx_bytes += len + placed_len;
	qp = rx_qp(dev, frame, len, placed_len, &pkt, &h);
	if (!qp)
		return;
	mroce_qp_due_now(qp);	/* this round visits it */
	kind = mroce_op_info(h.opcode)->kind;
	if (kind == MROCE_OPK_ACK) {
		/* a receiver's probe: an ACK of ours echoes it (planes.c) */
		if ((h.flags & MROCE_F_PLANE_PROBE) && qp->nplanes > 1)
			probe_in(qp, in_plane(qp, frame), &h, now);
		mroce_handle_ack(qp, &h, now);
		/*
		 * An ask (loss.c "Asks"): our ACK goes at once, echoing it, so
		 * that the asker knows what had arrived by then. One ACK for
		 * one ask, or for all that one round reads: a peer that asks
		 * without end gets no more frames than it sends. An answer lost
		 * on a dead route is the asker's timer's to ask again, on the
		 * next way (our ACKs take turns on the ways back).
		 */
		if ((h.flags & MROCE_F_ACK_REQ) && !(h.flags & MROCE_F_PLANE_PROBE)) {
			qp->ts_echo = h.ts;
			qp->ts_echo_at = now;
			qp->ack_now = true;
			if (qp->nplanes > 1)
				mroce_plane_resend_in(qp, in_plane(qp, frame));	/* it does not hear us */
		}
		return;
	}
	if (kind == MROCE_OPK_NACK) {
		mroce_handle_nack(qp, &h, now);
		return;
	}
	mroce_ret_heard(qp, h.path,
			mroce_be16(((const mroce_udphdr_t *)((const __u8 *)frame + pkt.l4_off))->source));
	if (qp->nplanes > 1) {
		plane = in_plane(qp, frame);
		qp->ret[h.path].plane = plane;
		qp->rx_plane_at[plane] = now;
		qp->rx_newest_plane = plane;
		if (h.flags & MROCE_F_RETX)
			mroce_plane_resend_in(qp, plane);
	}
	/* Duplicates too: the sender learns what each of its paths delivered, copies included. */
	rxp = mroce_rxpath_of(qp, h.path);
	if (rxp)
		mroce_psack_mark(rxp, h.pseq);
	if (h.flags & MROCE_F_PLANE_PROBE)
		probe_in(qp, plane, &h, now);
	mroce_grant_rx(qp, &h, h.payload_len, pkt.ecn == 3, now);
	if (!rx_window(qp, &h, now))
		return;
	qp->ecn_pkts++;
	qp->ecn_ce += pkt.ecn == 3;
	dev->stats.ecn_ce_rx += pkt.ecn == 3;
	if (!(h.flags & MROCE_F_PLANE_PROBE)) {
		qp->ts_echo = h.ts;
		qp->ts_echo_at = now;
	}
	qp->echo_path = h.path;
	if (placed_len)
		dev->stats.xdp_placed++;
	if (!rx_refused(qp, &h, mroce_place(qp, &h, placed_len ? NULL : pkt.payload, h.psn)))
		return;
	/* Placed: only now does the PSN count as received. */
	rx_mark(qp, h.psn);
	qp->gbn_nak_sent = false;
	rx_ack_policy(qp, &h, pkt.ecn == 3, now);
	if (qp->rsp_err && qp->rsp_err_psn == qp->flow->rx_base)
		rsp_error_fire(qp);	/* everything before the refused request is in */
}

/* Send an ACK that is still owed (before a QP goes away). dev->lock held. */
void mroce_qp_flush_ack(struct mroce_qp *qp)
{
	if (qp->state == MROCE_QPS_RTS && (qp->ack_now || qp->ack_due_us || qp->unacked)) {
		mroce_send_ack(qp, qp->dev->ops->now_us(qp->dev->port));
		qp->dev->ops->tx_flush(qp->dev->port);
	}
}
