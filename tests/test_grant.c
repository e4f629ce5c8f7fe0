// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Wire protocol v2's per-path SACK and receiver rate grants, on their own
 * and on the simulated wire (no root): the receiver's per-path record of
 * what arrived, a lost copy found by it alone, and an incast of 8 QPs
 * through one 1 Gbit/s queue resolved by grants.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#define BUF	(1 << 20)
#include "pair.h"
#include "../lib/eng_int.h"

static bool has(const struct mroce_rxpath *r, __u16 pseq)
{
	__u32 i = (__u16)(r->next - 1 - pseq);

	return i < MROCE_PSACK_BITS && (r->bits[i / 64] >> (i % 64) & 1);
}

/* The receiver's record: arrivals in any order, gaps, duplicates, a jump, the wrap. */
static void test_psack_record(void **state)
{
	struct mroce_rxpath r = {};

	(void)state;
	mroce_psack_mark(&r, 65530);
	for (__u16 s = 65531; s != 10; s++)
		if (s != 65534 && s != 3)
			mroce_psack_mark(&r, s);
	assert_true(r.valid);
	assert_int_equal(r.next, 10);
	assert_false(has(&r, 65534));
	assert_false(has(&r, 3));
	assert_true(has(&r, 65530) && has(&r, 2) && has(&r, 9) && has(&r, 0));
	mroce_psack_mark(&r, 3);	/* late, within the 256 */
	assert_true(has(&r, 3));
	assert_int_equal(r.next, 10);
	mroce_psack_mark(&r, 9);	/* a duplicate changes nothing */
	assert_int_equal(r.next, 10);
	/* 200 on: the old bits moved 200 places, still there */
	mroce_psack_mark(&r, 209);
	assert_true(has(&r, 209) && has(&r, 9) && !has(&r, 100) && !has(&r, 65534));
	assert_true(has(&r, 65530));	/* 215 places back */
	/* beyond the 256: everything older is forgotten */
	mroce_psack_mark(&r, 1000);
	assert_int_equal(r.next, 1001);
	assert_true(has(&r, 1000));
	assert_int_equal(r.bits[0] & ~1ULL, 0);
	assert_int_equal(r.bits[1] | r.bits[2] | r.bits[3], 0);
	/* too old to fit: ignored, not wrapped onto another bit */
	mroce_psack_mark(&r, 1000 - 300);
	assert_int_equal(r.bits[0] & ~1ULL, 0);
	assert_int_equal(r.bits[1] | r.bits[2] | r.bits[3], 0);
}

/*
 * The receiver holds records for the peer's slots up to the highest heard
 * (psack.c): 16 after a 16-path write, the ACKs carrying each slot's SACK;
 * a slot never heard gives none; the highest a header can name (a rogue
 * peer's 255) grows them to 256 at most, the records kept.
 */
static void test_psack_records_grow(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 16);
	struct mroce_hdr h = {};
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	struct mroce_qp *qp;

	(void)state;
	pair_open(&p, 3050, &attr, NULL);
	pair_connect(&p);
	assert_int_equal(p.qb->rxpaths_n, 0);
	pair_write_n(&p, w, 1, 62, NULL);
	qp = p.qb;
	pthread_mutex_lock(&p.db->lock);
	assert_int_equal(qp->rxpaths_n, 16);
	for (__u32 i = 0; i < 16; i++)
		assert_true(qp->rxpaths[i].valid);
	mroce_psack_fill(qp, 7, &h);
	assert_int_equal(h.pflags, MROCE_PF_VALID);
	assert_int_equal(h.ppath, 7);
	h = (struct mroce_hdr){};
	mroce_psack_fill(qp, 200, &h);	/* never heard, beyond the records */
	assert_int_equal(h.pflags, 0);
	assert_non_null(mroce_rxpath_of(qp, 255));
	assert_int_equal(qp->rxpaths_n, 256);
	assert_true(qp->rxpaths[7].valid && !qp->rxpaths[255].valid);
	mroce_psack_fill(qp, 200, &h);
	assert_int_equal(h.pflags, 0);
	pthread_mutex_unlock(&p.db->lock);
	free(w);
	pair_close(&p);
}

/*
 * The sender's side: copies 3 or more places behind the newest arrival on
 * their slot that did not arrive are lost, now; a forged ACK naming a
 * sequence the slot never sent, a stale one, or a hole already acted on
 * change nothing.
 */
