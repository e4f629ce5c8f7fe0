// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The completer side of acknowledgements: a cumulative PSN plus a SACK
 * bitmap retire in-flight records and finish requests, RTT samples feed
 * the timers and congestion control, NACKs fail requests or mark packets
 * for resending.
 */
#include "cc.h"
#include "eng_int.h"

/*
 * First acknowledgement of a PSN. A first transmission whose path slot
 * still holds the same entropy value is an RTT sample for that path (Karn:
 * a resend's sample could belong to either copy), unless it was sent
 * before a packet an earlier ACK already echoed: then the ACKs that should
 * have reported it were lost (a way back that died), and its "RTT" is
 * that loss's, not its path's; it would stretch the path's reordering
 * allowance (loss.c rack_thresh) by as much.
 */
void mroce_pkt_acked(struct mroce_qp *qp, struct mroce_txpkt *rec, __u32 psn, __u64 now)
{
	struct mroce_path *p = &qp->paths[rec->path];

	qp->st.acked_bytes += rec->len;
	if (rec->state == PKT_LOST)
		mroce_reo_acked(qp, rec, psn, now);	/* a loss declared for nothing */
	if (rec->cross) {
		/* copies on several planes (tx.c): which one arrived is not known, none is credited */
	} else if (p->entropy == rec->entropy) {
		p->heard_us = now;
		if (qp->nplanes > 1) {
			mroce_plane_heard(qp, p->plane, rec->sent_us, now);
			mroce_plane_clocked(qp, p->plane, now);
		}
		if (p->bad && rec->sent_us > p->bad_sent_us)
			p->bad = false;		/* it delivers again: GOOD (paths.c) */
	} else if (rec->path < qp->attr.paths) {
		/* a route the slot left still delivers what was queued on it (loss.c) */
		struct mroce_left_route *l = mroce_left_route(qp, rec->path, rec->entropy);

		if (l) {
			l->heard_us = now;
			if (!rec->retx && !rec->gbn && rec->sent_us > l->del_sent_us)
				l->del_sent_us = rec->sent_us;
		}
	}
	if (!rec->retx && !rec->gbn && p->entropy == rec->entropy && now >= rec->sent_us) {
		__u32 rtt = (__u32)(now - rec->sent_us);

		if (!qp->echo_before || (__s32)((__u32)rec->sent_us - qp->echo_before) >= 0) {
			p->srtt_us = p->srtt_us ? (7 * p->srtt_us + rtt) / 8 : rtt;
			if (!p->min_rtt_us || rtt < p->min_rtt_us)
				p->min_rtt_us = rtt;
		}
		if (!p->samples || rtt < p->epoch_min_us)
			p->epoch_min_us = rtt;
		p->samples++;
		p->acked++;
		mroce_path_acked(qp, p);
		mroce_reo_overtaken(qp, p, rec);
		if (rec->sent_us >= qp->good_sent_us) {	/* news older than what it knows is none */
			qp->good_path = rec->path;
			qp->good_entropy = rec->entropy;
			qp->good_sent_us = rec->sent_us;
			qp->good_known = true;
		}
		if (!p->del_valid || (__s16)(rec->pseq - p->del_pseq) > 0) {
			p->del_pseq = rec->pseq;
			p->del_sent_us = rec->sent_us;
			p->del_valid = true;
		}
	}
	/* Newest transmission known delivered (for a resent packet, assume its last copy). */
	if ((__s32)(rec->tx_seq - qp->rack_seq) > 0 || !qp->rack_sent_us) {
		qp->rack_seq = rec->tx_seq;
		qp->rack_sent_us = rec->sent_us;
	}
	if (rec->state == PKT_LOST)
		qp->nlost--;
	mroce_rec_landed(qp, rec);
	rec->state = PKT_SACKED;
	qp->nsacked++;
	if (rec->kind == PKT_RESP) {
		struct mroce_rjob *j = &qp->rjobs[rec->wqe];

		if (++j->acked == (j->cancelled ? j->emitted : mroce_rjob_pkts(qp, j)) && j->used) {
			j->used = false;
			qp->rjobs_live--;
		}
	} else if (rec->kind == PKT_REQ) {
		struct mroce_swqe *w = SWQE(qp, rec->wqe);
		const struct mroce_op_info *op = mroce_op_info(w->opcode);
		struct mroce_stream *st = &qp->streams[w->stream];

		if (st->probing && st->probe_sent && rec == PKT(qp, st->probe_psn))
			st->probing = false;	/* the peer took it: the stream goes on */

		/* Ordered: a message that takes a receive waits for the cumulative ACK (comp.c). */
		if (++w->acked == w->npkts && !op->awaits_resp && !w->done &&
		    !(op->consumes_recv && qp->attr.order == MROCE_ORDERED)) {
			w->done = 1;
			w->status = MROCE_WC_SUCCESS;
		} else if (op->awaits_resp) {
			mroce_read_maybe_done(qp, w);
		}
	}
}

