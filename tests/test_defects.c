// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Regression tests for the defects an independent review of the engine
 * found (issue "A transport you can trust"), one test per defect, each
 * named after what it guards. They run on the simulated wire (no root) and
 * start counters where the defects lived: near 2^31 and 2^32.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#define BUF	(1 << 20)
#include "pair.h"

#define ACC_ALL	(MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE | MROCE_ACCESS_REMOTE_READ)

/* Start a not yet connected QP's send queue and message counters at seq (lib/testhook.h). */
static void seed_sq(struct mroce_qp *qp, __u32 seq, __u32 msn)
{
	assert_int_equal(mroce_qp_test_seed_seq(qp, seq, qp->streams[0].rq_head, msn, qp->snd_nxt), 0);
}

static void seed_rq(struct mroce_qp *qp, __u32 seq)
{
	assert_int_equal(mroce_qp_test_seed_seq(qp, qp->sq_head, seq, qp->streams[0].ssn, qp->snd_nxt), 0);
}

static __u64 lb_addr(struct pair *p, size_t off)
{
	return (__u64)(unsigned long)(p->lb + off);
}

/* Defect 1: a send sequence past 2^31 (and the wrap at 2^32) is a request, never a READ job. */
static void wrs_past_2_31_and_2_32(__u32 start)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	pair_open(&p, 11, NULL, NULL);
	seed_sq(p.qa, start, 0);
	pair_connect(&p);
	w->p = &p;
	fill(p.la, 64 * 4096, start);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 16; i++) {
			size_t off = (size_t)(round * 16 + i) * 4096;

			assert_int_equal(post(p.qa, i % 4 == 3 ? MROCE_WR_RDMA_READ : MROCE_WR_RDMA_WRITE,
					      (__u64)(round * 16 + i), p.la + off + (i % 4 == 3 ? 2048 : 0),
					      2000, mroce_mr_lkey(p.ma), lb_addr(&p, off),
					      mroce_mr_rkey(p.mb), 0), 0);
		}
		w->want_a = w->na + 16;
		assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 1000000), 0);
	}
	for (int i = 0; i < 64; i++) {
		size_t off = (size_t)i * 4096;

		assert_int_equal(w->wa[i].status, MROCE_WC_SUCCESS);
		assert_int_equal(w->wa[i].wr_id, (__u64)i);
		if (i % 4 == 3)		/* READ: its local copy came back from B */
			assert_memory_equal(p.la + off + 2048, p.lb + off, 2000);
		else
			assert_memory_equal(p.lb + off, p.la + off, 2000);
	}
	assert_int_equal(p.db->stats.bad_pkts, 0);
	assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_RTS);
	free(w);
	pair_close(&p);
}

static void test_sq_seq_past_2_31(void **state)
{
	(void)state;
	wrs_past_2_31_and_2_32(0x80000000u - 20);
}

static void test_sq_seq_wraps_2_32(void **state)
{
	(void)state;
	wrs_past_2_31_and_2_32(0xffffffffu - 20);
}

static bool read_partly_in(void *ctx)
{
	struct waiter *w = ctx;
	struct mroce_qp *qa = w->p->qa;
	struct mroce_swqe *r = &qa->sq[qa->sq_head % qa->attr.sq_depth];

	collected(ctx);
	return r->rd_got > 0 && r->rd_got < r->len && qa->snd_una == qa->snd_nxt;
}

/* Defect 2: the responder dies after part of a READ's response: the READ fails, in bounded time. */
static void test_read_responder_dies(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .retry_cnt = 5, .rto_low_us = 100, .rto_high_us = 200,
		   .max_inflight = 32);	/* the response takes many round trips */
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u64 t0;

	(void)state;
	pair_open(&p, 12, &attr, NULL);
	p.net->a.link.delay_us = p.net->b.link.delay_us = 30;
	pair_connect(&p);
	w->p = &p;
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_READ, 1, p.la, 512 * 1024, mroce_mr_lkey(p.ma),
			      lb_addr(&p, 0), mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(sim_run(p.net, p.da, p.db, read_partly_in, w, 1000000), 0);
	p.net->a.link.down = p.net->b.link.down = true;	/* B is gone */
	t0 = p.net->now;
	w->want_a = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 2000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_RETRY_EXC_ERR);
	/* retry_cnt timeouts doubling from 200 us, plus the first: well under 100 ms */
	assert_true(p.net->now - t0 < 100000);
	free(w);
	pair_close(&p);
}