static void test_psack_holes(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 2);
	struct mroce_hdr h = {};
	struct mroce_rxpath r = {};
	struct pair p;
	struct mroce_qp *qp;

	(void)state;
	pair_open(&p, 3100, &attr, NULL);
	pair_connect(&p);
	qp = p.qa;
	pthread_mutex_lock(&p.da->lock);
	/* ten packets in flight on slot 1, pseq 100..109 */
	qp->paths[1].tx_pseq = 110;
	for (__u32 i = 0; i < 10; i++) {
		struct mroce_txpkt *rec = PKT(qp, qp->snd_nxt + i);

		*rec = (struct mroce_txpkt){ .state = PKT_INFLIGHT, .path = 1, .pseq = (__u16)(100 + i),
					     .entropy = qp->paths[1].entropy, .len = 1,
					     .sent_us = 1000 + 100 * i };	/* far more apart than jitter */
	}
	qp->snd_nxt += 10;
	for (__u16 s = 100; s < 110; s++)
		if (s != 102 && s != 107 && s != 108)
			mroce_psack_mark(&r, s);
	h.pflags = MROCE_PF_VALID;
	h.ppath = 1;
	h.ppsn_next = r.next;
	memcpy(h.psack, r.bits, sizeof(h.psack));
	/* 107 and 108 are only 1 and 2 places behind 109: not yet */
	assert_int_equal(mroce_psack_holes(qp, &h, p.net->now), 1);
	assert_int_equal(PKT(qp, qp->snd_una + 2)->state, PKT_LOST);
	assert_int_equal(PKT(qp, qp->snd_una + 7)->state, PKT_INFLIGHT);
	assert_int_equal(mroce_psack_holes(qp, &h, p.net->now), 0);	/* the same ACK again */
	/* a forged one: a sequence slot 1 never sent */
	h.ppsn_next = 200;
	assert_int_equal(mroce_psack_holes(qp, &h, p.net->now), 0);
	/* another slot, or not valid */
	h.ppsn_next = r.next;
	h.ppath = 5;
	assert_int_equal(mroce_psack_holes(qp, &h, p.net->now), 0);
	h.ppath = 1;
	h.pflags = 0;
	assert_int_equal(mroce_psack_holes(qp, &h, p.net->now), 0);
	/* 110 sent and arrived: 107 and 108 are now 3 and 2 places behind */
	qp->paths[1].tx_pseq = 111;
	*PKT(qp, qp->snd_nxt) = (struct mroce_txpkt){ .state = PKT_INFLIGHT,
		.path = 1, .pseq = 110, .entropy = qp->paths[1].entropy, .len = 1, .sent_us = 2000 };
	qp->snd_nxt++;
	mroce_psack_mark(&r, 110);
	h.pflags = MROCE_PF_VALID;
	h.ppsn_next = r.next;
	memcpy(h.psack, r.bits, sizeof(h.psack));
	assert_int_equal(mroce_psack_holes(qp, &h, p.net->now), 1);
	assert_int_equal(PKT(qp, qp->snd_una + 7)->state, PKT_LOST);
	assert_int_equal(PKT(qp, qp->snd_una + 8)->state, PKT_INFLIGHT);
	assert_int_equal(qp->st.psack_lost, 2);
	qp->snd_nxt -= 11;
	qp->nlost = 0;
	pthread_mutex_unlock(&p.da->lock);
	pair_close(&p);
}

/*
 * Incast: 8 QPs each WRITE 1 MiB into one receiving device through one
 * 1 Gbit/s queue of 1 MiB, 10 us away, no congestion control (library
 * defaults). The receiver's grants must hold the aggregate at >= 90% of the
 * link from 2 RTTs after the start, share it fairly (Jain >= 0.95 when
 * the first finishes, none starved), and keep the queue from overflowing.
 */
#define INCAST	8
struct incast {
	struct waiter	w;
	struct mroce_qp	*qa[INCAST];
};

static bool incast_first_done(void *ctx)
{
	struct incast *f = ctx;

	collected(ctx);
	return f->w.na >= 1;
}

static __u64 incast_acked(const struct incast *f)
{
	__u64 sum = 0;

	for (int i = 0; i < INCAST; i++)
		sum += f->qa[i]->st.acked_bytes;
	return sum;
}

