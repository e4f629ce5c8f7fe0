// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The path scoreboard: which entropy values (UDP source ports) a QP sprays
 * its packets and ACKs over, and which of them get retired for a fresh one.
 */
#include "cc.h"
#include "eng_int.h"

/* How long an assumed-bad path waits between probes: its RTT, or the QP's. */
static __u32 probe_gap(const struct mroce_qp *qp, const struct mroce_path *p)
{
	__u32 rtt = p->srtt_us > qp->srtt_us ? p->srtt_us : qp->srtt_us;

	return rtt ? rtt : qp->rto_us;
}

/* A slot's own window is full: it takes no new packet now. */
static bool path_full(const struct mroce_path *p)
{
	return p->pwnd_x256 && p->inflight * 256 >= p->pwnd_x256;
}

/*
 * On a plane that is down (planes.c): only a probe's one packet goes there;
 * or on one not proven yet that may carry no more before its proof.
 */
static bool on_down_plane(const struct mroce_qp *qp, const struct mroce_path *p)
{
	return qp->nplanes > 1 && !mroce_plane_open(qp, p->plane);
}

/* On a plane not proven yet that may carry no more before its proof (planes.c). */
static bool on_spent_plane(const struct mroce_qp *qp, const struct mroce_path *p)
{
	return qp->nplanes > 1 && !qp->planes[p->plane].down && !mroce_plane_open(qp, p->plane);
}

static bool probe_out(const struct mroce_qp *qp, const struct mroce_path *p)
{
	return on_down_plane(qp, p) && qp->planes[p->plane].wait_since_us;
}

/*
 * Over planes, each plane's delivery rate: packets acknowledged on it per
 * millisecond, measured over spans of at least twice its lowest RTT (and
 * MROCE_PLANE_RATE_MIN_US), smoothed by a quarter.
 */
#define MROCE_PLANE_RATE_MIN_US	4

/* The plane's slots' lowest RTT (0: none yet). */
static __u32 plane_base_us(const struct mroce_qp *qp, __u8 pl)
{
	__u32 base = 0;

	for (__u32 s = 0; s < qp->attr.paths; s++) {
		__u32 m = qp->paths[s].min_rtt_us;

		if (qp->paths[s].plane == pl && m && (!base || m < base))
			base = m;
	}
	return base;
}

void mroce_plane_clocked(struct mroce_qp *qp, __u8 pl, __u64 now)
{
	struct mroce_plane *p = &qp->planes[pl];
	__u64 span = now - p->rate_at_us, r;

	p->refused = false;	/* its ring drains */
	if (!p->rate_at_us || now < p->rate_at_us) {
		p->rate_at_us = now;
		p->rate_acks = 0;
		return;
	}
	p->rate_acks++;
	if (span < MROCE_PLANE_RATE_MIN_US)
		return;	/* (first: the per-ACK cost is this test alone) */
	if (span < 2ull * plane_base_us(qp, pl))
		return;
	r = (__u64)p->rate_acks * 1000 / span;
	r = r > UINT32_MAX ? UINT32_MAX : r ? r : 1;
	p->rate_ppms = p->rate_ppms ? (__u32)((3ull * p->rate_ppms + r) / 4) : (__u32)r;
	p->rate_at_us = now;
	p->rate_acks = 0;
}

/* A GOOD slot for a new packet now: not a probe's, not on a spent plane, not SKIP, not full. */
static bool slot_good(const struct mroce_qp *qp, const struct mroce_path *c, __u64 now)
{
	return !probe_out(qp, c) && !on_spent_plane(qp, c) && !c->bad && now >= c->skip_until_us &&
	       !path_full(c);
}

/*
 * Over planes, a new packet goes on the plane with the shortest queue of
 * ours: the time its packets in flight, and this one, take to drain at
 * the rate it delivers, less its slots' round trip without a queue. A
 * queue under a quarter of that round trip (and two packets' time) is
 * none, and a plane given less than a round trip's worth has none, nor one
 * whose round trip is not known (its packets overtaken, their echoes give
 * no RTT, and it was proven by another plane's probe answer): planes
 * without a queue take turns in the round robin, as they would without
 * rates; one with a queue waits while another has none, or a shorter one.
 * So a plane half as fast carries a third of two planes' packets, and one
 * run dry is filled first. Round robin alone kept half of every window in
 * a slow plane's queue while the other ran dry: a bulk transfer over
 * planes of 800 and 400 Mbit/s took 1.28x its ideal, over 800 and 200
 * 1.43x (over two of 800, 1.11x). -1 while some plane up has no rate yet
 * (a connection's first window goes round robin over every plane), or no
 * GOOD slot is on a plane of the shortest queue.
 */
