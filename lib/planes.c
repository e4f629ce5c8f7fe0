// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Planes (protocol.md, "Planes"): a connection's path slots are spread
 * over the interfaces (planes) both ends have, slot s at home on plane
 * s % planes. A plane is up while what is sent on it is acknowledged. One
 * that stays silent for MROCE_PLANE_DEAD_RTTS round trips while another
 * plane is heard in that time is down: its slots move to the live planes
 * (fresh entropy values there) and what they had in flight is resent at
 * once, without waiting for a timer. A down plane is probed: one of its
 * slots goes back on it with a window of one packet, which carries a nonce
 * (MROCE_F_PLANE_PROBE); when an ACK echoes the nonce every slot at home
 * there returns, and if none does the slot leaves again and the next probe
 * waits twice as long (up to MROCE_PLANE_PROBE_MAX_US). Only the echo
 * proves the plane: a peer can acknowledge what it never got, but cannot
 * echo what it never saw.
 * Planes other than the first start up but not proven: the peer's
 * addresses for them come from the peer, unchecked. Each carries data
 * from the connection's first packet, but at most MROCE_PLANE_UNPROVEN_PKTS
 * packets, each with its nonce (mroce_plane_probe_mark), until an echo
 * proves it; no ACK goes there either (mroce_plane_ack_way). Its nonce
 * unanswered as a probe's would be, it fails as a probe does
 * (unproven_failed); never heard from, it is found dead as the first plane
 * would be (unheard_due). A peer naming a victim's address for a plane so
 * gets one allowance per connection, then probes. A QP that only
 * receives has no data to carry a probe: an ACK goes as one, to a plane its
 * peer's data comes in on (mroce_plane_ack_probe). A probe's echo also goes
 * back on the plane the probe came in on (mroce_plane_answer_there): were
 * the first plane to fail before the others are proven, an echo sent only
 * the proven way would never arrive, and neither end could prove another.
 */
#include <stdint.h>

#include "cc.h"
#include "eng_int.h"

/*
 * How much later than a plane's oldest unanswered packet another plane's
 * delivered one must have been sent for the first plane to be dead: the
 * spread of the paths' own delays (twice the largest lowest RTT) and a
 * margin for the RTT's swings and a host's scheduling: 4 RTTs with 4 of
 * their deviations, at most MROCE_PLANE_SLACK_US (and that while no RTT is
 * known). A software path (RTTs of hundreds of microseconds) gets the
 * millisecond; at 400 Gbit/s, where RTTs are microseconds, a fixed
 * millisecond outlasted a whole collective and the dead plane's packets
 * were lost and resent path by path all along (docs/scale.md).
 */
#define MROCE_PLANE_SLACK_US		1000
#define MROCE_PLANE_PROBE_MIN_US	10000
#define MROCE_PLANE_PROBE_MAX_US	320000	/* a plane back is in use within ~1/3 s */
/*
 * An echo of a probe's nonce counts for this long after it (the peer's
 * hold, added to it), and while the probe is at most a second old. The
 * nonce is at least 2^30 us (18 minutes) away from our clock either way:
 * within that second no echo of a real time can be taken for it.
 */
#define MROCE_PLANE_ECHO_HOLD_US	2000
#define MROCE_PLANE_ECHO_TTL_US		1000000
#define MROCE_PLANE_GUESSES		64	/* echoes neither a time nor a nonce, per QP */
/*
 * Probes' answers on a plane not proven here: at most one this often. A
 * peer's own probes of a plane come 10 ms apart at the least.
 */
#define MROCE_PLANE_ANSWER_GAP_US	1000

/*
 * How long answers take now: the slowest smoothed RTT of any slot (the
 * planes' queues differ for a while after slots moved), and before there
 * is one, the retransmission timeout's base.
 */
static __u64 answer_us(const struct mroce_qp *qp)
{
	__u32 worst = 0;

	for (__u32 s = 0; s < qp->attr.paths; s++)
		if (qp->paths[s].srtt_us > worst)
			worst = qp->paths[s].srtt_us;
	return worst ? worst : qp->rto_us;
}

static __u64 margin_us(const struct mroce_qp *qp)
{
	__u64 m = 4ull * (qp->srtt_us + 4ull * qp->rttvar_us);

	return qp->srtt_us && m < MROCE_PLANE_SLACK_US ? m : MROCE_PLANE_SLACK_US;
}

static __u64 slack_us(const struct mroce_qp *qp)
{
	__u32 worst = 0;

	for (__u32 s = 0; s < qp->attr.paths; s++)
		if (qp->paths[s].min_rtt_us > worst)
			worst = qp->paths[s].min_rtt_us;
	return margin_us(qp) + 2ull * worst;
}

/*
 * The device holds the first plane for dead (a connection found it so, or
 * a probe of it failed, lately) while it holds some other not: a new
 * connection starts with no plane up, and sends nothing but the probes of
 * the others till one is proven (mroce_planes_held). Its first window went
 * on the first plane before, and was lost there: 773,473 resends in the
 * 256-host all-to-all over 2 planes with the first one down (docs/scale.md).
 */
static bool first_plane_shunned(const struct mroce_qp *qp, __u8 n, __u64 now)
{
	const struct mroce_dev *dev = qp->dev;

	if (n < 2 || dev->plane_shun_until_us[0] <= now)
		return false;
	/* a plane with a slot at home there (slot s is at home on plane s % n) to probe */
	for (__u8 i = 1; i < n && i < qp->attr.paths; i++)
		if (dev->plane_shun_until_us[i] <= now)
			return true;
	return false;	/* every plane held for dead, or none to probe: the first is as good as any */
}

