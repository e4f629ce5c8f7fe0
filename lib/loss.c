// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loss detection and timers: RACK over transmission order, a timer of its
 * own for a resent window head, the retransmission timeout, and the
 * per-round timer work of a QP (delayed ACKs, scoreboard, stats).
 */
#include "cc.h"
#include "eng_int.h"

/*
 * Scheduling stalls. A software transport runs when its host gives it a
 * CPU: on a loaded host (2 cores, more runnable threads than that, a VM
 * whose vCPU is preempted) a progress thread or a polling application
 * waits milliseconds for one, against round trips of microseconds. A peer
 * in such a stall sends its ACK that much later, and a probe or a timeout
 * judged by the round trip alone resends what was never lost: 1000 8-byte
 * round trips on a clean veth pair, both ends busy-polling on 2 shared
 * cores, made 82 resends and 7 timeouts, and every resend also cost the
 * peer a duplicate. So every timer that resends because nothing was heard
 * (the tail probe, the resent head's timer, the RTO) waits, on top of its
 * round trips, twice the longest stall seen lately (mroce_stall_allow).
 * The evidence: our own rounds running late (dev.c: a round came this long
 * after the time the round before wanted the next, or, for an application
 * that polls, after the round before; the peer shares the host's lot, or a
 * host like it), and the peer's (ack.c): an RTT sample beyond the smoothed
 * RTT by more than four deviations, tail probes answered only after the
 * second (the peer took that long since the last progress), a timeout
 * proven spurious (rto_floor_update). Each is a maximum that halves every
 * MROCE_STALL_HALF_US without new evidence that large, so a quiet host's
 * timers come back to its round trips; the allowance is at most
 * MROCE_STALL_CAP high RTOs (512 ms with the defaults, as the RTO's own
 * backoff: a peer can be silent that long and alive). A host loaded once
 * stays loaded: with evidence halving every second, 10^4 round trips met
 * a 90-200 ms stall a few seconds after the last one, the allowance had
 * decayed below it, and 1 to 10 packets went again; halving every 5 s and
 * capped at 512 ms, none in 3 runs with stalls up to 150 ms. A simulation's
 * clock, which jumps from event to event, shows no stall unless a device
 * is not run (tests/sim.h's naps). RACK is not held back: it judges by
 * packets the peer did receive later, proof that it ran.
 */
#define MROCE_STALL_HALF_US	5000000

void mroce_stall_note(__u32 *stall, __u64 *at, __u32 seen, __u64 now)
{
	if (*stall && now > *at) {
		__u64 halves = (now - *at) / MROCE_STALL_HALF_US;

		if (halves) {
			*stall = halves < 32 ? *stall >> halves : 0;
			*at += halves * MROCE_STALL_HALF_US;
		}
	}
	if (seen > *stall || !*stall) {
		*stall = seen;
		*at = now;
	}
}

/* Evidence of the peer's: the QP's, and the device's latest for its new QPs. */
void mroce_peer_stall(struct mroce_qp *qp, __u32 seen, __u64 now)
{
	mroce_stall_note(&qp->stall_us, &qp->stall_at_us, seen, now);
	if (seen)
		mroce_stall_note(&qp->dev->peer_stall_us, &qp->dev->peer_stall_at_us, seen, now);
}

/* What the timers add: twice the longest stall seen lately, within MROCE_STALL_CAP high RTOs. */
#define MROCE_STALL_CAP		512

__u32 mroce_stall_allow(const struct mroce_qp *qp)
{
	__u64 s = qp->dev->stall_us > qp->stall_us ? qp->dev->stall_us : qp->stall_us;
	__u64 cap = (__u64)MROCE_STALL_CAP * qp->attr.rto_high_us;

	s *= 2;
	return (__u32)(s < cap ? s : cap < UINT32_MAX ? cap : UINT32_MAX);
}

