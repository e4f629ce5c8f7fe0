// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Spurious retransmission timeouts (defect 17). On a loaded host the
 * receiving process is descheduled for milliseconds while nothing is lost:
 * its ACKs come late, in one burst. The first such stall fires the RTO; the
 * ACK that ends it echoes the timestamp of a packet sent before the timeout,
 * so the resend was not needed (Eifel, RFC 3522), and the timeout floor
 * rises to what was seen: the next stalls of that length fire no RTO.
 */
#include <stdarg.h>
#include "../lib/eng_int.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pair.h"

#define STALL_US	3000	/* longer than the 1 ms default floor, far below a retry limit */
#define WRITES		8
#define SMALL		(64 * 1024)	/* a collective's block: one message, one ACK or two */

static bool never(void *ctx)
{
	(void)ctx;
	return false;
}

/* A 10 Gbit/s link, one way 10 us: 8 MiB take some 7 ms. */
static void pair_link(struct pair *p)
{
	p->net->a.link = (struct sim_link){ .delay_us = 10, .rate_mbps = 10000, .queue_bytes = 1 << 22 };
	p->net->b.link = (struct sim_link){ .delay_us = 10 };
}

/* 8 MiB of WRITEs whose ACKs all wait STALL_US once, 1 ms into them. */
static void write_with_stall(struct pair *p, struct waiter *w)
{
	memset(w, 0, sizeof(*w));
	w->p = p;
	w->want_a = WRITES;
	for (int i = 0; i < WRITES; i++)
		assert_int_equal(post(p->qa, MROCE_WR_RDMA_WRITE, i, p->la, BUF, mroce_mr_lkey(p->ma),
				      (__u64)(unsigned long)p->lb, mroce_mr_rkey(p->mb), 0), 0);
	sim_run(p->net, p->da, p->db, never, NULL, 1000);
	/* every ACK sent during the stall arrives after it, none overtakes the others */
	p->net->b.link.delay_us = STALL_US;
	sim_run(p->net, p->da, p->db, never, NULL, STALL_US);
	p->net->b.link.delay_us = 10;
	assert_int_equal(sim_run(p->net, p->da, p->db, one_each, w, 10000000), 0);
	for (int i = 0; i < WRITES; i++)
		assert_int_equal(w->wa[i].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p->la, p->lb, BUF);
}

static void test_stalled_acks_raise_the_rto_floor(void **state)
{
	struct waiter *w = calloc(1, sizeof(*w));
	__u64 rto[4], retx[4], probes[4], before_rto = 0, before_retx = 0, before_probes = 0;
	MROCE_OPTS(mroce_qp_stats, st);
	struct pair p;

	(void)state;
	pair_open(&p, 1700, NULL, NULL);
	pair_connect(&p);
	pair_link(&p);
	fill(p.la, BUF, 17);
	for (int i = 0; i < 4; i++) {
		write_with_stall(&p, w);
		assert_int_equal(mroce_qp_query_stats(p.qa, &st), 0);
		rto[i] = p.da->stats.rto_events - before_rto;
		retx[i] = p.da->stats.retx_pkts - before_retx;
		probes[i] = st.tail_probes - before_probes;
		before_rto = p.da->stats.rto_events;
		before_retx = p.da->stats.retx_pkts;
		before_probes = st.tail_probes;
		printf("  stall %d of %u us: %llu RTOs, %llu resent (%llu tail probes), rto %u us, "
		       "srtt %u us\n", i + 1, STALL_US, (unsigned long long)rto[i],
		       (unsigned long long)retx[i], (unsigned long long)probes[i], p.qa->rto_us,
		       p.qa->srtt_us);
	}
	assert_true(rto[0] >= 1);		/* the first stall cannot be told from a loss */
	for (int i = 1; i < 4; i++) {
		assert_int_equal(rto[i], 0);	/* the later ones are expected */
		/* nothing resent but the tail probes: one packet each, a few per stall */
		assert_int_equal(retx[i], probes[i]);
		assert_true(probes[i] <= 4);
	}
	free(w);
	pair_close(&p);
}

