// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The reliability engine between two devices over a simulated wire (no
 * root): every operation, byte-exact data, completion order and status,
 * under loss, reordering, duplication and corruption across thousands of
 * seeds; PSN wrap-around; window edges; retry exhaustion; protection.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#define BUF	(1 << 20)
#include "pair.h"
#include "../lib/cc.h"
#include "../lib/cq.h"
#include <pthread.h>
#include <sched.h>

static void test_write_sizes(void **state)
{
	static const __u32 sizes[] = { 0, 1, 4095, 4096, 4097, 65536, BUF / 2 };
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 1, NULL, NULL);
	pair_connect(&p);
	w->p = &p;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill(p.la, sizes[i], (__u32)i + 1);
		memset(p.lb, 0, BUF);
		assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 100 + i, p.la, sizes[i], mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
		w->want_a = w->na + 1;
		assert_int_equal(sim_run(p.net, p.da, p.db, collected, w, 10000000), 0);
		assert_int_equal(w->wa[w->na - 1].status, MROCE_WC_SUCCESS);
		assert_int_equal(w->wa[w->na - 1].wr_id, 100 + i);
		assert_int_equal(w->wa[w->na - 1].opcode, MROCE_WC_RDMA_WRITE);
		assert_int_equal(w->wa[w->na - 1].byte_len, sizes[i]);
		assert_memory_equal(p.lb, p.la, sizes[i]);
		assert_int_equal(p.lb[sizes[i]], 0);	/* nothing past the end */
	}
	free(w);
	pair_close(&p);
}

/* Every operation once, clean wire: data, completions, immediates. */
static void test_every_operation(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u8 *la, *lb;

	(void)state;
	pair_open(&p, 2, NULL, NULL);
	pair_connect(&p);
	w->p = &p;
	la = p.la;
	lb = p.lb;
	fill(la, 8192, 9);
	fill(lb + 400000, 5000, 10);
	/* B posts three receives: SEND, SEND_IMM, WRITE_IMM. */
	assert_int_equal(post_recv(p.qb, 1, lb + 100000, 9000, mroce_mr_lkey(p.mb)), 0);
	assert_int_equal(post_recv(p.qb, 2, lb + 200000, 100, mroce_mr_lkey(p.mb)), 0);
	assert_int_equal(post_recv(p.qb, 3, lb + 300000, 1, mroce_mr_lkey(p.mb)), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 11, la, 3000, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)lb, mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(post(p.qa, MROCE_WR_SEND, 12, la + 100, 8000, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
	assert_int_equal(post(p.qa, MROCE_WR_SEND_WITH_IMM, 13, la, 0, mroce_mr_lkey(p.ma), 0, 0, 0xabcd), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE_WITH_IMM, 14, la + 7, 5555, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)(lb + 50000), mroce_mr_rkey(p.mb), 0x1234), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_READ, 15, la + 600000, 5000, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)(lb + 400000), mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = 5;
	w->want_b = 3;
	assert_int_equal(sim_run(p.net, p.da, p.db, collected, w, 10000000), 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(w->wa[i].status, MROCE_WC_SUCCESS);
		assert_int_equal(w->wa[i].wr_id, 11 + i);	/* ordered: posting order */
	}
	assert_int_equal(w->wa[1].opcode, MROCE_WC_SEND);
	assert_int_equal(w->wa[4].opcode, MROCE_WC_RDMA_READ);
	assert_int_equal(w->wa[4].byte_len, 5000);
	assert_memory_equal(lb, la, 3000);
	assert_memory_equal(lb + 100000, la + 100, 8000);
	assert_memory_equal(lb + 50000, la + 7, 5555);
	assert_memory_equal(la + 600000, lb + 400000, 5000);
	assert_int_equal(w->wb[0].wr_id, 1);
	assert_int_equal(w->wb[0].opcode, MROCE_WC_RECV);
	assert_int_equal(w->wb[0].byte_len, 8000);
	assert_int_equal(w->wb[0].wc_flags, 0);
	assert_int_equal(w->wb[1].wr_id, 2);
	assert_int_equal(w->wb[1].byte_len, 0);
	assert_int_equal(w->wb[1].wc_flags, MROCE_WC_WITH_IMM);
	assert_int_equal(w->wb[1].imm_data, 0xabcd);
	assert_int_equal(w->wb[2].wr_id, 3);
	assert_int_equal(w->wb[2].opcode, MROCE_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(w->wb[2].imm_data, 0x1234);
	assert_int_equal(w->wb[2].byte_len, 5555);
	for (int i = 0; i < 3; i++)
		assert_int_equal(w->wb[i].status, MROCE_WC_SUCCESS);
	free(w);
	pair_close(&p);
}

/*
 * Random traffic over a hostile wire, one seed at a time: a mix of WRITE,
 * WRITE_IMM, SEND, SEND_IMM and READ with random sizes, over loss, jitter
 * (reordering), duplication and corruption, sprayed over several paths.
 * Every byte and every completion (order and status) is checked.
 */
#define OPS 24
struct expect_op {
	enum mroce_wr_opcode op;
	__u32 len, loff, roff, imm;
};

static void run_seed_faults(__u64 seed, enum mroce_order order, bool gbn, const struct mroce_faults *faults);

static void run_seed(__u64 seed, enum mroce_order order, bool gbn)
{
	run_seed_faults(seed, order, gbn, NULL);
}

static void run_seed_faults(__u64 seed, enum mroce_order order, bool gbn, const struct mroce_faults *faults)
{
	MROCE_OPTS(mroce_qp_attr, attr, .order = order, .go_back_n = gbn,
		   .paths = 1 + (__u32)(seed % 8), .max_inflight = 32 + (__u32)(seed * 37 % 800));
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	struct expect_op ex[OPS];
	int nrecv = 0;
	__u64 recv_wr[OPS];
	__u64 s = seed;

	pair_open(&p, seed, &attr, faults);
	pair_connect(&p);
	/* Start PSNs right below 2^32 every fourth seed, so the run wraps. */
	if (seed % 4 == 0) {
		p.qa->snd_una = p.qa->snd_nxt = 0xffffffffu - (__u32)(seed % 50);
		mroce_rxwin_reset(p.qb->flow, p.qa->snd_nxt);
	}
	p.net->a.link = (struct sim_link){ .delay_us = 5, .path_step_us = (__u32)(seed % 3) * 10,
					   .jitter_us = (__u32)(seed % 5) * 8,
					   .loss_ppm = (__u32)(seed % 7) * 15000,
					   .dup_ppm = (__u32)(seed % 3) * 10000,
					   .corrupt_ppm = (__u32)(seed % 2) * 5000 };
	p.net->b.link = p.net->a.link;
	p.net->b.link.loss_ppm /= 2;
	w->p = &p;
	fill(p.la, BUF, (__u32)seed);
	fill(p.lb, BUF, (__u32)seed + 99);
	for (int i = 0; i < OPS; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		ex[i].op = (enum mroce_wr_opcode)((s >> 33) % 5);
		ex[i].len = (__u32)((s >> 13) % (i % 5 == 0 ? 20000 : 3000));
		/* Sources and WRITE targets in the lower halves, receive buffers and
		 * READ targets in the upper halves: no two operations overlap. */
		ex[i].loff = (__u32)(i * 20480);
		ex[i].roff = (__u32)(i * 20480);
		ex[i].imm = (__u32)(s >> 40);
		if (ex[i].op == MROCE_WR_SEND || ex[i].op == MROCE_WR_SEND_WITH_IMM ||
		    ex[i].op == MROCE_WR_RDMA_WRITE_WITH_IMM) {
			recv_wr[nrecv++] = 1000 + (__u64)i;
			/* receive buffer: in B's upper half, at the op's slot */
			assert_int_equal(post_recv(p.qb, 1000 + (__u64)i, p.lb + BUF / 2 + ex[i].roff,
						   20480, mroce_mr_lkey(p.mb)), 0);
		}
	}
	for (int i = 0; i < OPS; i++) {
		__u8 *l = p.la + ex[i].loff, *r = p.lb + ex[i].roff;

		if (ex[i].op == MROCE_WR_RDMA_READ)
			l = p.la + BUF / 2 + ex[i].loff;
		assert_int_equal(post(p.qa, ex[i].op, (__u64)i, l, ex[i].len, mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)r, mroce_mr_rkey(p.mb), ex[i].imm), 0);
	}
	w->want_a = OPS;
	w->want_b = nrecv;
	if (sim_run(p.net, p.da, p.db, collected, w, 60000000)) {
		struct mroce_qp *q = p.qb;
		struct mroce_stream *st = &q->streams[0];
		struct mroce_msgslot *m = &RWQE(st, st->rq_head)->msg;

		fprintf(stderr, "  B: rq %u..%u base %u slot epoch %u state %d got %u len %u max_psn %u op %d\n",
			st->rq_head, st->rq_tail, q->flow->rx_base, m->epoch, m->state, m->got, m->len,
			m->max_psn, m->opcode);
		fprintf(stderr, "  A: sq %u/%u/%u una %u nxt %u nlost %u\n", p.qa->sq_head, p.qa->sq_next,
			p.qa->sq_tail, p.qa->snd_una, p.qa->snd_nxt, p.qa->nlost);
		fail_msg("seed %llu: timed out with %d/%d and %d/%d completions", (unsigned long long)seed,
			 w->na, OPS, w->nb, nrecv);
	}
	for (int i = 0; i < OPS; i++) {
		const struct mroce_wc *c = &w->wa[i];

		if (c->status != MROCE_WC_SUCCESS) {
			struct mroce_dev_stats sa, sb;

			mroce_dev_stats(p.da, &sa);
			mroce_dev_stats(p.db, &sb);
			fprintf(stderr, "  A: tx %llu rx %llu retx %llu rto %llu acks tx/rx %llu/%llu nacks tx/rx %llu/%llu dup %llu bad %llu win %llu\n",
				sa.tx_pkts, sa.rx_pkts, sa.retx_pkts, sa.rto_events, sa.acks_tx, sa.acks_rx,
				sa.nacks_tx, sa.nacks_rx, sa.dup_pkts, sa.bad_pkts, sa.rx_dropped_window);
			fprintf(stderr, "  B: tx %llu rx %llu retx %llu rto %llu acks tx/rx %llu/%llu nacks tx/rx %llu/%llu dup %llu bad %llu win %llu\n",
				sb.tx_pkts, sb.rx_pkts, sb.retx_pkts, sb.rto_events, sb.acks_tx, sb.acks_rx,
				sb.nacks_tx, sb.nacks_rx, sb.dup_pkts, sb.bad_pkts, sb.rx_dropped_window);
			for (int k = 0; k < OPS; k++)
				fprintf(stderr, "  op %d: %d len %u\n", k, ex[k].op, ex[k].len);
			for (int k = 0; k < w->na; k++)
				fprintf(stderr, "  A wc %d: wr %llu %s\n", k, (unsigned long long)w->wa[k].wr_id,
					mroce_wc_status_str(w->wa[k].status));
			for (int k = 0; k < w->nb; k++)
				fprintf(stderr, "  B wc %d: wr %llu %s\n", k, (unsigned long long)w->wb[k].wr_id,
					mroce_wc_status_str(w->wb[k].status));
			fail_msg("seed %llu: wr %llu %s", (unsigned long long)seed,
				 (unsigned long long)c->wr_id, mroce_wc_status_str(c->status));
		}
		if (order == MROCE_ORDERED && c->wr_id != (__u64)i)
			fail_msg("seed %llu: completion %d is wr %llu", (unsigned long long)seed, i,
				 (unsigned long long)c->wr_id);
	}
	for (int i = 0; i < nrecv; i++) {
		bool seen = false;

		if (w->wb[i].status != MROCE_WC_SUCCESS)
			fail_msg("seed %llu: recv %d: %s", (unsigned long long)seed, i,
				 mroce_wc_status_str(w->wb[i].status));
		if (order == MROCE_ORDERED && w->wb[i].wr_id != recv_wr[i])
			fail_msg("seed %llu: recv completion %d is wr %llu, want %llu", (unsigned long long)seed,
				 i, (unsigned long long)w->wb[i].wr_id, (unsigned long long)recv_wr[i]);
		for (int k = 0; k < nrecv; k++)
			seen |= w->wb[k].wr_id == recv_wr[i];
		if (!seen)
			fail_msg("seed %llu: no completion for recv %llu", (unsigned long long)seed,
				 (unsigned long long)recv_wr[i]);
	}
	/* Data: recompute what each operation must have produced. */
	{
		__u8 *ra = calloc(1, BUF), *rb = calloc(1, BUF);

		fill(ra, BUF, (__u32)seed);
		fill(rb, BUF, (__u32)seed + 99);
		for (int i = 0; i < OPS; i++) {
			switch (ex[i].op) {
			case MROCE_WR_RDMA_WRITE:
				memcpy(rb + ex[i].roff, ra + ex[i].loff, ex[i].len);
				break;
			case MROCE_WR_RDMA_WRITE_WITH_IMM:
				memcpy(rb + ex[i].roff, ra + ex[i].loff, ex[i].len);
				break;
			case MROCE_WR_SEND:
			case MROCE_WR_SEND_WITH_IMM:
				memcpy(rb + BUF / 2 + ex[i].roff, ra + ex[i].loff, ex[i].len);
				break;
			case MROCE_WR_RDMA_READ:
				memcpy(ra + BUF / 2 + ex[i].loff, rb + ex[i].roff, ex[i].len);
				break;
			}
		}
		for (size_t off = 0; off < BUF; off++) {
			if (ra[off] != p.la[off] || rb[off] != p.lb[off]) {
				int op = -1;

				for (int i = 0; i < OPS; i++)
					if (off % (BUF / 2) >= ex[i].roff && off % (BUF / 2) < ex[i].roff + 20480)
						op = i;
				fail_msg("seed %llu: %s memory differs from the model at %zu (slot of op %d, "
					 "opcode %d len %u)", (unsigned long long)seed,
					 ra[off] != p.la[off] ? "A's" : "B's", off, op,
					 op >= 0 ? (int)ex[op].op : -1, op >= 0 ? ex[op].len : 0);
			}
		}
		free(ra);
		free(rb);
	}
	free(w);
	pair_close(&p);
}