/*
 * A busy sender: its device's clock moves on 1 us for each frame it reads,
 * so what a round reads is stamped after the round's own clock (engine.c
 * reads it before the ring), as on a host with a long receive ring.
 */
static bool late_reads;
static struct sim_net *late_net;
static mroce_rx_cb late_cb;

static void late_rx(void *ctx, const void *frame, __u32 len, __u32 placed_len)
{
	late_net->now++;
	late_cb(ctx, frame, len, placed_len);
}

static int late_rx_burst(void *port, mroce_rx_cb cb, void *ctx, int budget)
{
	late_net = ((struct sim_port *)port)->net;
	late_cb = cb;
	return sim_rx_burst(port, late_rx, ctx, budget);
}

static const struct mroce_port_ops late_ops = {
	.tx_buf = sim_tx_buf, .tx_send = sim_tx_send, .tx_flush = sim_tx_flush,
	.rx_burst = late_rx_burst, .wait = sim_wait, .now_us = sim_now,
};

/*
 * Eight senders into one 1 Gbit/s link. nap_us: the receiver is off the
 * CPU that long every 2 ms, and takes what came meanwhile in one burst.
 * cc: the senders run the library's default congestion control; without,
 * no_cc (the grants alone hold them). min_agg: the aggregate wanted.
 */
static double incast(__u64 seed, bool grants, __u32 nap_us, bool cc, double min_agg)
{
	MROCE_OPTS(mroce_qp_attr, attr, .no_cc = !cc);
	struct incast *f = calloc(1, sizeof(*f));
	struct mroce_qp *qb[INCAST];
	__u64 min = UINT64_MAX, max = 0, sum = 0, sq = 0, t0, t2, b2, rtt = 0, dropped_early, sus = 0, ret = 0;
	struct pair p;
	double jain, agg;

	pair_open(&p, seed, NULL, NULL);
	mroce_destroy_qp(p.qa);
	mroce_destroy_qp(p.qb);
	p.qa = p.qb = NULL;
	p.net->a.link = (struct sim_link){ .delay_us = 10, .rate_mbps = 1000, .queue_bytes = 1 << 20 };
	p.net->a.link.jitter_us = 2;
	p.net->b.link = (struct sim_link){ .delay_us = 10 };
	p.db->grant.off = !grants;
	if (late_reads)
		p.da->ops = &late_ops;
	late_reads = false;	/* this incast's alone, even if an assertion ends it */
	p.net->nap_period_us = nap_us ? 2000 : 0;
	p.net->nap_us = nap_us;
	fill(p.la, BUF, 71);
	for (int i = 0; i < INCAST; i++) {
		attr.send_cq = attr.recv_cq = p.cqa;
		assert_int_equal(mroce_create_qp(p.da, &attr, &f->qa[i]), 0);
		attr.send_cq = attr.recv_cq = p.cqb;
		assert_int_equal(mroce_create_qp(p.db, &attr, &qb[i]), 0);
		assert_int_equal(sim_connect(f->qa[i], qb[i]), 0);
	}
	t0 = p.net->now;
	for (int i = 0; i < INCAST; i++)
		assert_int_equal(post(f->qa[i], MROCE_WR_RDMA_WRITE, (__u64)i, p.la, BUF,
				      mroce_mr_lkey(p.ma), (__u64)(unsigned long)p.lb,
				      mroce_mr_rkey(p.mb), 0), 0);
	f->w.p = &p;
	/* Two RTTs of an empty fabric: 2 x (2 x 10 us + one frame at 1 Gbit/s, 12 us). */
	assert_int_equal(sim_run(p.net, p.da, p.db, incast_first_done, f, 2 * 32), -ETIMEDOUT);
	t2 = p.net->now;
	b2 = incast_acked(f);
	assert_int_equal(sim_run(p.net, p.da, p.db, incast_first_done, f, 10000), -ETIMEDOUT);
	dropped_early = p.net->a.dropped;
	assert_int_equal(sim_run(p.net, p.da, p.db, incast_first_done, f, 60000000), 0);
	for (int i = 0; i < INCAST; i++) {
		__u64 b = f->qa[i]->st.acked_bytes;

		min = b < min ? b : min;
		max = b > max ? b : max;
		sum += b;
		sq += b * b / 1024;
		rtt += f->qa[i]->min_rtt_us;
		sus += f->qa[i]->st.paths_suspected;
		ret += f->qa[i]->st.paths_retired;
	}
	jain = (double)sum * sum / 1024 / (INCAST * (double)sq);
	agg = (double)(sum - b2) * 8 / (double)(p.net->now - t2) / 1000;	/* Gbit/s */
	printf("  seed %llu, %s, %s, receiver naps %u us of 2 ms: 8 to 1 through 1 Gbit/s: %.3f Gbit/s from 2 RTTs on (%.0f%%), Jain %.3f, "
	       "acked %llu..%llu when the first finished at %llu us; %llu dropped, queue peak %llu B, "
	       "grant %u kbit/s to %u of %u senders, link %u kbit/s, base RTT %llu us; paths suspected %llu, retired %llu; %llu dropped after the first round\n",
	       (unsigned long long)seed, cc ? "sender CC (default)" : "no sender CC",
	       grants ? "grants" : "no grants", nap_us, agg, agg * 100, jain, (unsigned long long)min,
	       (unsigned long long)max, (unsigned long long)(p.net->now - t0),
	       (unsigned long long)p.net->a.dropped, (unsigned long long)p.net->a.queue_peak,
	       qb[0]->st.rate_grant_kbps, p.db->grant.active, INCAST, p.db->grant.cap_kbps,
	       (unsigned long long)(rtt / INCAST), (unsigned long long)sus,
	       (unsigned long long)ret, (unsigned long long)(p.net->a.dropped - dropped_early));
	if (!grants)
		goto out;
	assert_true(agg >= min_agg);
	assert_true(jain >= 0.95);
	assert_true(min * 2 >= max);
	/* the receiver measured the link, shares it among all 8 (7: one just finished), and every sender heard */
	assert_in_range(p.db->grant.cap_kbps, 850000, 1150000);
	assert_in_range(p.db->grant.active, INCAST - 1, INCAST);
	for (int i = 0; i < INCAST; i++)
		assert_true(f->qa[i]->st.rate_hint_kbps > 0);
	/*
	 * Only the first round overflows the queue (8 windows of 256 packets
	 * sent before any ACK, without sender CC): once granted, nothing more
	 * is dropped. A napping receiver delays its ACKs and grants by a nap:
	 * a few are.
	 */
	if (nap_us)
		assert_true(p.net->a.dropped == dropped_early ||
			    (p.net->a.dropped - dropped_early) * 10 < dropped_early);
	else
		assert_int_equal(p.net->a.dropped, dropped_early);
out:
	for (int i = 0; i < INCAST; i++) {
		mroce_destroy_qp(f->qa[i]);
		mroce_destroy_qp(qb[i]);
	}
	free(f);
	pair_close(&p);
	return jain;
}

