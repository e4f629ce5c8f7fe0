// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Receiver-driven rate grants (MetaRoCE's receiver rate hints).
 *
 * A receiver is where an incast meets: it sees every sender's packets, so
 * it can share its inbound link among them at once, where senders each on
 * their own would take many round trips of ECN or delay signals to find
 * their share. Per epoch (grant_epoch_us: 16 of the device's RTTs, at most
 * MROCE_GRANT_EPOCH_US) the device counts the data
 * bytes that arrived, the QPs they came to, their CE marks and their
 * queueing delay (one-way delay above the QP's recent lowest: the clocks'
 * offset cancels; grant_queue_sample). An epoch with a congestion signal
 * and senders that share (two or more; where the epoch holds their round
 * trips, those heard within one, as 2.5 senders or more by their bytes:
 * grant_senders) measured the link at full use: the arrival rate over the
 * episode's last epochs is the link's rate, and each sender is granted an
 * equal share. Calm epochs grow the
 * grant by a quarter per MROCE_GRANT_EPOCH_US of them (a sender that used
 * less left room; a window grows back as in slow start, not in one step);
 * after MROCE_GRANT_CALM x MROCE_GRANT_EPOCH_US of them (6.4 ms), or at
 * the first epoch end whose senders no longer share, it is withdrawn.
 * Both are paces in time, not per epoch (epochs follow the RTT, and one
 * ends with the first packet after its length, however late). Every ACK
 * carries the grant (aeth.rate, kbit/s); a sender keeps no more in flight than the grant
 * over its RTT (cc.h), whatever its congestion control allows, so it
 * moves to its share with the first ACK. One sender alone is never
 * granted: its own congestion control is all it needs.
 */
#include "cc.h"
#include "eng_int.h"

#define MROCE_GRANT_EPOCH_US	200	/* the longest epoch: a few software RTTs */
#define MROCE_GRANT_EPOCH_RTTS	16	/* an epoch's RTTs, where that is shorter */
#define MROCE_GRANT_QUEUE_US	200	/* mean queueing delay that counts as congestion */
#define MROCE_GRANT_CALM	32	/* calm epochs before the grant is withdrawn */

/*
 * An epoch: MROCE_GRANT_EPOCH_RTTS of this device's latest smoothed RTT (as
 * a sender, over the same fabric), no shorter than the longest scheduling
 * stall its host saw lately (a host off the CPU takes an epoch's packets in
 * one burst), within MROCE_GRANT_EPOCH_US, which a device that knows no
 * RTT (a receiver that only receives) and every software path (RTTs of
 * 12.5 us and more) keep. At 400 Gbit/s (RTTs of 3-6 us, epochs of 48-96
 * us) a grant is re-judged within a collective's step: over 200 us epochs
 * a grant from the end of one all-reduce held the next one's first steps
 * (256 hosts x 16 MiB, 3 in a row: 840, 1526, 1243 us; 840, 1089, 1236 with
 * 16 RTTs). Not 4 RTTs (12-24 us): grants then came within an all-to-all's
 * 255-way incasts of one-window flows and held them to 2-packet windows (4
 * planes, 16 MiB: 731 us against 500).
 */
static __u32 grant_epoch_us(const struct mroce_dev *dev)
{
	__u64 e = (__u64)MROCE_GRANT_EPOCH_RTTS * dev->rtt_hint_us;

	if (!dev->rtt_hint_us || e >= MROCE_GRANT_EPOCH_US || dev->stall_us >= MROCE_GRANT_EPOCH_US)
		return MROCE_GRANT_EPOCH_US;
	return (__u32)(e > dev->stall_us ? e : dev->stall_us);
}

/* The same, for the tests. */
__u32 mroce_grant_epoch_us(const struct mroce_dev *dev)
{
	return grant_epoch_us(dev);
}

/*
 * Senders sharing the link: QPs with data in the last 8 epochs, or in the
 * last two queueing delays (a FIFO holding one sender's burst for that long
 * starves the others' arrivals meanwhile). A sender held to its grant sends
 * its window once a round trip, so its packets come in bursts an RTT apart:
 * the span outlasts a round trip of a loaded fabric (1 ms and more). Where
 * round trips are known to be shorter (this device's latest smoothed RTT as
 * a sender, over the same fabric), 4 of them and the queueing delays are
 * the span: a sender whose flow ended is not counted for 1.6 ms after, as
 * at a host of an all-to-all over connections kept open, which hears from
 * every peer within one collective, and whose grants divided the link
 * among 200 senders where 16 were sending (docs/scale.md point 17).
 */
