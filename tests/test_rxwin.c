// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Receive window arithmetic: the reader (mroce_rxwin_check, also run by the
 * XDP program) against the writer (lib/rxwin.c), across PSN wrap-around,
 * and against a reference model that never wraps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "mroce/mroce.h"
#include "mroce/wire.h"

#define W MROCE_RXWIN_PSNS

static void test_fresh_window(void **state)
{
	struct mroce_flow f = {};
	__u32 base = 5000;

	(void)state;
	mroce_rxwin_reset(&f, base);
	assert_int_equal(mroce_rxwin_check(&f, base), MROCE_RXWIN_NEW);
	assert_int_equal(mroce_rxwin_check(&f, base + W - 1), MROCE_RXWIN_NEW);
	assert_int_equal(mroce_rxwin_check(&f, base + W), MROCE_RXWIN_BEYOND);
	assert_int_equal(mroce_rxwin_check(&f, base + 0x7fffffff), MROCE_RXWIN_BEYOND);
	assert_int_equal(mroce_rxwin_check(&f, base - 1), MROCE_RXWIN_DUP);
	assert_int_equal(mroce_rxwin_check(&f, base - 0x80000000u), MROCE_RXWIN_DUP);
	assert_int_equal(mroce_rxwin_count(&f), 0);
	assert_true(W >= 256);
}

static void test_mark_and_advance(void **state)
{
	struct mroce_flow f = {};

	(void)state;
	mroce_rxwin_reset(&f, 100);
	assert_int_equal(mroce_rxwin_mark(&f, 102), MROCE_RXWIN_NEW);
	assert_int_equal(mroce_rxwin_mark(&f, 102), MROCE_RXWIN_DUP);
	assert_int_equal(mroce_rxwin_check(&f, 102), MROCE_RXWIN_DUP);
	assert_int_equal(mroce_rxwin_advance(&f), 100);	/* 100 still missing */
	assert_int_equal(mroce_rxwin_mark(&f, 100), MROCE_RXWIN_NEW);
	assert_int_equal(mroce_rxwin_advance(&f), 101);
	assert_int_equal(mroce_rxwin_mark(&f, 101), MROCE_RXWIN_NEW);
	assert_int_equal(mroce_rxwin_advance(&f), 103);
	assert_int_equal(mroce_rxwin_check(&f, 100), MROCE_RXWIN_DUP);
	assert_int_equal(mroce_rxwin_check(&f, 103), MROCE_RXWIN_NEW);
	assert_int_equal(mroce_rxwin_check(&f, 103 + W), MROCE_RXWIN_BEYOND);
	assert_int_equal(mroce_rxwin_mark(&f, 103 + W), MROCE_RXWIN_BEYOND);
	assert_int_equal(mroce_rxwin_count(&f), 0);
}

static void test_wraparound(void **state)
{
	struct mroce_flow f = {};
	__u32 base = 0xffffffff - 40;

	(void)state;
	mroce_rxwin_reset(&f, base);
	assert_int_equal(mroce_rxwin_check(&f, 5), MROCE_RXWIN_NEW);	/* past 2^32 */
	for (__u32 i = 0; i < 100; i++)
		assert_int_equal(mroce_rxwin_mark(&f, base + i), MROCE_RXWIN_NEW);
	assert_int_equal(mroce_rxwin_advance(&f), base + 100);
	assert_int_equal(mroce_rxwin_advance(&f), 59u);
	assert_int_equal(mroce_rxwin_check(&f, 0xffffffff), MROCE_RXWIN_DUP);
	assert_int_equal(mroce_rxwin_check(&f, 0), MROCE_RXWIN_DUP);
	assert_int_equal(mroce_rxwin_check(&f, 58), MROCE_RXWIN_DUP);
	assert_int_equal(mroce_rxwin_check(&f, 59), MROCE_RXWIN_NEW);
	assert_int_equal(mroce_rxwin_check(&f, 59 + W), MROCE_RXWIN_BEYOND);
}

/* A window filled completely moves by exactly its width; the words it grows into are clean. */
static void test_full_window_and_reuse(void **state)
{
	struct mroce_flow f = {};
	__u32 base = 64 * 7 + 13;

	(void)state;
	mroce_rxwin_reset(&f, base);
	for (int lap = 0; lap < 5; lap++) {
		for (__u32 i = W; i-- > 0;)	/* backwards: worst case for the advance */
			assert_int_equal(mroce_rxwin_mark(&f, base + i), MROCE_RXWIN_NEW);
		assert_int_equal(mroce_rxwin_count(&f), W);
		assert_int_equal(mroce_rxwin_advance(&f), base + W);
		base += W;
		assert_int_equal(mroce_rxwin_count(&f), 0);
		for (__u32 i = 0; i < W; i++)
			assert_int_equal(mroce_rxwin_check(&f, base + i), MROCE_RXWIN_NEW);
	}
}