static int quickest_slot(const struct mroce_qp *qp, __u64 now)
{
	__u32 fly[MROCE_MAX_PLANES] = { 0 }, based[MROCE_MAX_PLANES] = { 0 }, n = qp->attr.paths;
	__u64 cost[MROCE_MAX_PLANES], bases[MROCE_MAX_PLANES] = { 0 }, best = UINT64_MAX;
	bool good[MROCE_MAX_PLANES] = { false };

	/* one pass over the slots: each plane's packets in flight, GOOD slots, lowest RTTs' mean */
	for (__u32 s = 0; s < n; s++) {
		const struct mroce_path *c = &qp->paths[s];

		fly[c->plane] += c->inflight;
		good[c->plane] |= slot_good(qp, c, now);
		if (c->min_rtt_us) {
			bases[c->plane] += c->min_rtt_us;
			based[c->plane]++;
		}
	}
	for (__u8 i = 0; i < qp->nplanes; i++)
		if (mroce_plane_open(qp, i) && !qp->planes[i].rate_ppms)
			return -1;
	for (__u8 i = 0; i < qp->nplanes; i++) {
		__u64 rate = qp->planes[i].rate_ppms, base, drain;

		cost[i] = UINT64_MAX;
		if (!mroce_plane_open(qp, i) || !good[i] || qp->planes[i].refused)
			continue;	/* a full ring: round robin moves past it (mroce_path_refused) */
		/* no RTT of its slots' own (overtaken, loss.c): its probe's echo's */
		base = based[i] ? bases[i] / based[i] : qp->planes[i].echo_rtt_us;
		drain = ((__u64)fly[i] + 1) * 1000 / rate;
		cost[i] = !base || fly[i] * 1000 < rate * base || drain <= base + base / 4 + 2000 / rate ?
			  0 : drain - base;
		if (cost[i] < best)
			best = cost[i];
	}
	for (__u32 k = 0; best != UINT64_MAX && k < n; k++) {
		__u8 s = (__u8)((qp->next_path + k) % n);

		if (cost[qp->paths[s].plane] == best && slot_good(qp, &qp->paths[s], now))
			return s;
	}
	return -1;
}

/*
 * The path slot of a new packet: round robin over the GOOD slots. A SKIP
 * slot (CE-marked within its RTT) is passed over, and so is one whose own
 * window is full; an ASSUMED_BAD slot gets one packet per RTT, its probe.
 * When no slot is GOOD, plain round robin: a fabric marking or losing
 * everywhere steers nothing (the connection's window still bounds it).
 */
__u8 mroce_path_choose(const struct mroce_qp *qp, __u64 now, bool *skipped)
{
	__u32 n = qp->attr.paths;
	__u8 p = (__u8)(qp->next_path % n);

	*skipped = false;
	if (n > 1 && !qp->attr.static_paths && qp->nplanes > 1) {
		int quick;

		/* probes first, where the round robin would reach them: a down plane's, an assumed-bad slot's */
		for (__u32 k = 0; k < n; k++) {
			__u8 i = (__u8)((qp->next_path + k) % n);
			const struct mroce_path *c = &qp->paths[i];

			if (probe_out(qp, c) || on_spent_plane(qp, c))
				continue;
			if (qp->planes[c->plane].down || (c->bad && now >= c->probe_at_us))
				return i;
		}
		quick = quickest_slot(qp, now);
		if (quick >= 0)
			return (__u8)quick;
	}
	if (n > 1 && !qp->attr.static_paths) {
		for (__u32 k = 0; k < n; k++) {
			__u8 i = (__u8)((qp->next_path + k) % n);
			const struct mroce_path *c = &qp->paths[i];

			if (probe_out(qp, c) || on_spent_plane(qp, c))
				continue;
			if (c->bad) {
				if (now < c->probe_at_us)
					continue;
			} else if (now < c->skip_until_us || path_full(c)) {
				*skipped = true;
				continue;
			}
			return i;
		}
		*skipped = false;
	}
	/* Nothing GOOD: round robin, but never a second packet onto a plane being probed. */
	for (__u32 k = 0; k < n && (probe_out(qp, &qp->paths[p]) || on_spent_plane(qp, &qp->paths[p])); k++)
		p = (__u8)((p + 1) % n);
	return p;
}

/*
 * The packet chosen for slot went out: the round robin moves past it, and
 * an ASSUMED_BAD slot's probe is spent. Only then: a transmission the port
 * refused had spent them too, so under a full ring an assumed-bad slot's
 * probe was put off once per refused try, and the round robin skipped
 * slots it never used (256 hosts, 10% loss: 1254-1302 us -> 798-868 over
 * seeds 1-3; docs/scale.md).
 */