static void test_incast_grants(void **state)
{
	(void)state;
	for (__u64 seed = 3200; seed < 3206; seed++) {
		double without = incast(seed, false, 0, false, 0.9);

		/*
		 * The grants' own worth, senders without congestion control: the
		 * same incast without grants is less fair (and drops more).
		 * (With the default sender CC, slow start overflows nothing and
		 * the ECN-less queue leaves both fair: the grants are judged
		 * where they act alone.)
		 */
		assert_true(incast(seed, true, 0, false, 0.9) > without);
		/* the library's defaults, both at once */
		incast(seed, true, 0, true, 0.9);
	}
}

/*
 * Senders that read each ACK after their round's clock (a busy host): the
 * grant the finished sender heard last stays with it, and every sender
 * holds one. The round's tx saw the ACK's progress stamped ahead of its
 * clock, and a wrapped age took that for a quiet spell and dropped the grant.
 */
static void test_incast_grants_read_late(void **state)
{
	(void)state;
	for (__u64 seed = 3200; seed < 3203; seed++) {
		late_reads = true;
		incast(seed, true, 0, true, 0.9);
	}
}

/*
 * Who shares the link (rate.c mroce_grant_counts): a QP data came to lately.
 * "Lately" is 8 epochs (1.6 ms) plus two queueing delays where no RTT is
 * known (a receiver that only receives), and 4 of this device's RTTs plus
 * the queueing delays where they are shorter: a sender whose flow ended
 * 40 us ago, on a fabric of 10 us round trips, no longer divides the link.
 */