static void test_random_seeds_ordered(void **state)
{
	(void)state;
	for (__u64 seed = 1; seed <= 1000; seed++)
		run_seed(seed, MROCE_ORDERED, false);
}

static void test_random_seeds_unordered(void **state)
{
	(void)state;
	for (__u64 seed = 2001; seed <= 2600; seed++)
		run_seed(seed, MROCE_UNORDERED, false);
}

static void test_random_seeds_go_back_n(void **state)
{
	(void)state;
	for (__u64 seed = 4001; seed <= 4200; seed++)
		run_seed(seed, MROCE_ORDERED, true);
}

/* Wrong rkey, range past the region, READ without the right: refused, memory untouched. */
static void test_protection(void **state)
{
	static const struct {
		enum mroce_wr_opcode op;
		__u32 rkey_xor;
		__u64 off;
		bool read_only_mr;
	} cases[] = {
		{ MROCE_WR_RDMA_WRITE, 0x1000, 0, false },
		{ MROCE_WR_RDMA_WRITE, 0, BUF - 100, false },
		{ MROCE_WR_RDMA_WRITE_WITH_IMM, 0, 1ULL << 40, false },
		{ MROCE_WR_RDMA_READ, 0x2000, 0, false },
		{ MROCE_WR_RDMA_READ, 0, BUF - 10, false },
		{ MROCE_WR_RDMA_WRITE, 0, 0, true },	/* region has no remote write right */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pair p;
		struct waiter *w = calloc(1, sizeof(*w));
		struct mroce_mr *target;
		__u8 *snapshot = malloc(BUF);
		__u32 rkey;

		pair_open(&p, 100 + i, NULL, NULL);
		pair_connect(&p);
		w->p = &p;
		fill(p.lb, BUF, 77);
		memcpy(snapshot, p.lb, BUF);
		fill(p.la, BUF, 78);
		rkey = mroce_mr_rkey(p.mb);
		if (cases[i].read_only_mr) {
			assert_int_equal(mroce_reg_mr(p.db, p.lb, BUF, MROCE_ACCESS_REMOTE_READ, &target), 0);
			rkey = mroce_mr_rkey(target);
		}
		if (cases[i].op == MROCE_WR_RDMA_WRITE_WITH_IMM)
			assert_int_equal(post_recv(p.qb, 1, p.lb, 16, mroce_mr_lkey(p.mb)), 0);
		assert_int_equal(post(p.qa, cases[i].op, 1, p.la, 4096, mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)p.lb + cases[i].off, rkey ^ cases[i].rkey_xor, 0), 0);
		/* A later request must be flushed, not executed. */
		assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 2, p.la, 4096, mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
		w->want_a = 2;
		assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
		if (w->wa[0].status != MROCE_WC_REM_ACCESS_ERR)
			fail_msg("case %zu: %s", i, mroce_wc_status_str(w->wa[0].status));
		assert_int_equal(w->wa[1].status, MROCE_WC_WR_FLUSH_ERR);
		assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_ERR);
		assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 3, p.la, 1, mroce_mr_lkey(p.ma), 0, 0, 0), -EIO);
		if (memcmp(p.lb, snapshot, BUF))
			fail_msg("case %zu wrote into the target", i);
		free(snapshot);
		free(w);
		pair_close(&p);
	}
}