bool mroce_grant_counts(const struct mroce_qp *qp, __u64 queue_us, __u64 now)
{
	__u64 span = 8 * MROCE_GRANT_EPOCH_US + 2 * queue_us, rtt = qp->dev->rtt_hint_us;

	if (rtt && 4 * rtt + 2 * queue_us < span)
		span = 4 * rtt + 2 * queue_us;
	return qp->state == MROCE_QPS_RTS && qp->grant_last_us && mroce_since(now, qp->grant_last_us) <= span;
}

/*
 * The senders that count (mroce_grant_counts): a sender counts for a span
 * after its last packet, so that one held to its grant, sending once a
 * round trip, is not missed; the share divides among them all. Whether
 * they share the link (*shared): where recent is 0, two or more of them;
 * where it is a time (an epoch that holds a round trip of every sender),
 * those heard within it, as 2.5 senders or more by this epoch's bytes:
 * their number weighted by what each sent (sum^2 / sum of squares, as
 * Jain's index counts it).
 * Over the span, a receiver whose peers take turns in steps of a few
 * microseconds each (a log-step collective: 4 of them in 24 us at 400
 * Gbit/s) counted four senders where one was sending, and its step, the
 * collective's largest, ran at a quarter of the link until the others aged
 * out; a sender beside others' trickles (control messages, a step's tail)
 * is one sender. And two at once are left to their own congestion
 * control where its epochs are round trips too (cc.c): granted, the two
 * senders of a 256-host all-reduce's step boundaries took it from 1.29x
 * to 1.37x the ideal; ECN's cuts share a link between two in a few round
 * trips. (Where the epoch is shorter than the senders' round trips, or no
 * RTT is known, two are granted as ever.)
 */
static __u32 grant_senders(const struct mroce_dev *dev, __u64 queue_us, __u64 now, __u64 recent,
			   bool *shared)
{
	__u64 sum = 0, sq = 0;
	__u32 n = 0, nr = 0;

	for (__u32 i = 0; i < MROCE_MAX_QPS; i++) {
		const struct mroce_qp *qp = dev->qps[i];
		__u64 kib;

		if (!qp || !mroce_grant_counts(qp, queue_us, now))
			continue;
		n++;
		if (recent && mroce_since(now, qp->grant_last_us) > recent)
			continue;
		nr++;
		kib = qp->grant_epoch == dev->grant.epoch ? qp->grant_bytes >> 10 : 0;
		sum += kib;
		sq += kib * kib;
	}
	*shared = recent ? nr >= 2 && sum && 2 * sum * sum >= 5 * sq : n >= 2;
	return n;
}

/*
 * The link's rate: the bytes of this congestion episode's last epochs over
 * their time, in kbit/s. One epoch alone measures the receiver, not the
 * link: a host that was not scheduled for a while takes the packets queued
 * meanwhile in a burst, at many times the link's rate, after an epoch that
 * saw almost none. Over the window the two cancel.
 */
static __u64 grant_link_kbps(struct mroce_grant *g, __u64 bytes, __u64 len)
{
	__u64 sum_bytes = 0, sum_us = 0;

	g->win_bytes[g->win_next] = bytes;
	g->win_us[g->win_next] = len > UINT32_MAX ? UINT32_MAX : (__u32)len;
	g->win_next = (g->win_next + 1) % MROCE_GRANT_WINDOW;
	if (g->win_n < MROCE_GRANT_WINDOW)
		g->win_n++;
	for (__u32 i = 0; i < g->win_n; i++) {
		sum_bytes += g->win_bytes[i];
		sum_us += g->win_us[i];
	}
	return sum_us ? sum_bytes * 8 * 1000 / sum_us : 0;	/* bits per ms */
}

/*
 * An epoch ended. Congested, with senders that share the link (two or
 * more, grant_senders): the arrival rate
 * was the link's, and the grant is an equal share of it, less what drains
 * the queue (RCP's rule, with the queueing delay measured where it is):
 * the link's rate times T / (T + queueing delay), T the delay aimed at,
 * and no less than 3/4 of it: senders hold a window of the grant times
 * their RTT, so the queue shrinks by that factor each round trip. Every
 * epoch of a congestion episode, calm or not, counts in the link's rate.
 * While a grant stands, every epoch end counts the senders again, and
 * senders that no longer share (one, or one in earnest) withdraw it: a
 * sender alone was held to a share of senders long gone (1/3-1/2 of its
 * link over the later steps of a 256-host all-reduce, one sender a step,
 * whose grant one step's overlap had set). (Granting the link over the senders counted, when more than
 * the quarter's growth, was tried: no faster there, and slower at an
 * all-to-all, whose senders counted are fewer than those about to come.)
 */