/*
 * When the RTO expires: the allowance on top of it. Before the first RTT
 * sample nothing is known of the peer, and a peer that has only just
 * accepted may still be setting up (registering memory, posting receives)
 * with nobody running its transport, or be one of many threads starting
 * at once: a first request of a few packets waits MROCE_RTO_FIRST high
 * RTOs (16 ms with the defaults; TCP's first is 1 s, RFC 6298), and two of
 * the connection manager's round trips if longer (the exchange needed the
 * peer's application to run, as the first ACK needs its transport to).
 * Measured: the first 8-byte WRITE of a busy-polling pair on 2 loaded
 * cores was timed out twice, at 1 and 2 ms, its peer silent 3 ms. A tail
 * probe, from the device's other QPs' RTT, still resends a lost first
 * packet sooner. Not a first window of 3 packets or more: at an incast
 * its losses are a full queue's, and 8 senders into one link shared it
 * unfairly (Jain 0.83 against 0.99, tests/test_grant.c) when the senders
 * whose first windows were dropped waited 16 ms.
 */
#define MROCE_RTO_FIRST		16

__u64 mroce_rto_due(const struct mroce_qp *qp)
{
	/*
	 * Never below the timeout for what is in flight now: rto_us is set by
	 * the last ACK, for what was in flight then. A window refilled after
	 * an ACK that left 2 packets out kept the low timeout (3 RTTs, some
	 * 300 us) over 256 packets that take a millisecond to drain through a
	 * software bridge: a spurious timeout in 1 of 2 16 MiB WRITEs.
	 */
	__u64 rto = qp->rto_us, now_base = mroce_rto_base(qp, qp->snd_nxt - qp->snd_una);

	if (rto < now_base)
		rto = now_base;

	if (!qp->srtt_us && qp->snd_nxt - qp->snd_una < 3) {
		__u64 first = (__u64)MROCE_RTO_FIRST * qp->attr.rto_high_us;

		if (first < 2ull * qp->hs_rtt_us)
			first = 2ull * qp->hs_rtt_us;
		if (rto < first)
			rto = first;
	}
	return qp->last_progress_us + rto + mroce_stall_allow(qp);
}

/*
 * IRN's two timeouts: a low one while few packets are in flight (a tail loss
 * has nothing behind it to reveal it), a high one otherwise; never below a
 * few measured RTTs, since a software path's RTT varies far more than a NIC's,
 * nor below the stalls that made earlier timeouts spurious (ack.c).
 */
__u32 mroce_rto_base(const struct mroce_qp *qp, __u32 inflight)
{
	__u32 rto = inflight < 3 ? qp->attr.rto_low_us : qp->attr.rto_high_us;

	if (rto < qp->rto_floor_us)
		rto = qp->rto_floor_us;
	return rto > 3 * qp->srtt_us ? rto : 3 * qp->srtt_us;
}

/*
 * The timers that decide a peer is gone (the RTO, the READ response
 * timer) double on each expiry without progress, up to MROCE_RTO_BACKOFF
 * high RTOs (512 ms with the defaults), so that retry_cnt expiries (12)
 * span some 2.5 to 4 s of silence. A software transport's peer can be
 * silent that long and alive: its process waiting for a CPU. Measured
 * here, 8 ranks of a collective on 2 cores (selftests/test_coll.sh
 * eight_ranks): a woken progress thread waited 1.74 s on the run queue in
 * 1 run of 24, and the cap of 64 high RTOs before this one (about 1 s of
 * silence) failed a QP with retries exceeded in 1 run of 50 to 100.
 */
#define MROCE_RTO_BACKOFF	512

__u32 mroce_backoff(const struct mroce_qp *qp, __u32 base, __u32 expiries)
{
	__u64 cap = (__u64)MROCE_RTO_BACKOFF * qp->attr.rto_high_us, t;

	if (cap < base)
		cap = base;	/* three RTTs above the cap: never below them */
	if (cap > UINT32_MAX)
		cap = UINT32_MAX;
	t = expiries < 32 ? (__u64)base << expiries : cap;
	return (__u32)(t < cap ? t : cap);
}

/*
 * The head of the window, once resent, can only be proven lost again by
 * something transmitted after it; with the window full, nothing is. So it
 * gets a timer of its own, two RTTs plus the reordering allowance after its
 * last copy, doubling with each resend (retry_cnt bounds how often): the
 * RTO is several RTTs and, with nothing else to resend, a window blocked
 * behind one packet would wait all of it.
 */