/* One WRITE of len bytes from A to B, run until it completes: it succeeds, B holds A's bytes. */
static void write_one(struct pair *p, struct waiter *w, size_t len)
{
	memset(w, 0, sizeof(*w));
	w->p = p;
	w->want_a = 1;
	assert_int_equal(post(p->qa, MROCE_WR_RDMA_WRITE, 1, p->la, len, mroce_mr_lkey(p->ma),
			      (__u64)(unsigned long)p->lb, mroce_mr_rkey(p->mb), 0), 0);
	assert_int_equal(sim_run(p->net, p->da, p->db, one_each, w, 10000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p->la, p->lb, len);
}

/* A WRITE whose last packet's first `copies` copies are dropped; its RTOs, probes, time. */
static void write_tail_lost(__u64 seed, __u32 copies, const struct mroce_qp_attr *attr, __u64 *rtos,
			    __u64 *probes, __u64 *took_us)
{
	MROCE_OPTS(mroce_qp_stats, st);
	struct waiter *w = calloc(1, sizeof(*w));
	struct pair p;
	__u64 t0;

	pair_open(&p, seed, attr, NULL);
	pair_connect(&p);
	pair_link(&p);
	fill(p.la, BUF, 18);
	p.net->a.link.drop_psn = p.qa->snd_nxt + (BUF + p.qa->payload_max - 1) / p.qa->payload_max - 1;
	p.net->a.link.drop_armed = true;
	p.net->a.link.drop_copies = copies;
	t0 = p.net->now;
	write_one(&p, w, BUF);
	assert_int_equal(mroce_qp_query_stats(p.qa, &st), 0);
	*rtos = p.da->stats.rto_events;
	*probes = st.tail_probes;
	*took_us = p.net->now - t0;
	printf("  tail lost %u time(s): %llu RTOs, %llu tail probes, floor %u us, rto %u us, srtt %u us, "
	       "done in %llu us\n", copies, (unsigned long long)*rtos, (unsigned long long)*probes,
	       p.qa->rto_floor_us, p.qa->rto_us, p.qa->srtt_us, (unsigned long long)*took_us);
	assert_int_equal(p.qa->rto_floor_us, 0);	/* a real loss leaves the floor alone */
	free(w);
	pair_close(&p);
}

/*
 * The last packet of a WRITE is lost: nothing sent after it can show it
 * (RACK), and the RTO is 3 RTTs at least. The tail loss probe resends it
 * two RTTs after the last transmission: no timeout, done sooner than the
 * RTO alone would allow.
 */
static void test_tail_loss_probe(void **state)
{
	__u64 rtos, probes, took, rtos2, probes2, took2;

	(void)state;
	write_tail_lost(1701, 1, NULL, &rtos, &probes, &took);
	assert_int_equal(rtos, 0);
	assert_int_equal(probes, 1);
	/* its probe lost too, and a second probe (one wait later) would come after the RTO: the RTO */
	write_tail_lost(1701, 2, NULL, &rtos2, &probes2, &took2);
	assert_true(rtos2 >= 1);
	assert_int_equal(probes2, 1);
	assert_true(took < took2);
}

/*
 * A WRITE whose receiver's first `lost` ACKs are dropped (a way back that
 * died under the flow's tail); its RTOs, probes, time, and the ACKs its
 * receiver sent.
 */
static void write_acks_lost(__u32 lost, const struct mroce_qp_attr *attr, __u64 *rtos,
			    __u64 *probes, __u64 *took_us, __u64 *acks)
{
	MROCE_OPTS(mroce_qp_stats, st);
	struct waiter *w = calloc(1, sizeof(*w));
	struct pair p;
	__u64 t0;

	pair_open(&p, 1702, attr, NULL);
	pair_connect(&p);
	pair_link(&p);
	fill(p.la, BUF, 20);
	/* one WRITE first, untouched: the QP has measured its RTT, as one in use has */
	for (int i = 0; i < 2; i++) {
		p.net->b.link.drop_acks = i ? lost : 0;
		*acks = p.db->stats.acks_tx;
		t0 = p.net->now;
		write_one(&p, w, SMALL);
	}
	assert_int_equal(mroce_qp_query_stats(p.qa, &st), 0);
	*rtos = p.da->stats.rto_events;
	*probes = st.tail_probes;
	*took_us = p.net->now - t0;
	*acks = p.db->stats.acks_tx - *acks;
	printf("  %u ACK(s) lost: %llu RTOs, %llu tail probes, %llu ACKs sent, done in %llu us\n", lost,
	       (unsigned long long)*rtos, (unsigned long long)*probes, (unsigned long long)*acks,
	       (unsigned long long)*took_us);
	free(w);
	pair_close(&p);
}

/*
 * A route that died under a flow's tail takes the receiver's ACKs (all of
 * the message's, then the first probe's): the sender hears nothing. A
 * second probe, one wait later and on the next slot, brings the ACK that
 * completes the WRITE, well before the RTO, and no timeout is counted. A
 * probe is a duplicate at the receiver, which answers it on two ways back
 * (its first answer was lost, perhaps on a dead route).
 */
static void test_tail_probe_lost_probes_again(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .rto_low_us = 20000, .rto_high_us = 20000);
	__u64 rtos, probes, took, acks, took1, acks1;

	(void)state;
	write_acks_lost(0, &attr, &rtos, &probes, &took, &acks);
	assert_int_equal(rtos, 0);
	assert_int_equal(probes, 0);
	/* every ACK of the message lost: the first probe's ACK completes it */
	write_acks_lost((__u32)acks, &attr, &rtos, &probes, &took1, &acks1);
	assert_int_equal(rtos, 0);
	assert_int_equal(probes, 1);
	assert_int_equal(acks1, acks + 2);	/* the probe's duplicate answered twice */
	/* and that one lost too: a second probe */
	write_acks_lost((__u32)acks1, &attr, &rtos, &probes, &took, &acks);
	assert_int_equal(rtos, 0);
	assert_int_equal(probes, 2);
	assert_true(took > took1);
	assert_true(took < 20000);	/* well before the RTO */
	/* and so on, past the fourth: probes go on, each wait twice the last, till the RTO */
	for (__u64 want = 3; want <= 6; want++) {
		took1 = took;
		write_acks_lost((__u32)acks, &attr, &rtos, &probes, &took, &acks);
		assert_int_equal(rtos, 0);
		assert_int_equal(probes, want);
		assert_true(took > took1);
	}
	printf("  every ACK lost till the sixth probe's: done in %llu us, no timeout (RTO 20 ms)\n",
	       (unsigned long long)took);
	assert_true(took < 20000);
}