void mroce_path_took(struct mroce_qp *qp, __u8 slot, bool skipped, __u64 now)
{
	struct mroce_path *c = &qp->paths[slot];

	if (qp->attr.paths > 1 && !qp->attr.static_paths && c->bad)
		c->probe_at_us = now + probe_gap(qp, c);
	if (qp->nplanes > 1)
		qp->planes[c->plane].refused = false;
	qp->st.paths_skipped += skipped;
	qp->next_path = slot + 1u;
}

/*
 * The port refused the packet chosen for slot (its ring is full). One
 * plane: the slot is chosen again next time. Over planes, each has its
 * ring, and the slot's may be the only one full: the round robin moves
 * past it, as if it had gone (without that, 2 planes clean resent 11,285
 * packets instead of 379, every QP stuck behind one full ring while the
 * other was empty). An assumed-bad slot's probe is not spent either way.
 */
void mroce_path_refused(struct mroce_qp *qp, __u8 slot)
{
	if (qp->nplanes > 1) {
		qp->next_path = slot + 1u;
		qp->planes[qp->paths[slot].plane].refused = true;	/* passed over by quickest_slot */
	}
}

__u8 mroce_pick_path(struct mroce_qp *qp, __u64 now)
{
	bool skipped;
	__u8 slot = mroce_path_choose(qp, now, &skipped);

	mroce_path_took(qp, slot, skipped, now);
	return slot;
}

/* The QP's counts over all its paths. */
struct path_totals {
	__u32	sent, lost, marks, echoes, best_srtt;
	__u32	min_base, max_base;	/* the lowest and highest of the paths' base RTTs */
	bool	unbased;		/* some path has none yet */
	__u32	good_sent, good_lost;	/* of the paths that are not losing */
	__u64	good_known_us;	/* of those, the earliest time up to which their losses are known */
	bool	all_losing;	/* every path that carried anything lost a quarter */
};

static bool path_losing(const struct mroce_path *p)
{
	return p->lost >= 3 && p->lost * 4 >= p->sent;
}

static void path_totals(const struct mroce_qp *qp, struct path_totals *t)
{
	*t = (struct path_totals){ .all_losing = true };
	for (__u32 i = 0; i < qp->attr.paths; i++) {
		const struct mroce_path *p = &qp->paths[i];

		if (p->samples >= 4 && (!t->best_srtt || p->srtt_us < t->best_srtt))
			t->best_srtt = p->srtt_us;
		if (p->min_rtt_us && (!t->min_base || p->min_rtt_us < t->min_base))
			t->min_base = p->min_rtt_us;
		if (p->min_rtt_us > t->max_base)
			t->max_base = p->min_rtt_us;
		t->unbased |= !p->min_rtt_us;
		t->sent += p->sent;
		t->lost += p->lost;
		t->marks += p->marks;
		t->echoes += p->echoes;
		if (p->sent && !path_losing(p)) {
			__u64 known = p->del_sent_us - mroce_path_reo_us(qp, p);

			t->all_losing = false;
			t->good_sent += p->sent;
			t->good_lost += p->lost;
			if (p->del_valid && (!t->good_known_us || known < t->good_known_us))
				t->good_known_us = known;
		}
	}
}

/*
 * RACK declared a first transmission lost on a slot where nothing sent
 * after it has been delivered (path_gap, which needs a later delivery on
 * the slot, did not see it), and the slot has been silent, nothing on it
 * acknowledged, for as long as RACK waited (its RTT and the reordering
 * allowance, thresh) while the others delivered: the route may be dead.
 * A random loss at a path's tail is not silence, and a path whose RTT
 * shows a queue (mroce_path_queued) is congested, not failed: a FIFO
 * serving other senders' bursts starves it for a while, and neither is one
 * among slots that all lose (a shared tail-drop queue: path_totals'
 * all_losing, the rule the scoreboard follows). It is ASSUMED_BAD: new
 * packets go to the other slots, one probe per RTT goes to it, and the
 * first copy sent after the loss that it delivers makes it GOOD again
 * (mroce_pkt_acked; a late ACK of an earlier one says nothing). If its
 * probe is lost too, it is retired at once (DENIED, mroce_path_loss).
 */