static void test_grant_senders_span(void **state)
{
	struct pair p;
	struct mroce_qp *qp;
	__u64 now;

	(void)state;
	pair_open(&p, 3200, NULL, NULL);
	pair_connect(&p);
	qp = p.qb;
	pthread_mutex_lock(&p.db->lock);
	now = 1000000;
	assert_false(mroce_grant_counts(qp, 0, now));	/* never sent to us */
	qp->grant_last_us = now - 40;
	p.db->rtt_hint_us = 0;
	assert_true(mroce_grant_counts(qp, 0, now));	/* no RTT known: 1.6 ms */
	qp->grant_last_us = now - 1600;
	assert_true(mroce_grant_counts(qp, 0, now));
	qp->grant_last_us = now - 1601;
	assert_false(mroce_grant_counts(qp, 0, now));
	assert_true(mroce_grant_counts(qp, 1, now));	/* ... and two queueing delays */
	p.db->rtt_hint_us = 10;
	qp->grant_last_us = now - 40;
	assert_true(mroce_grant_counts(qp, 0, now));
	qp->grant_last_us = now - 41;
	assert_false(mroce_grant_counts(qp, 0, now));
	assert_true(mroce_grant_counts(qp, 5, now));	/* 40 + 2 x 5 */
	p.db->rtt_hint_us = 1000;	/* RTTs longer than the epochs: 1.6 ms still */
	qp->grant_last_us = now - 1601;
	assert_false(mroce_grant_counts(qp, 0, now));
	qp->grant_last_us = now - 1000;
	assert_true(mroce_grant_counts(qp, 0, now));
	qp->state = MROCE_QPS_ERR;	/* not a sender any more */
	assert_false(mroce_grant_counts(qp, 0, now));
	qp->state = MROCE_QPS_RTS;
	pthread_mutex_unlock(&p.db->lock);
	pair_close(&p);
}

static bool never(void *ctx)
{
	(void)ctx;
	return false;
}

/* What the sender put out in its first round of a transfer (test_stale_grant_dropped). */
static __u64 first_tx, first_burst;

static bool first_round(void *ctx)
{
	struct waiter *w = ctx;

	if (!first_burst)
		first_burst = w->p->qa->st.tx_pkts - first_tx;
	return one_each(ctx);
}

/*
 * The sender's side of the same span (rate.c mroce_grant_resume): a QP
 * quiet for longer than its receiver goes on counting it drops the grant
 * it last heard when it sends again; one quiet for less keeps it. Over the
 * wire: a 1 MiB WRITE after such a quiet spell is not held to the stale
 * grant (1 kbit/s: 2 packets a round trip). Progress stamped after the
 * round's clock is no quiet spell.
 */
static void test_stale_grant_dropped(void **state)
{
	struct waiter *w = calloc(1, sizeof(*w));
	struct pair p;
	struct mroce_qp *qp;
	__u64 now, t, progress;
	__u32 srtt;

	(void)state;
	pair_open(&p, 3250, NULL, NULL);
	pair_connect(&p);
	p.net->a.link = (struct sim_link){ .delay_us = 5 };
	p.net->b.link = (struct sim_link){ .delay_us = 5 };
	pair_write_n(&p, w, 1, 81, NULL);
	qp = p.qa;
	pthread_mutex_lock(&p.da->lock);
	now = qp->last_progress_us + 100000;
	srtt = qp->srtt_us;
	progress = qp->last_progress_us;
	qp->srtt_us = 10;
	qp->st.rate_hint_kbps = 1;
	qp->last_progress_us = now - 40;	/* 4 RTTs: still counted there */
	mroce_grant_resume(qp, now);
	assert_int_equal(qp->st.rate_hint_kbps, 1);
	qp->last_progress_us = now - 41;
	mroce_grant_resume(qp, now);
	assert_int_equal(qp->st.rate_hint_kbps, 0);
	qp->srtt_us = 0;	/* no RTT: 1.6 ms */
	qp->st.rate_hint_kbps = 1;
	qp->last_progress_us = now - 1600;
	mroce_grant_resume(qp, now);
	assert_int_equal(qp->st.rate_hint_kbps, 1);
	qp->last_progress_us = now - 1601;
	mroce_grant_resume(qp, now);
	assert_int_equal(qp->st.rate_hint_kbps, 0);
	/*
	 * Progress stamped after the round's clock: the ACK that brought it was
	 * read from the ring after the round read its clock (engine.c). Not
	 * quiet at all: the grant stays (a wrapped age dropped it).
	 */
	qp->st.rate_hint_kbps = 1;
	qp->last_progress_us = now + 30;
	mroce_grant_resume(qp, now);
	assert_int_equal(qp->st.rate_hint_kbps, 1);
	qp->srtt_us = srtt;
	qp->last_progress_us = progress;
	pthread_mutex_unlock(&p.da->lock);

	/* on the wire: the pair's clock moves on 2 ms with nothing sent */
	assert_int_equal(sim_run(p.net, p.da, p.db, never, NULL, 2000), -ETIMEDOUT);
	pthread_mutex_lock(&p.da->lock);
	assert_true(qp->srtt_us > 0);
	qp->st.rate_hint_kbps = 1;
	first_tx = qp->st.tx_pkts;
	pthread_mutex_unlock(&p.da->lock);
	first_burst = 0;
	t = pair_write_n(&p, w, 1, 82, first_round);
	printf("  1 MiB after 2 ms quiet, a grant of 1 kbit/s heard before: %llu packets at once, "
	       "%llu us\n", (unsigned long long)first_burst, (unsigned long long)t);
	assert_true(first_burst > 2);	/* the stale grant: 2 packets a round trip */
	free(w);
	pair_close(&p);
}