/* Defect 3: the ACK of a READ's request is lost; the READ succeeds and the QP stays healthy. */
static void test_read_ack_lost(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 13, NULL, NULL);
	pair_connect(&p);
	w->p = &p;
	fill(p.lb, 100, 3);
	p.net->b.link.drop_acks = 1000;	/* every ACK B sends while the READ runs */
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_READ, 1, p.la, 100, mroce_mr_lkey(p.ma),
			      lb_addr(&p, 0), mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 1000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p.la, p.lb, 100);
	w->want_a = 2;	/* the ACK of the request, delayed, is lost too */
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 300), -ETIMEDOUT);
	assert_true(p.net->b.dropped >= 1);
	p.net->b.link.drop_acks = 0;
	/* Long after: still connected, and a WRITE completes. */
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 3000000), -ETIMEDOUT);
	assert_int_equal(w->na, 1);
	assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_RTS);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 2, p.la, 100, mroce_mr_lkey(p.ma),
			      lb_addr(&p, 200), mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 1000000), 0);
	assert_int_equal(w->wa[1].wr_id, 2);
	assert_int_equal(w->wa[1].status, MROCE_WC_SUCCESS);
	free(w);
	pair_close(&p);
}

/* Defect 4: rnr_retry counts receiver-not-ready waits, not NACKed packets. */
static void test_rnr_retry_counts_waits(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .rnr_retry = 3, .rnr_timer_us = 500);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u32 len = 15 * 1400;

	(void)state;
	pair_open(&p, 14, &attr, NULL);
	p.net->a.link.delay_us = p.net->b.link.delay_us = 10;
	pair_connect(&p);
	w->p = &p;
	fill(p.la, len, 4);
	assert_int_equal(post(p.qa, MROCE_WR_SEND, 1, p.la, len, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
	/* Two waits go by before the receive is posted: fewer than rnr_retry. */
	w->want_a = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 1200), -ETIMEDOUT);
	assert_int_equal(w->na, 0);
	assert_true(p.db->stats.nacks_tx >= 15);
	assert_int_equal(post_recv(p.qb, 7, p.lb, len, mroce_mr_lkey(p.mb)), 0);
	w->want_b = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 1000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_SUCCESS);
	assert_int_equal(w->wb[0].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p.lb, p.la, len);
	free(w);
	pair_close(&p);
}

/* Defect 4: with no receive ever posted the first SEND carries the error, after rnr_retry waits. */
static void test_rnr_error_charged_to_first(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .rnr_retry = 3, .rnr_timer_us = 500);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u64 t0;

	(void)state;
	pair_open(&p, 15, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	for (int i = 0; i < 4; i++)
		assert_int_equal(post(p.qa, MROCE_WR_SEND, (__u64)i + 1, p.la + 64 * i, 64,
				      mroce_mr_lkey(p.ma), 0, 0, 0), 0);
	t0 = p.net->now;
	w->want_a = 4;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 1000000), 0);
	assert_int_equal(w->wa[0].wr_id, 1);
	assert_int_equal(w->wa[0].status, MROCE_WC_RNR_RETRY_EXC_ERR);
	for (int i = 1; i < 4; i++) {
		assert_int_equal(w->wa[i].wr_id, (__u64)i + 1);
		assert_int_equal(w->wa[i].status, MROCE_WC_WR_FLUSH_ERR);
	}
	assert_true(p.net->now - t0 >= 3 * 500);	/* three waits happened */
	free(w);
	pair_close(&p);
}

/* Defect 5: more READs outstanding than the responder serves at once: all succeed. */
static void test_many_outstanding_reads(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	const int n = 200;

	(void)state;
	pair_open(&p, 16, NULL, NULL);
	p.net->a.link.delay_us = p.net->b.link.delay_us = 20;
	pair_connect(&p);
	w->p = &p;
	fill(p.lb, (size_t)n * 1024, 5);
	for (int i = 0; i < n; i++)
		assert_int_equal(post(p.qa, MROCE_WR_RDMA_READ, (__u64)i, p.la + i * 1024, 1000,
				      mroce_mr_lkey(p.ma), lb_addr(&p, (size_t)i * 1024),
				      mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = n;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 2000000), 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(w->wa[i].wr_id, (__u64)i);
		assert_int_equal(w->wa[i].status, MROCE_WC_SUCCESS);
		assert_memory_equal(p.la + i * 1024, p.lb + i * 1024, 1000);
	}
	assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_RTS);
	assert_int_equal(p.qa->st.rto_events, 0);
	free(w);
	pair_close(&p);
}

static bool no_byte(const __u8 *b, size_t n, __u8 v)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] == v)
			return false;
	return true;
}