static void test_local_errors(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 200, NULL, NULL);
	/* Before connect: not connected. */
	assert_int_equal(post(p.qa, MROCE_WR_SEND, 1, p.la, 1, mroce_mr_lkey(p.ma), 0, 0, 0), -ENOTCONN);
	pair_connect(&p);
	w->p = &p;
	/* Malformed requests are refused at posting. */
	assert_int_equal(post(p.qa, (enum mroce_wr_opcode)99, 1, p.la, 1, mroce_mr_lkey(p.ma), 0, 0, 0), -EINVAL);
	{
		struct mroce_sge sg[MROCE_MAX_SGE + 1] = {};
		struct mroce_send_wr wr = { .opcode = MROCE_WR_SEND, .sg_list = sg, .num_sge = MROCE_MAX_SGE + 1 };

		assert_int_equal(mroce_post_send(p.qa, &wr), -EINVAL);
	}
	/* A bad lkey or a range past the region: accepted, completed with a protection error. */
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 5, p.la + BUF - 10, 100, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 6, p.la, 100, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = 2;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
	assert_int_equal(w->wa[0].wr_id, 5);
	assert_int_equal(w->wa[0].status, MROCE_WC_LOC_PROT_ERR);
	assert_int_equal(w->wa[1].status, MROCE_WC_WR_FLUSH_ERR);
	free(w);
	pair_close(&p);
}

/* A full send queue says -EAGAIN and never blocks; completions make room again. */
static void test_queue_full(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .sq_depth = 4);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 300, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	for (int i = 0; i < 4; i++)
		assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, (__u64)i, p.la, 100, mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 9, p.la, 100, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), -EAGAIN);
	w->want_a = 4;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 9, p.la, 100, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	free(w);
	pair_close(&p);
}

/*
 * The rings start small and grow as posts need, up to their depth (ring.c):
 * live entries that straddle the small ring's end keep their order and
 * contents, and the depth still says when the queue is full.
 */
static void test_queues_grow_on_use(void **state)
{
	enum { FIRST = 10, MANY = 250, LEN = 64 };
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 310, NULL, NULL);	/* the defaults: 256 deep */
	pair_connect(&p);
	w->p = &p;
	assert_int_equal(p.qa->sq_mask + 1, MROCE_RING_FIRST);
	assert_int_equal(p.qb->streams[0].rq_mask + 1, MROCE_RING_FIRST);
	/* Move the heads on, so that what follows wraps the first ring. */
	for (int i = 0; i < FIRST; i++)
		assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, (__u64)i, p.la, LEN, mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = FIRST;
	assert_int_equal(sim_run(p.net, p.da, p.db, collected, w, 10000000), 0);
	fill(p.la, (size_t)MANY * LEN, 31);
	for (int i = 0; i < MANY; i++)
		assert_int_equal(post_recv(p.qb, 1000 + (__u64)i, p.lb + (size_t)i * LEN, LEN,
					   mroce_mr_lkey(p.mb)), 0);
	for (int i = 0; i < MANY; i++)
		assert_int_equal(post(p.qa, MROCE_WR_SEND, 2000 + (__u64)i, p.la + (size_t)i * LEN, LEN,
				      mroce_mr_lkey(p.ma), 0, 0, 0), 0);
	assert_int_equal(p.qa->sq_mask + 1, 256);
	assert_int_equal(p.qb->streams[0].rq_mask + 1, 256);
	for (int i = MANY; i < 256; i++)	/* up to the depth, and not one more */
		assert_int_equal(post_recv(p.qb, 1000 + (__u64)i, p.lb, LEN, mroce_mr_lkey(p.mb)), 0);
	assert_int_equal(post_recv(p.qb, 9999, p.lb, LEN, mroce_mr_lkey(p.mb)), -EAGAIN);
	for (int i = MANY; i < 256; i++)
		assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 2000 + (__u64)i, p.la, LEN,
				      mroce_mr_lkey(p.ma), (__u64)(unsigned long)p.lb + BUF / 2,
				      mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 9999, p.la, LEN, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb + BUF / 2, mroce_mr_rkey(p.mb), 0), -EAGAIN);
	w->want_a = FIRST + 256;
	w->want_b = MANY;
	assert_int_equal(sim_run(p.net, p.da, p.db, collected, w, 10000000), 0);
	for (int i = 0; i < 256; i++) {
		assert_int_equal(w->wa[FIRST + i].status, MROCE_WC_SUCCESS);
		assert_int_equal(w->wa[FIRST + i].wr_id, 2000 + (__u64)i);
	}
	for (int i = 0; i < MANY; i++) {
		assert_int_equal(w->wb[i].status, MROCE_WC_SUCCESS);
		assert_int_equal(w->wb[i].wr_id, 1000 + (__u64)i);
		assert_int_equal(w->wb[i].byte_len, LEN);
	}
	assert_memory_equal(p.lb, p.la, (size_t)MANY * LEN);
	free(w);
	pair_close(&p);
}