/*
 * A receiver that is not always on the CPU (a busy host) takes its packets
 * in bursts far above the link's rate. The grants still share the link's
 * rate, not the burst's: measured over many epochs, the naps and the
 * bursts after them cancel.
 */
static void test_incast_grants_busy_receiver(void **state)
{
	(void)state;
	for (__u64 seed = 3300; seed < 3303; seed++) {
		incast(seed, true, 500, false, 0.9);
		/*
		 * With the default sender CC too: 87-88% of the link here
		 * (nothing dropped), where the grants alone keep 93% (and drop
		 * the first round's windows): the senders' windows leave less
		 * queued to cover the naps.
		 */
		incast(seed, true, 500, true, 0.8);
	}
}

/*
 * The grant's epoch follows this device's RTT (rate.c grant_epoch_us): 16
 * of them, no shorter than its host's latest scheduling stall, and never
 * over 200 us, which a device that knows no RTT and every software path
 * (RTTs of 12.5 us and more) keep.
 */
static void test_grant_epoch_scales(void **state)
{
	struct pair p;

	(void)state;
	pair_open(&p, 3260, NULL, NULL);
	pthread_mutex_lock(&p.db->lock);
	p.db->stall_us = 0;
	p.db->rtt_hint_us = 0;
	assert_int_equal(mroce_grant_epoch_us(p.db), 200);	/* a receiver that only receives */
	p.db->rtt_hint_us = 50;
	assert_int_equal(mroce_grant_epoch_us(p.db), 200);	/* software RTTs: as always */
	p.db->rtt_hint_us = 13;
	assert_int_equal(mroce_grant_epoch_us(p.db), 200);
	p.db->rtt_hint_us = 5;
	assert_int_equal(mroce_grant_epoch_us(p.db), 80);	/* a 400 Gbit/s fabric's */
	p.db->stall_us = 120;
	assert_int_equal(mroce_grant_epoch_us(p.db), 120);	/* a host that stalls */
	p.db->stall_us = 5000;
	assert_int_equal(mroce_grant_epoch_us(p.db), 200);
	p.db->stall_us = 0;
	pthread_mutex_unlock(&p.db->lock);
	pair_close(&p);
}

/* A data packet of 4 KiB from qp at now, no queueing delay, CE-marked or not. */
static void grant_pkt(struct mroce_qp *qp, bool ce, __u64 now)
{
	struct mroce_hdr h = { .ts = (__u32)now - 1 };

	mroce_grant_rx(qp, &h, 4096, ce, now);
}

/*
 * A standing grant is withdrawn at the first epoch end with fewer than two
 * senders counted, not 32 calm epochs later: a sender alone needs none (a
 * log-step collective's later steps, one sender each, were held to the
 * share an earlier step's overlap had set). While two or more still count,
 * calm epochs grow it by a quarter per 200 us, whatever the epoch. At 5 us RTTs (epochs of
 * 80 us, senders counted 20 us), and at software RTTs (none known: 200 us
 * epochs, senders counted 1.6 ms), where the same happens in those units.
 */
