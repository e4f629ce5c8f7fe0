// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reordering is not loss (lib/reorder.c), on the simulated wire (no root):
 * a WRITE sprayed over routes that reorder across and inside themselves,
 * by up to many RTTs, with no loss at all, resends next to nothing and
 * retires no route; the window it learned from that shrinks again once
 * the routes stop reordering; on a wire that never reorders, loss is found
 * exactly as fast as without the rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#define BUF	(1 << 20)
#include "pair.h"
#include "../lib/eng_int.h"

struct outcome {
	__u64	us, tx, retx, retired, rto, spurious, dropped;
	__u32	window_us;
};

/* 16 MiB WRITE from A to B over `paths` slots on these links; every byte checked. */
static struct outcome write_16m(__u64 seed, __u32 paths, struct sim_link fwd, struct sim_link back,
			      bool no_cc)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = paths, .no_cc = no_cc);
	struct waiter *w = calloc(1, sizeof(*w));
	struct mroce_qp_stats st = { .sz = sizeof(st) };
	struct outcome o;
	struct pair p;

	pair_open(&p, seed, &attr, NULL);
	pair_connect(&p);
	p.net->a.link = fwd;
	p.net->b.link = back;
	o.us = pair_write_n(&p, w, 16, (__u32)seed, NULL);
	assert_int_equal(mroce_qp_query_stats(p.qa, &st), 0);
	o.tx = st.tx_pkts;
	o.retx = st.retx_pkts;
	o.retired = st.paths_retired;
	o.rto = st.rto_events;
	o.spurious = st.spurious_losses;
	o.window_us = st.reorder_window_us;
	o.dropped = p.net->a.dropped + p.net->a.dead_drops;
	free(w);
	pair_close(&p);
	return o;
}

static void show(const char *what, const struct outcome *o)
{
	printf("  %-44s %6llu us, %llu sent, %llu resent (%.2f%%), %llu proven spurious, window %u us, "
	       "%llu paths retired, %llu timeouts\n", what, (unsigned long long)o->us,
	       (unsigned long long)o->tx, (unsigned long long)o->retx, 100.0 * (double)o->retx / (double)o->tx,
	       (unsigned long long)o->spurious, o->window_us, (unsigned long long)o->retired,
	       (unsigned long long)o->rto);
}

/*
 * No loss; 16 routes 0-75 us apart (path_step 5: the slots' base delays
 * differ, so spraying reorders across them), each also jittering by up to
 * 60, 150 or 300 us both ways (base RTT 20 us: 3 to 15 RTTs of reordering
 * inside every route). Before the window was learned, the per-path rule
 * took every overtaken copy for lost: 16 routes jittering 150 and 300 us
 * resent 51.8% and 57.6% of the packets (a one-off run of the same WRITE).
 */
static void test_reordering_is_not_loss(void **state)
{
	static const __u32 jitter[] = { 0, 60, 150, 300 };

	(void)state;
	for (unsigned i = 0; i < 2 * sizeof(jitter) / sizeof(jitter[0]); i++) {
		bool no_cc = i >= sizeof(jitter) / sizeof(jitter[0]);	/* the window full at once too */
		__u32 j = jitter[i % (sizeof(jitter) / sizeof(jitter[0]))];

		for (__u64 seed = 1; seed <= 3; seed++) {
			struct sim_link fwd = { .delay_us = 10, .path_step_us = 5, .jitter_us = j };
			struct sim_link back = { .delay_us = 10, .jitter_us = j };
			struct outcome o = write_16m(4200 + seed, 16, fwd, back, no_cc);
			char what[80];

			snprintf(what, sizeof(what), "16 routes 0-75 us apart, jitter %u us%s, seed %llu",
				 j, no_cc ? ", no CC" : "", (unsigned long long)seed);
			show(what, &o);
			assert_int_equal(o.dropped, 0);
			assert_true(o.retx * 100 < o.tx);	/* < 1% resent */
			assert_int_equal(o.retired, 0);
			assert_int_equal(o.rto, 0);
			if (j >= 60)	/* it did reorder inside routes, and that was learned */
				assert_true(o.window_us >= j / 2);
		}
	}
}

/* The same inside one route only: a single slot whose copies overtake each other. */
static void test_one_route_reordering(void **state)
{
	struct sim_link fwd = { .delay_us = 10, .jitter_us = 60 }, back = { .delay_us = 10 };
	struct outcome o = write_16m(4300, 1, fwd, back, false);

	(void)state;
	show("one route, jitter 60 us", &o);
	assert_true(o.retx * 100 < 2 * o.tx);	/* < 2%: one slot has no other to learn from */
	assert_int_equal(o.rto, 0);
	assert_true(o.window_us >= 30);
}

/*
 * Routes that never reorder: the rule never fires and never grows the
 * window, so loss is found exactly as before. Without congestion control
 * (loss detection alone), 1% loss costs the same resends and the same time
 * as the code without the rule: 987 us over 16 slots and 1000 us over one;
 * with the default congestion control, the same resends too.
 */
static void test_loss_found_as_fast(void **state)
{
	struct sim_link fwd = { .delay_us = 10, .loss_ppm = 10000 }, back = { .delay_us = 10 };

	(void)state;
	for (int cc = 0; cc < 2; cc++) {
		struct outcome m = write_16m(4242, 16, fwd, back, !cc);
		struct outcome s = write_16m(4242, 1, fwd, back, !cc);

		show(cc ? "16 routes in order, 1% loss, default CC" : "16 routes in order, 1% loss, no CC", &m);
		show(cc ? "one route in order, 1% loss, default CC" : "one route in order, 1% loss, no CC", &s);
		assert_int_equal(m.spurious, 0);
		assert_int_equal(m.window_us, 0);
		assert_int_equal(s.spurious, 0);
		assert_int_equal(s.window_us, 0);
		if (!cc) {
			assert_true(m.us <= 1000);
			assert_true(s.us <= 1010);
		}
		assert_true(m.retx <= m.dropped + 8);
		assert_true(s.retx <= s.dropped + 8);
	}
}

/*
 * A rehash that is over: the window learned from a reordering phase halves
 * once 16 losses in a row proved real, so later losses are found sooner.
 */
static void test_window_decays(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .paths = 16);
	struct waiter *w = calloc(1, sizeof(*w));
	struct mroce_qp_stats st = { .sz = sizeof(st) };
	struct pair p;
	__u32 learned = 0;


	(void)state;
	pair_open(&p, 4400, &attr, NULL);
	pair_connect(&p);
	p.net->a.link = (struct sim_link){ .delay_us = 10, .jitter_us = 150 };
	p.net->b.link = (struct sim_link){ .delay_us = 10, .jitter_us = 150 };
	pair_write_n(&p, w, 8, 3, NULL);
	assert_int_equal(mroce_qp_query_stats(p.qa, &st), 0);
	learned = st.reorder_window_us;
	p.net->a.link = (struct sim_link){ .delay_us = 10, .loss_ppm = 20000 };
	p.net->b.link = (struct sim_link){ .delay_us = 10 };
	pair_write_n(&p, w, 16, 4, NULL);
	assert_int_equal(mroce_qp_query_stats(p.qa, &st), 0);
	printf("  window learned under 150 us of jitter: %u us; after 16 MiB in order with 2%% loss: %u us\n",
	       learned, st.reorder_window_us);
	assert_true(learned >= 75);
	assert_true(st.reorder_window_us * 4 <= learned);
	free(w);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reordering_is_not_loss),
		cmocka_unit_test(test_one_route_reordering),
		cmocka_unit_test(test_loss_found_as_fast),
		cmocka_unit_test(test_window_decays),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