/* No receive posted: RNR NACKs, retried; a receive posted in time saves it, none fails it. */
static void test_receiver_not_ready(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .rnr_retry = 3, .rnr_timer_us = 500);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 400, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	fill(p.la, 64, 5);
	assert_int_equal(post(p.qa, MROCE_WR_SEND, 1, p.la, 64, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
	w->want_a = 1;
	/* Let it bounce once, then post the receive. */
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 700), -ETIMEDOUT);
	assert_true(p.db->stats.nacks_tx >= 1);
	assert_int_equal(post_recv(p.qb, 7, p.lb, 64, mroce_mr_lkey(p.mb)), 0);
	w->want_b = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_SUCCESS);
	assert_int_equal(w->wb[0].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p.lb, p.la, 64);
	/* Now nobody posts: retries run out. */
	assert_int_equal(post(p.qa, MROCE_WR_SEND, 2, p.la, 64, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
	w->want_a = 2;
	w->want_b = 0;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
	assert_int_equal(w->wa[1].status, MROCE_WC_RNR_RETRY_EXC_ERR);
	free(w);
	pair_close(&p);
}

/* A receive buffer too small: length error there, invalid request at the sender. */
static void test_receive_too_small(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 500, NULL, NULL);
	pair_connect(&p);
	w->p = &p;
	assert_int_equal(post_recv(p.qb, 7, p.lb, 100, mroce_mr_lkey(p.mb)), 0);
	assert_int_equal(post(p.qa, MROCE_WR_SEND, 1, p.la, 101, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
	w->want_a = 1;
	w->want_b = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_REM_INV_REQ_ERR);
	assert_int_equal(w->wb[0].wr_id, 7);
	assert_int_equal(w->wb[0].status, MROCE_WC_LOC_LEN_ERR);
	free(w);
	pair_close(&p);
}

/*
 * The peer disappears: that QP fails with retries exceeded, within the
 * configured timeouts, and a second QP between the same devices is unharmed.
 */
static void test_retry_exhaustion_one_qp(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .retry_cnt = 5, .rto_low_us = 100, .rto_high_us = 200);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	struct mroce_qp *qa2, *qb2;
	__u64 t0;

	(void)state;
	pair_open(&p, 600, &attr, NULL);
	pair_connect(&p);
	attr.send_cq = attr.recv_cq = p.cqa;
	assert_int_equal(mroce_create_qp(p.da, &attr, &qa2), 0);
	attr.send_cq = attr.recv_cq = p.cqb;
	assert_int_equal(mroce_create_qp(p.db, &attr, &qb2), 0);
	assert_int_equal(sim_connect(qa2, qb2), 0);
	w->p = &p;
	mroce_destroy_qp(p.qb);	/* the peer QP is gone: its packets are dropped */
	p.qb = NULL;
	t0 = p.net->now;
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 1, p.la, 50000, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	assert_int_equal(post(qa2, MROCE_WR_RDMA_WRITE, 2, p.la, 50000, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = 2;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
	for (int i = 0; i < 2; i++) {
		if (w->wa[i].wr_id == 1) {
			assert_int_equal(w->wa[i].status, MROCE_WC_RETRY_EXC_ERR);
		} else {
			assert_int_equal(w->wa[i].status, MROCE_WC_SUCCESS);
		}
	}
	assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_ERR);
	assert_int_equal(mroce_qp_state(qa2), MROCE_QPS_RTS);
	/* 5 timeouts doubling from 200 us: about 6.2 ms; allow for the first RTO. */
	assert_true(p.net->now - t0 < 20000);
	mroce_destroy_qp(qa2);
	mroce_destroy_qp(qb2);
	free(w);
	pair_close(&p);
}

/* Ordered completes in message order; unordered as soon as each message is whole. */
static void test_ordered_vs_unordered(void **state)
{
	(void)state;
	for (int unordered = 0; unordered < 2; unordered++) {
		MROCE_OPTS(mroce_qp_attr, attr, .order = unordered ? MROCE_UNORDERED : MROCE_ORDERED);
		struct pair p;
		struct waiter *w = calloc(1, sizeof(*w));

		pair_open(&p, 700, &attr, NULL);
		pair_connect(&p);
		w->p = &p;
		assert_int_equal(post_recv(p.qb, 1, p.lb, 10000, mroce_mr_lkey(p.mb)), 0);
		assert_int_equal(post_recv(p.qb, 2, p.lb + 20000, 100, mroce_mr_lkey(p.mb)), 0);
		/* The first message's first packet is lost: the second message is whole first. */
		p.net->a.link.drop_psn = p.qa->snd_nxt;
		p.net->a.link.drop_armed = true;
		assert_int_equal(post(p.qa, MROCE_WR_SEND, 11, p.la, 5000, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
		assert_int_equal(post(p.qa, MROCE_WR_SEND, 12, p.la, 50, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
		w->want_a = 2;
		w->want_b = 2;
		assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
		assert_int_equal(w->wb[0].wr_id, unordered ? 2 : 1);
		assert_int_equal(w->wb[1].wr_id, unordered ? 1 : 2);
		assert_int_equal(w->wa[0].wr_id, unordered ? 12 : 11);
		assert_true(p.da->stats.retx_pkts >= 1);
		free(w);
		pair_close(&p);
	}
}

/*
 * Both ends at once: B keeps 32 READs of A in flight (re-posting each as it
 * completes), then A posts 4 READs of B, or 4 WRITEs to B. A's must not wait
 * for B to stop: a responder answering a steady stream of READs still sends
 * its own requests (they once went out only when no response was left to send).
 */
struct reads_both {
	struct waiter	w;		/* first: collected() takes it */
	int		b_posted, b_cap, a_want;
};

static bool b_keeps_reading(void *ctx)
{
	struct reads_both *r = ctx;
	struct pair *p = r->w.p;

	collected(&r->w);
	while (r->b_posted - r->w.nb < 32 && r->b_posted < r->b_cap) {
		assert_int_equal(post(p->qb, MROCE_WR_RDMA_READ, (__u64)r->b_posted, p->lb + BUF / 2, 16384,
				      mroce_mr_lkey(p->mb), (__u64)(unsigned long)p->la, mroce_mr_rkey(p->ma), 0), 0);
		r->b_posted++;
	}
	return (r->a_want ? r->w.na >= r->a_want : r->w.nb >= r->w.want_b) || r->w.nb >= r->b_cap;
}

static void test_reads_both_ways(void **state)
{
	static const enum mroce_wr_opcode ops[] = { MROCE_WR_RDMA_READ, MROCE_WR_RDMA_WRITE };

	(void)state;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		bool read = ops[k] == MROCE_WR_RDMA_READ;
		struct pair p;
		struct reads_both *r = calloc(1, sizeof(*r));

		pair_open(&p, 950 + k, NULL, NULL);
		pair_connect(&p);
		r->w.p = &p;
		r->b_cap = 3000;
		fill(p.la, BUF / 2, 7);
		fill(p.lb, BUF / 2, 9);
		/* B's READs first, until its stream is steady */
		r->w.want_b = 64;
		assert_int_equal(sim_run(p.net, p.da, p.db, b_keeps_reading, r, 10000000), 0);
		assert_true(r->w.nb < r->b_cap);
		/* then A's, while B goes on: READs of B's first 16 KiB, or WRITEs of A's to B's second quarter */
		for (int i = 0; i < 4; i++)
			assert_int_equal(post(p.qa, ops[k], 100 + (__u64)i, read ? p.la + BUF / 2 + i * 16384 : p.la,
					      16384, mroce_mr_lkey(p.ma),
					      (__u64)(unsigned long)(read ? p.lb : p.lb + BUF / 4 + i * 16384),
					      mroce_mr_rkey(p.mb), 0), 0);
		r->a_want = 4;
		assert_int_equal(sim_run(p.net, p.da, p.db, b_keeps_reading, r, 60000000), 0);
		printf("  A: %d of 4 %ss done while B did %d READs (B still reading: %s)\n", r->w.na,
		       read ? "READ" : "WRITE", r->w.nb, r->w.nb < r->b_cap ? "yes" : "no");
		assert_int_equal(r->w.na, 4);
		assert_true(r->w.nb < r->b_cap);	/* before B stopped */
		for (int i = 0; i < 4; i++) {
			assert_int_equal(r->w.wa[i].status, MROCE_WC_SUCCESS);
			assert_int_equal(r->w.wa[i].opcode, read ? MROCE_WC_RDMA_READ : MROCE_WC_RDMA_WRITE);
			if (read)
				assert_memory_equal(p.la + BUF / 2 + i * 16384, p.lb, 16384);
			else
				assert_memory_equal(p.lb + BUF / 4 + i * 16384, p.la, 16384);
		}
		for (int i = 0; i < r->w.nb; i++)
			assert_int_equal(r->w.wb[i].status, MROCE_WC_SUCCESS);
		assert_memory_equal(p.lb + BUF / 2, p.la, 16384);
		free(r);
		pair_close(&p);
	}
}

/* 256 QPs at once between two devices, each with its own transfer, window at its largest. */
static void test_many_qps(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .max_inflight = MROCE_RXWIN_PSNS - 64, .sq_depth = 4, .rq_depth = 4);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	struct mroce_qp *qa[256], *qb[256];

	(void)state;
	pair_open(&p, 800, NULL, NULL);
	w->p = &p;
	p.net->a.link.loss_ppm = 10000;
	for (int i = 0; i < 256; i++) {
		attr.send_cq = attr.recv_cq = p.cqa;
		assert_int_equal(mroce_create_qp(p.da, &attr, &qa[i]), 0);
		attr.send_cq = attr.recv_cq = p.cqb;
		assert_int_equal(mroce_create_qp(p.db, &attr, &qb[i]), 0);
		assert_int_equal(sim_connect(qa[i], qb[i]), 0);
	}
	fill(p.la, BUF, 3);
	for (int i = 0; i < 256; i++)
		assert_int_equal(post(qa[i], MROCE_WR_RDMA_WRITE, (__u64)i, p.la + i * 2048, i == 0 ? BUF / 2 : 2048,
				      mroce_mr_lkey(p.ma), (__u64)(unsigned long)p.lb + (i ? BUF / 2 + i * 2048 : 0),
				      mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = 256;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 60000000), 0);
	for (int i = 0; i < 256; i++)
		assert_int_equal(w->wa[i].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p.lb, p.la, BUF / 2);
	/* Fixed per-QP state, as docs/transport.md quotes it. */
	printf("  per-QP state: %zu bytes + %zu per send-queue entry + %zu per receive-queue entry\n",
	       sizeof(struct mroce_qp), sizeof(struct mroce_swqe), sizeof(struct mroce_rwqe));
	for (int i = 0; i < 256; i++) {
		mroce_destroy_qp(qa[i]);
		mroce_destroy_qp(qb[i]);
	}
	free(w);
	pair_close(&p);
}

/* Scatter-gather lists on both sides: gathered in order, scattered in order. */
static void test_scatter_gather(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u32 lk, rk;

	(void)state;
	pair_open(&p, 950, NULL, NULL);
	pair_connect(&p);
	w->p = &p;
	lk = mroce_mr_lkey(p.ma);
	rk = mroce_mr_rkey(p.mb);
	fill(p.la, BUF, 21);
	{
		struct mroce_sge src[3] = { { (__u64)(unsigned long)p.la, 100, lk },
					    { (__u64)(unsigned long)p.la + 1000, 0, lk },
					    { (__u64)(unsigned long)p.la + 2000, 5000, lk } };
		struct mroce_sge dst[2] = { { (__u64)(unsigned long)p.lb, 3000, mroce_mr_lkey(p.mb) },
					    { (__u64)(unsigned long)p.lb + 10000, 3000, mroce_mr_lkey(p.mb) } };
		struct mroce_recv_wr rwr = { .wr_id = 1, .sg_list = dst, .num_sge = 2 };
		struct mroce_send_wr swr = { .wr_id = 2, .opcode = MROCE_WR_SEND, .sg_list = src, .num_sge = 3 };
		struct mroce_sge rd[2] = { { (__u64)(unsigned long)p.la + 100000, 1234, lk },
					   { (__u64)(unsigned long)p.la + 200000, 4321, lk } };
		struct mroce_send_wr rwr2 = { .wr_id = 3, .opcode = MROCE_WR_RDMA_READ, .sg_list = rd,
					      .num_sge = 2, .remote_addr = (__u64)(unsigned long)p.lb + 50000,
					      .rkey = rk };

		fill(p.lb + 50000, 5555, 22);
		assert_int_equal(mroce_post_recv(p.qb, &rwr), 0);
		assert_int_equal(mroce_post_send(p.qa, &swr), 0);
		assert_int_equal(mroce_post_send(p.qa, &rwr2), 0);
	}
	w->want_a = 2;
	w->want_b = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 10000000), 0);
	assert_int_equal(w->wa[0].status, MROCE_WC_SUCCESS);
	assert_int_equal(w->wa[1].status, MROCE_WC_SUCCESS);
	assert_int_equal(w->wb[0].byte_len, 5100);
	assert_memory_equal(p.lb, p.la, 100);
	assert_memory_equal(p.lb + 100, p.la + 2000, 2900);
	assert_memory_equal(p.lb + 10000, p.la + 4900, 2100);
	assert_memory_equal(p.la + 100000, p.lb + 50000, 1234);
	assert_memory_equal(p.la + 200000, p.lb + 50000 + 1234, 4321);
	free(w);
	pair_close(&p);
}


/*
 * A window smaller than what the receiver gathers into one ACK (ack_every,
 * 16): each window's last packet asks for its ACK (ACK_REQ), so the sender
 * goes on a round trip later, not after the receiver's delayed-ACK time.
 * 1 MiB in windows of 2 packets over a 5 us link: a round trip of about
 * 10 us per window, where the delayed ACK held each for 50 us.
 * A window of 32 asks for none: the receiver's count sends its ACKs; nor
 * does one whose round trip is 2 delayed-ACK times or more.
 */
static void test_small_window_asks_for_acks(void **state)
{
	MROCE_OPTS(mroce_qp_attr, small, .max_inflight = 2);
	MROCE_OPTS(mroce_qp_attr, large, .max_inflight = 32);
	struct waiter *w = calloc(1, sizeof(*w));
	struct mroce_dev_stats sb;
	struct pair p;
	__u64 t, acks;

	(void)state;
	pair_open(&p, 1400, &small, NULL);
	pair_connect(&p);
	p.net->a.link = (struct sim_link){ .delay_us = 5 };
	p.net->b.link = (struct sim_link){ .delay_us = 5 };
	t = pair_write_n(&p, w, 1, 71, NULL);
	mroce_dev_stats(p.db, &sb);
	printf("  1 MiB in windows of 2: %llu us, %llu ACKs for %llu packets\n",
	       (unsigned long long)t, (unsigned long long)sb.acks_tx,
	       (unsigned long long)sb.rx_pkts);
	assert_true(t < sb.rx_pkts / 2 * 20);	/* under 20 us a window of 2 */
	assert_true(sb.acks_tx >= sb.rx_pkts / 2);
	acks = sb.acks_tx;
	/* the rule itself: a full window of 2 asks, unless the round trip is 2 delayed ACKs long */
	pthread_mutex_lock(&p.da->lock);
	{
		struct mroce_qp *qp = p.qa;
		__u32 nxt = qp->snd_nxt, srtt = qp->srtt_us;

		assert_int_equal(qp->snd_nxt, qp->snd_una);
		assert_false(mroce_window_fills(qp));	/* room for two */
		qp->snd_nxt = qp->snd_una + 1;
		assert_true(mroce_window_fills(qp));
		qp->srtt_us = 2 * qp->attr.ack_delay_us - 1;
		assert_true(mroce_window_fills(qp));
		qp->srtt_us = 2 * qp->attr.ack_delay_us;
		assert_false(mroce_window_fills(qp));
		qp->snd_nxt = nxt;
		qp->srtt_us = srtt;
	}
	pthread_mutex_unlock(&p.da->lock);
	pair_close(&p);

	pair_open(&p, 1410, &large, NULL);
	pair_connect(&p);
	p.net->a.link = (struct sim_link){ .delay_us = 5 };
	p.net->b.link = (struct sim_link){ .delay_us = 5 };
	pair_write_n(&p, w, 1, 72, NULL);
	mroce_dev_stats(p.db, &sb);
	printf("  1 MiB in windows of 32: %llu ACKs (%llu in windows of 2)\n",
	       (unsigned long long)sb.acks_tx, (unsigned long long)acks);
	assert_true(sb.acks_tx <= sb.rx_pkts / 8);
	free(w);
	pair_close(&p);
}
/*
 * A 1 Gbit/s bottleneck with a 64 KiB buffer, far below what a 512-packet
 * window puts in flight: without congestion control the queue overflows
 * and packets are resent; with ECN (marks above 16 KiB, or none: a plain
 * tail-drop queue) or delay control the window shrinks to fit, and far
 * fewer packets are lost. Returns the packets resent; *pkts the packets sent.
 */
struct congested {
	__u64	retx, pkts, cuts, peak, us, drops, marked;
};

/*
 * read: A READs the 4 MiB instead, so the data is B's READ responses,
 * through the same bottleneck on B's side (the responder's window).
 */
static void congested_attr(const struct mroce_qp_attr *attr, bool mark, bool read,
			   struct congested *c)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	struct sim_port *link;
	struct mroce_dev *sender;

	pair_open(&p, 1000, attr, NULL);
	pair_connect(&p);
	w->p = &p;
	link = read ? &p.net->b : &p.net->a;
	sender = read ? p.db : p.da;
	link->link = (struct sim_link){ .delay_us = 10, .rate_mbps = 1000, .queue_bytes = 65536,
					.ecn_bytes = mark ? 16384 : 0 };
	fill(read ? p.lb : p.la, BUF, 31);
	for (int i = 0; i < 4; i++)
		assert_int_equal(read ?
				 post(p.qa, MROCE_WR_RDMA_READ, (__u64)i, p.la, BUF, mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0) :
				 post(p.qa, MROCE_WR_RDMA_WRITE, (__u64)i, p.la, BUF, mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = 4;
	c->us = p.net->now;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 60000000), 0);
	c->us = p.net->now - c->us;
	for (int i = 0; i < 4; i++)
		assert_int_equal(w->wa[i].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p.lb, p.la, BUF);
	c->retx = sender->stats.retx_pkts;
	c->pkts = sender->stats.tx_pkts;
	c->cuts = sender->stats.cc_cuts;
	c->peak = link->queue_peak;
	c->drops = link->dropped;
	c->marked = (read ? p.da : p.db)->stats.ecn_ce_rx;
	assert_true(mark ? c->marked > 0 : c->marked == 0);
	free(w);
	pair_close(&p);
}