/* Everything before the cumulative PSN is delivered. True if that was news. */
static bool ack_cum(struct mroce_qp *qp, __u32 cum, __u64 now)
{
	bool progress = false;

	for (; mroce_psn_before(qp->snd_una, cum); qp->snd_una++) {
		struct mroce_txpkt *rec = PKT(qp, qp->snd_una);

		if (rec->state == PKT_INFLIGHT || rec->state == PKT_LOST)
			mroce_pkt_acked(qp, rec, qp->snd_una, now);
		if (rec->state == PKT_SACKED)
			qp->nsacked--;
		rec->state = PKT_FREE;
		progress = true;
	}
	return progress;
}

/* PSNs the SACK bitmap names as delivered. True if any was news. */
static bool ack_sack(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now)
{
	__u32 cum = h->cum_psn;
	bool progress = false;

	for (__u32 w = 0; w < MROCE_SACK_WORDS; w++) {
		for (__u64 bits = h->sack[w]; bits; bits &= bits - 1) {
			__u32 psn = cum + 1 + 64 * w + (__u32)__builtin_ctzll(bits);
			struct mroce_txpkt *rec;

			if (!mroce_psn_before(psn, qp->snd_nxt))
				goto done;
			/*
			 * A late ACK (they take different paths) may name PSNs
			 * already behind snd_una, whose ring slots now hold PSNs
			 * 1024 later: those must not be taken as delivered.
			 */
			if (mroce_psn_before(psn, qp->snd_una))
				continue;
			rec = PKT(qp, psn);
			if (rec->state == PKT_INFLIGHT || rec->state == PKT_LOST) {
				mroce_pkt_acked(qp, rec, psn, now);
				progress = true;
			}
			if (!qp->have_sack || mroce_psn_before(qp->high_sacked, psn)) {
				qp->high_sacked = psn;
				qp->have_sack = true;
			}
		}
	}
done:
	if (qp->have_sack && mroce_psn_before(qp->high_sacked, qp->snd_una))
		qp->have_sack = false;
	return progress;
}

/*
 * An echo further back than this, or ahead of our clock (modulo 2^32 that is
 * the same test), is no time of ours: a peer's bug or lie, or an echo from
 * before the clock wrapped. It is no RTT sample and orders no echoes.
 */
#define MROCE_ECHO_MAX_US	10000000

/* The RTT the ACK's timestamp echo measures: the QP's estimators and congestion control. */
static void ack_rtt(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now)
{
	__u32 rtt = (__u32)now - h->ts_echo, dev_us;

	dev_us = rtt > qp->srtt_us ? rtt - qp->srtt_us : qp->srtt_us - rtt;
	/* far beyond the spread: a peer (or we) waiting for a CPU (loss.c, "Scheduling stalls") */
	mroce_peer_stall(qp, qp->srtt_us && rtt > qp->srtt_us + 4 * qp->rttvar_us ? dev_us : 0, now);
	qp->rttvar_us = qp->srtt_us ? (3 * qp->rttvar_us + dev_us) / 4 : rtt / 2;
	qp->rttdev_us = qp->srtt_us ? (3 * qp->rttdev_us + dev_us) / 4 : 0;
	qp->srtt_us = qp->srtt_us ? (7 * qp->srtt_us + rtt) / 8 : rtt;
	qp->dev->rtt_hint_us = qp->srtt_us;
	if (!qp->min_rtt_us || rtt < qp->min_rtt_us)
		qp->min_rtt_us = rtt;
	mroce_cc_on_ack(qp, h, rtt, now);
}