/*
 * A silence on a plane while the connection's interfaces dropped this many
 * frames since the last verdict proves nothing, this many times in a row
 * (the count restarts when the plane is heard from).
 */
#define MROCE_PLANE_BUSY_DROPS		128
#define MROCE_PLANE_BUSY_WAITS		8

/* The datapath's drops so far on every interface of the connection's planes. */
static __u64 planes_drops(const struct mroce_qp *qp)
{
	const struct mroce_dev *dev = qp->dev;
	__u64 n = 0;

	if (!dev->ops->plane_drops)
		return 0;
	for (__u8 i = 0; i < qp->nplanes; i++)
		n += dev->ops->plane_drops(dev->port, i);
	return n;
}

/*
 * Plane pl is silent long enough to be found dead: unless its own host is
 * busy. A host flooded on a plane's interface (frames without the token,
 * which our XDP program drops) spends its receive CPU there, and real
 * packets wait in its own backlog for milliseconds while others go (on
 * veth, the backlog is a CPU's, whatever the interface: the flooded
 * plane's or another's): a busy host, not a dead plane. The datapath's
 * drops on the planes' interfaces since the last verdict say so (read here
 * only, at a verdict: it may cost a system call per plane); a dead plane's
 * own interface receives nothing to drop. The verdict then waits the
 * longest slack of a plane in use more (1 ms), and is taken again; at most
 * MROCE_PLANE_BUSY_WAITS times before the plane is heard from again, so a
 * plane that dies under a flood is still found, some 8 ms later. Without
 * drops, the verdict is what it was.
 */
static bool plane_busy(struct mroce_qp *qp, __u8 pl, __u64 now)
{
	struct mroce_plane *p = &qp->planes[pl];
	__u64 drops;
	bool busy;

	if (now < p->busy_until_us)
		return true;
	drops = planes_drops(qp);
	busy = drops - p->drops_seen >= MROCE_PLANE_BUSY_DROPS && p->busy_waits < MROCE_PLANE_BUSY_WAITS;
	p->drops_seen = drops;
	if (!busy)
		return false;
	p->busy_waits++;
	p->busy_until_us = now + MROCE_PLANE_SLACK_US;
	return true;
}

/*
 * A probe's nonce: never 0 (no echo), and at least 2^30 us from our clock
 * either way, so that no echo of a time is taken for it.
 */
static __u32 new_nonce(struct mroce_qp *qp, __u64 now)
{
	return ((__u32)now + (1u << 30) + (__u32)(mroce_dev_random64(qp->dev) % (1u << 31))) | 1;
}

void mroce_planes_connect(struct mroce_qp *qp, __u8 n, __u64 now)
{
	bool first_down = first_plane_shunned(qp, n, now);
	__u32 up = 0;
	__u64 drops;

	qp->nplanes = n ? n : 1;
	drops = qp->nplanes > 1 ? planes_drops(qp) : 0;
	for (__u32 i = 0; i < MROCE_MAX_PLANES; i++) {
		__u64 shun = qp->dev->plane_shun_until_us[i];
		/* held for dead by the device: probed, as a down plane is, when the hold ends */
		bool down = first_down || (i > 0 && shun > now);

		qp->planes[i] = (struct mroce_plane){
			.down = down, .probe_at_us = shun > now ? shun : now,
			.probe_gap_us = MROCE_PLANE_PROBE_MIN_US,
			.drops_seen = drops,
		};
		if (i >= qp->nplanes || qp->nplanes < 2 || down)
			continue;
		/* its first data packets carry a nonce: the others' to prove them, the first's for an RTT */
		qp->planes[i].unproven = i > 0;
		qp->planes[i].credit = i > 0 ? MROCE_PLANE_UNPROVEN_PKTS : 0;
		qp->planes[i].stamp = true;
		qp->planes[i].nonce = new_nonce(qp, now);
		qp->planes[i].nonce_at_us = now;
		qp->planes[i].nonced = true;
	}
	for (__u8 i = 0; i < qp->nplanes; i++)
		up += !qp->planes[i].down;
	mroce_cc_planes_start(qp, up);
	for (__u32 s = 0; s < qp->attr.paths; s++) {
		__u8 home = (__u8)(s % qp->nplanes);

		qp->paths[s].home = home;
		qp->paths[s].plane = qp->planes[home].down ? 0 : home;	/* every plane up from the first packet */
	}
	for (__u32 s = 0; s < MROCE_MAX_PATHS; s++)
		qp->ret[s].plane = 0;
}

/*
 * The live plane with the fewest slots on it, a proven one first, else one
 * that may still carry data unproven (0 if none: nothing is moved there).
 */
static __u8 best_live(const struct mroce_qp *qp)
{
	__u32 count[MROCE_MAX_PLANES] = { 0 }, best = 0, best_n = ~0u;

	for (__u32 s = 0; s < qp->attr.paths; s++)
		count[qp->paths[s].plane]++;
	for (int pass = 0; pass < 2 && best_n == ~0u; pass++)
		for (__u32 i = 0; i < qp->nplanes; i++)
			if ((pass ? mroce_plane_open(qp, (__u8)i) : mroce_plane_proven(qp, (__u8)i)) &&
			    count[i] < best_n) {
				best = i;
				best_n = count[i];
			}
	return (__u8)best;
}

/*
 * Move slot s to plane to: a fresh entropy value there. Its copies still
 * out on the plane it leaves are lost (that plane is dead): they go again
 * now, on live slots.
 */
static void slot_move(struct mroce_qp *qp, __u8 s, __u8 to, bool lost)
{
	struct mroce_path *p = &qp->paths[s];
	__u16 old = p->entropy;

	mroce_path_retire(qp, p);
	p->plane = to;
	if (!lost)
		return;
	for (__u32 psn = qp->snd_una; mroce_psn_before(psn, qp->snd_nxt); psn++) {
		struct mroce_txpkt *rec = PKT(qp, psn);

		if (rec->state != PKT_INFLIGHT || rec->path != s || rec->entropy != old)
			continue;
		mroce_rec_landed(qp, rec);
		rec->state = PKT_LOST;
		qp->nlost++;
	}
}