__u64 mroce_head_due(const struct mroce_qp *qp, const struct mroce_txpkt *rec)
{
	/* with no RTT measured yet, two RTTs are unknown: wait an RTO instead */
	__u64 base = qp->srtt_us ? 2ull * qp->srtt_us + mroce_qp_reo_allow(qp) : qp->rto_us;

	base += mroce_stall_allow(qp);	/* the peer may be waiting for a CPU */
	return rec->sent_us + (base << (rec->retx > 10 ? 10 : rec->retx - 1));
}

/* True if it declared the head lost. */
static bool head_timer(struct mroce_qp *qp, __u64 now)
{
	struct mroce_txpkt *rec = PKT(qp, qp->snd_una);
	__u64 due;

	if (qp->snd_una == qp->snd_nxt || rec->state != PKT_INFLIGHT || !rec->retx || rec->gbn)
		return false;
	due = mroce_head_due(qp, rec);
	if (now >= due) {
		mroce_rec_landed(qp, rec);
		rec->state = PKT_LOST;
		rec->timer_lost = 1;
		qp->nlost++;
		mroce_path_copy_lost(qp, rec);
		mroce_path_head_lost(qp, rec);
		return true;
	}
	if (!qp->rack_timer_us || due < qp->rack_timer_us)
		qp->rack_timer_us = due;
	return false;
}

/*
 * A path (one entropy value: one ECMP route) delivers in the order it was
 * given, so a packet sent on it MROCE_PATH_DUPTHRESH or more places before
 * one that arrived is lost, now: no reordering allowance in time, no timer
 * (MetaRoCE's per-path sequence). The few places tolerate what little a
 * route reorders (a host's queues, a switch's jitter) without resending.
 * Only what the slot's current entropy value carried counts, and the
 * newest delivery is a first transmission's (a resend's ACK could be its
 * earlier copy's).
 */
static bool path_gap(const struct mroce_qp *qp, const struct mroce_txpkt *rec)
{
	const struct mroce_path *p = &qp->paths[rec->path];
	__u16 d = (__u16)(p->del_pseq - rec->pseq);

	return rec->path < qp->attr.paths && p->entropy == rec->entropy && p->del_valid &&
	       d >= MROCE_PATH_DUPTHRESH && d < 0x8000 &&
	       p->del_sent_us >= rec->sent_us + mroce_path_reo_us(qp, p);
}

/*
 * The copy went on a plane the device holds for dead (another connection
 * found it so: mroce_planes_shunned). Its route's own delay, and its
 * queue's presumption (path_delivering), are not waited for: a flow whose
 * ACKs died with plane 0 had its route's RTT taken from news that arrived
 * 30 us late, and waited 70 us more on the two packets lost there
 * (docs/scale.md). Only the time against other routes judges it, as for a
 * route that fell silent.
 */
static bool on_held_plane(const struct mroce_qp *qp, const struct mroce_txpkt *rec, __u32 shunned)
{
	const struct mroce_path *p = &qp->paths[rec->path];

	return shunned && rec->path < qp->attr.paths && p->entropy == rec->entropy &&
	       (shunned & 1u << p->plane);
}

/*
 * How long after its sending a packet may still arrive behind later ones
 * on other paths: an RTT plus the reordering allowance, and no less than
 * its own path's RTT with the same allowance: a path slower than the rest
 * (or, just given a fresh entropy value, of delay not known yet, taken as
 * twice the QP's, or its plane's probe echo's if longer: a slow plane
 * just proven had its whole first window resent) is not taken for lossy
 * because faster ones overtook it.
 * Losses on the path itself are found by path_gap, without waiting.
 */
#define MROCE_UNPROVEN_THRESH_US	(1u << 30)	/* no verdict by time: the plane's decides */