void mroce_path_suspect(struct mroce_qp *qp, const struct mroce_txpkt *rec, __u32 thresh, __u64 now)
{
	struct mroce_path *p = &qp->paths[rec->path];
	struct path_totals t;

	if (rec->path >= qp->attr.paths || qp->attr.paths < 2 || qp->attr.static_paths ||
	    p->entropy != rec->entropy || rec->retx || rec->gbn || p->bad ||
	    (p->del_valid && p->del_sent_us >= rec->sent_us) || now < p->heard_us + thresh ||
	    mroce_path_queued(p))
		return;
	path_totals(qp, &t);
	if (t.all_losing)
		return;
	p->bad = true;
	p->bad_sent_us = rec->sent_us;
	p->probe_at_us = now + probe_gap(qp, p);
	qp->st.paths_suspected++;
}

/*
 * A copy declared lost (or given up on by a tail probe): if it went on the
 * slot known good, after the delivery that made it so, the slot is not
 * known to work any more. A route that dies takes what is sent on it after
 * its last delivery, resends included: without this, every resend went
 * back to the dead route until a later delivery elsewhere named another
 * slot. Only a newer delivery names a slot good again (mroce_pkt_acked).
 */
void mroce_path_copy_lost(struct mroce_qp *qp, const struct mroce_txpkt *rec)
{
	/*
	 * Congestion loss (cc.c, mroce_cc_loss_cut): a run of
	 * MROCE_CC_LOSS_RUN packets sent one after the other all lost, the
	 * last on a path showing a queue. A full tail-drop queue drops
	 * whatever arrives while it is full, so a burst loses a run; random
	 * loss, even behind a standing queue, almost never does.
	 */
	qp->cc_loss_run = rec->tx_seq == qp->cc_loss_seq + 1 ? qp->cc_loss_run + 1 : 1;
	qp->cc_loss_seq = rec->tx_seq;
	if (qp->cc_loss_run >= MROCE_CC_LOSS_RUN && rec->path < qp->attr.paths &&
	    mroce_path_queued(&qp->paths[rec->path]) && rec->sent_us > qp->cc_loss_sent_us)
		qp->cc_loss_sent_us = rec->sent_us;
	if (qp->good_known && rec->path == qp->good_path && rec->entropy == qp->good_entropy &&
	    rec->sent_us >= qp->good_sent_us)
		qp->good_known = false;
}

/* Slot i is on another plane than slot was (or any plane will do), and not on one in avoid. */
static bool other_plane(const struct mroce_qp *qp, __u8 was, __u8 i, bool want, __u32 avoid)
{
	__u8 pl = qp->paths[i].plane;

	return (!want || pl != qp->paths[was].plane) && !(avoid & 1u << pl);
}

static int resend_slot(const struct mroce_qp *qp, __u8 was, bool want, __u32 avoid)
{
	__u32 n = qp->attr.paths;

	if (qp->good_known && qp->good_path != was && qp->good_path < n &&
	    qp->paths[qp->good_path].entropy == qp->good_entropy && !qp->paths[qp->good_path].bad &&
	    !on_down_plane(qp, &qp->paths[qp->good_path]) &&
	    other_plane(qp, was, qp->good_path, want, avoid))
		return qp->good_path;
	for (__u32 k = 1; k < n; k++) {
		__u8 i = (__u8)((was + k) % n);

		if (!qp->paths[i].bad && !on_down_plane(qp, &qp->paths[i]) &&
		    other_plane(qp, was, i, want, avoid))
			return i;
	}
	return -1;
}

/*
 * The slot a lost packet is resent on: the one whose delivered first
 * transmission was sent last, known to work lately (unless retired since,
 * assumed bad since, or a copy sent on it since was lost); if none, or this
 * copy was lost on that one, the next slot not assumed bad after the one
 * it was lost on (the next slot, if all are), so that retries reach every
 * path rather than bounce on one dead route. The resend a stalled QP's
 * timer causes may have a slot named (mroce_planes_stalled). Over planes,
 * a slot on another plane than the one the copy was lost on comes first:
 * the loss may be the plane's, which is found dead only once the
 * connection has sent more than a tail's worth since. And a plane the
 * device holds for dead (mroce_planes_shunned) comes last: a flow whose
 * last ACKs died with plane 0 sent its resends back into it, the slot
 * that had delivered last being there, 60 us before its next try
 * (docs/scale.md).
 */
__u8 mroce_resend_path(const struct mroce_qp *qp, __u8 was, __u64 now)
{
	__u32 n = qp->attr.paths, avoid = 0;
	int i = -1;

	if (qp->stall_slot && qp->stall_slot <= n && !on_spent_plane(qp, &qp->paths[qp->stall_slot - 1]))
		return (__u8)(qp->stall_slot - 1);
	if (qp->nplanes > 1 && was < n) {
		avoid = mroce_planes_shunned(qp, now);
		i = resend_slot(qp, was, true, avoid);
		if (i < 0 && avoid)
			i = resend_slot(qp, was, false, avoid);
		if (i < 0)
			i = resend_slot(qp, was, true, 0);
	}
	if (i < 0)
		i = resend_slot(qp, was, false, 0);
	return i < 0 ? (__u8)((was + 1) % n) : (__u8)i;
}