/* Watches B from the moment a message's last packet came ahead of a hole. */
struct hole_watch {
	struct waiter	w;
	__u64		seen_at, acks_at_seen, acks_by_delay;
	bool		seen, counted;
};

static bool hole_watch(void *ctx)
{
	struct hole_watch *c = ctx;
	struct pair *p = c->w.p;

	if (!c->seen && p->qb->nlast_early) {
		c->seen = true;
		c->seen_at = p->net->now;
		c->acks_at_seen = p->db->stats.acks_tx;
	}
	if (c->seen && !c->counted && p->net->now > c->seen_at + p->qb->attr.ack_delay_us + 2) {
		c->counted = true;
		c->acks_by_delay = p->db->stats.acks_tx - c->acks_at_seen;
	}
	return one_each(ctx);
}

/*
 * A pair of QPs of `paths` slots on the test link, and the next WRITE of
 * SMALL to lose the packet before its last on the way to B (drop_copies
 * or drop_forever are the caller's).
 */
static void hole_pair_open(struct pair *p, __u64 seed, __u32 paths)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = paths);

	pair_open(p, seed, &attr, NULL);
	pair_connect(p);
	pair_link(p);
	fill(p->la, SMALL, (__u32)seed);
}

static void drop_before_last(struct pair *p)
{
	__u32 pkts = (SMALL + p->qa->payload_max - 1) / p->qa->payload_max;

	p->net->a.link.drop_psn = p->qa->snd_nxt + pkts - 2;
	p->net->a.link.drop_armed = true;
}

/*
 * One WRITE of SMALL on a QP of `paths` slots, the packet before its last
 * dropped (and its first two resends): the ACKs B sent within a delayed
 * ACK's time after the one for the last packet. Checks the bytes.
 */