static __u32 rack_thresh(const struct mroce_qp *qp, const struct mroce_txpkt *rec, bool held)
{
	const struct mroce_path *p = &qp->paths[rec->path];
	__u32 allow = mroce_qp_reo_allow(qp);
	__u32 t = qp->srtt_us + allow;

	if (rec->path < qp->attr.paths && p->entropy == rec->entropy && !held) {
		__u32 own = p->srtt_us ? p->srtt_us : 2 * qp->srtt_us;

		/*
		 * No RTT of its own yet: twice its plane's probe echo, if longer.
		 * The echo went out on the plane and came back on any; an ACK
		 * may come back on the plane itself.
		 */
		if (!p->srtt_us && qp->nplanes > 1 && 2 * qp->planes[p->plane].echo_rtt_us > own)
			own = 2 * qp->planes[p->plane].echo_rtt_us;
		/*
		 * On a plane not proven yet (planes.c): judged by the plane's
		 * verdict, not against the others. Its echo proves it and gives
		 * its delay (then the rules above); a plane found dead has what
		 * it carried declared lost at once. A plane slower than the
		 * first had its whole first window resent for being overtaken.
		 */
		if (qp->nplanes > 1 && qp->planes[p->plane].unproven && !qp->planes[p->plane].down)
			return MROCE_UNPROVEN_THRESH_US;
		own += allow;

		if (own > t)
			t = own;
	}
	return t;
}

/*
 * A packet's own route is still delivering what was queued before it: its
 * slot (on the same entropy value) had a copy acknowledged within the last
 * `thresh`, and none sent after this one yet. A route is a FIFO, so such a
 * packet is queued, not lost; if it was lost, the copies behind it on the
 * route show it (path_gap, or this rule no longer holding) as they land. Time alone, against other routes, is no
 * evidence while the queue drains: on rate-limited links a slot's queue
 * grows faster than its smoothed RTT follows, and every packet in it would
 * be resent for nothing. A route that falls silent (dead, or its tail
 * lost) is judged by time again `thresh` after its last delivery. The
 * same holds on the routes a slot was moved off lately (qp->left): what is
 * queued there still arrives.
 */
static bool path_delivering(struct mroce_qp *qp, const struct mroce_txpkt *rec,
			    __u32 thresh, __u64 now, bool held, __u64 *until)
{
	const struct mroce_path *p = &qp->paths[rec->path];
	const struct mroce_left_route *l;
	__u64 heard, del_sent;

	if (rec->path >= qp->attr.paths || qp->attr.paths < 2 || rec->retx || rec->gbn || held)
		return false;
	if (p->entropy == rec->entropy) {
		heard = p->heard_us;
		del_sent = p->del_valid ? p->del_sent_us : 0;
	} else if ((l = mroce_left_route(qp, rec->path, rec->entropy))) {
		heard = l->heard_us;	/* a route the slot left: the same rule */
		del_sent = l->del_sent_us;
	} else {
		return false;
	}
	*until = heard + thresh;	/* when the rule stops holding unless its route delivers again */
	return heard > rec->sent_us && now < heard + thresh && del_sent <= rec->sent_us;
}

/*
 * A copy in flight declared lost on the peer's news (RACK, the per-path
 * rule, an answer to an ask): remembered in case it was only reordering
 * (reorder.c), out of the pipe, charged to its route, to be resent.
 */
void mroce_declare_lost(struct mroce_qp *qp, struct mroce_txpkt *rec, __u32 psn)
{
	mroce_reo_declared(qp, rec, psn);
	mroce_rec_landed(qp, rec);
	rec->state = PKT_LOST;
	mroce_path_copy_lost(qp, rec);
	mroce_path_loss(qp, rec);
	qp->nlost++;
}

/*
 * Holes, judged by transmission order and time (RACK, RFC 8985), not PSN: a
 * packet is lost once something transmitted after it (or with it) has been
 * delivered and an RTT plus a reordering allowance has passed since it was
 * sent, unless its own route is still delivering what was queued before it
 * (path_delivering). The allowance grows with the RTT's deviation, which is
 * what spraying over paths of different delay produces; nothing waits for
 * three duplicate ACKs; a retransmission is judged only by what was sent
 * after it. Runs on every ACK and, for holes not yet ripe, on a timer.
 * Returns the packets it declared lost.
 */