/*
 * Plane pl is dead: its slots move to the live planes. The device holds it
 * for dead too, for a probe's interval: new connections do not probe it
 * before then, and, if it is the first, do not start on it. The verdict is
 * a silence against another plane's deliveries, and those may have been
 * the other plane's last (it died next, under both ends' first windows: a
 * plane not proven yet is found dead while its echo waits in queues that
 * start-up filled): should the QP stall, it is probed at once
 * (mroce_planes_stalled), not a probe interval later. A connection over
 * 2 planes that took the live one for dead that way a microsecond before
 * the other died sent nothing that arrived for 10 ms (docs/scale.md).
 */
static void plane_down(struct mroce_qp *qp, __u8 pl, __u64 now)
{
	struct mroce_plane *p = &qp->planes[pl];

	p->down = true;
	p->trial_armed = p->unproven;	/* its nonce, echoed late, still proves it */
	p->probe_on_stall = true;
	p->unproven = false;
	p->stamp = false;
	p->trial = false;
	p->wait_since_us = 0;
	p->probe_gap_us = MROCE_PLANE_PROBE_MIN_US;
	p->probe_at_us = now + p->probe_gap_us;
	qp->dev->plane_shun_until_us[pl] = p->probe_at_us;
	qp->st.plane_downs++;
	for (__u32 s = 0; s < qp->attr.paths; s++)
		if (qp->paths[s].plane == pl)
			slot_move(qp, (__u8)s, best_live(qp), true);
}

static void plane_rejoin(struct mroce_qp *qp, __u8 pl)
{
	struct mroce_plane *p = &qp->planes[pl];

	p->down = false;
	p->trial = false;
	p->trial_armed = false;
	p->rate_ppms = 0;	/* measured again (paths.c): round robin meanwhile */
	p->rate_at_us = 0;
	p->probe_gap_us = MROCE_PLANE_PROBE_MIN_US;
	p->ack_probe_gap_us = 0;
	p->ack_probe_at_us = 0;
	qp->dev->plane_shun_until_us[pl] = 0;
	qp->st.plane_rejoins++;
	for (__u32 s = 0; s < qp->attr.paths; s++)
		if (qp->paths[s].home == pl && qp->paths[s].plane != pl)
			slot_move(qp, (__u8)s, pl, false);	/* its copies elsewhere still count */
	/*
	 * Slots left on a down plane, for want of a live one when theirs went
	 * down or at connect (mroce_planes_connect), come over too; not a
	 * probe's. What they had out there is resent.
	 */
	for (__u32 s = 0; s < qp->attr.paths; s++) {
		const struct mroce_plane *o = &qp->planes[qp->paths[s].plane];

		if (o->down && !(o->trial && o->trial_slot == s))
			slot_move(qp, (__u8)s, best_live(qp), true);
	}
}


/* A probe: the first slot at home on the plane goes back, one packet in flight. */
static void probe_start(struct mroce_qp *qp, __u8 pl, __u64 now)
{
	struct mroce_plane *p = &qp->planes[pl];

	for (__u32 s = 0; s < qp->attr.paths; s++) {
		if (qp->paths[s].home != pl)
			continue;
		slot_move(qp, (__u8)s, pl, false);
		qp->paths[s].pwnd_x256 = 256;
		p->probe_on_stall = false;
		p->nonce = new_nonce(qp, now);
		p->nonce_at_us = now;
		p->nonced = true;
		p->trial = true;
		p->trial_slot = (__u8)s;
		p->trial_pseq = qp->paths[s].tx_pseq;
		p->trial_armed = true;
		p->wait_since_us = 0;
		return;
	}
	p->probe_at_us = now + MROCE_PLANE_PROBE_MAX_US;	/* no slot at home there (paths < planes) */
}

static void probe_failed(struct mroce_qp *qp, __u8 pl, __u64 now, bool dead)
{
	struct mroce_plane *p = &qp->planes[pl];

	p->trial = false;
	p->wait_since_us = 0;
	slot_move(qp, p->trial_slot, best_live(qp), true);
	p->probe_gap_us = p->probe_gap_us * 2 > MROCE_PLANE_PROBE_MAX_US ? MROCE_PLANE_PROBE_MAX_US :
									    p->probe_gap_us * 2;
	p->probe_at_us = now + p->probe_gap_us;
	/*
	 * Its packet lost: the device's other connections, and the next ones,
	 * hold off too: a collective opens a connection per peer, each of
	 * which would otherwise lose its first packet on that plane to its
	 * probe.
	 */
	if (dead)
		qp->dev->plane_shun_until_us[pl] = now + MROCE_PLANE_PROBE_MIN_US;
}

/*
 * A probe given up by time alone (trial_due): nothing says the plane is
 * dead rather than every other, or the peer slow. The QP's next stall
 * probes it again, not a doubled interval later; the device does not hold
 * it for dead.
 */
static void probe_failed_alone(struct mroce_qp *qp, __u8 pl, __u64 now)
{
	probe_failed(qp, pl, now, false);
	qp->planes[pl].probe_on_stall = true;
}

/*
 * A plane not proven yet whose nonce went unanswered as a probe's does
 * (sibling_due): it fails as a probe does. Its slots move to the planes
 * up, what it carried is resent there at once, the device holds it off,
 * and it is probed as a down plane is; its nonce, echoed late (a plane
 * slower than the rest), still proves it (mroce_planes_echo).
 */