/* Defect 6: a region deregistered during a READ of it is not read any further. */
static void test_read_after_remote_dereg(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .max_inflight = 32);	/* the response takes many round trips */
	const size_t len = 512 * 1024;
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u8 *rb = calloc(1, len);
	struct mroce_mr *rmr;

	(void)state;
	pair_open(&p, 17, &attr, NULL);
	p.net->a.link.delay_us = p.net->b.link.delay_us = 30;
	pair_connect(&p);
	w->p = &p;
	memset(rb, 0x11, len);
	assert_int_equal(mroce_reg_mr(p.db, rb, len, ACC_ALL, &rmr), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_READ, 1, p.la, (__u32)len, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)rb, mroce_mr_rkey(rmr), 0), 0);
	assert_int_equal(sim_run(p.net, p.da, p.db, read_partly_in, w, 1000000), 0);
	assert_int_equal(mroce_dereg_mr(rmr), 0);
	memset(rb, 0xee, len);	/* what a reuse of the memory would hold */
	w->want_a = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 2000000), 0);
	assert_int_not_equal(w->wa[0].status, MROCE_WC_SUCCESS);
	assert_true(no_byte(p.la, len, 0xee));
	free(rb);
	free(w);
	pair_close(&p);
}

/* Defect 6: a READ response never lands in a local region deregistered meanwhile. */
static void test_read_into_local_dereg(void **state)
{
	const size_t len = 512 * 1024;
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u8 *lbuf = calloc(1, len);
	struct mroce_mr *lmr;

	(void)state;
	pair_open(&p, 18, NULL, NULL);
	p.net->a.link.delay_us = p.net->b.link.delay_us = 30;
	pair_connect(&p);
	w->p = &p;
	fill(p.lb, len, 7);
	assert_int_equal(mroce_reg_mr(p.da, lbuf, len, ACC_ALL, &lmr), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_READ, 1, lbuf, (__u32)len, mroce_mr_lkey(lmr),
			      lb_addr(&p, 0), mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(sim_run(p.net, p.da, p.db, read_partly_in, w, 1000000), 0);
	assert_int_equal(mroce_dereg_mr(lmr), 0);
	memset(lbuf, 0x55, len);
	w->want_a = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 2000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_LOC_PROT_ERR);
	for (size_t i = 0; i < len; i++)
		if (lbuf[i] != 0x55)
			fail_msg("byte %zu of a deregistered region was written", i);
	free(lbuf);
	free(w);
	pair_close(&p);
}

/* Defect 7: depths that are not powers of two, across the 2^32 wrap of both sequences. */
static void test_depth_not_power_of_two_wraps(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .sq_depth = 100, .rq_depth = 100);
	const __u32 start = 0xffffffffu - 40;
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 19, &attr, NULL);
	seed_sq(p.qa, start, start);
	seed_rq(p.qb, start);
	pair_connect(&p);
	w->p = &p;
	fill(p.la, 100 * 128, 8);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 100; i++)
			assert_int_equal(post_recv(p.qb, 1000 + (__u64)i, p.lb + i * 128, 128,
						   mroce_mr_lkey(p.mb)), 0);
		for (int i = 0; i < 100; i++)
			assert_int_equal(post(p.qa, MROCE_WR_SEND, (__u64)i, p.la + i * 128, 64 + i % 64,
					      mroce_mr_lkey(p.ma), 0, 0, 0), 0);
		w->na = w->nb = 0;
		w->want_a = w->want_b = 100;
		assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 2000000), 0);
		for (int i = 0; i < 100; i++) {
			assert_int_equal(w->wa[i].wr_id, (__u64)i);
			assert_int_equal(w->wa[i].status, MROCE_WC_SUCCESS);
			assert_int_equal(w->wb[i].wr_id, 1000 + (__u64)i);
			assert_int_equal(w->wb[i].status, MROCE_WC_SUCCESS);
			assert_int_equal(w->wb[i].byte_len, 64 + i % 64);
			assert_memory_equal(p.lb + i * 128, p.la + i * 128, 64 + i % 64);
		}
		memset(p.lb, 0, 100 * 128);
	}
	free(w);
	pair_close(&p);
}

/*
 * Defect 8: ordered mode. A WRITE whose first copy is lost, a SEND, then a
 * SEND too long for its receive: the receiver completes the first receive
 * before the length error, and a SEND reported successful at the sender
 * was received successfully.
 */