static void grant_epoch_end(struct mroce_dev *dev, __u64 now)
{
	struct mroce_grant *g = &dev->grant;
	__u64 len = mroce_since(now, g->epoch_us), queue_us = g->pkts ? g->queue_sum_us / g->pkts : 0;
	bool congested = g->ce || queue_us > MROCE_GRANT_QUEUE_US;
	/*
	 * A round trip of every sender: this device's RTT and two queueing
	 * delays (a sender held to its grant sends once a round trip). Where
	 * the epoch holds one, the senders are those heard within it, by
	 * their bytes; where it does not, or no RTT is known (a receiver that
	 * only receives), all that count, by their number (grant_senders).
	 */
	bool fabric = grant_epoch_us(dev) < MROCE_GRANT_EPOCH_US;	/* epochs of RTTs */
	__u64 rt = fabric ? dev->rtt_hint_us + 2 * queue_us : 0;
	bool shared = false;
	__u32 n = !g->off && ((congested && g->pkts) || g->active) ?
		  grant_senders(dev, queue_us, now, rt && len >= rt ? rt : 0, &shared) : 0;
	bool share_now = congested && shared;
	__u64 kbps = 0, share;

	if (share_now && !g->active)
		g->win_n = g->win_next = 0;	/* an episode begins */
	if (len && (share_now || g->active))
		kbps = grant_link_kbps(g, g->bytes, len);
	if (len && share_now) {
		/*
		 * Granted senders leave the link short of full while the queue
		 * drains: the arrivals then measure the grants, not the link,
		 * and a link's rate does not fall. Once the window is long
		 * enough to be free of the receiver's bursts, the estimate
		 * only rises, for the rest of the episode.
		 */
		if (kbps > UINT32_MAX)
			kbps = UINT32_MAX;
		if (g->win_n < MROCE_GRANT_WINDOW / 4 || kbps > g->cap_kbps)
			g->cap_kbps = (__u32)kbps;
		/* T / (T + queue), no less than 3/4: the queue shrinks so each RTT */
		share = (__u64)g->cap_kbps * MROCE_GRANT_QUEUE_US / (MROCE_GRANT_QUEUE_US + queue_us);
		if (share < (__u64)g->cap_kbps * 3 / 4)
			share = (__u64)g->cap_kbps * 3 / 4;
		share /= n;
		g->grant_kbps = share ? (__u32)share : 1;
		g->active = n;
		g->calm_us = 0;
	} else if (g->grant_kbps && ((fabric && !shared) ||
				     (g->calm_us += len) >= (__u64)MROCE_GRANT_CALM * MROCE_GRANT_EPOCH_US)) {
		/* calm for long, or (where epochs are RTTs) one sender left: its
		 * own CC is all it needs; software paths keep the calm rule alone */
		g->grant_kbps = g->cap_kbps = 0;
		g->active = 0;
	} else if (g->grant_kbps) {
		/* a quarter per 200 us of calm, whatever the epoch */
		__u64 more = (__u64)g->grant_kbps + (__u64)g->grant_kbps *
			     (len < MROCE_GRANT_EPOCH_US ? len : MROCE_GRANT_EPOCH_US) /
			     (4 * MROCE_GRANT_EPOCH_US);

		g->grant_kbps = more > UINT32_MAX ? UINT32_MAX : (__u32)more;
	}
	g->epoch++;
	g->epoch_us = now;
	g->bytes = g->queue_sum_us = 0;
	g->pkts = g->ce = 0;
}

/*
 * The queueing delay a data packet's timestamp measures. bth.ts is the
 * peer's word: its one-way delay (our clock less its, modulo 2^32: the
 * clocks' offset included) is only compared with the QP's baseline, in
 * unsigned arithmetic, and a sample further than MROCE_OWD_MAX_US from it
 * either way is no queue but a bad timestamp (a clock stepped, a lying or
 * broken peer): counted (grant.ts_odd) and not used, neither as a delay
 * nor as a baseline. MROCE_OWD_REBASE of them in a row say the baseline is
 * what was wrong: it starts again from the latest. The baseline is the
 * lowest delay of this window of MROCE_OWD_WINDOW_US and the last, as
 * Swift keeps its base delay: a low one that was plausible (a timestamp
 * up to MROCE_OWD_MAX_US ahead) stops counting two windows later at most,
 * as does the clocks' drift. False: no sample.
 */
