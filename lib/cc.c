// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Congestion control framework: the choice of algorithm per QP, the epoch
 * (about one RTT) the window-based ones act on, and "none", which keeps
 * the window at the QP's BDP cap.
 */
#include <string.h>

#include "cc.h"
#include "eng_int.h"

void mroce_cc_init_window(struct mroce_qp *qp)
{
	qp->cwnd_x256 = qp->attr.max_inflight * 256;	/* the BDP cap */
}

void mroce_cc_init_none(struct mroce_qp *qp)
{
	memset(qp->cc_priv, 0, sizeof(qp->cc_priv));
	mroce_cc_init_window(qp);
}

/*
 * The window-based algorithms start small and double their window every
 * RTT until the first congestion signal (TCP's slow start), not at the BDP
 * cap as IRN does: the cap is a guess for the fastest link, and a first
 * window of 256 packets into a 64 KiB queue at 1 Gbit/s loses 200 of them
 * before any signal can come back. Doubling reaches the cap in 4 RTTs.
 * Their private state begins with the epoch.
 */
void mroce_cc_init_slow_start(struct mroce_qp *qp)
{
	struct mroce_cc_epoch *e = mroce_cc_priv(qp);
	__u32 iw = qp->attr.max_inflight < MROCE_CC_INIT_PKTS ? qp->attr.max_inflight :
		   MROCE_CC_INIT_PKTS;

	memset(qp->cc_priv, 0, sizeof(qp->cc_priv));
	qp->cwnd_x256 = iw * 256;
	e->ssthresh_x256 = qp->attr.max_inflight * 256;
}

/*
 * A connection that starts over several planes (planes.c) starts with an
 * initial window per plane up, at most the BDP cap: each plane is a
 * fabric of its own, with its own queues (MPTCP gives each subflow its
 * own too). A window the algorithm did not start at the initial one
 * ("none": the cap) stays.
 */
void mroce_cc_planes_start(struct mroce_qp *qp, __u32 planes)
{
	__u32 cap = qp->attr.max_inflight, iw = cap < MROCE_CC_INIT_PKTS ? cap : MROCE_CC_INIT_PKTS;
	__u64 w = (__u64)MROCE_CC_INIT_PKTS * planes;

	if (planes > 1 && qp->cwnd_x256 == iw * 256)
		qp->cwnd_x256 = (__u32)(w < cap ? w : cap) * 256;
}

static __u32 none_window(const struct mroce_qp *qp)
{
	return qp->attr.max_inflight;
}

const struct mroce_cc_ops mroce_cc_none = {
	.name = "none",
	.init = mroce_cc_init_none,
	.window = none_window,
};

/* Packets in flight the window allows: at least one, at most the BDP cap. */
__u32 mroce_cc_clamp_window(const struct mroce_qp *qp)
{
	__u32 cw = qp->cwnd_x256 / 256;

	return cw < 1 ? 1 : cw < qp->attr.max_inflight ? cw : qp->attr.max_inflight;
}

/*
 * An epoch is the QP's smoothed RTT, and no shorter than the longest
 * scheduling stall its host saw lately (an epoch shorter than those
 * measures the scheduler, not the network: ACKs held over a stall come in
 * one burst), within MROCE_CC_EPOCH_MIN_US .. MROCE_CC_EPOCH_STALL_US.
 * Software paths with RTTs of 20 us and more keep an epoch of their RTT, as
 * under the 20 us floor the epoch always had (a path of 12.5-20 us whose
 * host does not stall now has epochs of its RTT too). A fabric of 3-6 us RTTs at 400 Gbit/s,
 * whose hosts do not stall, has epochs of an RTT: under a 20 us floor,
 * slow start doubled and the window grew a packet every 4-6 RTTs, and the
 * moving CE fraction (1 at the start) decayed as slowly, so a window cut
 * once at a 256-host all-reduce's step boundary took 600 us to come back
 * (a 61-packet BDP) over steps of 10-170 us.
 */
#define MROCE_CC_EPOCH_MIN_US	2	/* two ticks of the microsecond clock */
#define MROCE_CC_EPOCH_STALL_US	20	/* the most a host's stalls lengthen it */

__u32 mroce_cc_epoch_len(const struct mroce_qp *qp)
{
	__u32 floor = qp->dev->stall_us;

	floor = floor < MROCE_CC_EPOCH_MIN_US ? MROCE_CC_EPOCH_MIN_US :
		floor > MROCE_CC_EPOCH_STALL_US ? MROCE_CC_EPOCH_STALL_US : floor;
	return qp->srtt_us > floor ? qp->srtt_us : floor;
}

/* An ACK's RTT sample counted in the epoch; whether the epoch (an RTT) is over. */
bool mroce_cc_epoch_over(const struct mroce_qp *qp, struct mroce_cc_epoch *e, __u32 rtt_us,
			 __u64 now)
{
	if (rtt_us > e->rtt_max)
		e->rtt_max = rtt_us;
	return mroce_since(now, e->epoch_us) >= mroce_cc_epoch_len(qp);
}