static void unproven_failed(struct mroce_qp *qp, __u8 pl, __u64 now)
{
	struct mroce_plane *p = &qp->planes[pl];

	p->down = true;
	p->unproven = false;
	p->trial = false;
	p->trial_armed = true;
	p->wait_since_us = 0;
	p->probe_gap_us = MROCE_PLANE_PROBE_MIN_US;
	p->probe_at_us = now + p->probe_gap_us;
	qp->dev->plane_shun_until_us[pl] = p->probe_at_us;
	for (__u32 s = 0; s < qp->attr.paths; s++)
		if (qp->paths[s].plane == pl)
			slot_move(qp, (__u8)s, best_live(qp), true);
}

void mroce_plane_heard(struct mroce_qp *qp, __u8 pl, __u64 sent_us, __u64 now)
{
	struct mroce_plane *p = &qp->planes[pl];

	/*
	 * The probe's packet acknowledged, its nonce not echoed (that ACK
	 * would have come first, mroce_planes_echo): the peer says it got what
	 * went to an address that may not be its own. Not a proof: the probe
	 * has failed, and its slot sends nothing more there. (The echo may
	 * still come, after another plane's: it brings the plane back then.)
	 */
	if (p->down) {
		if (p->trial)
			probe_failed(qp, pl, now, false);
		return;
	}
	/*
	 * The same for a plane not proven yet: what it carried acknowledged
	 * without its nonce echoed. It carries nothing more till the echo
	 * comes (the ACK that echoes it may only be behind this one: the peer
	 * echoes one plane's nonce per ACK), and is not heard from: if the echo
	 * never comes, it is found dead as a silent plane is (unheard_due).
	 */
	if (p->unproven) {
		p->credit = 0;
		return;
	}
	p->heard_us = now;
	p->busy_waits = 0;
	p->busy_until_us = 0;
	/*
	 * The wait ends with a packet sent since it began, or later than any
	 * delivered before. One sent earlier than both says only that the
	 * plane worked then: an ACK lost on a plane that died, repeated later
	 * on another, names packets delivered before it died, and each such
	 * ACK restarted the wait (a connection of the 256-host all-to-all kept
	 * sending into its dead first plane for 230 us). Only a packet sent
	 * since, as first done, kept every wait about a round trip long, and
	 * gave a healthy plane up 7 and 11 times in two runs of the emulated
	 * fabric's plane test, where it had been 1 and 3.
	 */
	if (sent_us >= p->wait_since_us || sent_us > p->del_sent_us)
		p->wait_since_us = 0;
	if (sent_us > p->del_sent_us)
		p->del_sent_us = sent_us;
}

/*
 * An ACK's echo that is a probe's nonce (with the peer's hold added): true
 * if it is one, and not a time. The plane whose latest probe it was
 * rejoins, even after its probe was given up: on a plane slower than the
 * rest, loss detection declares the probe's packet lost before it arrives,
 * and its copy resent elsewhere is acknowledged first; the receiver still
 * echoes the probe's nonce when it arrives (a duplicate with
 * MROCE_F_PLANE_PROBE is answered), and that is the same proof.
 */
/*
 * ts_echo is the echo of a nonce sent at at_us (with the peer's hold added),
 * and not too late: the peer cannot have held the nonce longer than it has
 * existed, so a guess has at most that many values in 2^31 to hit, and a
 * peer whose ACKs echo what is neither our time nor a nonce is guessing
 * (mroce_planes_echo stops believing it).
 */
static bool echoes(bool nonced, __u32 nonce, __u64 at_us, __u32 ts_echo, __u64 now)
{
	__u64 age = mroce_since(now, at_us);

	return nonced && age <= MROCE_PLANE_ECHO_TTL_US &&
	       ts_echo - nonce <= (age < MROCE_PLANE_ECHO_HOLD_US ? age : MROCE_PLANE_ECHO_HOLD_US);
}

/* Plane i's probe was echoed: it is heard from, and rejoins (an unproven plane up: is proven). */
static void proven(struct mroce_qp *qp, __u8 i, __u64 now)
{
	qp->planes[i].heard_us = now;
	qp->planes[i].wait_since_us = 0;
	if (qp->planes[i].down) {
		plane_rejoin(qp, i);
	} else if (qp->planes[i].unproven) {
		qp->planes[i].unproven = false;	/* joins: its slots are there already */
		qp->dev->plane_shun_until_us[i] = 0;
		qp->st.plane_rejoins++;
	}
}

bool mroce_planes_echo(struct mroce_qp *qp, __u32 ts_echo, __u64 now)
{
	bool nonce = false;

	if (qp->echo_guesses >= MROCE_PLANE_GUESSES)
		return false;	/* it guessed: its echoes prove nothing any more */

	for (__u8 i = 0; i < qp->nplanes; i++) {
		struct mroce_plane *p = &qp->planes[i];

		if (!echoes(p->nonced, p->nonce, p->nonce_at_us, ts_echo, now))
			continue;
		nonce = true;
		if (p->echo_of_us != p->nonce_at_us) {
			p->echo_of_us = p->nonce_at_us;
			p->echo_rtt_us = (__u32)mroce_since(now, p->nonce_at_us);
		}
		if ((p->down && p->trial_armed) || p->unproven)
			proven(qp, i, now);
	}
	/* an ACK's probe (mroce_plane_ack_probe): its echo is the same proof */
	for (__u8 i = 0; i < qp->nplanes; i++) {
		struct mroce_plane *p = &qp->planes[i];

		if (!echoes(p->ack_nonced, p->ack_nonce, p->ack_nonce_at_us, ts_echo, now))
			continue;
		nonce = true;
		p->ack_nonced = false;	/* one proof per probe */
		if (p->unproven && !p->down) {
			proven(qp, i, now);
		} else if (p->down) {
			proven(qp, i, now);
			/*
			 * Our ACKs went by another plane till now, which may be the
			 * dead one: the state they carried goes again, this way.
			 */
			qp->ack_now = true;
		}
	}
	return nonce;
}