static __u32 rack_holes(struct mroce_qp *qp, __u64 now)
{
	__u32 lost = 0, shunned = qp->nplanes > 1 ? mroce_planes_shunned(qp, now) : 0;
	bool held;

	for (__u32 psn = qp->snd_una; mroce_psn_before(psn, qp->high_sacked); psn++) {
		struct mroce_txpkt *rec = PKT(qp, psn);
		__u64 until = 0;
		__u32 thresh;

		if (rec->state != PKT_INFLIGHT || (__s32)(qp->rack_seq - rec->tx_seq) <= 0)
			continue;
		held = on_held_plane(qp, rec, shunned);
		thresh = rack_thresh(qp, rec, held);
		bool gap = path_gap(qp, rec);

		if (gap || (now >= rec->sent_us + thresh &&
			    !path_delivering(qp, rec, thresh, now, held, &until) &&
		    (qp->rack_seq - rec->tx_seq >= qp->attr.reorder_pkts ||
		     qp->rack_sent_us + qp->srtt_us / 2 >= rec->sent_us))) {
			mroce_declare_lost(qp, rec, psn);
			if (!gap)
				mroce_path_suspect(qp, rec, thresh, now);
			lost++;
		} else {
			__u64 due = rec->sent_us + thresh;

			if (now >= due && path_delivering(qp, rec, thresh, now, held, &until))
				due = until;	/* looked at again when its route falls silent */
			if (!qp->rack_timer_us || due < qp->rack_timer_us)
				qp->rack_timer_us = due;
		}
	}
	return lost;
}

void mroce_rack_detect(struct mroce_qp *qp, __u64 now)
{
	bool lost;

	qp->rack_timer_us = 0;
	lost = head_timer(qp, now);
	if (!qp->have_sack) {
		if (lost)
			mroce_cc_on_loss(qp, now);
		return;
	}
	if (rack_holes(qp, now)) {
		qp->loss_seen_us = now;	/* the peer's news shows a loss (mroce_ask_heard) */
		lost = true;
	}
	if (lost)
		mroce_cc_on_loss(qp, now);
	mroce_path_scoreboard(qp, now);
}

/*
 * Asks. A timer that hears nothing (the tail probe, the RTO) resends what
 * it waited on, presuming it lost. On a host that runs late (stalls seen
 * lately, ours or the peer's: mroce_stall_allow) over a wire that has lost
 * nothing lately, that presumption is mostly wrong: the peer was waiting
 * for a CPU with the packet in its ring, and the resend only costs it a
 * duplicate (the RTO also a window and a backoff). 10^4 8-byte round trips
 * on a clean veth pair, both ends busy-polling on 2 shared cores, still
 * made 9-13 resends and 2-3 timeouts in 1 run of 4 with every stall
 * allowance in place: a stall longer than any seen before (0.8-1.7 ms)
 * outlasts any allowance learned from the past. There, the timer asks
 * instead: an ACK of ours with MROCE_F_ACK_REQ, which the peer answers at
 * once, echoing its time (rx.c). That answer, or any ACK echoing a time
 * at or after the oldest ask out, shows what had arrived by the time the
 * ask did: what was sent before the ask by more than the reordering
 * allowance (rack_thresh's, less the RTT: the ask took one way too) and is
 * still not acknowledged is lost, and goes again at once. A real loss
 * costs one round trip more than a blind resend; a stall costs nothing.
 * Only to a peer whose ACKs say it answers (MROCE_PF_ASKS); only for the
 * first MROCE_ASK_RTOS expiries of the RTO in one silence (an ask, like
 * any packet, can meet a dead route: the classic RTO, which moves paths,
 * takes over, and retry_cnt counts every expiry alike); and not on a wire
 * where the peer's news showed a loss in the last MROCE_ASK_CLEAN_US (a
 * hole its SACKs left, RACK's or the per-path rule's verdict, an answer's:
 * not a timer's own resend, which a stall makes), where a silence is
 * likelier a loss and the blind resend the faster repair. A simulation's
 * clock shows no stall, so the simulated studies resend as before.
 */
#define MROCE_ASK_RTOS		3
#define MROCE_ASK_CLEAN_US	100000

static bool ask_first(const struct mroce_qp *qp, __u64 now)
{
	return qp->peer_asks && !qp->attr.go_back_n && mroce_stall_allow(qp) &&
	       (!qp->loss_seen_us || mroce_since(now, qp->loss_seen_us) >= MROCE_ASK_CLEAN_US);
}

