// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Goodput under random loss, in virtual time (tests/sim.h): one QP with the
 * library's defaults and 4 paths (as mroce-perf runs it) over an ECMP fabric
 * of 4 FIFO routes delayed 10 / 40 / 70 / 100 us behind a 10 Gbit/s link
 * with a buffer deep enough for the QP's window (the clean runs drop
 * nothing), as the emulated fabric's benchmark (docs/benchmarks.md), with
 * the same loss on every route both ways: what loss costs is only what its
 * recovery stalls the window and what the resends take. Each figure is the bytes
 * acknowledged over 40 ms after 10 ms of warm-up, kept against the clean
 * figure of the same seed, for several seeds; issue 13's targets, asserted:
 * >= 0.99 of clean at 0.1%, >= 0.95 at 1%, >= 0.5 at 10%, fewer than one
 * timeout per 10^4 packets at 1%, and more than go-back-N on one path at
 * every loss rate. MROCE_LOSS_DEBUG=1 prints the QP's counters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include "pair.h"

#define WARM_US		10000
#define MEASURE_US	40000

struct run {
	struct waiter	w;
	__u64		t0, bytes0;
	int		more;
};

static bool keep_full(void *ctx)
{
	struct run *r = ctx;
	struct pair *p = r->w.p;

	collected(ctx);
	while (r->more && r->w.na + 8 > r->w.want_a) {
		assert_int_equal(post(p->qa, MROCE_WR_RDMA_WRITE, 0, p->la, BUF, mroce_mr_lkey(p->ma),
				      (__u64)(unsigned long)p->lb, mroce_mr_rkey(p->mb), 0), 0);
		r->w.want_a++;
		r->more--;
	}
	if (!r->bytes0 && p->net->now - r->t0 >= WARM_US)
		r->bytes0 = p->qa->st.acked_bytes + 1;
	return p->net->now - r->t0 >= WARM_US + MEASURE_US;
}

struct loss_run {
	double	gbps;
	__u64	tx, retx, rto, retired, lost_sim, psack_lost;
};

static struct loss_run loss_run(__u64 seed, __u32 loss_ppm, bool gbn)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = gbn ? 1 : 4, .go_back_n = gbn);
	struct run *r = calloc(1, sizeof(*r));
	struct loss_run out = {};
	struct pair p;

	pair_open(&p, seed, &attr, NULL);
	pair_connect(&p);
	p.net->a.link = (struct sim_link){ .delay_us = 10, .routes = 4, .path_step_us = 30,
					   .rate_mbps = 10000, .queue_bytes = 1 << 20,
					   .loss_ppm = loss_ppm };
	p.net->b.link = (struct sim_link){ .delay_us = 10, .routes = 4, .path_step_us = 30,
					   .loss_ppm = loss_ppm };
	r->w.p = &p;
	r->more = 100000;
	r->t0 = p.net->now;
	assert_int_equal(sim_run(p.net, p.da, p.db, keep_full, r, WARM_US + MEASURE_US + 1000), 0);
	out.gbps = (double)(p.qa->st.acked_bytes - (r->bytes0 - 1)) * 8 / MEASURE_US / 1000;
	out.tx = p.qa->st.tx_pkts;
	out.retx = p.qa->st.retx_pkts;
	out.rto = p.qa->st.rto_events;
	out.retired = p.qa->st.paths_retired;
	out.lost_sim = p.net->a.dropped;
	out.psack_lost = p.qa->st.psack_lost;
	if (getenv("MROCE_LOSS_DEBUG"))
		printf("    loss %u ppm: %.3f Gbit/s, tx %llu retx %llu rto %llu retired %llu "
		       "dropped %llu (a) %llu (b), dup %llu, srtt %u rttvar %u\n", loss_ppm, out.gbps,
		       (unsigned long long)out.tx, (unsigned long long)out.retx,
		       (unsigned long long)out.rto, (unsigned long long)out.retired,
		       (unsigned long long)p.net->a.dropped, (unsigned long long)p.net->b.dropped, (unsigned long long)p.db->stats.dup_pkts,
		       p.qa->srtt_us, p.qa->rttvar_us);
	free(r);
	pair_close(&p);
	return out;
}