#define CC_FLOOR_X256	(2 * 256)	/* the window never goes below 2 packets */

/* Set the window, between its floor and the BDP cap; a cut is counted. */
static void cc_set(struct mroce_qp *qp, __u32 cw, bool cut)
{
	__u32 cap = qp->attr.max_inflight * 256;

	if (cut) {
		qp->dev->stats.cc_cuts++;
		qp->st.cc_cuts++;
	}
	qp->cwnd_x256 = cw < CC_FLOOR_X256 ? CC_FLOOR_X256 : cw > cap ? cap : cw;
}

/*
 * The end of an epoch: a cut counts as one and ends slow start (the window
 * it leaves is the threshold); otherwise the window doubles below the
 * threshold (at most to it), or grows by one packet per RTT above it. cw
 * is the window the algorithm's own rules left (they may grow it too).
 * The first slow start also ends once the epoch's RTT shows a queue (over
 * twice the lowest, the rule of mroce_path_queued; HyStart's delay exit):
 * the bottleneck is full, and doubling into a queue that marks nothing (a
 * tail-drop one) would only overflow it by a window before the losses
 * came back. (After a timeout, slow start climbs back to half the old
 * window whatever the RTT: a path spread over routes of different delays
 * always shows RTTs over twice the lowest, and would stay at 2 packets.)
 */
void mroce_cc_epoch_end(struct mroce_qp *qp, struct mroce_cc_epoch *e, __u32 cw, bool cut,
			__u64 now)
{
	bool queued = qp->min_rtt_us && e->rtt_max > 2 * qp->min_rtt_us + 20 &&
		      e->ssthresh_x256 == qp->attr.max_inflight * 256;

	e->rtt_max = 0;
	if (cut) {
		cc_set(qp, cw, true);
		e->ssthresh_x256 = qp->cwnd_x256;
	} else if (qp->cwnd_x256 < e->ssthresh_x256 && queued) {
		e->ssthresh_x256 = qp->cwnd_x256;
		cc_set(qp, cw + 256, false);
	} else if (qp->cwnd_x256 < e->ssthresh_x256) {
		__u32 twice = qp->cwnd_x256 * 2 < e->ssthresh_x256 ? qp->cwnd_x256 * 2 :
			      e->ssthresh_x256;

		cc_set(qp, cw > twice ? cw : twice, false);
	} else {
		cc_set(qp, cw + 256, false);
	}
	e->epoch_us = now;
}

/*
 * Declared losses: halve the window, once per window sent, since the
 * packets one overflow of a queue takes are declared lost over an RTT or
 * more and are one congestion event (as TCP's fast recovery treats them).
 * A lossy tail-drop queue that never marks is a signal ECN alone misses.
 * Only congestion loss cuts: a lost packet's path showed a queue
 * (qp->cc_loss_sent_us, paths.c). Random loss builds no queue, and halving
 * the window for it would cost a clean link's throughput for nothing. And
 * once per window: only a packet sent after the last cut cuts again (as
 * TCP's recovery point), since one overflow's losses are found over more
 * than one RTT while the queue drains. (The first cut and the RTO's reset
 * the threshold: see mroce_cc_epoch_end.)
 */
void mroce_cc_loss_cut(struct mroce_qp *qp, struct mroce_cc_epoch *e, __u64 now)
{
	if (qp->cc_loss_sent_us <= e->loss_cut_us)
		return;
	e->loss_cut_us = now;
	cc_set(qp, qp->cwnd_x256 / 2, true);
	e->ssthresh_x256 = qp->cwnd_x256;
}

/*
 * The retransmission timer fired: nothing got through for an RTO, start
 * again from the floor, in slow start up to half the window it had.
 */
void mroce_cc_rto_floor(struct mroce_qp *qp, struct mroce_cc_epoch *e, __u64 now)
{
	__u32 half = qp->cwnd_x256 / 2;

	e->loss_cut_us = e->epoch_us = now;
	cc_set(qp, CC_FLOOR_X256, true);
	e->ssthresh_x256 = half > CC_FLOOR_X256 ? half : CC_FLOOR_X256;
}

/*
 * The QP's algorithm: none with attr.no_cc; the signals it names with
 * cc_ecn and cc_delay; else the default, MROCE_CC_DEFAULT.
 */
void mroce_cc_init(struct mroce_qp *qp)
{
	const struct mroce_cc_ops *ops = &MROCE_CC_DEFAULT;

	if (qp->attr.no_cc)
		ops = &mroce_cc_none;
	else if (qp->attr.cc_ecn && qp->attr.cc_delay)
		ops = &mroce_cc_dctcp_swift;
	else if (qp->attr.cc_ecn)
		ops = &mroce_cc_dctcp;
	else if (qp->attr.cc_delay)
		ops = &mroce_cc_swift;
	qp->cc = ops;
	ops->init(qp);
}