/*
 * The k-th extra copy of a window head lost twice (tx.c): the k-th slot
 * after the first copy's that is not assumed bad, or simply the k-th slot
 * after it when too few are left.
 */
__u8 mroce_copy_path(const struct mroce_qp *qp, __u8 first, __u32 k)
{
	__u32 n = qp->attr.paths, seen = 0;
	__u8 open[MROCE_MAX_PATHS];
	__u32 nopen = 0;

	for (__u32 j = 1; j < n; j++) {
		__u8 i = (__u8)((first + j) % n);

		if (!qp->paths[i].bad && !on_down_plane(qp, &qp->paths[i]) && ++seen == k)
			return i;
		if (!on_spent_plane(qp, &qp->paths[i]))
			open[nopen++] = i;
	}
	/* too few: the k-th after it, but never on a plane that may carry no more unproven */
	if (on_spent_plane(qp, &qp->paths[(first + k) % n]) && nopen)
		return open[(k - 1) % nopen];
	return (__u8)((first + k) % n);
}

/*
 * The slot of a copy on another plane than slot first's (tx.c, a lone lost
 * packet's resend): the next after it not assumed bad, on a plane up that
 * the device does not hold for dead (mroce_planes_shunned); -1 if none.
 */
int mroce_plane_copy_path(const struct mroce_qp *qp, __u8 first, __u64 now)
{
	__u32 n = qp->attr.paths, held = mroce_planes_shunned(qp, now);

	for (__u32 j = 1; j < n; j++) {
		__u8 i = (__u8)((first + j) % n);

		if (!qp->paths[i].bad && !on_down_plane(qp, &qp->paths[i]) &&
		    other_plane(qp, first, i, true, held))
			return i;
	}
	return -1;
}

/*
 * A CE mark echoed for a slot: it takes no new packet for its RTT (SKIP),
 * and its own window is trimmed: it comes back at half what it carried.
 */
void mroce_path_marked(struct mroce_qp *qp, __u8 slot, __u64 now)
{
	struct mroce_path *p = &qp->paths[slot];

	if (slot < qp->attr.paths && qp->attr.paths > 1) {
		p->skip_until_us = now + probe_gap(qp, p);
		mroce_path_trim(qp, p, now);
	}
}

/*
 * A CE mark on a slot: its window halves, once per RTT. Losses do not trim
 * it: paths through one tail-drop queue all lose alike, and trimming some
 * would only skew which of them carry the next burst.
 */
void mroce_path_trim(struct mroce_qp *qp, struct mroce_path *p, __u64 now)
{
	__u32 half = p->inflight * 128;

	if (qp->attr.paths < 2 || qp->attr.static_paths || now < p->trim_at_us)
		return;
	p->pwnd_x256 = half > 2 * 256 ? half : 2 * 256;
	p->trim_at_us = now + probe_gap(qp, p);
	qp->st.path_window_cuts++;
}

/* One of the slot's packets acknowledged: its window grows a packet per window, to the whole. */
void mroce_path_acked(struct mroce_qp *qp, struct mroce_path *p)
{
	if (!p->pwnd_x256)
		return;
	p->pwnd_x256 += 256 * 256 / p->pwnd_x256;
	if (p->pwnd_x256 >= qp->cwnd_x256)
		p->pwnd_x256 = 0;	/* the connection's window bounds it again */
}

/*
 * The way back. ACKs are sprayed too: an ACK echoes one of the peer's path
 * slots, each in turn, and leaves on that slot's way back (ret[slot]). The
 * peer counts the ACKs that echo each of its slots; a slot whose packets
 * arrive but which no ACK echoes over an epoch has a dead way back, and the
 * peer moves the slot (mroce_path_scoreboard). We see that as the slot's
 * packets coming from another source port, and move its way back too
 * (mroce_ret_heard). Each ACK repeats the whole SACK
 * state, so losing some costs little; losing a fixed share for ever (a
 * dead route under a quarter of the ports) slows a window-limited sender.
 */
__u8 mroce_echo_slot(const struct mroce_qp *qp)
{
	if (qp->echo_mark || !qp->ret_slots)
		return qp->echo_path;
	return (__u8)(qp->echo_next % qp->ret_slots);
}