static void congested_write_attr(const struct mroce_qp_attr *attr, bool mark, struct congested *c)
{
	congested_attr(attr, mark, false, c);
}

static __u64 congested_write(bool ecn, bool delay, __u64 *cuts, __u64 *peak, __u64 *us)
{
	MROCE_OPTS(mroce_qp_attr, attr, .max_inflight = 512, .cc_ecn = ecn, .cc_delay = delay,
		   .no_cc = !ecn && !delay);
	struct congested c;

	congested_write_attr(&attr, true, &c);
	*cuts = c.cuts;
	*peak = c.peak;
	*us = c.us;
	return c.retx;
}

static void test_congestion_control(void **state)
{
	__u64 cuts_none, cuts_ecn, cuts_delay, peak_none, peak_ecn, peak_delay, us[3];
	__u64 none = congested_write(false, false, &cuts_none, &peak_none, &us[0]);
	__u64 ecn = congested_write(true, false, &cuts_ecn, &peak_ecn, &us[1]);
	__u64 delay = congested_write(false, true, &cuts_delay, &peak_delay, &us[2]);

	(void)state;
	printf("  4 MiB through 1 Gbit/s, 64 KiB buffer: resent %llu without CC, %llu with ECN, "
	       "%llu with delay (window cuts %llu / %llu, queue peak %llu / %llu / %llu bytes, "
	       "%llu / %llu / %llu us)\n",
	       (unsigned long long)none, (unsigned long long)ecn, (unsigned long long)delay,
	       (unsigned long long)cuts_ecn, (unsigned long long)cuts_delay,
	       (unsigned long long)peak_none, (unsigned long long)peak_ecn,
	       (unsigned long long)peak_delay, (unsigned long long)us[0], (unsigned long long)us[1],
	       (unsigned long long)us[2]);
	assert_int_equal(cuts_none, 0);
	assert_true(none > 0);
	assert_true(cuts_ecn > 0);
	assert_true(cuts_delay > 0);
	/*
	 * Both signals at least halve the resends. (Most of what is left with
	 * them is the first window's burst, 512 packets into a 64 KiB buffer,
	 * before any signal can act; without CC the losses go on for the
	 * whole transfer.)
	 */
	assert_true(ecn * 2 < none);
	assert_true(delay * 2 < none);
}