static void test_ordered_receiver_error_in_turn(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 20, NULL, NULL);
	p.net->a.link.delay_us = p.net->b.link.delay_us = 20;
	pair_connect(&p);
	w->p = &p;
	fill(p.la, 4096, 9);
	assert_int_equal(post_recv(p.qb, 71, p.lb + 8192, 3000, mroce_mr_lkey(p.mb)), 0);
	assert_int_equal(post_recv(p.qb, 72, p.lb + 16384, 100, mroce_mr_lkey(p.mb)), 0);
	p.net->a.link.drop_psn = p.qa->snd_nxt;	/* the WRITE's first copy */
	p.net->a.link.drop_armed = true;
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 1, p.la, 1000, mroce_mr_lkey(p.ma),
			      lb_addr(&p, 0), mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(post(p.qa, MROCE_WR_SEND, 2, p.la + 1024, 2500, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
	assert_int_equal(post(p.qa, MROCE_WR_SEND, 3, p.la + 2048, 200, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
	w->want_a = 3;
	w->want_b = 2;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 2000000), 0);
	assert_int_equal(w->wb[0].wr_id, 71);
	assert_int_equal(w->wb[0].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p.lb + 8192, p.la + 1024, 2500);
	assert_int_equal(w->wb[1].wr_id, 72);
	assert_int_equal(w->wb[1].status, MROCE_WC_LOC_LEN_ERR);
	assert_int_equal(w->wa[0].wr_id, 1);
	assert_int_equal(w->wa[0].status, MROCE_WC_SUCCESS);
	assert_int_equal(w->wa[1].wr_id, 2);
	assert_int_equal(w->wa[1].status, MROCE_WC_SUCCESS);
	assert_int_equal(w->wa[2].wr_id, 3);
	assert_int_equal(w->wa[2].status, MROCE_WC_REM_INV_REQ_ERR);
	free(w);
	pair_close(&p);
}

/* Defect 8: a SEND acknowledged only selectively is not yet successful at the sender. */
static void test_ordered_send_success_means_received(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 21, NULL, NULL);
	p.net->a.link.delay_us = p.net->b.link.delay_us = 20;
	pair_connect(&p);
	w->p = &p;
	assert_int_equal(post_recv(p.qb, 71, p.lb, 3000, mroce_mr_lkey(p.mb)), 0);
	/* A WRITE with a bad key arrives after the SEND behind it, which is placed and SACKed. */
	p.net->a.link.drop_psn = p.qa->snd_nxt;
	p.net->a.link.drop_armed = true;
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 1, p.la, 1000, mroce_mr_lkey(p.ma),
			      lb_addr(&p, 4096), mroce_mr_rkey(p.mb) ^ 0x1000, 0), 0);
	assert_int_equal(post(p.qa, MROCE_WR_SEND, 2, p.la, 100, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
	w->want_a = 2;
	w->want_b = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 2000000), 0);
	/* The WRITE's bad key fails the QP; the SEND behind it is flushed on both sides. */
	assert_int_equal(w->wa[0].status, MROCE_WC_REM_ACCESS_ERR);
	assert_int_equal(w->wa[1].status, MROCE_WC_WR_FLUSH_ERR);
	assert_int_equal(w->wb[0].status, MROCE_WC_WR_FLUSH_ERR);
	free(w);
	pair_close(&p);
}

/* Defect 9: a request behind a failed one completes flushed, even if its bytes landed. */
static void test_after_error_flushed(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 22, NULL, NULL);
	p.net->a.link.delay_us = p.net->b.link.delay_us = 20;
	pair_connect(&p);
	w->p = &p;
	p.net->a.link.drop_psn = p.qa->snd_nxt;	/* the bad WRITE arrives after the good one */
	p.net->a.link.drop_armed = true;
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 1, p.la, 100, mroce_mr_lkey(p.ma),
			      lb_addr(&p, 0), mroce_mr_rkey(p.mb) ^ 0x1000, 0), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 2, p.la, 100, mroce_mr_lkey(p.ma),
			      lb_addr(&p, 0), mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = 2;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 2000000), 0);
	assert_int_equal(w->wa[0].wr_id, 1);
	assert_int_equal(w->wa[0].status, MROCE_WC_REM_ACCESS_ERR);
	assert_int_equal(w->wa[1].wr_id, 2);
	assert_int_equal(w->wa[1].status, MROCE_WC_WR_FLUSH_ERR);
	free(w);
	pair_close(&p);
}