static void ask(struct mroce_qp *qp, __u64 now)
{
	qp->ask_due = true;
	qp->ack_now = true;	/* both stay due while no transmit buffer is free */
	mroce_send_ack(qp, now);
}

/* An ask went out (tx.c): the oldest one out is what answers are judged by. */
void mroce_ask_sent(struct mroce_qp *qp, __u32 ts, __u64 now)
{
	qp->ask_due = false;
	qp->st.asks++;
	if (qp->ask_live)
		return;
	qp->ask_live = true;
	qp->ask_ts = ts;
	qp->ask_sent_us = now;
	qp->ask_nxt = qp->snd_nxt;
}

/* An ACK came (ack.c, after its news is taken): if it answers the ask out, the verdict. */
void mroce_ask_heard(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now)
{
	__u32 lost = 0, shunned;

	if (!qp->ask_live || !h->ts_echo || (__s32)(h->ts_echo - qp->ask_ts) < 0)
		return;
	qp->ask_live = false;
	shunned = qp->nplanes > 1 ? mroce_planes_shunned(qp, now) : 0;
	for (__u32 psn = qp->snd_una; mroce_psn_before(psn, qp->ask_nxt) &&
	     mroce_psn_before(psn, qp->snd_nxt); psn++) {
		struct mroce_txpkt *rec = PKT(qp, psn);
		__u32 allow;

		if (rec->state != PKT_INFLIGHT)
			continue;
		allow = rack_thresh(qp, rec, on_held_plane(qp, rec, shunned));
		allow -= allow > qp->srtt_us ? qp->srtt_us : allow;
		if (rec->sent_us + allow > qp->ask_sent_us)
			continue;	/* may still be on its way: later asks, or RACK, judge it */
		mroce_declare_lost(qp, rec, psn);
		lost++;
	}
	qp->st.ask_losses += lost;
	if (lost) {
		qp->loss_seen_us = now;
		mroce_cc_on_loss(qp, now);
	}
}

/*
 * Nothing acknowledged for an RTO. A go-back-N receiver discarded
 * everything behind the gap, so all of it goes again (only the oldest
 * counts as a retry of its own). A selective one kept what arrived: only
 * the oldest packet not known delivered is resent, as TCP does; the ACK it
 * brings back shows the rest (RACK then resends what was sent before it),
 * and a timeout that was only a slow ACK costs one packet, not a window.
 * A head known delivered (SACKed, or proven by a READ response) whose
 * cumulative ACK was lost is resent too, as a probe: the receiver finds it
 * a duplicate and acknowledges again.
 */
static void rto_mark(struct mroce_qp *qp, __u64 now)
{
	struct mroce_txpkt *head = PKT(qp, qp->snd_una);
	bool oldest = true;

	if (head->state == PKT_SACKED && !qp->attr.go_back_n)
		mroce_send_probe(qp, qp->snd_una, head);
	for (__u32 psn = qp->snd_una; psn != qp->snd_nxt; psn++) {
		struct mroce_txpkt *rec = PKT(qp, psn);

		if (rec->state != PKT_INFLIGHT || mroce_since(now, rec->sent_us) < qp->rto_us)
			continue;
		/* not charged to the path: a timeout says nothing about which one */
		mroce_rec_landed(qp, rec);
		rec->state = PKT_LOST;
		rec->gbn = !oldest;
		mroce_path_copy_lost(qp, rec);
		rec->timer_lost = oldest;
		oldest = false;
		qp->nlost++;
		if (!qp->attr.go_back_n)
			break;
	}
}

/* When the response timer of our outstanding READs next fires. */
__u64 mroce_read_due(const struct mroce_qp *qp)
{
	/* a responder off the CPU is not gone (mroce_stall_allow) */
	return qp->rd_progress_us + mroce_backoff(qp, mroce_rto_base(qp, 3), qp->rd_timeouts) +
	       mroce_stall_allow(qp);
}

/*
 * READ responses stopped coming: the responder resends lost response
 * packets itself while it lives, so this timer only has to notice a
 * responder that is gone. After retry_cnt expiries without a response
 * byte placed (backing off), the oldest outstanding READ fails with
 * retries exceeded, as a WRITE to a dead peer does. A request the
 * responder could not take yet was never acknowledged, so the RTO resends
 * it (re-requesting the whole range).
 */