/*
 * Congestion control is on by default: a 4 MiB WRITE with the library's
 * defaults through the same 1 Gbit/s bottleneck and 64 KiB queue resends
 * under 5% of its packets, whether the queue marks ECN above 16 KiB or is a
 * plain tail-drop queue that never marks (then the loss response acts,
 * since the lost packets' path shows the queue). The same with no_cc
 * resends more than it delivers.
 */
static void test_congestion_control_default(void **state)
{
	MROCE_OPTS(mroce_qp_attr, dflt);
	MROCE_OPTS(mroce_qp_attr, off, .no_cc = true);
	struct congested m, t, n;

	(void)state;
	congested_write_attr(&dflt, true, &m);
	congested_write_attr(&dflt, false, &t);
	congested_write_attr(&off, false, &n);
	printf("  4 MiB through 1 Gbit/s, 64 KiB queue, defaults: ECN marking: resent %llu of %llu "
	       "(%.2f%%), %llu cuts, %llu us; tail drop: resent %llu of %llu (%.2f%%), %llu cuts, "
	       "%llu us; no_cc, tail drop: resent %llu of %llu, %llu us\n",
	       (unsigned long long)m.retx, (unsigned long long)m.pkts, 100.0 * (double)m.retx / (double)m.pkts,
	       (unsigned long long)m.cuts, (unsigned long long)m.us,
	       (unsigned long long)t.retx, (unsigned long long)t.pkts, 100.0 * (double)t.retx / (double)t.pkts,
	       (unsigned long long)t.cuts, (unsigned long long)t.us,
	       (unsigned long long)n.retx, (unsigned long long)n.pkts, (unsigned long long)n.us);
	assert_true(m.retx * 20 < m.pkts);
	assert_true(t.retx * 20 < t.pkts);
	assert_true(m.cuts > 0 && t.cuts > 0);
	assert_int_equal(n.cuts, 0);
	assert_true(n.retx * 20 > n.pkts);	/* the queue does overflow without CC */
	/* and no slower for it: the link is used (within 5% of what no_cc took) */
	assert_true(m.us * 100 <= n.us * 105 && t.us * 100 <= n.us * 105);
	/* the same for READ responses: the responder's window is the QP's too */
	congested_attr(&dflt, true, true, &m);
	congested_attr(&dflt, false, true, &t);
	congested_attr(&off, false, true, &n);
	printf("  the same as READ responses: ECN marking: resent %llu of %llu, %llu us; tail drop: "
	       "resent %llu of %llu, %llu us; no_cc: resent %llu of %llu, %llu us\n",
	       (unsigned long long)m.retx, (unsigned long long)m.pkts, (unsigned long long)m.us,
	       (unsigned long long)t.retx, (unsigned long long)t.pkts, (unsigned long long)t.us,
	       (unsigned long long)n.retx, (unsigned long long)n.pkts, (unsigned long long)n.us);
	assert_true(m.retx * 20 < m.pkts);
	assert_true(t.retx * 20 < t.pkts);
	assert_true(n.retx * 20 > n.pkts);
	/* (tail drop: 6% slower than no_cc here, its losses' repair waits on the responder) */
	assert_true(m.us * 100 <= n.us * 105 && t.us * 100 <= n.us * 110);
}

/*
 * One of four paths dies: the scoreboard retires it within a few round
 * trips and the transfer finishes on the others; resends use other paths.
 */
/*
 * n WRITEs of the whole buffer from A to B on the simulated wire, run until
 * `until` is satisfied (NULL: every completion in); each must succeed, and B
 * must then hold A's bytes.
 */

static void test_dead_path_retired(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 4);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u64 pkts;

	(void)state;
	pair_open(&p, 1100, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	p.net->a.link = (struct sim_link){ .delay_us = 10, .path_step_us = 5 };
	p.net->a.link.dead_sport = (__u16)(49152 + (p.qa->route.sport + p.qa->paths[1].entropy) %
					   MROCE_ENTROPY_SPACE);
	pair_write_n(&p, w, 4, 41, NULL);
	pkts = p.da->stats.tx_pkts;
	printf("  dead path: %llu of %llu packets lost on it, %llu paths retired, %llu resent\n",
	       (unsigned long long)p.net->a.dead_drops, (unsigned long long)pkts,
	       (unsigned long long)p.da->stats.paths_retired, (unsigned long long)p.da->stats.retx_pkts);
	/* That path, and only it, was replaced... */
	assert_int_equal(p.da->stats.paths_retired, 1);
	/*
	 * ...after no more than three windows' share of its packets were lost
	 * on it. (The window counts what is in flight, not the span from the
	 * oldest hole: the other paths keep sending while the dead one's holes
	 * are repaired, so more leaves in the same few round trips than two
	 * spans' worth, which was the bound before.)
	 */
	assert_true(p.net->a.dead_drops <= 3 * 256 / 4);
	free(w);
	pair_close(&p);
}

/*
 * The scoreboard's delay rule. Paths 10..100 us apart are all kept; a path
 * 2 ms slower than the rest is retired, and stops getting packets.
 */
static void test_slow_path_retired(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 4);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u64 slow_before;

	(void)state;
	pair_open(&p, 1200, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	/* Sane spread: paths 0, 30, 60, 90 us slower than the fastest. */
	p.net->a.link = (struct sim_link){ .delay_us = 10, .path_step_us = 30 };
	pair_write_n(&p, w, 4, 51, NULL);
	assert_int_equal(p.da->stats.paths_retired, 0);

	/* Now path slot 2 is 2 ms slower than the others. */
	p.net->a.link.slow_extra_us = 2000;
	p.net->a.link.slow_sport = (__u16)(49152 + (p.qa->route.sport + p.qa->paths[2].entropy) %
					   MROCE_ENTROPY_SPACE);
	pair_write_n(&p, w, 4, 52, NULL);
	printf("  slow path: %llu frames took it, %llu paths retired, %llu resent\n",
	       (unsigned long long)p.net->a.slow_frames, (unsigned long long)p.da->stats.paths_retired,
	       (unsigned long long)p.da->stats.retx_pkts);
	assert_true(p.da->stats.paths_retired >= 1);
	/* Once retired, the slow source port is never used again. */
	slow_before = p.net->a.slow_frames;
	assert_int_not_equal(p.qa->paths[2].entropy, 2);
	pair_write_n(&p, w, 1, 53, NULL);
	assert_int_equal(p.net->a.slow_frames, slow_before);
	free(w);
	pair_close(&p);
}

/*
 * The largest window the receive window allows, sprayed over 8 paths of
 * different delay, 1% loss: a stream of 1 MiB WRITEs must keep going (a hole
 * at the window's start must not stall the QP into retry exhaustion).
 */
static void test_large_window_under_loss(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 8, .max_inflight = MROCE_RXWIN_PSNS - 64);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	struct mroce_dev_stats sa;

	(void)state;
	pair_open(&p, 1300, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	p.net->a.link = (struct sim_link){ .delay_us = 10, .path_step_us = 30, .jitter_us = 10,
					   .loss_ppm = 10000 };
	p.net->b.link = (struct sim_link){ .delay_us = 10, .path_step_us = 30, .loss_ppm = 5000 };
	assert_int_equal(p.qa->pkt_mask + 1, MROCE_RING_FIRST);
	pair_write_n(&p, w, 16, 61, NULL);
	mroce_dev_stats(p.da, &sa);
	printf("  window 896, 8 paths, 1%% loss: %llu packets, %llu resent, %llu timeouts, %llu paths retired, %u records\n",
	       (unsigned long long)sa.tx_pkts, (unsigned long long)sa.retx_pkts,
	       (unsigned long long)sa.rto_events, (unsigned long long)sa.paths_retired,
	       p.qa->pkt_mask + 1);
	/* the packet records grew with the window, to the ring's size at most (ring.c) */
	assert_int_equal(p.qa->pkt_mask + 1, MROCE_PKT_RING);
	free(w);
	pair_close(&p);
}

/*
 * A route dies in the middle of a stream: every source port that hashes onto
 * it (a quarter of them, fresh entropy values included, ACKs included) is
 * lost from then on. The stream must go on to the end on the other routes.
 */
static bool kill_route_later(void *ctx)
{
	struct waiter *w = ctx;

	if (w->na >= 4 && !w->p->net->a.link.dead_mod) {
		w->p->net->a.link.dead_mod = 4;
		w->p->net->b.link.dead_mod = 4;
	}
	return one_each(ctx);
}