#define MROCE_OWD_MAX_US	100000	/* 100 ms: a queue, or a host's stall, beyond is a bad clock */
#define MROCE_OWD_REBASE	4
#define MROCE_OWD_WINDOW_US	1000000

static bool grant_queue_sample(struct mroce_qp *qp, __u32 ts, __u64 now, __u32 *queue_us)
{
	__u32 owd = (__u32)now - ts, above, below;

	if (qp->owd_valid && mroce_since(now, qp->owd_win_us) >= MROCE_OWD_WINDOW_US) {
		if (qp->owd_win_valid)
			qp->owd_base = qp->owd_win_min;	/* the last window's lowest */
		qp->owd_win_valid = false;
		qp->owd_win_us = now;
	}
	above = owd - qp->owd_base;
	below = qp->owd_base - owd;
	if (qp->owd_valid && above > MROCE_OWD_MAX_US && below > MROCE_OWD_MAX_US) {
		qp->dev->grant.ts_odd++;
		if (++qp->owd_odd < MROCE_OWD_REBASE)
			return false;
		qp->owd_valid = false;	/* the baseline was the odd one */
	}
	qp->owd_odd = 0;
	if (!qp->owd_valid) {
		qp->owd_valid = true;
		qp->owd_win_valid = false;
		qp->owd_win_us = now;
		qp->owd_base = owd;
	} else if (above > MROCE_OWD_MAX_US) {	/* below the baseline, plausibly: the new one */
		qp->owd_base = owd;
	}
	if (!qp->owd_win_valid || (__s32)(owd - qp->owd_win_min) < 0)
		qp->owd_win_min = owd;
	qp->owd_win_valid = true;
	*queue_us = owd - qp->owd_base;	/* 0 .. MROCE_OWD_MAX_US */
	return true;
}

/* A data packet of bytes payload arrived on qp (placed or a duplicate). */
void mroce_grant_rx(struct mroce_qp *qp, const struct mroce_hdr *h, __u32 bytes, bool ce, __u64 now)
{
	struct mroce_grant *g = &qp->dev->grant;
	__u32 queue_us;

	if (mroce_since(now, g->epoch_us) >= grant_epoch_us(qp->dev))
		grant_epoch_end(qp->dev, now);
	/* a probe's ts is a nonce, not a time */
	if (!(h->flags & MROCE_F_PLANE_PROBE) && grant_queue_sample(qp, h->ts, now, &queue_us))
		g->queue_sum_us += queue_us;
	if (qp->grant_epoch != g->epoch) {
		qp->grant_epoch = g->epoch;
		qp->grant_bytes = 0;
	}
	qp->grant_bytes += bytes;
	g->bytes += bytes;
	g->pkts++;
	g->ce += ce;
	qp->grant_last_us = now;
}

/*
 * The grant an ACK of qp carries: the share of the moment, to a QP that has
 * sent us data (ACKs answer data just arrived); 0 while none is granted.
 */
__u32 mroce_grant_of(const struct mroce_qp *qp)
{
	const struct mroce_grant *g = &qp->dev->grant;

	return qp->grant_last_us && g->active ? g->grant_kbps : 0;
}

/* Sender: the peer's grant, from an ACK. */
void mroce_grant_heard(struct mroce_qp *qp, const struct mroce_hdr *ack)
{
	qp->st.rate_hint_kbps = ack->rate_kbps;
}

/*
 * Sender: a QP with nothing in flight is about to send. If it has been
 * quiet longer than the receiver goes on counting a sender (8 epochs, or 4
 * RTTs where those are shorter: mroce_grant_counts), its grant was the
 * share of senders it is no longer one of, and is dropped: the next ACK
 * brings the share of the moment. (The receiver's span also has two of its
 * queueing delays, which the sender does not know: it may drop the grant
 * that much early, and its first round trip goes unheld, at most its
 * window, as a new sender's does.) Kept, a connection reused a collective
 * later sent its whole next flow at a share of 200 (256 hosts x 16 MiB
 * all-to-all, three in a row over kept connections: 408/537/630 us each,
 * 408/445/463 with this; docs/scale.md point 17).
 */
void mroce_grant_resume(struct mroce_qp *qp, __u64 now)
{
	__u64 quiet = 8 * MROCE_GRANT_EPOCH_US, rtt = qp->srtt_us;

	if (rtt && 4 * rtt < quiet)
		quiet = 4 * rtt;
	if (qp->st.rate_hint_kbps && mroce_since(now, qp->last_progress_us) > quiet)
		qp->st.rate_hint_kbps = 0;
}