/*
 * Timeouts since the last progress, and this ACK, the first progress since,
 * acknowledges the timed-out head while echoing a packet sent before the last
 * of them: the receiver had the head before its resend, only the ACKs were
 * late (Eifel, RFC 3522); on a loaded host, a receiving process
 * descheduled for milliseconds. Only if nothing beyond the head had been
 * acknowledged either: a head late alone is on a slow path, which the
 * timeouts are there to retire (loss.c rto_fire). Another stall as long
 * would time out again: the floor rises to half again what this ACK took
 * (within 16 high RTOs), and sinks by 1 us per ACK with progress (some 0.1
 * to 1 s at full rate).
 */
static void rto_floor_update(struct mroce_qp *qp, const struct mroce_hdr *h, bool stalled,
			     __u64 now)
{
	__u32 took = (__u32)now - h->ts_echo, cap = 16 * qp->attr.rto_high_us, floor;

	if (!qp->timeouts || !stalled || !h->ts_echo ||
	    (__s32)(h->ts_echo - (__u32)qp->last_progress_us) >= 0) {
		qp->rto_floor_us -= qp->rto_floor_us > 0;
		return;
	}
	floor = took < cap / 3 * 2 ? took + took / 2 : cap;
	if (floor > qp->rto_floor_us)
		qp->rto_floor_us = floor;
	mroce_peer_stall(qp, took, now);	/* the timers before the RTO wait for it too */
}

void mroce_handle_ack(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now)
{
	__u32 inflight, una = qp->snd_una;
	bool progress, sacked = qp->have_sack;
	struct mroce_hdr untimed;

	qp->dev->stats.acks_rx++;
	/* Ignore what acknowledges PSNs we never sent. */
	if (mroce_psn_before(qp->snd_nxt, h->cum_psn))
		return;
	qp->peer_asks = h->pflags & MROCE_PF_ASKS;	/* whether our timers may ask (loss.c) */
	/* A plane probe's nonce echoed (before the ACK's news: it may acknowledge the probe) */
	if (qp->nplanes > 1 && h->ts_echo && mroce_planes_echo(qp, h->ts_echo, now)) {
		untimed = *h;
		untimed.ts_echo = 0;	/* not a time: no RTT sample, no echo order */
		h = &untimed;
	}
	if (h->ts_echo && (__u32)now - h->ts_echo >= MROCE_ECHO_MAX_US) {
		qp->dev->echo_odd++;
		if (qp->echo_guesses < UINT32_MAX)
			qp->echo_guesses++;
		untimed = *h;
		untimed.ts_echo = 0;
		h = &untimed;
	}
	/* Marks count for the path scoreboard whether or not congestion control is on. */
	qp->st.ecn_ce += h->ecn_ce;
	if (h->path < qp->attr.paths) {
		qp->paths[h->path].echoes++;
		qp->paths[h->path].marks += h->ecn_ce;
		if (h->ecn_ce)
			mroce_path_marked(qp, h->path, now);
	}
	mroce_grant_heard(qp, h);
	qp->echo_before = qp->echo_newest;
	progress = ack_cum(qp, h->cum_psn, now);
	progress |= ack_sack(qp, h, now);
	if (progress)
		qp->stall_slot = 0;	/* not stalled: resends go their usual way (planes.c) */
	/*
	 * An RTT sample only from an ACK that acknowledges something new: one
	 * sent again for a duplicate echoes the newest packet's time, which may
	 * be long past while the sender only resends, and would inflate the RTT
	 * until loss detection waits for ever.
	 */
	if (h->ts_echo && progress)
		ack_rtt(qp, h, now);
	if (h->ts_echo && (!qp->echo_newest || (__s32)(h->ts_echo - qp->echo_newest) > 0))
		qp->echo_newest = h->ts_echo;
	inflight = qp->snd_nxt - qp->snd_una;
	if (progress) {
		/*
		 * Two tail probes or more went unanswered, then the peer answered:
		 * it was gone that long, waiting for a CPU (or a route died under
		 * the probes: rarer, and it only makes the next probe wait longer).
		 * One probe answered is a loss repaired: no evidence.
		 */
		if (qp->tlp_out >= 2 && now > qp->last_progress_us)
			mroce_peer_stall(qp, (__u32)(mroce_since(now, qp->last_progress_us) < UINT32_MAX ?
					      mroce_since(now, qp->last_progress_us) : UINT32_MAX), now);
		rto_floor_update(qp, h, una != qp->snd_una && !sacked, now);
		qp->last_progress_us = now;
		qp->rto_us = mroce_rto_base(qp, inflight);
		qp->timeouts = 0;
		qp->tlp_out = 0;
	}
	if (mroce_psack_holes(qp, h, now)) {
		qp->loss_seen_us = now;	/* loss.c "Asks" */
		mroce_cc_on_loss(qp, now);
	}
	mroce_ask_heard(qp, h, now);
	mroce_rack_detect(qp, now);
}