static void read_timer(struct mroce_qp *qp, __u64 now)
{
	if (!qp->rd_outstanding || now < mroce_read_due(qp))
		return;
	qp->rd_progress_us = now;
	qp->st.rto_events++;
	qp->dev->stats.rto_events++;
	if (++qp->rd_timeouts <= qp->attr.retry_cnt)
		return;
	for (__u32 i = qp->sq_head; i != qp->sq_next; i++) {
		struct mroce_swqe *w = SWQE(qp, i);

		if (!w->done && w->emitted && mroce_op_info(w->opcode)->awaits_resp) {
			w->done = 1;
			w->status = MROCE_WC_RETRY_EXC_ERR;
			break;
		}
	}
	mroce_qp_fail(qp, MROCE_WC_RETRY_EXC_ERR);
}

/*
 * A stalled QP over planes: where a resend would go (planes.c). True if a
 * slot was named for it (a down plane's probe, one packet more on a plane
 * not proven yet, a plane with nothing out: mroce_planes_stall_probes): the
 * silence may be the planes it uses, not the peer, and only a packet there
 * tells; an ask goes the way ACKs go, on those planes (256 hosts'
 * all-to-all over 2 planes, the second failed half way
 * while connections held the first down: they asked into the dead one,
 * timeout after timeout, and it took 16.6 ms, 0.64 since).
 */
static bool stalled_probe(struct mroce_qp *qp, __u64 now)
{
	if (qp->nplanes < 2)
		return false;
	mroce_planes_stalled(qp, now);
	return mroce_planes_stall_probes(qp);
}

static void rto_fire(struct mroce_qp *qp, __u64 now)
{
	bool probe = stalled_probe(qp, now);

	if (++qp->timeouts <= qp->attr.retry_cnt && qp->timeouts <= MROCE_ASK_RTOS && !probe &&
	    ask_first(qp, now)) {
		/* the silence of a host that runs late: asked, not yet a timeout ("Asks") */
		ask(qp, now);
		qp->rto_us = mroce_backoff(qp, qp->rto_us, 1);
		qp->last_progress_us = now;
		return;
	}
	qp->dev->stats.rto_events++;
	qp->st.rto_events++;
	if (qp->timeouts > qp->attr.retry_cnt) {
		mroce_fail_wqe_of(qp, PKT(qp, qp->snd_una), MROCE_WC_RETRY_EXC_ERR);
		return;
	}
	/*
	 * Two timeouts in a row: the head's path slot may sit on a dead
	 * route, and for a single-path QP it is the only slot. It gets a
	 * fresh entropy value, as PLB and Ultra Ethernet rotate entropy on
	 * timeouts. A route that is merely slow keeps its ACKs coming and
	 * never gets here.
	 */
	if (qp->timeouts >= 2 && !qp->attr.static_paths) {
		struct mroce_txpkt *head = PKT(qp, qp->snd_una);

		if (head->path < qp->attr.paths && qp->paths[head->path].entropy == head->entropy)
			mroce_path_retire(qp, &qp->paths[head->path]);
	}
	rto_mark(qp, now);
	mroce_cc_on_rto(qp, now);
	qp->rto_us = mroce_backoff(qp, qp->rto_us, 1);
	qp->last_progress_us = now;
}

/*
 * Tail loss probe (RACK-TLP, RFC 8985 section 7). RACK finds a hole only
 * once something sent after it is delivered; the last packets of a burst
 * have nothing after them, and a route that dies under a flow's tail
 * leaves them to the RTO, whose floor (rto_low_us) is tens of round trips
 * where RTTs are microseconds. So, two RTTs and the reordering allowance
 * after the newest transmission with no progress since, the newest packet
 * still in flight beyond what the peer reported goes again, on another
 * path (tx_resend): a probe, no timeout counted, no backoff, no window
 * cut. Its acknowledgement carries the SACK that lets RACK find the rest.
 * A probe is one packet on one route, and a route that died under the
 * tail may take it (or the ACK it brings back): unanswered, a second goes
 * one wait after it, and each one after that twice the wait before it, on
 * another slot each (tx_resend moves every resend on), until the RTO, which
 * stays the verdict on a peer that is gone (MROCE_TLP_MAX only bounds the
 * doubling: with the defaults the RTO comes after 6 or 7 probes). (Every
 * probe twice the wait of the one before made a flow whose first probe met
 * a dead route wait longer than the flow; every probe one wait apart loaded
 * an incast's overflowing queue: a 128-to-1 incast took 1.87 -> 2.76 times
 * the ideal; at most 4 probes left a flow whose first four met dead routes,
 * and whose ACKs all had, idle for 0.74 ms till its RTO: docs/scale.md.)
 * 0: none due.
 */