static __u64 hole_behind_last(__u32 paths)
{
	struct hole_watch *c = calloc(1, sizeof(*c));
	struct pair p;
	__u64 acks;

	hole_pair_open(&p, 1703, paths);
	write_one(&p, &c->w, SMALL);			/* no hole: no timer left */
	assert_int_equal(p.qb->ack_due_us, 0);
	assert_int_equal(p.qb->nlast_early, 0);
	drop_before_last(&p);
	p.net->a.link.drop_copies = 3;
	memset(c, 0, sizeof(*c));
	c->w.p = &p;
	c->w.want_a = 1;
	fill(p.la, SMALL, 22);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 2, p.la, SMALL, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(sim_run(p.net, p.da, p.db, hole_watch, c, 10000000), 0);
	assert_int_equal(c->w.wa[0].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p.la, p.lb, SMALL);
	assert_true(c->seen && c->counted);
	assert_int_equal(p.qb->ack_due_us, 0);		/* the hole closed: nothing armed */
	acks = c->acks_by_delay;
	printf("  %u path(s), last packet ahead of a lasting hole: %llu ACKs after its own within a "
	       "delayed ACK's time (%u us)\n", paths, (unsigned long long)acks, p.qb->attr.ack_delay_us);
	free(c);
	pair_close(&p);
	return acks;
}

/*
 * A message's last packet comes ahead of a hole that stays (its packet
 * lost, and its first resends too): the receiver's ACK of the last packet
 * may take a failed way back, and nothing else makes it answer till the
 * hole's packet comes. So that ACK leaves a delayed ACK's timer armed, and
 * the hole still there when it fires, the ACK goes on two ways back (256
 * hosts, one spine down: flows waited out 4-5 tail probes on dead slots,
 * 0.25-0.48 ms, for want of it; docs/scale.md point 15). A message with no
 * hole leaves no timer armed. With one way back there is nothing to take
 * turns on, and the hole is congestion's: nothing more is sent (repeated,
 * it made a single-path 256-host all-to-all 30% slower).
 */
static void test_hole_behind_last_asked_again(void **state)
{
	(void)state;
	/* after the last packet's ACK (sent as it came), the hole's two: the code before sent none */
	assert_int_equal(hole_behind_last(4), 2);
	assert_int_equal(hole_behind_last(1), 0);
}

/*
 * The same hole, and then the sender gone (its link down): the receiver
 * reports the hole again at most MROCE_HOLE_REPORTS times, twice each, and
 * then stops: a peer that is gone is not called every 50 us for ever.
 */
static void test_hole_reports_bounded(void **state)
{
	struct pair p;
	__u64 acks;

	(void)state;
	hole_pair_open(&p, 1704, 4);
	drop_before_last(&p);
	p.net->a.link.drop_forever = true;
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 1, p.la, SMALL, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	while (!p.qb->nlast_early)
		assert_int_equal(sim_run(p.net, p.da, p.db, never, NULL, 1), -ETIMEDOUT);
	p.net->a.link.down = true;			/* A is gone */
	sim_run(p.net, p.da, p.db, never, NULL, 1);	/* the last packet's own ACK */
	acks = p.db->stats.acks_tx;
	sim_run(p.net, p.da, p.db, never, NULL, 5000);	/* 100 delayed ACKs' time */
	acks = p.db->stats.acks_tx - acks;
	printf("  the sender gone behind a hole: %llu ACKs in 5 ms, then none due\n",
	       (unsigned long long)acks);
	assert_int_equal(acks, 2 * MROCE_HOLE_REPORTS);
	assert_int_equal(p.qb->hole_reports, MROCE_HOLE_REPORTS);
	assert_int_equal(p.qb->ack_due_us, 0);
	pair_close(&p);
}

/*
 * One PSN that never gets through, every other one does: RACK finds it lost
 * again and again (a later packet's delivery proves it), which retry_cnt
 * does not count; once the window stalls behind it only its timers remain,
 * and retry_cnt of those fail the QP with retries exceeded, in bounded time.
 */