/*
 * A data packet about to leave on slot path: if it is a probe's, it carries
 * the nonce. So does every packet a plane carries before it is proven,
 * spending its credit (each is answered at once, and any of them that
 * arrives proves the plane: a lost one does not leave it unproven), and
 * the first packet on the first plane (its echo's round trip is what the
 * others' are judged against, unheard_due).
 */
void mroce_plane_probe_mark(struct mroce_qp *qp, struct mroce_hdr *h, __u8 path, __u64 now)
{
	const struct mroce_path *s = &qp->paths[path];
	struct mroce_plane *p = &qp->planes[s->plane];

	if (p->down && p->trial && p->trial_slot == path && s->tx_pseq == p->trial_pseq) {
		h->flags |= MROCE_F_PLANE_PROBE;
		h->ts = p->nonce;
		return;
	}
	if (p->down || (!p->unproven && !p->stamp))
		return;
	if (p->stamp)
		p->nonce_at_us = now;	/* the first: its echo's round trip counts from here */
	p->stamp = false;
	if (p->unproven && p->credit)
		p->credit--;
	h->flags |= MROCE_F_PLANE_PROBE;
	h->ts = p->nonce;
}

/*
 * The plane an ACK leaves on: the one the packet it echoes came in on, if
 * that plane is up here, proven by our own probe, and data still comes in
 * on it; else the plane the latest data came in on, if up here; else the
 * first plane up. A peer may name any address for a plane: until the plane
 * is proven, answering there would reflect its traffic onto that address.
 * A plane whose latest data came in more than MROCE_PLANE_ACK_STALE_US
 * before another's latest may have failed, or the peer moved off it: a
 * slot last heard there would send its ACKs into it (ACKs echo every slot
 * in turn, paths.c, and the peer may be sending nothing new while it waits
 * for them), and a peer whose ACKs all went there would hear nothing.
 * Planes in use deliver packets apart, not microseconds. A plane the device
 * holds for dead (mroce_planes_shunned) is passed over the same way: a
 * receiver whose ACKs died with the first plane sent the next ones there
 * too (docs/scale.md).
 */
#define MROCE_PLANE_ACK_STALE_US	2

__u8 mroce_plane_ack_way(const struct mroce_qp *qp, __u8 plane, __u64 now)
{
	__u32 held = mroce_planes_shunned(qp, now);
	__u8 newest = qp->rx_newest_plane;

	if (plane < qp->nplanes && mroce_plane_proven(qp, plane) && !(held & 1u << plane) &&
	    qp->rx_plane_at[plane] + MROCE_PLANE_ACK_STALE_US >= qp->rx_plane_at[newest])
		return plane;
	if (newest < qp->nplanes && mroce_plane_proven(qp, newest) && !(held & 1u << newest))
		return newest;
	for (__u8 i = 0; i < qp->nplanes; i++)
		if (mroce_plane_proven(qp, i) && !(held & 1u << i))
			return i;
	return 0;
}

/*
 * The nonce our next ACK probe of plane pl carries (an answer's copy or an
 * ACK probe, below): the one out already, while its echo may still come,
 * else a new one. Only the latest counts (mroce_planes_echo), and the peer
 * echoes only the latest that came in on a plane: a second probe a
 * microsecond after the first replaced the nonce whose echo was on its
 * way, and the echo was taken for a guess (docs/scale.md).
 */
static __u32 ack_nonce_of(struct mroce_qp *qp, __u8 pl, __u64 now)
{
	const struct mroce_plane *p = &qp->planes[pl];

	if (p->ack_nonced && mroce_since(now, p->ack_nonce_at_us) < MROCE_PLANE_ECHO_HOLD_US)
		return p->ack_nonce;
	return new_nonce(qp, now);
}

static void ack_nonce_out(struct mroce_plane *p, __u32 nonce, __u64 now)
{
	if (p->ack_nonced && p->ack_nonce == nonce)
		return;	/* the same probe again: its age counts from the first */
	p->ack_nonce = nonce;
	p->ack_nonce_at_us = now;
	p->ack_nonced = true;
}

/*
 * A probe of plane pl came in here, and the ACK echoing it goes its usual
 * way on another plane: true if a copy goes on pl too. Always where pl is
 * proven here; where it is not, once per MROCE_PLANE_ANSWER_GAP_US (counted
 * from the last that went, mroce_plane_answer_sent): a peer that names a
 * victim's address for pl gets one ACK sent there per probe it sends, and
 * at most one a millisecond. That copy is our own probe of pl too, *nonce
 * in its ts (0: pl proven here, none): the peer's ACK echoing it proves pl
 * here at once (mroce_planes_echo). Our ACKs went their usual way till
 * then, the first plane's: were that the plane that failed, the peer's
 * probes of the others were answered on them alone, at most once a
 * millisecond, while everything else we sent went into the dead plane
 * until our next ACK probe (10 ms), and the peer gave up probes it had
 * no other plane's echo to judge by (the 256-host all-to-all over 2 planes
 * with a plane failed took 12.6 ms where it had taken 0.53; docs/scale.md).
 */
bool mroce_plane_answer_there(struct mroce_qp *qp, __u8 pl, __u64 now, __u32 *nonce)
{
	if (pl >= qp->nplanes)
		return false;
	*nonce = 0;
	if (mroce_plane_proven(qp, pl))
		return true;
	if (now < qp->planes[pl].answer_at_us)
		return false;
	*nonce = ack_nonce_of(qp, pl, now);
	return true;
}