/* An ACK echoing slot went out: the turn passes on. */
void mroce_echo_sent(struct mroce_qp *qp, __u8 slot)
{
	qp->echo_next = slot + 1u;
	qp->echo_mark = false;
}

/* A fresh entropy value: none of the QP's path slots holds it. */
static __u16 fresh_entropy(struct mroce_qp *qp)
{
	bool used;

	do {
		qp->next_entropy = (__u16)((qp->next_entropy + 1) % MROCE_ENTROPY_SPACE);
		used = false;
		for (__u32 k = 0; k < qp->attr.paths; k++)
			used |= qp->paths[k].entropy == qp->next_entropy;
	} while (used);
	return qp->next_entropy;
}

/* A packet of the peer's slot came from sport: if the peer moved the slot, move its way back. */
void mroce_ret_heard(struct mroce_qp *qp, __u8 slot, __u16 sport)
{
	struct mroce_ret *r = &qp->ret[slot];

	if (r->peer_sport && r->peer_sport != sport) {
		r->entropy = fresh_entropy(qp);
		qp->st.returns_moved++;
	}
	r->peer_sport = sport;
	if (slot >= qp->ret_slots)
		qp->ret_slots = slot + 1u;
}

/* The route slot `path` was moved off whose entropy value is `entropy`, if remembered. */
struct mroce_left_route *mroce_left_route(struct mroce_qp *qp, __u8 path, __u16 entropy)
{
	for (__u32 i = 0; i < MROCE_LEFT_ROUTES; i++) {
		struct mroce_left_route *l = &qp->left[i];

		if (l->valid && l->path == path && l->entropy == entropy)
			return l;
	}
	return NULL;
}

/*
 * Replace a path's entropy value with a fresh one no other slot holds. A
 * way back on the old value (the same route) moves with it.
 */
void mroce_path_retire(struct mroce_qp *qp, struct mroce_path *p)
{
	__u16 old = p->entropy;

	struct mroce_left_route *l = &qp->left[qp->left_next++ % MROCE_LEFT_ROUTES];

	*l = (struct mroce_left_route){ .entropy = old, .path = (__u8)(p - qp->paths), .valid = true,
					.heard_us = p->heard_us,
					.del_sent_us = p->del_valid ? p->del_sent_us : 0 };
	p->entropy = fresh_entropy(qp);
	for (__u32 k = 0; k < MROCE_MAX_PATHS; k++)
		if (qp->ret[k].entropy == old)
			qp->ret[k].entropy = p->entropy;
	p->sent = p->lost = p->samples = p->samples_prev = p->srtt_us = p->marks = p->echoes = p->acked = 0;
	p->min_rtt_us = 0;
	p->del_valid = false;
	p->lost_sent_us = 0;
	p->bad = false;
	p->skip_until_us = 0;
	p->heard_us = 0;
	p->pwnd_x256 = 0;	/* a new route: nothing known against it (inflight stays: copies
				 * on the old value are still out) */
	p->trim_at_us = 0;
	qp->dev->stats.paths_retired++;
	qp->st.paths_retired++;
	/* the new route's delay is unknown: delay control re-learns its base */
	mroce_cc_on_path_retired(qp);
}

/*
 * A declared loss, charged to the path it was sent on if it tells about
 * that path as it is now: on the entropy value the slot still holds (a
 * retired value is history), and a first transmission: a resend goes where
 * tx_resend steers it, in a burst, and at a tail-drop queue a burst's
 * losses are the burst's, not the path's.
 */
void mroce_path_loss(struct mroce_qp *qp, const struct mroce_txpkt *rec)
{
	struct mroce_path *p = &qp->paths[rec->path];

	if (rec->path < qp->attr.paths && p->entropy == rec->entropy && !rec->retx && !rec->gbn) {
		/* an assumed-bad path's probe lost too: DENIED, a fresh entropy value */
		if (p->bad && rec->sent_us > p->bad_sent_us) {
			mroce_path_retire(qp, p);
			return;
		}
		p->lost++;
		if (rec->sent_us > p->lost_sent_us)
			p->lost_sent_us = rec->sent_us;
	}
}

/*
 * A resent window head was lost again: no ACK came back for it (nor for its
 * copies, tx_head_copies) in two RTTs. While the head is missing the window
 * stays full, no new packet goes out and none would show the slots' other
 * losses, nor would an epoch's ACKs show a dead way back: a dead route
 * under a large share of the QP's ports, either way, would hold the head
 * back with ever longer backoffs. So the slots it went on are retired at
 * once (the peer moves their ways back when it sees them move), unless
 * every slot is losing, as at a shared tail-drop queue, where moving slots
 * would only churn; a copy's slot that has delivered since the copies went
 * out keeps its entropy value (it works: REPS keeps such values).
 */