static void test_black_holed_psn_fails_bounded(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .retry_cnt = 3);
	struct waiter *w = calloc(1, sizeof(*w));
	struct pair p;
	__u64 t0;

	(void)state;
	pair_open(&p, 1701, &attr, NULL);
	pair_connect(&p);
	pair_link(&p);
	fill(p.la, BUF, 19);
	w->p = &p;
	w->want_a = 1;
	p.net->a.link.drop_psn = p.qa->snd_nxt + 3;
	p.net->a.link.drop_armed = true;
	p.net->a.link.drop_forever = true;
	t0 = p.net->now;
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 1, p.la, BUF, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 60000000), 0);
	printf("  one PSN black-holed, retry_cnt 3: %s after %llu ms, %llu copies of it dropped, %llu RTOs\n",
	       mroce_wc_status_str(w->wa[0].status), (unsigned long long)(p.net->now - t0) / 1000,
	       (unsigned long long)p.net->a.dropped, (unsigned long long)p.da->stats.rto_events);
	assert_int_equal(w->wa[0].status, MROCE_WC_RETRY_EXC_ERR);
	assert_true(p.net->now - t0 < 10000000);	/* seconds, not the minute sim_run allows */
	assert_true(p.net->a.dropped >= 4);		/* the first copy and 3 timer resends at least */
	free(w);
	pair_close(&p);
}

/*
 * A ping-pong of 8-byte WRITEs, A to B then B to A, on a clean link of a
 * few microseconds, while B's host takes its CPU away PEER_NAP_US of every
 * PEER_NAP_PERIOD_US (tests/sim.h): B's ACKs to the WRITEs caught by a nap
 * come a nap late. Nothing is lost, so nothing should be resent. Before
 * the tail probe waited for the stalls seen (loss.c, "Scheduling stalls"),
 * A probed every nap at 2 RTTs, doubling, and the head's own timer resent
 * the lone packet between the probes: hundreds of resends. Now the first
 * naps, before any evidence, may cost a few probes and a timeout; once a
 * probe answered only after the nap (or an RTT sample that waited one)
 * showed the stall, no more: none at all in the second half.
 */
#define PEER_NAP_US		200
#define PEER_NAP_PERIOD_US	1000
#define PINGS			2000

static bool wrote(void *ctx)
{
	struct waiter *w = ctx;
	struct mroce_wc wc;

	while (w->na < w->want_a && mroce_poll_cq(w->p->cqa, 1, &wc) > 0)
		w->na += wc.opcode == MROCE_WC_RDMA_WRITE && wc.status == MROCE_WC_SUCCESS;
	while (w->nb < w->want_b && mroce_poll_cq(w->p->cqb, 1, &wc) > 0)
		w->nb += wc.opcode == MROCE_WC_RDMA_WRITE && wc.status == MROCE_WC_SUCCESS;
	return w->na >= w->want_a && w->nb >= w->want_b;
}

/* n 8-byte WRITEs A to B, each answered by one B to A; the bytes land. */
static void ping_pong(struct pair *p, struct waiter *w, int n)
{
	for (int i = 0; i < n; i++) {
		w->na = w->nb = 0;
		w->want_a = 1;
		w->want_b = 0;
		p->la[0] = (__u8)i;
		assert_int_equal(post(p->qa, MROCE_WR_RDMA_WRITE, (__u64)i, p->la, 8, mroce_mr_lkey(p->ma),
				      (__u64)(unsigned long)p->lb, mroce_mr_rkey(p->mb), 0), 0);
		assert_int_equal(sim_run(p->net, p->da, p->db, wrote, w, 1000000), 0);
		assert_int_equal(p->lb[0], (__u8)i);
		w->want_a = 0;
		w->want_b = 1;
		p->lb[64] = (__u8)~i;
		assert_int_equal(post(p->qb, MROCE_WR_RDMA_WRITE, (__u64)i, p->lb + 64, 8, mroce_mr_lkey(p->mb),
				      (__u64)(unsigned long)p->la + 64, mroce_mr_rkey(p->ma), 0), 0);
		assert_int_equal(sim_run(p->net, p->da, p->db, wrote, w, 1000000), 0);
		assert_int_equal(p->la[64], (__u8)~i);
	}
}