#define MROCE_TLP_MAX	16

__u64 mroce_tlp_due(const struct mroce_qp *qp)
{
	__u64 from = qp->last_tx_us > qp->last_progress_us ? qp->last_tx_us : qp->last_progress_us;
	__u32 srtt = qp->srtt_us, var = qp->rttvar_us, dev = qp->rttdev_us;
	__u32 base = mroce_qp_base_rtt(qp);
	__u64 pto;

	if (!srtt) {	/* nothing measured yet: the device's other QPs have */
		srtt = base = qp->dev->rtt_hint_us;
		var = srtt / 2;
		dev = 0;
	}
	/* a probe is one packet: a spread not measured yet is not waited for */
	pto = 2ull * srtt + mroce_reo_allow(base, var, dev, qp->path_spread_us ? qp->path_spread_us : 1);
	pto += mroce_stall_allow(qp);	/* the peer may be waiting for a CPU: no evidence of loss */
	if (qp->tlp_out >= MROCE_TLP_MAX || qp->snd_nxt == qp->snd_una || !srtt || qp->nlost ||
	    qp->attr.go_back_n)
		return 0;
	from += pto << (qp->tlp_out ? qp->tlp_out - 1 : 0);
	return from < mroce_rto_due(qp) ? from : 0;
}

static void tlp_fire(struct mroce_qp *qp, __u64 now)
{
	qp->tlp_out++;
	if (!stalled_probe(qp, now) && ask_first(qp, now)) {
		ask(qp, now);	/* the answer resends what is missing ("Asks") */
		return;
	}
	for (__u32 psn = qp->snd_nxt - 1; psn != qp->snd_una - 1; psn--) {
		struct mroce_txpkt *rec = PKT(qp, psn);

		/*
		 * Below the highest SACKed it is RACK's, with its own timer,
		 * unless the stall named a slot on another plane for the probe
		 * (mroce_planes_stalled): then the newest packet still out goes
		 * there. A QP whose planes up all died may have only resends out,
		 * which nothing delivered after them will ever judge.
		 */
		if (qp->have_sack && !mroce_psn_before(qp->high_sacked, psn) && !qp->stall_slot)
			return;
		if (rec->state != PKT_INFLIGHT)
			continue;
		mroce_rec_landed(qp, rec);
		rec->state = PKT_LOST;
		qp->nlost++;
		qp->st.tail_probes++;
		mroce_path_copy_lost(qp, rec);	/* unanswered for a probe's wait */
		return;
	}
}

void mroce_qp_timers(struct mroce_qp *qp, __u64 now)
{
	__u64 tlp;

	if (qp->state != MROCE_QPS_RTS)
		return;
	mroce_path_scoreboard(qp, now);
	if (qp->nplanes > 1)
		mroce_planes_timer(qp, now);
	/* Tools read the flows map at human speed: once a millisecond is plenty. */
	if (mroce_since(now, qp->stats_at_us) >= 1000) {
		mroce_qp_stats_update(qp);
		qp->stats_at_us = now;
	}
	if (qp->ack_now || (qp->ack_due_us && now >= qp->ack_due_us))
		mroce_send_ack(qp, now);
	if (qp->rack_timer_us && now >= qp->rack_timer_us)
		mroce_rack_detect(qp, now);
	tlp = mroce_tlp_due(qp);
	if (tlp && now >= tlp)
		tlp_fire(qp, now);
	if (qp->snd_nxt != qp->snd_una && now >= mroce_rto_due(qp))
		rto_fire(qp, now);
	if (qp->state == MROCE_QPS_RTS)
		read_timer(qp, now);
}