/* A request (by SQ sequence) failed with st: it carries the error, the QP fails. */
static void fail_request(struct mroce_qp *qp, struct mroce_swqe *w, enum mroce_wc_status st)
{
	if (w) {
		w->done = 1;
		w->status = (__u8)st;
	}
	mroce_qp_fail(qp, st);
}

/* The request a record belongs to, if it is still unfinished. */
static struct mroce_swqe *request_of(struct mroce_qp *qp, const struct mroce_txpkt *rec)
{
	struct mroce_swqe *w = SWQE(qp, rec->wqe);

	if (rec->kind != PKT_REQ || mroce_psn_before(rec->wqe, qp->sq_head) ||
	    !mroce_psn_before(rec->wqe, qp->sq_tail) || w->done)
		return NULL;
	return w;
}

/*
 * The unfinished receive-consuming request that is message msn of a stream,
 * or NULL. An error NACK of a PSN given up (PKT_VOID) is about the message's
 * older attempt: the receiver found the message bad all the same.
 */
static struct mroce_swqe *stream_request(struct mroce_qp *qp, __u16 stream, __u32 msn)
{
	for (__u32 i = qp->sq_head; i != qp->sq_tail; i++) {
		struct mroce_swqe *w = SWQE(qp, i);

		if (w->stream == stream && w->msn == msn && !w->done &&
		    mroce_op_info(w->opcode)->consumes_recv)
			return w;
	}
	return NULL;
}

/* When the next held stream's RNR wait ends, after now (0: none is held). */
__u64 mroce_streams_next_hold(const struct mroce_qp *qp, __u64 now)
{
	__u64 next = 0;

	for (__u32 i = 0; i < qp->attr.streams; i++) {
		__u64 t = qp->streams[i].hold_until_us;

		if (t > now && (!next || t < next))
			next = t;
	}
	return next;
}

/*
 * The peer refused message `from` of stream st for want of a receive (RNR):
 * it and the stream's later messages start again (protocol.md, "Streams").
 * Their packets give up their PSNs: the records become PKT_VOID, resent (if
 * lost or refused) as VOIDs that only fill the receiver's window, so that a
 * stream whose receiver posts nothing holds no other stream's window back.
 * The messages are sent again in the stream's next epoch, with new PSNs,
 * after the RNR timer, one packet (the probe) first.
 */