static void test_descheduled_peer_no_resends(void **state)
{
	struct waiter *w = calloc(1, sizeof(*w));
	__u64 retx_half = 0, rto_half = 0, retx, rto, naps;
	struct pair p;

	(void)state;
	pair_open(&p, 1710, NULL, NULL);
	pair_connect(&p);
	p.net->a.link = (struct sim_link){ .delay_us = 2 };
	p.net->b.link = (struct sim_link){ .delay_us = 2 };
	p.net->nap_period_us = PEER_NAP_PERIOD_US;
	p.net->nap_us = PEER_NAP_US;
	w->p = &p;
	ping_pong(&p, w, PINGS / 2);
	retx_half = p.da->stats.retx_pkts + p.db->stats.retx_pkts;
	rto_half = p.da->stats.rto_events + p.db->stats.rto_events;
	ping_pong(&p, w, PINGS / 2);
	retx = p.da->stats.retx_pkts + p.db->stats.retx_pkts;
	rto = p.da->stats.rto_events + p.db->stats.rto_events;
	naps = p.net->now / PEER_NAP_PERIOD_US;
	printf("  %d 8-byte round trips, peer off the CPU %u us of every %u (%llu naps): "
	       "%llu resent (%llu in the second half), %llu RTOs (%llu), dups at B %llu, srtt %u us, "
	       "stall allowance %u us\n", PINGS, PEER_NAP_US, PEER_NAP_PERIOD_US,
	       (unsigned long long)naps, (unsigned long long)retx,
	       (unsigned long long)(retx - retx_half), (unsigned long long)rto,
	       (unsigned long long)(rto - rto_half),
	       (unsigned long long)p.db->stats.dup_pkts, p.qa->srtt_us, mroce_stall_allow(p.qa));
	assert_true(naps >= 20);		/* the naps did catch the ping-pong, many times */
	/* the first nap cannot be told from a loss: its probes and an RTO, at most */
	assert_true(rto <= 1);
	assert_true(retx <= 8);
	assert_int_equal(rto - rto_half, 0);
	assert_int_equal(retx - retx_half, 0);
	free(w);
	pair_close(&p);
}

/*
 * A stall longer than any seen before (loss.c, "Asks"). Once stalls are
 * known (naps of NAP1_US), the peer naps NAP2_US, over three times the longest allowance, with
 * nothing lost: every learned allowance is too short for it, and before
 * the asks the tail probe and the RTO resent into it (a timeout and a
 * resend or more per nap). Now the timers ask, B answers when it runs
 * again, and its answer shows the packet arrived: nothing is resent, no
 * timeout counted. A packet really lost in such a stretch is still
 * resent, by the answer: the WRITE completes.
 */
#define NAP1_US		200
#define NAP2_US		1500

static void test_longer_stall_is_asked(void **state)
{
	struct waiter *w = calloc(1, sizeof(*w));
	MROCE_OPTS(mroce_qp_stats, st);
	__u64 retx0, rto0, asks0, naps0;
	struct pair p;

	(void)state;
	pair_open(&p, 1740, NULL, NULL);
	pair_connect(&p);
	p.net->a.link = (struct sim_link){ .delay_us = 2 };
	p.net->b.link = (struct sim_link){ .delay_us = 2 };
	p.net->nap_period_us = 1000;
	p.net->nap_us = NAP1_US;
	w->p = &p;
	ping_pong(&p, w, 1000);
	assert_true(mroce_stall_allow(p.qa) > 0);	/* stalls are known now */
	assert_true(mroce_stall_allow(p.qa) < NAP2_US);	/* ... none as long */
	assert_true(p.qa->peer_asks);
	retx0 = p.da->stats.retx_pkts + p.db->stats.retx_pkts;
	rto0 = p.da->stats.rto_events + p.db->stats.rto_events;
	assert_int_equal(mroce_qp_query_stats(p.qa, &st), 0);
	asks0 = st.asks;
	p.net->nap_period_us = 10000;
	p.net->nap_us = NAP2_US;
	naps0 = p.net->now / 10000;
	ping_pong(&p, w, 3000);
	assert_int_equal(mroce_qp_query_stats(p.qa, &st), 0);
	printf("  stall allowance %u us, then naps of %u us (%llu): %llu resent, %llu RTOs, "
	       "%llu asks\n", mroce_stall_allow(p.qa), NAP2_US,
	       (unsigned long long)(p.net->now / 10000 - naps0),
	       (unsigned long long)(p.da->stats.retx_pkts + p.db->stats.retx_pkts - retx0),
	       (unsigned long long)(p.da->stats.rto_events + p.db->stats.rto_events - rto0),
	       (unsigned long long)(st.asks - asks0));
	assert_true(p.net->now / 10000 - naps0 >= 3);	/* the long naps caught the ping-pong */
	assert_true(st.asks > asks0);			/* the timers did fire: they asked */
	assert_int_equal(p.da->stats.retx_pkts + p.db->stats.retx_pkts, retx0);
	assert_int_equal(p.da->stats.rto_events + p.db->stats.rto_events, rto0);

	/* a real loss while the timers ask: the answer shows it, one resend repairs it */
	p.net->nap_us = 0;
	p.net->a.link.drop_psn = p.qa->snd_nxt;
	p.net->a.link.drop_armed = true;
	ping_pong(&p, w, 1);
	assert_int_equal(mroce_qp_query_stats(p.qa, &st), 0);
	printf("  then its next packet lost: %llu resent, %llu RTOs, %llu shown lost by an answer\n",
	       (unsigned long long)(p.da->stats.retx_pkts - retx0 + p.db->stats.retx_pkts),
	       (unsigned long long)(p.da->stats.rto_events + p.db->stats.rto_events - rto0),
	       (unsigned long long)st.ask_losses);
	assert_int_equal(p.net->a.dropped, 1);
	assert_int_equal(st.ask_losses, 1);
	assert_int_equal(p.da->stats.retx_pkts + p.db->stats.retx_pkts, retx0 + 1);
	assert_int_equal(p.da->stats.rto_events + p.db->stats.rto_events, rto0);
	free(w);
	pair_close(&p);
}