void mroce_path_head_lost(struct mroce_qp *qp, const struct mroce_txpkt *rec)
{
	__u32 n = rec->retx >= 2 ? 1 + MROCE_HEAD_COPIES : 1;
	struct path_totals t;

	if (rec->path >= qp->attr.paths || qp->attr.static_paths)
		return;
	path_totals(qp, &t);
	if (t.all_losing)
		return;
	for (__u32 k = 0; k < n && k < qp->attr.paths; k++) {
		struct mroce_path *p = &qp->paths[(rec->path + k) % qp->attr.paths];

		/* a copy's slot that delivered since the copies went out works: it is kept */
		if (k ? p->heard_us <= rec->sent_us : p->entropy == rec->entropy)
			mroce_path_retire(qp, p);
	}
}

/*
 * Loss is judged against the QP's paths that are not losing: a path is bad
 * only if it lost a quarter of what it carried and far more than those did
 * over the same time (more than twice their rate, plus 8 packets).
 * Paths through one tail-drop queue all lose alike, and retiring one would
 * only move it to another port of the same queue; when every path loses,
 * nothing is retired on loss at all. The yardstick is the good paths, not
 * all the others: when most of a QP's paths hash onto a dead route, the
 * others' rate is mostly the dead ones' and no dead path would stand out.
 * Nor is a path whose losses are congestion (mroce_path_queued). And the
 * comparison is over the same time: each path's losses are found by its
 * own later deliveries (loss.c), so a burst at a shared queue shows on one
 * path before the others; they are compared once every good path's losses
 * are known for what it sent up to the path's newest loss. And a slot
 * with no RTT of its own yet is not compared at all: its losses are only
 * RACK's guess against faster routes (a slower route's whole first window
 * looks lost) until it is heard from; a dead one never is, and is found by
 * its silence instead (mroce_path_suspect, then its probe).
 */
static bool path_lossy(const struct mroce_path *p, const struct path_totals *t)
{
	if (!path_losing(p) || t->all_losing || t->good_known_us <= p->lost_sent_us ||
	    mroce_path_queued(p) || !p->srtt_us)
		return false;
	/* lost > 2 x expected + 8, exactly: a few packets of a burst are noise, a dead route is not */
	return (__u64)p->lost * t->good_sent > 2ULL * t->good_lost * p->sent + 8ULL * t->good_sent;
}

/*
 * At an epoch's end: slow (delay rule) or marked far more than the QP (marks
 * rule). Slow is every sample of the epoch slow, not the smoothed RTT: one
 * sample that waited out a scheduling stall (the peer's or ours, ms on a
 * loaded host) lifts the smoothed RTT by an eighth of it, and retired one
 * path slot after another on a clean veth pair (30 to 100 in 10^4 8-byte
 * round trips), while a route with a queue is slow in all of them.
 */
static bool path_congested(const struct mroce_path *p, const struct path_totals *t)
{
	return (t->best_srtt && p->samples >= 4 && p->srtt_us > 2 * t->best_srtt + 100 &&
		p->epoch_min_us > 2 * t->best_srtt + 100) ||
	       (p->marks >= 4 && (__u64)p->marks * t->sent > 2ULL * t->marks * p->sent);
}

/*
 * At the end of an echo round (the QP's ACKs echoed each slot twice on
 * average, however many epochs that took: a receiver may ACK only every
 * few dozen packets): its packets arrive (4 or more acknowledged) but not
 * one ACK echoed it: its way back is dead. Moving the slot makes the peer
 * move the way back.
 */
static bool path_unanswered(const struct mroce_path *p)
{
	return p->acked >= 4 && !p->echoes;
}

/*
 * Path scoreboard: a path slot is retired at once and given a fresh entropy
 * value, so ECMP hashes it onto another route (as Ultra Ethernet rotates
 * entropy and SRD steers around bad paths), when
 *  - it lost a quarter or more of what it carried (at least 3 packets, as
 *    SACK holes prove), far more than the QP's other paths: a dead or lossy
 *    route;
 *  - or, at an epoch's end, has a smoothed RTT more than twice the best
 *    slot's plus 100 us over at least 4 samples: a congested or slow route;
 *  - or, at an epoch's end, had at least 4 of its packets come back
 *    CE-marked, a marked fraction more than twice the QP's: a route whose
 *    queue builds while the others' do not;
 *  - or, at an echo round's end, no ACK echoed it although its packets
 *    arrive: a dead way back (path_unanswered).
 *    All relative, so a fabric slow, marking or dropping everywhere (incast,
 *    a shared bottleneck) retires nothing, and paths of different but sane
 *    delays are all kept.
 * Epochs last a few RTTs. RACK declares a loss an RTT or more after the
 * packet went out, often an epoch later, so loss counts are not started
 * over but halved with each epoch: a window over about the last two, in
 * which a dead path's losses still meet what it was sent. RTT samples and
 * marks start over. An epoch in which no first transmission went out (the
 * window stuck behind a missing head) ages nothing: it brought no news.
 */