/* Reference: absolute (never wrapping) sequence numbers and a plain array. */
#define REF_MAX 50000
static unsigned char ref_placed[REF_MAX + 2 * W];

static int ref_verdict(__u64 abs, __u64 ref_base)
{
	if (abs < ref_base)
		return MROCE_RXWIN_DUP;
	if (abs >= ref_base + W)
		return MROCE_RXWIN_BEYOND;
	return ref_placed[abs] ? MROCE_RXWIN_DUP : MROCE_RXWIN_NEW;
}

/*
 * An ACK's SACK at this point: bit i of word w is abs ref_base + 1 + 64w + i
 * placed, for the whole window beyond the base and nothing past its edge.
 */
static void check_sack(const struct mroce_flow *f, __u32 start, __u64 ref_base, unsigned int seed)
{
	__u64 sack[MROCE_SACK_WORDS];

	memset(sack, 0xa5, sizeof(sack));
	assert_int_equal(mroce_rxwin_sack(f, sack), start + (__u32)ref_base);
	for (__u32 i = 0; i < 64 * MROCE_SACK_WORDS; i++) {
		__u64 abs = ref_base + 1 + i;
		int want = abs < ref_base + W && ref_placed[abs];

		if ((int)(sack[i / 64] >> (i % 64) & 1) != want)
			fail_msg("seed %u: base abs %llu, sack bit %u is %d, model %d", seed,
				 (unsigned long long)ref_base, i, !want, want);
	}
}

static void run_model(unsigned int seed, __u32 start)
{
	struct mroce_flow f = {};
	__u64 ref_base = 0, placed = 0;

	srand(seed);
	memset(ref_placed, 0, sizeof(ref_placed));
	mroce_rxwin_reset(&f, start);
	while (ref_base < REF_MAX - W) {
		/* Place mostly near the front, sometimes anywhere in (or past) the window. */
		__u64 abs = ref_base + (rand() % 4 ? (__u64)(rand() % 64) : (__u64)(rand() % (W + 64)));
		int want = ref_verdict(abs, ref_base);
		__u32 old_base = f.rx_base;
		__u64 old_ref_base = ref_base;

		assert_int_equal(mroce_rxwin_mark(&f, start + (__u32)abs), want);
		if (want == MROCE_RXWIN_NEW) {
			ref_placed[abs] = 1;
			placed++;
		}
		if (rand() % 3 == 0) {
			while (ref_placed[ref_base] && ref_base < old_ref_base + W)
				ref_base++;
			assert_int_equal(mroce_rxwin_advance(&f), start + (__u32)ref_base);
			/*
			 * The XDP reader may combine the old base with the new
			 * words: whatever it concludes, "duplicate" must mean placed.
			 */
			for (__u64 a = old_ref_base; a < old_ref_base + W; a++) {
				struct mroce_flow stale = f;

				stale.rx_base = old_base;
				if (mroce_rxwin_check(&stale, start + (__u32)a) == MROCE_RXWIN_DUP &&
				    !ref_placed[a])
					fail_msg("seed %u: stale read dropped unplaced abs %llu", seed,
						 (unsigned long long)a);
			}
		}
		check_sack(&f, start, ref_base, seed);
		for (__u64 a = ref_base ? ref_base - 1 : 0; a < ref_base + W + 64; a += 7)
			if (mroce_rxwin_check(&f, start + (__u32)a) != ref_verdict(a, ref_base))
				fail_msg("seed %u: abs %llu verdict %d, model %d", seed,
					 (unsigned long long)a, mroce_rxwin_check(&f, start + (__u32)a),
					 ref_verdict(a, ref_base));
	}
	assert_true(placed >= ref_base);
}

static void test_against_model(void **state)
{
	(void)state;
	/* Starts chosen so the runs cross 2^32 at different points of a word. */
	run_model(1, 0);
	run_model(2, 0xffffffffu - 1000);
	run_model(3, 0xffffffffu - 63);
	run_model(4, 0x7ffffff0u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_window),
		cmocka_unit_test(test_mark_and_advance),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_full_window_and_reuse),
		cmocka_unit_test(test_against_model),
	};

	return cmocka_run_group_tests_name("rxwin", tests, NULL, NULL);
}