/*
 * A peer that asks without end (it holds the token: asks from anyone else
 * die with a bad token) gets one ACK for each ask at most, not two: an
 * answer is no amplifier. Each is answered (echoing it), and the QP goes
 * on unharmed.
 */
#define ASKS_SENT	200

static void test_asks_answered_one_for_one(void **state)
{
	struct mroce_qp_attr attr = { .sz = sizeof(attr), .paths = 8 };
	struct waiter *w = calloc(1, sizeof(*w));
	__u64 acks0, answered;
	struct pair p;
	__u8 buf[2048];

	(void)state;
	pair_open(&p, 1750, &attr, NULL);
	pair_connect(&p);
	pair_link(&p);
	fill(p.la, BUF, 21);
	/* both ways sprayed: A has several ways back to B, as a duplicate's answer takes two */
	write_one(&p, w, BUF);
	memset(w, 0, sizeof(*w));
	w->p = &p;
	w->want_b = 1;
	assert_int_equal(post(p.qb, MROCE_WR_RDMA_WRITE, 2, p.lb, BUF, mroce_mr_lkey(p.mb),
			      (__u64)(unsigned long)p.la, mroce_mr_rkey(p.ma), 0), 0);
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
	assert_true(p.qa->ret_slots > 1);
	acks0 = p.da->stats.acks_tx;
	for (int i = 0; i < ASKS_SENT; i++) {
		struct mroce_hdr h = { .opcode = MROCE_OP_ACK, .flags = MROCE_F_ACK_REQ,
				       .dqpn = p.qb->rqpn, .token = mroce_be64(p.qb->token_be),
				       .ts = 1000u + (__u32)i, .cum_psn = p.qb->flow->rx_base,
				       .psn = p.qb->snd_nxt };
		int hdr = mroce_frame_hdrs(buf, sizeof(buf), &p.qb->route, &h);

		assert_true(hdr > 0);
		mroce_frame_finish(buf, (__u32)hdr, p.qb->route.family);
		pthread_mutex_lock(&p.da->lock);
		mroce_engine_rx(p.da, buf, (__u32)hdr, 0);
		pthread_mutex_unlock(&p.da->lock);
		mroce_dev_progress(p.da, 0);
	}
	answered = p.da->stats.acks_tx - acks0;
	printf("  %d asks from the peer: %llu ACKs back\n", ASKS_SENT, (unsigned long long)answered);
	assert_true(answered >= 1);
	assert_true(answered <= ASKS_SENT);
	write_one(&p, w, BUF);	/* and the QP goes on */
	free(w);
	pair_close(&p);
}

