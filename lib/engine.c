// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The reliability engine's rounds: packetise requests, place arriving
 * packets in any order, acknowledge with cumulative PSN + SACK bitmap,
 * detect loss from SACK holes (with a reordering allowance) and a
 * retransmission timer, and resend only what was lost. Runs with dev->lock
 * held. docs/transport.md says which file does what.
 */
#include <stdint.h>

#include "cc.h"
#include "eng_int.h"

#define RX_BUDGET	64
#define TX_WAIT_US		20	/* retry after this when no transmit buffer is free */

/* Fill in what mroce_qp_query_stats and the flows map report. dev->lock held. */
void mroce_qp_stats_update(struct mroce_qp *qp)
{
	struct mroce_qp_stats *st = &qp->st;
	struct mroce_flow_tx *tx = &qp->flow->tx;

	st->srtt_us = qp->srtt_us;
	st->min_rtt_us = qp->min_rtt_us;
	st->cwnd_pkts = mroce_cc_window(qp);
	st->inflight_pkts = qp->snd_nxt - qp->snd_una;
	st->paths = qp->attr.paths;
	st->reorder_window_us = qp->reo_seen_us;
	st->worst_path_srtt_us = 0;
	for (__u32 i = 0; i < qp->attr.paths; i++)
		if (qp->paths[i].srtt_us > st->worst_path_srtt_us)
			st->worst_path_srtt_us = qp->paths[i].srtt_us;
	/* Plain stores: tools read these racily, one counter at a time. */
	tx->tx_pkts = st->tx_pkts;
	tx->retx_pkts = st->retx_pkts;
	tx->acked_bytes = st->acked_bytes;
	tx->ecn_ce = st->ecn_ce;
	tx->cc_cuts = (__u32)st->cc_cuts;
	tx->paths_retired = (__u32)st->paths_retired;
	tx->srtt_us = st->srtt_us;
	tx->cwnd_pkts = st->cwnd_pkts;
	tx->paths = st->paths;
	tx->worst_path_srtt_us = st->worst_path_srtt_us;
}

static __u64 qp_due(struct mroce_qp *qp, __u64 now, __u64 *timer);

/* The lowest live QPN from q on (MROCE_MAX_QPS: none). */
static __u32 live_from(const struct mroce_dev *dev, __u32 q)
{
	while (q < MROCE_MAX_QPS) {
		__u64 w = dev->qp_live[q / 64] >> (q % 64);

		if (w)
			return q + (__u32)__builtin_ctzll(w);
		q = (q / 64 + 1) * 64;
	}
	return MROCE_MAX_QPS;
}

int mroce_engine_run(struct mroce_dev *dev, mroce_rx_cb rx)
{
	return mroce_engine_run_round(dev, rx, true);
}

/*
 * One round. kick false: the caller rings the port's doorbell itself after
 * dropping dev->lock (dev.c, with a port that has tx_kick).
 */
int mroce_engine_run_round(struct mroce_dev *dev, mroce_rx_cb rx, bool kick)
{
	__u32 start, refused = 0;
	bool full = false;
	__u64 now;
	int work;

	/*
	 * The clock is read before the receive ring, and the round's timers
	 * judge by it: what arrived by then has been seen. Read after, a round
	 * preempted between the two (milliseconds, on a loaded host) fired
	 * timers for ACKs that came in meanwhile and sat unread in the ring.
	 */
	now = dev->ops->now_us(dev->port);
	work = dev->ops->rx_burst(dev->port, rx, dev, RX_BUDGET);
	/*
	 * Each round starts at the first QP the round before refused every
	 * transmit buffer (data or an ACK), else just after the last QP that
	 * sent, else one QP further on: when the port runs out of buffers part
	 * way, a fixed start would give the low QPNs every buffer, a start one
	 * further on would hand the QP behind a buffer-taking one every buffer
	 * a second time, and moving on past a QP that found none (rounds come
	 * faster than buffers free) could skip the same QP every time.
	 */
	if (!dev->rr_qp || dev->rr_qp >= MROCE_MAX_QPS)
		dev->rr_qp = 1;
	start = dev->rr_qp;
	dev->rr_qp = start % (MROCE_MAX_QPS - 1) + 1;
	/*
	 * The live QPs from start on, then those before it. Once the port has
	 * refused a transmit buffer (one plane: its only ring is full), the
	 * rest of the round visits only the QPs something was received for or
	 * posted to, or with a timer due (acknowledgements, completions, loss
	 * detection), and offers them no transmission: every QP behind would be
	 * refused too, and such visits were three in four of a loaded host's.
	 * The others stay due for the next round. (With planes, each has a
	 * ring of its own.)
	 */
	for (int pass = 0; pass < 2; pass++) {
		__u32 end = pass ? start : MROCE_MAX_QPS;

		for (__u32 q = live_from(dev, pass ? 1 : start); q < end; q = live_from(dev, q + 1)) {
			__u64 bit = 1ull << (q % 64);
			struct mroce_qp *qp;
			int sent;

			if (dev->qp_due[q] > now)
				continue;	/* nothing due: nothing received, posted or timed out */
			if (full && !(dev->qp_poked[q / 64] & bit) && dev->qp_timer[q] > now)
				continue;
			dev->qp_poked[q / 64] &= ~bit;
			qp = dev->qps[q];
			dev->tx_refused = false;
			mroce_qp_timers(qp, now);
			sent = full ? 0 : mroce_qp_tx(qp, now);
			if (dev->tx_refused && sent <= 0 && !refused)
				refused = q;	/* wanted to send, got nothing */
			full |= dev->tx_refused && dev->nplanes <= 1;
			if (sent > 0)
				dev->rr_qp = q % (MROCE_MAX_QPS - 1) + 1;
			work += sent;
			if (qp->state == MROCE_QPS_RTS) {
				mroce_complete_sq(qp);
				mroce_complete_rq(qp);
			}
			dev->qp_due[q] = qp_due(qp, now, &dev->qp_timer[q]);
		}
	}
	if (refused)
		dev->rr_qp = refused;
	if (kick)
		dev->ops->tx_flush(dev->port);
	return work;
}