static void test_route_dies_mid_stream(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 8);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	struct mroce_dev_stats sa;

	(void)state;
	pair_open(&p, 1400, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	p.net->a.link = (struct sim_link){ .delay_us = 10, .path_step_us = 10, .jitter_us = 5 };
	p.net->b.link = p.net->a.link;
	pair_write_n(&p, w, 24, 71, kill_route_later);
	mroce_dev_stats(p.da, &sa);
	printf("  route dies mid-stream: %llu lost on it, %llu resent, %llu timeouts, %llu paths retired\n",
	       (unsigned long long)p.net->a.dead_drops, (unsigned long long)sa.retx_pkts,
	       (unsigned long long)sa.rto_events, (unsigned long long)sa.paths_retired);
	free(w);
	pair_close(&p);
}

/*
 * A single-path QP whose one route dies: no other slot to spray on, so after
 * two timeouts in a row it takes a fresh entropy value (a new source port,
 * hence another ECMP route) and the stream completes.
 */
static bool kill_sport_later(void *ctx)
{
	struct waiter *w = ctx;
	struct mroce_qp *qa = w->p->qa;

	if (w->na >= 2 && !w->p->net->a.link.dead_sport)
		w->p->net->a.link.dead_sport = (__u16)(49152 + (qa->route.sport + qa->paths[0].entropy) %
							MROCE_ENTROPY_SPACE);
	return one_each(ctx);
}

static void test_single_path_rotates_entropy(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 1);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));

	(void)state;
	pair_open(&p, 1500, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	p.net->a.link = (struct sim_link){ .delay_us = 10 };
	p.net->b.link = p.net->a.link;
	pair_write_n(&p, w, 8, 81, kill_sport_later);
	printf("  single path dies: %llu lost on it, %llu timeouts, entropy rotated %llu time(s)\n",
	       (unsigned long long)p.net->a.dead_drops, (unsigned long long)p.da->stats.rto_events,
	       (unsigned long long)p.da->stats.paths_retired);
	assert_true(p.net->a.dead_drops > 0);
	assert_int_equal(p.da->stats.paths_retired, 1);
	free(w);
	pair_close(&p);
}

/*
 * static_paths keeps the route as ECMP chose it (RoCEv2's behaviour): when
 * that route dies, the QP fails with retries exceeded after its timeouts
 * instead of moving, and nothing is ever retired.
 */
static void test_static_paths_never_rotate(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 1, .static_paths = true, .retry_cnt = 4);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	int failed = 0;

	(void)state;
	pair_open(&p, 1700, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	p.net->a.link = (struct sim_link){ .delay_us = 10 };
	fill(p.la, BUF, 95);
	for (int i = 0; i < 8; i++)
		assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, (__u64)i, p.la, BUF, mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = 8;
	assert_int_equal(sim_run(p.net, p.da, p.db, kill_sport_later, w, 60000000), 0);
	for (int i = 0; i < 8; i++)
		failed += w->wa[i].status != MROCE_WC_SUCCESS;
	assert_true(failed > 0);
	assert_int_equal(w->wa[2].status, MROCE_WC_RETRY_EXC_ERR);	/* the first after the route died */
	assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_ERR);
	assert_int_equal(p.da->stats.paths_retired, 0);
	free(w);
	pair_close(&p);
}

/*
 * The scoreboard's marks rule: one path slot's packets all come back
 * CE-marked (its queue builds), the others' never: that slot is retired,
 * and the new entropy value is not marked. Before that, each mark makes
 * the slot SKIP new packets for its RTT (wire v2's path states): 128
 * packets marked, against 312 without SKIP (a one-off run with
 * mroce_path_marked disabled).
 */
static void test_marked_path_retired(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 4);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u16 marked;

	(void)state;
	pair_open(&p, 1600, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	marked = (__u16)(49152 + (p.qa->route.sport + p.qa->paths[3].entropy) % MROCE_ENTROPY_SPACE);
	/* 10 Gbit/s: the transfer lasts many scoreboard epochs */
	p.net->a.link = (struct sim_link){ .delay_us = 10, .mark_sport = marked, .rate_mbps = 10000,
					   .queue_bytes = 1 << 22 };
	pair_write_n(&p, w, 4, 91, NULL);
	printf("  marked path: %llu packets marked, %llu echoed, %llu paths retired\n",
	       (unsigned long long)p.net->a.marked, (unsigned long long)p.qa->st.ecn_ce,
	       (unsigned long long)p.da->stats.paths_retired);
	assert_true(p.da->stats.paths_retired >= 1);
	assert_int_not_equal(p.qa->paths[3].entropy, 3);
	/* Every mark was seen by the sender, and there were few: the slot moved early. */
	assert_int_equal(p.qa->st.ecn_ce, p.net->a.marked);
	assert_true(p.net->a.marked < 3043 / 16);
	assert_true(p.qa->st.paths_skipped > 0);
	assert_true(p.qa->st.path_window_cuts > 0);	/* and its own window was trimmed */
	free(w);
	pair_close(&p);
}

/*
 * A path whose RTT rose (a queue on its route, or a slow host) and then
 * died: its last RTT samples stay frozen, and they must not keep it
 * looking congested (mroce_path_queued), which would exempt it from being
 * assumed bad and retired, while a quarter of the packets went on being
 * sent into it and resent, for the rest of the transfer (seen on the
 * emulated fabric: 40-90 thousand resends in 285 thousand packets).
 */
static void test_slow_then_dead_path_retired(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 4);
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	__u16 sport;
	__u64 resent;

	(void)state;
	pair_open(&p, 1700, &attr, NULL);
	pair_connect(&p);
	w->p = &p;
	/* 10 Gbit/s: 40 MiB take some 35 ms */
	p.net->a.link = (struct sim_link){ .delay_us = 20, .rate_mbps = 10000, .queue_bytes = 1 << 22 };
	p.net->b.link = (struct sim_link){ .delay_us = 20 };
	sport = (__u16)(49152 + (p.qa->route.sport + p.qa->paths[1].entropy) % MROCE_ENTROPY_SPACE);
	fill(p.la, BUF, 97);
	for (int i = 0; i < 40; i++)
		assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, (__u64)i, p.la, BUF, mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	w->want_a = 40;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 3000), -ETIMEDOUT);
	/* slot 1's route slows to 3x its RTT, under the slow-path rule's bound ... */
	p.net->a.link.slow_sport = sport;
	p.net->a.link.slow_extra_us = 80;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 3000), -ETIMEDOUT);
	/* ... and then dies */
	p.net->a.link.dead_sport = sport;
	resent = p.qa->st.retx_pkts;
	assert_int_equal(sim_run(p.net, p.da, p.db, one_each, w, 60000000), 0);
	printf("  slow, then dead path: %llu resent after it died, %llu paths retired, %llu lost on it\n",
	       (unsigned long long)(p.qa->st.retx_pkts - resent),
	       (unsigned long long)p.da->stats.paths_retired, (unsigned long long)p.net->a.dead_drops);
	for (int i = 0; i < 40; i++)
		assert_int_equal(w->wa[i].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p.lb, p.la, BUF);
	assert_true(p.da->stats.paths_retired >= 1);
	/*
	 * What was in flight on it and what went on it until its frozen RTT
	 * stopped counting as a queue (two scoreboard epochs): 310 here. Before
	 * the fix: 6159, and it was never retired.
	 */
	assert_true(p.net->a.dead_drops <= 2 * 256);
	free(w);
	pair_close(&p);
}