/*
 * The RTO for what is in flight when it would expire, not for what was in
 * flight when the last ACK set it. A one-packet WRITE leaves the low
 * timeout (3 RTTs, at least rto_low_us: 200 us) set; then a 1 MiB WRITE
 * fills the window, and its first ACKs take ACK_LATE_US (a receiver, or a
 * software bridge, slow for a moment): the high timeout (1 ms) covers that,
 * the low one fired over a full window.
 */
#define ACK_LATE_US	600

static void test_rto_for_what_is_in_flight(void **state)
{
	struct waiter *w = calloc(1, sizeof(*w));
	struct pair p;
	__u64 rto0;

	(void)state;
	pair_open(&p, 1720, NULL, NULL);
	pair_connect(&p);
	pair_link(&p);
	fill(p.la, BUF, 20);
	write_one(&p, w, 8);
	printf("  after one packet: rto %u us, srtt %u us\n", p.qa->rto_us, p.qa->srtt_us);
	assert_true(p.qa->rto_us < p.qa->attr.rto_high_us);	/* the low one is armed */
	rto0 = p.da->stats.rto_events;
	memset(w, 0, sizeof(*w));
	w->p = &p;
	w->want_a = 1;
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 2, p.la, BUF, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	/* every ACK sent meanwhile arrives after it, none overtakes the others */
	p.net->b.link.delay_us = ACK_LATE_US;
	sim_run(p.net, p.da, p.db, never, NULL, ACK_LATE_US);
	p.net->b.link.delay_us = 10;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p.la, p.lb, BUF);
	printf("  1 MiB whose first ACKs came %u us late: %llu RTOs\n", ACK_LATE_US,
	       (unsigned long long)(p.da->stats.rto_events - rto0));
	assert_int_equal(p.da->stats.rto_events, rto0);
	free(w);
	pair_close(&p);
}

/*
 * A connection's first request, before any RTT is known, to a peer that
 * has just accepted and does not run its transport yet for SETUP_US (its
 * application registering memory, posting receives, or waiting for a
 * CPU): nothing is lost, nothing is resent. The first RTO was one high
 * RTO (1 ms) after it.
 */
#define SETUP_US	5000

static void test_first_request_waits_for_a_peer_setting_up(void **state)
{
	struct waiter *w = calloc(1, sizeof(*w));
	struct pair p;

	(void)state;
	pair_open(&p, 1730, NULL, NULL);
	pair_connect(&p);
	p.net->a.link = (struct sim_link){ .delay_us = 2 };
	p.net->b.link = (struct sim_link){ .delay_us = 2 };
	/* B is not run from now for SETUP_US */
	p.net->nap_period_us = (__u32)p.net->now;
	p.net->nap_us = SETUP_US;
	assert_int_equal(p.qa->srtt_us, 0);
	write_one(&p, w, 8);
	printf("  first WRITE, peer setting up %u us: done after %llu us, %llu RTOs, %llu resent\n",
	       SETUP_US, (unsigned long long)(p.net->now % p.net->nap_period_us),
	       (unsigned long long)p.da->stats.rto_events, (unsigned long long)p.da->stats.retx_pkts);
	assert_true(p.net->now % p.net->nap_period_us >= SETUP_US);	/* it did wait for B */
	assert_int_equal(p.da->stats.rto_events, 0);
	assert_int_equal(p.da->stats.retx_pkts, 0);
	free(w);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stalled_acks_raise_the_rto_floor),
		cmocka_unit_test(test_tail_loss_probe),
		cmocka_unit_test(test_tail_probe_lost_probes_again),
		cmocka_unit_test(test_hole_behind_last_asked_again),
		cmocka_unit_test(test_hole_reports_bounded),
		cmocka_unit_test(test_black_holed_psn_fails_bounded),
		cmocka_unit_test(test_descheduled_peer_no_resends),
		cmocka_unit_test(test_longer_stall_is_asked),
		cmocka_unit_test(test_asks_answered_one_for_one),
		cmocka_unit_test(test_rto_for_what_is_in_flight),
		cmocka_unit_test(test_first_request_waits_for_a_peer_setting_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