/*
 * Three QP pairs from A's device to B's (qa[i] -> qb[i]), B's device's RTT
 * set to rtt_us (0: unknown) and no stall: returns B's grant, with B's
 * device locked.
 */
static struct mroce_grant *three_senders(struct pair *p, struct mroce_qp *qa[3],
					 struct mroce_qp *qb[3], __u64 seed, __u32 rtt_us)
{
	MROCE_OPTS(mroce_qp_attr, attr);

	pair_open(p, seed, NULL, NULL);
	pair_connect(p);
	qa[0] = p->qa;
	qb[0] = p->qb;
	for (int i = 1; i < 3; i++) {
		attr.send_cq = attr.recv_cq = p->cqa;
		assert_int_equal(mroce_create_qp(p->da, &attr, &qa[i]), 0);
		attr.send_cq = attr.recv_cq = p->cqb;
		assert_int_equal(mroce_create_qp(p->db, &attr, &qb[i]), 0);
		assert_int_equal(sim_connect(qa[i], qb[i]), 0);
	}
	pthread_mutex_lock(&p->db->lock);
	p->db->rtt_hint_us = rtt_us;
	p->db->stall_us = 0;
	return &p->db->grant;
}

static void grant_follows(__u32 rtt_us, __u32 epoch, __u32 span)
{
	struct mroce_qp *qa[3], *qb[3];
	struct mroce_grant *g;
	struct pair p;
	__u32 e0;
	__u64 t;
	bool fabric = rtt_us && 16 * rtt_us < 200;	/* epochs of RTTs (rate.c) */

	g = three_senders(&p, qa, qb, 3270, rtt_us);
	t = p.net->now + 10000000;
	grant_pkt(qb[0], false, t);	/* ends whatever epoch was open: a new one from t */
	assert_int_equal(g->grant_kbps, 0);
	/* one epoch of three senders, marked: each gets a third of the link */
	for (__u32 us = 1; us < epoch; us++)
		for (int i = 0; i < 3; i++)
			grant_pkt(qb[i], true, t + us);
	t += epoch;
	grant_pkt(qb[0], false, t);	/* ends it; the next is calm */
	assert_int_equal(g->active, 3);
	assert_true(g->cap_kbps > 0);
	assert_int_equal(g->grant_kbps, g->cap_kbps / 3);
	e0 = g->epoch;	/* counted from here */
	assert_int_equal(mroce_grant_of(qb[1]), g->grant_kbps);
	/*
	 * They go on, calm: a quarter more per 200 us. (Where the epoch holds
	 * the round trips, all three: two would be left to their own CC.)
	 */
	for (int k = 0; k < 3; k++) {
		__u32 before = g->grant_kbps;

		for (__u32 us = 1; us < epoch; us++)
			for (int i = 0; i < (fabric ? 3 : 2); i++)
				grant_pkt(qb[i], false, t + us);
		t += epoch;
		grant_pkt(qb[0], false, t);
		/* a quarter per 200 us: a tenth per epoch of 80 us */
		assert_int_equal(g->grant_kbps, before + (__u64)before * epoch / 800);
		assert_int_equal(mroce_grant_of(qb[0]), g->grant_kbps);
	}
	/* the others stop: qb[0] alone is granted nothing once they no longer count
	 * (where epochs are RTTs); a software path keeps its rule, 32 calm epochs */
	while (t < p.net->now + 10000000 + (fabric ? 3 * (epoch + span + epoch) : 40 * epoch)) {
		for (__u32 us = 1; us < epoch; us++)
			grant_pkt(qb[0], false, t + us);
		t += epoch;
		grant_pkt(qb[0], false, t);
		if (!g->active)
			break;
	}
	assert_int_equal(g->active, 0);
	assert_int_equal(g->grant_kbps, 0);
	assert_int_equal(mroce_grant_of(qb[0]), 0);
	if (fabric)	/* within the span and an epoch of qb[1]'s last: not 32 calm epochs */
		assert_true(g->epoch - e0 <= 3 + (span + epoch) / epoch + 1);
	else		/* as before: 32 calm epochs (MROCE_GRANT_CALM) */
		assert_true(g->epoch - e0 >= 31 && g->epoch - e0 <= 34);
	pthread_mutex_unlock(&p.db->lock);
	for (int i = 1; i < 3; i++) {
		mroce_destroy_qp(qa[i]);
		mroce_destroy_qp(qb[i]);
	}
	pair_close(&p);
}