/* The CQ's file descriptor is readable exactly while completions wait. */
static void test_cq_fd(void **state)
{
	struct pair p;
	struct waiter *w = calloc(1, sizeof(*w));
	struct pollfd pfd;
	struct mroce_wc wc;

	(void)state;
	pair_open(&p, 900, NULL, NULL);
	pair_connect(&p);
	pfd = (struct pollfd){ .fd = mroce_cq_fd(p.cqa), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, 1, p.la, 10, mroce_mr_lkey(p.ma),
			      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
	while (poll(&pfd, 1, 0) == 0) {
		mroce_dev_progress(p.da, 0);
		mroce_dev_progress(p.db, 0);
		p.net->now += 5;
	}
	assert_int_equal(mroce_poll_cq(p.cqa, 1, &wc), 1);
	assert_int_equal(wc.status, MROCE_WC_SUCCESS);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	free(w);
	pair_close(&p);
}

/*
 * The CQ's pollers take no device lock: an engine thread pushing while
 * another thread polls and sleeps on the fd must lose no entry, reorder
 * none, and never leave one waiting with the fd quiet (the eventfd
 * handshake in lib/cq.c). A lost wake-up shows as a poll() that times out
 * with entries still to come.
 */
#define CQ_RACE_N	200000

struct cq_race {
	struct mroce_cq	*cq;
	pthread_mutex_t	*lock;	/* the producer's side holds dev->lock, as the engine does */
};

static void *cq_race_producer(void *arg)
{
	struct cq_race *r = arg;

	for (__u32 i = 0; i < CQ_RACE_N; i++) {
		struct mroce_wc wc = { .wr_id = i, .status = MROCE_WC_SUCCESS };

		while (__atomic_load_n(&r->cq->tail, __ATOMIC_RELAXED) -
			       __atomic_load_n(&r->cq->head, __ATOMIC_ACQUIRE) >= r->cq->size)
			sched_yield();	/* full: wait for the poller, as a sized QP never needs to */
		pthread_mutex_lock(r->lock);
		mroce_cq_push(r->cq, &wc);
		pthread_mutex_unlock(r->lock);
		if (i % 64 == 0)
			sched_yield();	/* let the poller empty the ring and sleep now and then */
	}
	return NULL;
}

static void test_cq_poll_beside_engine(void **state)
{
	struct pair p;
	struct cq_race r;
	struct mroce_wc wc[16];
	pthread_t t;
	__u64 next = 0, sleeps = 0;

	(void)state;
	pair_open(&p, 901, NULL, NULL);
	assert_int_equal(mroce_create_cq(p.da, 64, &r.cq), 0);
	r.lock = &p.da->lock;
	assert_int_equal(pthread_create(&t, NULL, cq_race_producer, &r), 0);
	while (next < CQ_RACE_N) {
		int n = mroce_poll_cq(r.cq, 16, wc);

		assert_true(n >= 0);
		for (int k = 0; k < n; k++)
			assert_int_equal(wc[k].wr_id, next++);
		if (!n) {
			struct pollfd pfd = { .fd = mroce_cq_fd(r.cq), .events = POLLIN };

			/* 5 s: only a lost wake-up sleeps that long */
			assert_int_equal(poll(&pfd, 1, 5000), 1);
			sleeps++;
		}
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(mroce_poll_cq(r.cq, 16, wc), 0);
	assert_true(sleeps > 0);	/* the handshake was exercised, not only the ring */
	assert_int_equal(mroce_destroy_cq(r.cq), 0);
	pair_close(&p);
}

/* The same race made certain: a push lands after the poller drained the fd, before it clears its flag. */
static void cq_push_once(struct mroce_cq *cq)
{
	struct mroce_wc wc = { .wr_id = 77, .status = MROCE_WC_SUCCESS };

	cq->race_hook = NULL;
	mroce_cq_push(cq, &wc);
}

static void test_cq_push_while_emptied(void **state)
{
	struct pair p;
	struct mroce_cq *cq;
	struct mroce_wc wc = { .wr_id = 1 };
	struct pollfd pfd;

	(void)state;
	pair_open(&p, 902, NULL, NULL);
	assert_int_equal(mroce_create_cq(p.da, 16, &cq), 0);
	mroce_cq_push(cq, &wc);
	cq->race_hook = cq_push_once;
	assert_int_equal(mroce_poll_cq(cq, 1, &wc), 1);
	assert_int_equal(wc.wr_id, 1);
	pfd = (struct pollfd){ .fd = mroce_cq_fd(cq), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 100), 1);	/* the entry pushed in the window is announced */
	assert_int_equal(mroce_poll_cq(cq, 1, &wc), 1);
	assert_int_equal(wc.wr_id, 77);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(mroce_destroy_cq(cq), 0);
	pair_close(&p);
}

/* The device's own test-only fault injection (what the veth selftests use). */
static void test_device_fault_injection(void **state)
{
	(void)state;
	for (__u64 seed = 6001; seed <= 6200; seed++) {
		struct mroce_faults f = { .seed = (__u32)seed, .tx_drop_ppm = 5000, .rx_drop_ppm = 5000,
					  .tx_reorder_ppm = 100000, .rx_reorder_ppm = 100000,
					  .tx_dup_ppm = 20000, .rx_corrupt_ppm = 5000 };

		run_seed_faults(seed, seed & 1 ? MROCE_UNORDERED : MROCE_ORDERED, false, &f);
	}
}

/*
 * The window-based congestion control's epoch is the QP's RTT (cc.c
 * mroce_cc_epoch_len), no shorter than its host's latest scheduling stall
 * (at most 20 us of it) nor 2 us: a software path (RTTs of 20 us and more,
 * hosts that stall) keeps the 20 us floor, a 400 Gbit/s fabric's 4 us RTT
 * is its epoch. Slow start over 4 us RTTs doubles every 4 us, not 20.
 */
static void test_cc_epoch_follows_rtt(void **state)
{
	struct mroce_hdr ack = { 0 };
	struct pair p;
	struct mroce_qp *qp;
	__u64 now;

	(void)state;
	pair_open(&p, 3280, NULL, NULL);
	pair_connect(&p);
	qp = p.qa;
	pthread_mutex_lock(&p.da->lock);
	assert_string_equal(qp->cc->name, "default");
	p.da->stall_us = 0;
	qp->srtt_us = 4;
	assert_int_equal(mroce_cc_epoch_len(qp), 4);
	qp->srtt_us = 50;
	assert_int_equal(mroce_cc_epoch_len(qp), 50);
	qp->srtt_us = 0;
	assert_int_equal(mroce_cc_epoch_len(qp), 2);
	p.da->stall_us = 10;
	qp->srtt_us = 4;
	assert_int_equal(mroce_cc_epoch_len(qp), 10);
	p.da->stall_us = 300;	/* a host that stalls: the floor it always had */
	assert_int_equal(mroce_cc_epoch_len(qp), 20);
	qp->srtt_us = 30;
	assert_int_equal(mroce_cc_epoch_len(qp), 30);
	/* slow start over 4 us RTTs: an epoch every 4 us */
	p.da->stall_us = 0;
	qp->srtt_us = 4;
	qp->min_rtt_us = 4;
	qp->cc->init(qp);
	assert_int_equal(qp->cwnd_x256, 16 * 256);
	now = p.net->now + 1000;
	mroce_cc_on_ack(qp, &ack, 4, now);	/* the first epoch (from the QP's start) ends */
	assert_int_equal(qp->cwnd_x256, 32 * 256);
	mroce_cc_on_ack(qp, &ack, 4, now + 3);
	assert_int_equal(qp->cwnd_x256, 32 * 256);
	mroce_cc_on_ack(qp, &ack, 4, now + 4);
	assert_int_equal(qp->cwnd_x256, 64 * 256);
	mroce_cc_on_ack(qp, &ack, 4, now + 8);
	assert_int_equal(qp->cwnd_x256, 128 * 256);
	pthread_mutex_unlock(&p.da->lock);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_sizes),
		cmocka_unit_test(test_every_operation),
		cmocka_unit_test(test_random_seeds_ordered),
		cmocka_unit_test(test_random_seeds_unordered),
		cmocka_unit_test(test_random_seeds_go_back_n),
		cmocka_unit_test(test_device_fault_injection),
		cmocka_unit_test(test_protection),
		cmocka_unit_test(test_local_errors),
		cmocka_unit_test(test_queue_full),
		cmocka_unit_test(test_queues_grow_on_use),
		cmocka_unit_test(test_receiver_not_ready),
		cmocka_unit_test(test_receive_too_small),
		cmocka_unit_test(test_retry_exhaustion_one_qp),
		cmocka_unit_test(test_ordered_vs_unordered),
		cmocka_unit_test(test_many_qps),
		cmocka_unit_test(test_reads_both_ways),
		cmocka_unit_test(test_scatter_gather),
		cmocka_unit_test(test_congestion_control),
		cmocka_unit_test(test_congestion_control_default),
		cmocka_unit_test(test_small_window_asks_for_acks),
		cmocka_unit_test(test_cc_epoch_follows_rtt),
		cmocka_unit_test(test_dead_path_retired),
		cmocka_unit_test(test_slow_then_dead_path_retired),
		cmocka_unit_test(test_slow_path_retired),
		cmocka_unit_test(test_large_window_under_loss),
		cmocka_unit_test(test_route_dies_mid_stream),
		cmocka_unit_test(test_single_path_rotates_entropy),
		cmocka_unit_test(test_marked_path_retired),
		cmocka_unit_test(test_static_paths_never_rotate),
		cmocka_unit_test(test_cq_fd),
		cmocka_unit_test(test_cq_poll_beside_engine),
		cmocka_unit_test(test_cq_push_while_emptied),
	};

	return cmocka_run_group_tests_name("transport", tests, NULL, NULL);
}