static void stream_restart(struct mroce_qp *qp, __u32 stream, __u32 from, __u64 now)
{
	struct mroce_stream *st = &qp->streams[stream];

	st->epoch++;
	qp->st.stream_restarts++;
	st->probing = true;
	st->probe_sent = false;
	st->hold_until_us = now + qp->attr.rnr_timer_us;
	if (!qp->rnr_until_us || st->hold_until_us < qp->rnr_until_us)
		qp->rnr_until_us = st->hold_until_us;	/* a wake-up; engine.c finds the next */
	for (__u32 psn = qp->snd_una; psn != qp->snd_nxt; psn++) {
		struct mroce_txpkt *rec = PKT(qp, psn);
		const struct mroce_swqe *w = SWQE(qp, rec->wqe);

		if (rec->state == PKT_FREE || rec->kind != PKT_REQ ||
		    mroce_psn_before(rec->wqe, qp->sq_head) || !mroce_psn_before(rec->wqe, qp->sq_tail) ||
		    w->stream != stream || w->done || !mroce_op_info(w->opcode)->consumes_recv ||
		    mroce_psn_before(w->msn, from))
			continue;
		rec->kind = PKT_VOID;
		rec->len = 0;
	}
	for (__u32 i = qp->sq_head; i != qp->sq_tail; i++) {
		struct mroce_swqe *w = SWQE(qp, i);

		if (w->stream != stream || w->done || !mroce_op_info(w->opcode)->consumes_recv ||
		    mroce_psn_before(w->msn, from))
			continue;
		w->sent = w->emitted = w->acked = 0;
		w->epoch = st->epoch;
		if (mroce_psn_before(i, qp->sq_next))
			qp->sq_next = i;
	}
}

/*
 * The request at SQ sequence seq ran out of RNR retries: its stream fails,
 * not the QP (protocol.md, "Streams"). The request carries the error; the
 * stream's later requests not yet started are flushed (a WRITE or READ
 * already on the wire finishes and reports its own outcome, so that no
 * record points at a recycled entry), and so are later ones that failed
 * before it and wait for their turn (a later message out of retries first:
 * in the stream's order the first failure carries the error, as in a QP's
 * error flush); earlier requests of the stream go on to their own outcome,
 * RNR waits included. The stream's send half stays in error
 * (posting on it: -EIO) for the QP's life: its peer may keep bytes of the
 * attempt given up, in the receive its next message would take, and no
 * message renumbers the stream. Earlier requests of the stream, the other
 * streams, its receive half (the peer's messages) and the QP go on. A QP
 * of one stream is an ibverbs RC QP: it fails, as there.
 */
static void stream_fail(struct mroce_qp *qp, __u32 seq, enum mroce_wc_status why)
{
	struct mroce_swqe *w = SWQE(qp, seq);
	struct mroce_stream *st = &qp->streams[w->stream];

	if (qp->attr.streams == 1) {
		fail_request(qp, w, why);
		return;
	}
	w->done = 1;
	w->status = (__u8)why;
	w->stream_err = 1;
	st->failed = true;
	st->probing = st->probe_sent = false;
	st->hold_until_us = 0;
	for (__u32 i = seq + 1; i != qp->sq_tail; i++) {
		struct mroce_swqe *x = SWQE(qp, i);

		if (x->stream != w->stream || x->reported ||
		    (x->done ? !x->stream_err : x->emitted != 0))
			continue;
		x->done = 1;
		x->status = MROCE_WC_WR_FLUSH_ERR;
		x->stream_err = 1;
	}
}

/*
 * An RNR NACK. Of an attempt given up already (a PKT_VOID record): the
 * PSN is resent as a VOID. Of the current attempt at a message: its stream
 * restarts from it, and that is one RNR wait. rnr_retry counts waits per
 * request, as verbs has it: every packet of the stream in flight when the
 * receiver ran out of receives is NACKed, and that is one wait (only the
 * first NACK finds its record live). The request refused more than
 * rnr_retry times fails its stream (stream_fail); rnr_retry 7 waits for
 * ever, as in ibverbs.
 */