static void test_grant_single_sender_withdrawn(void **state)
{
	(void)state;
	grant_follows(5, 80, 20);	/* 400 Gbit/s: 16 RTTs of 5 us */
	grant_follows(0, 200, 1600);	/* no RTT known: a software path's rules */
	grant_follows(50, 200, 1600);	/* a software path's RTT: the same */
}

/*
 * Who shares the link, where the epoch holds a round trip of every sender
 * (the device's RTT known, 5 us: epochs of 80 us): the senders heard within
 * a round trip, as 2.5 senders or more by their bytes. Peers taking turns
 * (a log-step collective's steps, each a few microseconds) are one sender
 * at a time: marks then set no grant; nor do they for one sender beside
 * another's trickle, nor for two at once (their own congestion control
 * shares between two). Three at once are granted. Where no RTT is known (a
 * receiver that only receives; a software path's epoch shorter than its
 * round trips) the senders count by their number, as before: the turns
 * and the two are granted.
 */
static void grant_turns(__u32 rtt_us, __u32 epoch)
{
	struct mroce_qp *qa[3], *qb[3];
	struct mroce_grant *g;
	struct pair p;
	__u64 t;

	g = three_senders(&p, qa, qb, 3275, rtt_us);
	t = p.net->now + 10000000;
	grant_pkt(qb[0], false, t);	/* a new epoch from t */
	/* turns: qb[2], then qb[1], then qb[0], a third of the epoch each, marked */
	for (__u32 us = 1; us < epoch; us++)
		grant_pkt(qb[2 - 3 * us / epoch], true, t + us);
	t += epoch;
	grant_pkt(qb[0], false, t);
	assert_int_equal(g->active, rtt_us ? 0 : 3);	/* by number: as before */
	if (rtt_us) {
		assert_int_equal(g->grant_kbps, 0);
		/* qb[0] at full rate, marked, with a packet of qb[1] now and then */
		for (__u32 us = 1; us < epoch; us++) {
			grant_pkt(qb[0], true, t + us);
			grant_pkt(qb[0], true, t + us);
			if (us % 4 == 0)
				grant_pkt(qb[1], true, t + us);
		}
		t += epoch;
		grant_pkt(qb[0], false, t);
		assert_int_equal(g->active, 0);
	}
	/* two at once, marked: left to their CC where weighed */
	for (__u32 us = 1; us < epoch; us++)
		for (int i = 0; i < 2; i++)
			grant_pkt(qb[i], true, t + us);
	t += epoch;
	grant_pkt(qb[0], false, t);
	assert_int_equal(g->active, rtt_us ? 0 : 3);	/* qb[2] still counts: 1.6 ms */
	/* three at once, marked: shared */
	for (__u32 us = 1; us < epoch; us++)
		for (int i = 0; i < 3; i++)
			grant_pkt(qb[i], true, t + us);
	t += epoch;
	grant_pkt(qb[0], false, t);
	assert_int_equal(g->active, 3);
	assert_true(g->grant_kbps > 0);
	pthread_mutex_unlock(&p.db->lock);
	for (int i = 1; i < 3; i++) {
		mroce_destroy_qp(qa[i]);
		mroce_destroy_qp(qb[i]);
	}
	pair_close(&p);
}

static void test_grant_turns_not_shared(void **state)
{
	(void)state;
	grant_turns(5, 80);	/* 400 Gbit/s */
	grant_turns(0, 200);	/* no RTT known */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_psack_record),
		cmocka_unit_test(test_psack_records_grow),
		cmocka_unit_test(test_psack_holes),
		cmocka_unit_test(test_grant_senders_span),
		cmocka_unit_test(test_grant_epoch_scales),
		cmocka_unit_test(test_grant_single_sender_withdrawn),
		cmocka_unit_test(test_grant_turns_not_shared),
		cmocka_unit_test(test_stale_grant_dropped),
		cmocka_unit_test(test_incast_grants),
		cmocka_unit_test(test_incast_grants_read_late),
		cmocka_unit_test(test_incast_grants_busy_receiver),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