/* The slots' in-flight counts from the records, once an epoch: a count can never drift. */
static void paths_recount(struct mroce_qp *qp)
{
	for (__u32 i = 0; i < qp->attr.paths; i++)
		qp->paths[i].inflight = 0;
	for (__u32 psn = qp->snd_una; psn != qp->snd_nxt; psn++) {
		const struct mroce_txpkt *rec = PKT(qp, psn);

		if (rec->state == PKT_INFLIGHT && rec->path < qp->attr.paths)
			qp->paths[rec->path].inflight++;
	}
}

/* A scoreboard epoch: 4 RTTs, at least 200 us. */
static __u32 scoreboard_epoch(const struct mroce_qp *qp)
{
	return 4 * qp->srtt_us > 200 ? 4 * qp->srtt_us : 200;
}

/* When the scoreboard's current epoch ends (UINT64_MAX: it keeps none). */
__u64 mroce_path_epoch_due(const struct mroce_qp *qp)
{
	if (qp->attr.paths < 2 || qp->attr.static_paths)
		return UINT64_MAX;
	return qp->path_epoch_us + scoreboard_epoch(qp);
}

void mroce_path_scoreboard(struct mroce_qp *qp, __u64 now)
{
	__u32 epoch = scoreboard_epoch(qp);
	struct path_totals t;
	bool new_epoch, news, echo_round;

	if (qp->attr.paths < 2 || qp->attr.static_paths)
		return;
	new_epoch = mroce_since(now, qp->path_epoch_us) >= epoch;
	news = qp->st.tx_pkts - qp->st.retx_pkts != qp->path_epoch_pkts;
	path_totals(qp, &t);
	/*
	 * How far apart the routes' delays are (loss.c's reordering
	 * allowance): known once every slot has a base RTT; 0, unknown, till
	 * then (a slot not heard from yet may be the slowest). The device
	 * keeps the latest known for its QPs that know none yet.
	 */
	qp->path_spread_us = t.unbased ? 0 : t.max_base - t.min_base + 1;
	if (qp->path_spread_us)
		qp->dev->spread_hint_us = qp->path_spread_us;
	echo_round = new_epoch && t.echoes >= 2 * qp->attr.paths;
	for (__u32 i = 0; i < qp->attr.paths; i++) {
		struct mroce_path *p = &qp->paths[i];

		if (path_lossy(p, &t) || (new_epoch && path_congested(p, &t)) ||
		    (echo_round && path_unanswered(p))) {
			mroce_path_retire(qp, p);
			continue;
		}
		if (new_epoch) {
			if (news) {
				p->sent /= 2;
				p->lost /= 2;
			}
			p->samples_prev = p->samples;
			p->samples = p->marks = 0;
		}
		if (echo_round)
			p->echoes = p->acked = 0;
	}
	if (new_epoch) {
		qp->path_epoch_us = now;
		qp->path_epoch_pkts = qp->st.tx_pkts - qp->st.retx_pkts;
		paths_recount(qp);
	}
}

/*
 * A QP's entropy base (offset of its source ports): one of the 1024 slots
 * of 16 ports in the entropy space, stepped through by the golden ratio (a
 * Weyl sequence: 633 / 1024), so every QPN of a device (1..1023) has a slot
 * of its own and n QPs lie about 1024 / n slots apart, where qpn * 64
 * repeated every 256 QPNs. Slots keep a path's offset within its 16 ports
 * the same for every QP. The start is a hash of the device's own address,
 * so hosts sending to one peer do not pick the same ports for the same QPN;
 * it is not random, so a run (and a simulated one) is repeatable.
 */
__u16 mroce_entropy_base(const struct mroce_dev *dev, __u32 qpn)
{
	const __u8 *b = (const __u8 *)&dev->local.src;
	__u32 h = 2166136261u;	/* FNV-1a */

	for (__u32 i = 0; i < sizeof(dev->local.src); i++)
		h = (h ^ b[i]) * 16777619u;
	for (__u32 i = 0; i < 6; i++)
		h = (h ^ dev->local.src_mac[i]) * 16777619u;
	return (__u16)(((h + qpn * 633u) % (MROCE_ENTROPY_SPACE / 16)) * 16);
}