void mroce_plane_answer_sent(struct mroce_qp *qp, __u8 pl, __u32 nonce, __u64 now)
{
	struct mroce_plane *p = &qp->planes[pl];

	if (mroce_plane_proven(qp, pl))
		return;
	p->answer_at_us = now + MROCE_PLANE_ANSWER_GAP_US;
	if (!nonce)
		return;
	ack_nonce_out(p, nonce, now);	/* its echo proves pl as an ACK probe's does */
}

/*
 * An ACK about to leave while the latest data came in on plane pl: true if
 * a copy goes there as a probe, with *nonce in its ts. That is when pl is
 * not proven here (the ACK itself goes elsewhere) and the last such probe
 * that went (mroce_plane_ack_probe_sent) is a probe interval old, doubling
 * from 10 ms to 320 ms as the data probes' do, or sooner where a resend or
 * an ask came in on pl (mroce_plane_resend_in). The peer answers at once
 * with an ACK echoing the nonce, which proves the plane (mroce_planes_echo).
 * Without it a QP that only receives could never prove a plane, and ACKed
 * only on the first: were that to fail, its peer would hear nothing on any.
 */
bool mroce_plane_ack_probe(struct mroce_qp *qp, __u8 pl, __u64 now, __u32 *nonce)
{
	const struct mroce_plane *p;

	if (pl >= qp->nplanes || mroce_plane_proven(qp, pl))
		return false;
	p = &qp->planes[pl];
	if (now < p->ack_probe_at_us && !(p->resent_in && now >= p->answer_at_us))
		return false;
	*nonce = ack_nonce_of(qp, pl, now);
	return true;
}

/*
 * A resend or an ask came in on plane pl: the peer's packets, or our ACKs,
 * are being lost. Were pl not proven here, our ACKs go another way, perhaps into a
 * plane that died (this end took the live one for dead, its echo late in
 * start-up's queues), and the peer resends into pl, unheard, timeout after
 * timeout: the next ACK probes pl (mroce_plane_ack_probe), not an ACK
 * probe's interval (10 ms) later, at most once per MROCE_PLANE_ANSWER_GAP_US
 * as a probe's answers are (a connection of the 256-host all-to-all over 2
 * planes, the first failed, waited 15 ms so; docs/scale.md).
 */
void mroce_plane_resend_in(struct mroce_qp *qp, __u8 pl)
{
	if (pl < qp->nplanes && !mroce_plane_proven(qp, pl))
		qp->planes[pl].resent_in = true;
}

void mroce_plane_ack_probe_sent(struct mroce_qp *qp, __u8 pl, __u32 nonce, __u64 now)
{
	struct mroce_plane *p = &qp->planes[pl];

	ack_nonce_out(p, nonce, now);
	p->resent_in = false;
	if (now < p->ack_probe_at_us) {	/* a resend's: the interval stands */
		p->answer_at_us = now + MROCE_PLANE_ANSWER_GAP_US;
		return;
	}
	p->ack_probe_gap_us = !p->ack_probe_gap_us ? MROCE_PLANE_PROBE_MIN_US :
			      p->ack_probe_gap_us * 2 > MROCE_PLANE_PROBE_MAX_US ?
			      MROCE_PLANE_PROBE_MAX_US : p->ack_probe_gap_us * 2;
	p->ack_probe_at_us = now + p->ack_probe_gap_us;
}

/*
 * When plane pl's probe fails for its siblings: a probe of another plane,
 * sent with it or after it, was echoed, and this one is still unanswered
 * twice that echo's time later (and 3 us). The peer echoes every probe at
 * once, so this one is lost, or its plane slower than the others: its late
 * echo still brings it back (mroce_planes_echo). Loss detection alone took
 * several RTTs (the QP's RTT unknown yet, its probe slots' too), while
 * every connection the device opened meanwhile probed a dead plane too.
 */
static __u64 sibling_due(const struct mroce_qp *qp, __u8 pl)
{
	const struct mroce_plane *p = &qp->planes[pl];
	__u64 due = UINT64_MAX;

	for (__u8 j = 0; j < qp->nplanes; j++) {
		const struct mroce_plane *o = &qp->planes[j];
		__u64 t = p->nonce_at_us + 2ull * o->echo_rtt_us + 3;

		if (j != pl && o->echo_of_us && o->echo_of_us >= p->nonce_at_us && t < due)
			due = t;
	}
	return due;
}

/*
 * When a down plane's probe is given up: by its siblings' echoes
 * (sibling_due), or, where no other plane has echoed one since it went
 * (every other plane down too, or silent), by time alone: a retransmission
 * timeout after it went. The peer echoes a probe at once, on the plane it
 * came in on too (mroce_plane_answer_there), so that is slow, not early;
 * without it a probe whose echo was lost stayed out for good, and the
 * plane was not probed again while the QP stalled (probe_failed_alone).
 */
static __u64 trial_due(const struct mroce_qp *qp, __u8 pl)
{
	__u64 due = sibling_due(qp, pl);

	return due != UINT64_MAX ? due : qp->planes[pl].nonce_at_us + qp->rto_us;
}

/* A plane up, not proven yet, whose nonce went out with its first packets. */
static bool unproven_out(const struct mroce_plane *p)
{
	return p->unproven && !p->down && !p->stamp;
}