/*
 * A QP's earliest timer, folded into *next (all of them, even when it has
 * work now: a round whose port is out of buffers visits it for a timer).
 * True: it has work right now.
 */
static bool qp_next_timer(struct mroce_qp *qp, __u64 now, __u64 *next)
{
	__u64 tlp, planes;

	if (qp->ack_due_us && qp->ack_due_us < *next)
		*next = qp->ack_due_us;
	if (qp->rack_timer_us && qp->rack_timer_us < *next)
		*next = qp->rack_timer_us;
	if (qp->rnr_until_us && qp->rnr_until_us <= now)
		qp->rnr_until_us = mroce_streams_next_hold(qp, now);
	if (qp->rnr_until_us && qp->rnr_until_us < *next)
		*next = qp->rnr_until_us;	/* a stream's RNR wait ends */
	if (qp->rd_outstanding && mroce_read_due(qp) < *next)
		*next = mroce_read_due(qp);
	if (qp->snd_nxt != qp->snd_una && mroce_rto_due(qp) < *next)
		*next = mroce_rto_due(qp);
	tlp = mroce_tlp_due(qp);
	if (tlp && tlp < *next)
		*next = tlp;
	planes = qp->nplanes > 1 ? mroce_planes_due(qp) : UINT64_MAX;
	if (planes < *next)
		*next = planes;	/* a probe its siblings' echoes give up */
	if (qp->ack_now)
		return true;
	if (!mroce_planes_may_send(qp))
		return false;	/* no plane up: the next probe's time is its timer */
	if (qp->nlost)
		return true;
	if (mroce_window_open(qp)) {
		struct mroce_txpkt rec;

		if (mroce_next_new(qp, &rec, now))
			return true;
	}
	return false;
}

/*
 * When a round must visit qp again: at once if it can send, else at its
 * earliest timer, its path scoreboard's next epoch or its next counters'
 * publication (once a millisecond). A QP not connected is visited every
 * round, as are QPs over several planes (their probes keep no timer here).
 */
static __u64 qp_due(struct mroce_qp *qp, __u64 now, __u64 *timer)
{
	__u64 next = UINT64_MAX, epoch;
	bool work;

	if (qp->state != MROCE_QPS_RTS || qp->nplanes > 1) {
		*timer = 0;	/* every round, a round out of buffers too */
		return 0;
	}
	work = qp_next_timer(qp, now, &next);
	*timer = next;
	if (work)
		return 0;
	epoch = mroce_path_epoch_due(qp);
	if (epoch < next)
		next = epoch;
	return qp->stats_at_us + 1000 < next ? qp->stats_at_us + 1000 : next;
}

/*
 * Work to do now needs a transmit buffer. With none free (the port's ring
 * is full until the NIC completes some), "now" would spin the progress
 * thread on the port: wait a little instead. The buffer taken to look is
 * given straight back.
 */
static bool tx_buf_free(struct mroce_dev *dev)
{
	__u32 cap;
	void *buf = dev->ops->tx_buf(dev->port, &cap);

	if (!buf)
		return false;
	dev->ops->tx_send(dev->port, buf, 0);
	return true;
}

__u64 mroce_engine_next_timer(struct mroce_dev *dev)
{
	__u64 next = UINT64_MAX, now = dev->ops->now_us(dev->port);	/* once, not per QP */

	for (__u32 q = live_from(dev, 1); q < MROCE_MAX_QPS; q = live_from(dev, q + 1)) {
		struct mroce_qp *qp;

		if (dev->qp_due[q] > now) {	/* not touched since its last visit: its timer then */
			if (dev->qp_timer[q] < next)
				next = dev->qp_timer[q];
			continue;
		}
		qp = dev->qps[q];
		if (qp->state != MROCE_QPS_RTS)
			continue;
		if (qp_next_timer(qp, now, &next))
			return tx_buf_free(dev) ? 0 : now + TX_WAIT_US;
	}
	return next;
}