static void test_goodput_under_loss(void **state)
{
	static const __u32 ppm[] = { 1000, 10000, 100000 };
	static const double want[] = { 0.99, 0.95, 0.5 };

	(void)state;
	for (__u64 seed = 7; seed < 13; seed++) {
		struct loss_run clean = loss_run(seed, 0, false);

		printf("  seed %llu, clean: %.3f Gbit/s\n", (unsigned long long)seed, clean.gbps);
		for (unsigned i = 0; i < sizeof(ppm) / sizeof(ppm[0]); i++) {
			struct loss_run l = loss_run(seed, ppm[i], false);
			struct loss_run g = loss_run(seed, ppm[i], true);

			printf("  %4.1f%% loss: %.3f Gbit/s = %.2fx clean (want >= %.2f), %llu resent of "
			       "%llu sent (%llu found by the per-path SACK), %llu timeouts, %llu paths "
			       "retired; go-back-N %.3f Gbit/s\n",
			       ppm[i] / 10000.0, l.gbps, l.gbps / clean.gbps, want[i],
			       (unsigned long long)l.retx, (unsigned long long)l.tx,
			       (unsigned long long)l.psack_lost, (unsigned long long)l.rto,
			       (unsigned long long)l.retired, g.gbps);
			assert_true(l.gbps >= want[i] * clean.gbps);
			assert_true(l.gbps > g.gbps);
			if (ppm[i] == 10000)
				assert_true(l.rto * 10000 < l.tx);
		}
	}
}

/*
 * Go-back-N keeps only the next PSN: the receiver must NACK every gap, even
 * when the NACK or the packet resent for it is lost too, or each loss waits
 * for the sender's timer, doubling. A 1 MiB READ and a 1 MiB WRITE over one
 * route, 2% loss both ways: each completes in a few round trips per loss,
 * and the sender resends a bounded number of windows.
 */
static void test_go_back_n_recovers_by_nack(void **state)
{
	static const enum mroce_wr_opcode ops[] = { MROCE_WR_RDMA_READ, MROCE_WR_RDMA_WRITE };

	(void)state;
	for (__u64 seed = 1; seed <= 6; seed++) {
		for (unsigned i = 0; i < 2; i++) {
			MROCE_OPTS(mroce_qp_attr, attr, .paths = 1, .go_back_n = true);
			struct waiter *w = calloc(1, sizeof(*w));
			struct mroce_dev_stats sa, sb;
			struct pair p;
			__u64 t0, took, tx, retx, rto;

			pair_open(&p, seed, &attr, NULL);
			pair_connect(&p);
			p.net->a.link = (struct sim_link){ .delay_us = 10, .rate_mbps = 10000,
							   .queue_bytes = 4 << 20, .loss_ppm = 20000 };
			p.net->b.link = p.net->a.link;
			w->p = &p;
			fill(p.lb, BUF, (__u32)seed);
			fill(p.la, BUF, (__u32)seed + 1);
			assert_int_equal(post(p.qa, ops[i], 1, p.la, BUF, mroce_mr_lkey(p.ma),
					      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
			w->want_a = 1;
			t0 = p.net->now;
			assert_int_equal(sim_run(p.net, p.da, p.db, collected, w, 10000000), 0);
			took = p.net->now - t0;
			assert_int_equal(w->wa[0].status, MROCE_WC_SUCCESS);
			assert_memory_equal(p.la, p.lb, BUF);
			mroce_dev_stats(p.da, &sa);
			mroce_dev_stats(p.db, &sb);
			/* the data's sender: B answers a READ, A sends a WRITE */
			tx = i ? sa.tx_pkts : sb.tx_pkts;
			retx = i ? sa.retx_pkts : sb.retx_pkts;
			rto = sa.rto_events + sb.rto_events;
			printf("  seed %llu %s: %llu us, %llu packets sent, %llu resent, %llu timeouts, "
			       "NACKs %llu/%llu\n", (unsigned long long)seed, i ? "WRITE" : "READ",
			       (unsigned long long)took, (unsigned long long)tx,
			       (unsigned long long)retx, (unsigned long long)rto,
			       (unsigned long long)(sa.nacks_tx + sb.nacks_tx),
			       (unsigned long long)(sa.nacks_rx + sb.nacks_rx));
			/* gaps are NACKed: timeouts are the exception, not the means */
			assert_true(sa.nacks_tx + sb.nacks_tx > 0);
			assert_true(rto < sa.nacks_rx + sb.nacks_rx);
			assert_true(took < 50000);
			assert_true(retx < 20 * (tx - retx));
			free(w);
			pair_close(&p);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_goodput_under_loss),
		cmocka_unit_test(test_go_back_n_recovers_by_nack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