/*
 * A plane up that this connection has never heard from: the first, which
 * a connection starts on while its first packets probe the others. Were
 * it dead, the others' echoes come back and nothing of its own: it is
 * found dead once its oldest packet out is MROCE_PLANE_UNHEARD_RTTS of
 * their echoes' round trips and MROCE_PLANE_UNHEARD_US old, and another
 * plane was heard from since it went. The slack meant for a plane in use
 * (mroce_planes_timer) took a hundred microseconds at 400 Gbit/s, and
 * every connection the device opened meanwhile lost its first window
 * there (docs/scale.md). Less is not safe: a connection's first window
 * goes on the first plane alone, behind every other new connection's, and
 * at 2 round trips and 3 us, 1,454 connections of the clean
 * 256-host all-to-all over 2 planes gave it up (2,045 over 8); at 4 and
 * 10 us, none did.
 */
#define MROCE_PLANE_UNHEARD_RTTS	4
#define MROCE_PLANE_UNHEARD_US		10

static __u64 unheard_due(const struct mroce_qp *qp, __u8 pl)
{
	const struct mroce_plane *p = &qp->planes[pl];
	__u64 due = UINT64_MAX;

	if (p->down || p->heard_us || !p->wait_since_us)
		return UINT64_MAX;
	for (__u8 j = 0; j < qp->nplanes; j++) {
		const struct mroce_plane *o = &qp->planes[j];
		__u64 t = p->wait_since_us + (__u64)o->echo_rtt_us * MROCE_PLANE_UNHEARD_RTTS +
			  MROCE_PLANE_UNHEARD_US;

		if (j != pl && !o->down && o->echo_of_us && o->del_sent_us > p->wait_since_us && t < due)
			due = t;
	}
	return due != UINT64_MAX && due < p->busy_until_us ? p->busy_until_us : due;
}

/* A down plane's probe slot whose one packet has not gone yet; -1 if none. */
int mroce_planes_probe_slot(const struct mroce_qp *qp)
{
	for (__u8 i = 0; i < qp->nplanes; i++) {
		const struct mroce_plane *p = &qp->planes[i];

		if (p->down && p->trial && p->trial_armed && qp->paths[p->trial_slot].plane == i &&
		    qp->paths[p->trial_slot].tx_pseq == p->trial_pseq)
			return p->trial_slot;
	}
	return -1;
}

/*
 * The planes up here that the device holds for dead, as a mask: another
 * connection found them so (plane_down), or a probe of them failed. This
 * connection keeps its own view of them (mroce_planes_timer); only where
 * a packet it has no better choice for goes, a resend, a stalled QP's
 * idle-plane resend or an ACK, do they come last; and its copies there
 * are judged by time alone (loss.c). 0 if every plane up is held: then
 * the hold tells nothing.
 */
__u32 mroce_planes_shunned(const struct mroce_qp *qp, __u64 now)
{
	__u32 held = 0, up = 0;

	for (__u8 i = 0; i < qp->nplanes; i++) {
		if (qp->planes[i].down)
			continue;
		up |= 1u << i;
		if (qp->dev->plane_shun_until_us[i] > now)
			held |= 1u << i;
	}
	return held == up ? 0 : held;
}

/*
 * A slot on a plane up with nothing out on it, while another plane up has;
 * -1 if none. Not on a plane the device holds for dead (mroce_planes_shunned)
 * while there is another; but the stall says the planes not held carry
 * nothing through now, and a hold is one connection's verdict, perhaps on
 * the live plane while its echo sat in start-up's queues: a connection
 * that passed over the only live plane for it resent into the dead one
 * for 11 ms (docs/scale.md).
 */
static int idle_plane_slot(const struct mroce_qp *qp, __u64 now)
{
	__u32 held = mroce_planes_shunned(qp, now);
	bool waiting = false;

	for (__u8 i = 0; i < qp->nplanes; i++)
		waiting |= !qp->planes[i].down && qp->planes[i].wait_since_us;
	for (int pass = 0; waiting && pass < 2; pass++) {
		for (__u32 s = 0; s < qp->attr.paths; s++) {
			__u8 pl = qp->paths[s].plane;
			const struct mroce_plane *p = &qp->planes[pl];

			if (mroce_plane_open(qp, pl) && !p->wait_since_us && !qp->paths[s].bad &&
			    (pass || !(held & 1u << pl)))
				return (int)s;
		}
	}
	return -1;
}

/*
 * A plane up, not proven yet, that has spent its allowance (what it carried
 * acknowledged, its nonce not echoed: mroce_plane_heard): one packet more,
 * with a fresh nonce, on a slot there; -1 if there is none. The echo of
 * its first nonce may have gone on the plane that failed since, and
 * nothing else would ever prove it: neither judged dead (it is not silent)
 * nor heard from (unproven), while the QP sent only into the dead plane,
 * which nothing delivered later judged either (docs/scale.md). A peer
 * that named a victim's address for it gets one packet per stall, each
 * a timer's wait (and its backoff) after the last.
 */
static int unproven_again(struct mroce_qp *qp, __u64 now)
{
	for (__u8 i = 0; i < qp->nplanes; i++) {
		struct mroce_plane *p = &qp->planes[i];

		if (p->down || !p->unproven || p->credit)
			continue;
		for (__u32 s = 0; s < qp->attr.paths; s++) {
			if (qp->paths[s].plane != i || qp->paths[s].bad)
				continue;
			p->credit = 1;
			p->stamp = false;
			p->nonce = new_nonce(qp, now);
			p->nonce_at_us = now;
			p->nonced = true;
			return (int)s;
		}
	}
	return -1;
}

/*
 * A timer (a tail probe, the RTO) found the QP stalled: nothing it sent
 * answered for a while. The resend it causes goes where it tells most
 * (qp->stall_slot): on a down plane not probed yet, as its probe (the
 * device's hold notwithstanding; the QP's own backoff after a probe of its
 * own failed stands; with a plane up, a copy goes the usual way too,
 * tx.c); else on a plane up with nothing out, when another has packets
 * unanswered. A stalled QP may have nothing new to send, and
 * its resends would all go where its last deliveries were: were those
 * planes to have died (the first, which a connection starts on, perhaps
 * before it proved another), it would resend into them till its retries
 * ran out, since a plane is found dead only by another delivering more.
 */