/* Defect 9: a fenced request waits for the ones before it, so it never touches memory after an error. */
static void test_fence_after_error(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	struct mroce_sge sge = { 0, 100, 0 };
	struct mroce_send_wr wr = { .wr_id = 2, .opcode = MROCE_WR_RDMA_WRITE, .sg_list = &sge,
				    .num_sge = 1, .send_flags = MROCE_SEND_FENCE };

	(void)state;
	pair_open(&p, 23, NULL, NULL);
	p.net->a.link.delay_us = p.net->b.link.delay_us = 20;
	pair_connect(&p);
	w->p = &p;
	fill(p.la, 100, 10);
	p.net->a.link.drop_psn = p.qa->snd_nxt;
	p.net->a.link.drop_armed = true;
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 1, p.la, 100, mroce_mr_lkey(p.ma),
			      lb_addr(&p, 0), mroce_mr_rkey(p.mb) ^ 0x1000, 0), 0);
	sge.addr = (__u64)(unsigned long)p.la;
	sge.lkey = mroce_mr_lkey(p.ma);
	wr.remote_addr = lb_addr(&p, 4096);
	wr.rkey = mroce_mr_rkey(p.mb);
	assert_int_equal(mroce_post_send(p.qa, &wr), 0);
	w->want_a = 2;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 2000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_REM_ACCESS_ERR);
	assert_int_equal(w->wa[1].status, MROCE_WC_WR_FLUSH_ERR);
	for (int i = 0; i < 100; i++)
		assert_int_equal(p.lb[4096 + i], 0);
	free(w);
	pair_close(&p);
}

/* Defect 12: a QP takes only CQs of its own device. */
static void test_cq_of_another_device(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr);
	struct pair p;
	struct mroce_qp *qp = NULL;

	(void)state;
	pair_open(&p, 24, NULL, NULL);
	attr.send_cq = p.cqa;
	attr.recv_cq = p.cqb;
	assert_int_equal(mroce_create_qp(p.da, &attr, &qp), -EINVAL);
	attr.send_cq = attr.recv_cq = p.cqb;
	assert_int_equal(mroce_create_qp(p.da, &attr, &qp), -EINVAL);
	assert_null(qp);
	pair_close(&p);
}

/* Defect 23: a zero-length READ at address 0 needs no pointer arithmetic on NULL (UBSan). */
static void test_zero_length_read_at_null(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 25, NULL, NULL);
	pair_connect(&p);
	w->p = &p;
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_READ, 1, NULL, 0, 0, 0, 0, 0), 0);
	w->want_a = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 1000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_SUCCESS);
	assert_int_equal(w->wa[0].byte_len, 0);
	free(w);
	pair_close(&p);
}

/*
 * A SEND and a receive with no scatter list at all (num_sge 0, sg_list
 * NULL), as the NCCL plugin posts its zero-byte receives: both complete,
 * and nothing copies from the NULL list (UBSan: memcpy's argument 2).
 */
static void test_zero_sge_null_list(void **state)
{
	struct mroce_send_wr swr = { .wr_id = 7, .opcode = MROCE_WR_SEND, .num_sge = 0 };
	struct mroce_recv_wr rwr = { .wr_id = 8, .num_sge = 0 };
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 26, NULL, NULL);
	pair_connect(&p);
	w->p = &p;
	assert_int_equal(mroce_post_recv(p.qb, &rwr), 0);
	assert_int_equal(mroce_post_send(p.qa, &swr), 0);
	w->want_a = w->want_b = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 1000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_SUCCESS);
	assert_int_equal(w->wb[0].status, MROCE_WC_SUCCESS);
	assert_int_equal(w->wb[0].wr_id, 8);
	assert_int_equal(w->wb[0].byte_len, 0);
	free(w);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sq_seq_past_2_31),
		cmocka_unit_test(test_sq_seq_wraps_2_32),
		cmocka_unit_test(test_read_responder_dies),
		cmocka_unit_test(test_read_ack_lost),
		cmocka_unit_test(test_rnr_retry_counts_waits),
		cmocka_unit_test(test_rnr_error_charged_to_first),
		cmocka_unit_test(test_many_outstanding_reads),
		cmocka_unit_test(test_read_after_remote_dereg),
		cmocka_unit_test(test_read_into_local_dereg),
		cmocka_unit_test(test_depth_not_power_of_two_wraps),
		cmocka_unit_test(test_ordered_receiver_error_in_turn),
		cmocka_unit_test(test_ordered_send_success_means_received),
		cmocka_unit_test(test_after_error_flushed),
		cmocka_unit_test(test_fence_after_error),
		cmocka_unit_test(test_cq_of_another_device),
		cmocka_unit_test(test_zero_length_read_at_null),
		cmocka_unit_test(test_zero_sge_null_list),
	};

	if (getenv("MROCE_TEST_FILTER"))	/* one test alone: MROCE_TEST_FILTER=test_name */
		cmocka_set_test_filter(getenv("MROCE_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