static void nack_rnr(struct mroce_qp *qp, struct mroce_txpkt *rec, const struct mroce_hdr *h,
		     __u64 now)
{
	struct mroce_swqe *w = request_of(qp, rec);

	if (rec->kind == PKT_REQ) {
		if (!w || !mroce_op_info(w->opcode)->consumes_recv || w->stream != h->nak_stream ||
		    w->epoch != h->nak_epoch || w->msn != h->nak_msn)
			return;	/* not about this record's message as it is now */
		stream_restart(qp, w->stream, w->msn, now);
		if (qp->attr.rnr_retry != 7 && ++w->rnr_waits > qp->attr.rnr_retry) {
			stream_fail(qp, rec->wqe, MROCE_WC_RNR_RETRY_EXC_ERR);
			if (qp->state != MROCE_QPS_RTS)
				return;
		}
	}
	if (rec->kind == PKT_VOID && rec->state == PKT_INFLIGHT) {
		mroce_rec_landed(qp, rec);
		rec->state = PKT_LOST;	/* refused, so not received: the VOID goes now */
		rec->retx = 0;
		qp->nlost++;
	}
}

/*
 * Go-back-N: everything from the gap on is resent; only the gap counts as a
 * retry. The receiver NACKs a gap again while it lasts (once per
 * MROCE_ANSWER_GAP_NS): a NACK that comes back sooner than a round trip
 * after the gap was resent was sent before the resend could arrive, and
 * resending the window once more would only add to the load.
 */
static void nack_seq(struct mroce_qp *qp, __u32 psn, __u64 now)
{
	const struct mroce_txpkt *gap = PKT(qp, psn);

	if (gap->state == PKT_INFLIGHT && gap->retx && qp->srtt_us &&
	    mroce_since(now, gap->sent_us) < qp->srtt_us)
		return;
	for (__u32 p = psn; mroce_psn_before(p, qp->snd_nxt); p++) {
		struct mroce_txpkt *r = PKT(qp, p);

		if (r->state == PKT_INFLIGHT) {
			mroce_rec_landed(qp, r);
			r->state = PKT_LOST;
			r->gbn = p != psn;
			qp->nlost++;
		}
	}
}

static enum mroce_wc_status nak_status(__u8 code)
{
	switch (code) {
	case MROCE_NAK_REMOTE_ACCESS:	return MROCE_WC_REM_ACCESS_ERR;
	case MROCE_NAK_INVALID_REQ:	return MROCE_WC_REM_INV_REQ_ERR;
	case MROCE_NAK_REMOTE_OP:	return MROCE_WC_REM_OP_ERR;
	default:			return MROCE_WC_SUCCESS;
	}
}

void mroce_handle_nack(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now)
{
	enum mroce_wc_status st = nak_status(h->nak_code);
	__u32 psn = h->nak_psn;
	struct mroce_txpkt *rec;

	qp->dev->stats.nacks_rx++;
	if (mroce_psn_before(psn, qp->snd_una) || !mroce_psn_before(psn, qp->snd_nxt)) {
		/*
		 * A responder may refuse a READ long after its request was
		 * acknowledged (the region went away mid-response): the NACK
		 * names the READ by its id. Anything else this old is stale.
		 */
		struct mroce_swqe *w = st ? mroce_read_of(qp, h->nak_msn) : NULL;

		if (w)
			fail_request(qp, w, st);
		return;
	}
	rec = PKT(qp, psn);
	/*
	 * What came before the NACKed packet did arrive (it may overtake the
	 * ACK saying so): it counts first, so a receive found just before an
	 * RNR NACK ends the waits, and requests before a refused one complete.
	 */
	if ((h->nak_flags & MROCE_NAKF_CUM) && ack_cum(qp, psn, now)) {
		qp->last_progress_us = now;
		qp->timeouts = 0;
		mroce_complete_sq(qp);
		if (qp->state != MROCE_QPS_RTS)
			return;
	}
	if (st && rec->kind == PKT_REQ && !request_of(qp, rec))
		return;	/* about a request already complete (a READ whose region went after it) */
	if (st && rec->kind == PKT_VOID)
		fail_request(qp, stream_request(qp, h->nak_stream, h->nak_msn), st);
	else if (st)
		mroce_fail_wqe_of(qp, rec, st);
	else if (h->nak_code == MROCE_NAK_RNR)
		nack_rnr(qp, rec, h, now);
	else if (h->nak_code == MROCE_NAK_PSN_SEQ)
		nack_seq(qp, psn, now);
}