void mroce_planes_stalled(struct mroce_qp *qp, __u64 now)
{
	int s;

	for (__u8 i = 0; i < qp->nplanes; i++) {
		struct mroce_plane *p = &qp->planes[i];

		if (p->down && !p->trial && (!p->nonced || p->probe_on_stall || now >= p->probe_at_us))
			probe_start(qp, i, now);
	}
	s = mroce_planes_probe_slot(qp);
	if (s < 0)
		s = unproven_again(qp, now);
	if (s < 0)
		s = idle_plane_slot(qp, now);
	qp->stall_slot = (__u8)(s + 1);
}

/*
 * The slot a stalled QP's timer named (qp->stall_slot, mroce_planes_stalled)
 * carries a probe: a down plane's, one packet more on a plane not proven
 * yet, or a resend on a plane with nothing out. A copy of the resend goes
 * the usual way too (tx.c), and the QP does not ask instead (loss.c): an
 * ask goes the way ACKs go, which may be the plane that died, and its
 * answer the way the peer's ACKs go, which may be too.
 */
bool mroce_planes_stall_probes(const struct mroce_qp *qp)
{
	return qp->nplanes > 1 && qp->stall_slot && qp->stall_slot <= qp->attr.paths;
}

/*
 * No plane open, over several: none up, or those up not proven and their
 * allowance spent (mroce_plane_open): nothing goes but a probe's one
 * packet on each plane probed (mroce_planes_probe_slot), new or resent,
 * till an echo proves one. Anything else would go on a plane held for
 * dead, or on one whose address the peer named and nothing has checked
 * beyond what it may carry unproven.
 */
bool mroce_planes_held(const struct mroce_qp *qp)
{
	if (qp->nplanes < 2)
		return false;
	for (__u8 i = 0; i < qp->nplanes; i++)
		if (mroce_plane_open(qp, i))
			return false;
	return true;
}

/* A packet may go now: no plane up, only on a probe's slot (mroce_planes_held). */
bool mroce_planes_may_send(const struct mroce_qp *qp)
{
	return !mroce_planes_held(qp) || mroce_planes_probe_slot(qp) >= 0;
}

/*
 * When a probe out is due to be given up for its siblings' echoes, a
 * plane never heard from is due to be found dead for theirs, or, with no
 * plane up, the next probe is due (UINT64_MAX: none of them).
 */
__u64 mroce_planes_due(const struct mroce_qp *qp)
{
	bool held = mroce_planes_held(qp);
	__u64 due = UINT64_MAX;

	for (__u8 i = 0; i < qp->nplanes; i++) {
		const struct mroce_plane *p = &qp->planes[i];
		__u64 t = p->down && p->trial ? trial_due(qp, i) :
			  held && p->down ? p->probe_at_us : unheard_due(qp, i);

		if (unproven_out(p) && sibling_due(qp, i) < t)
			t = sibling_due(qp, i);

		if (t < due)
			due = t;
	}
	return due;
}

/* Runs every progress round: the slots are walked only once some plane has waited the least slack. */
void mroce_planes_timer(struct mroce_qp *qp, __u64 now)
{
	__u64 slack = 0, wait = 0, margin = margin_us(qp);

	for (__u8 i = 0; i < qp->nplanes; i++) {
		struct mroce_plane *p = &qp->planes[i];
		bool others_heard = false;

		/*
		 * The probe's one packet was declared lost (something sent later
		 * arrived): failed, without waiting for the slack meant for a plane
		 * in use. If it only went slower than the rest, the peer echoes
		 * its nonce when it arrives, which brings the plane back
		 * (mroce_planes_echo).
		 */
		if (p->down && p->trial && qp->paths[p->trial_slot].lost) {
			probe_failed(qp, i, now, true);
			continue;
		}
		if (p->down && p->trial && now >= trial_due(qp, i)) {
			if (sibling_due(qp, i) != UINT64_MAX)
				probe_failed(qp, i, now, true);	/* a sibling's echo judged it */
			else
				probe_failed_alone(qp, i, now);
			continue;
		}
		/* the same for a plane not proven yet whose packets carry its nonce: dead */
		if (unproven_out(p) && now >= sibling_due(qp, i)) {
			unproven_failed(qp, i, now);
			continue;
		}
		if (now >= unheard_due(qp, i)) {
			if (!plane_busy(qp, i, now))
				plane_down(qp, i, now);
			continue;
		}
		if (p->wait_since_us && mroce_since(now, p->wait_since_us) > margin && !wait) {
			slack = slack_us(qp);
			wait = slack + 2 * answer_us(qp);
		}
		/* Not before its own answers are due: a plane with a longer queue is not dead. */
		if (!p->wait_since_us || mroce_since(now, p->wait_since_us) <= margin ||
		    mroce_since(now, p->wait_since_us) <= wait) {
			if (p->down && !p->trial && now >= p->probe_at_us)
				probe_start(qp, i, now);
			continue;
		}
		/* Silent while another plane delivers what was sent later: the plane is dead. */
		for (__u8 j = 0; j < qp->nplanes; j++)
			others_heard |= j != i && !qp->planes[j].down &&
					qp->planes[j].del_sent_us > p->wait_since_us + slack;
		if (!others_heard)
			continue;	/* everything is silent: the peer, or our CPU, not the plane */
		if (p->down && p->trial)
			probe_failed(qp, i, now, true);
		else if (!p->down && !plane_busy(qp, i, now))
			plane_down(qp, i, now);
	}
}
