// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce-perf's figures and text: the latency columns from known samples,
 * per-second intervals and the peak from a made-up completion timeline,
 * and perftest's headers and rows, byte for byte where perftest fixes them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "../perf/report.h"

/* What fn prints, in a heap copy of its own (the caller frees it). */
static char *capture(void (*fn)(FILE *, void *), void *arg)
{
	char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	size_t n;

	assert_non_null(f);
	fn(f, arg);
	n = (size_t)ftell(f);
	fclose(f);
	assert_true(n < sizeof(buf));
	buf[n] = 0;
	return strdup(buf);
}

static void test_lat_summary(void **state)
{
	double v[1000];
	struct perf_lat_summary s;

	(void)state;
	/* 1000 samples 1..1000 us, shuffled */
	for (int i = 0; i < 1000; i++)
		v[i] = (double)((i * 7919) % 1000 + 1);
	perf_lat_summarize(v, 1000, &s);
	assert_true(s.min == 1);
	assert_true(s.max == 1000);
	assert_true(s.typical == 501);		/* the median: sample n/2 of the sorted ones */
	assert_true(s.avg == 500.5);
	assert_true(fabs(s.stdev - sqrt((1000.0 * 1000 - 1) / 12)) < 1e-9);
	assert_true(s.p99 == 990);
	assert_true(s.p999 == 999);
	for (int i = 1; i < 1000; i++)
		assert_true(v[i - 1] <= v[i]);	/* sorted in place */
	/* one sample: every column is it */
	v[0] = 3.5;
	perf_lat_summarize(v, 1, &s);
	assert_true(s.min == 3.5 && s.max == 3.5 && s.typical == 3.5 && s.avg == 3.5 && s.p999 == 3.5);
	assert_true(s.stdev == 0);
	/* none: zeros, not garbage */
	memset(&s, 0x55, sizeof(s));
	perf_lat_summarize(v, 0, &s);
	assert_true(s.min == 0 && s.max == 0 && s.avg == 0 && s.p99 == 0);
}

static void test_meter(void **state)
{
	struct perf_meter m = { 0 };
	const struct perf_interval *iv;
	__u64 ops = 0;
	int closed = 0;

	(void)state;
	perf_meter_start(&m, 100.0, 4096);
	/* 1000 ops/s for 1.5 s in 1 ms steps, then 3000 ops/s for 0.5 s */
	for (int ms = 1; ms <= 2000; ms++) {
		ops += ms <= 1500 ? 1 : 3;
		iv = perf_meter_tick(&m, 100.0 + ms / 1000.0, ops);
		if (iv) {
			closed++;
			assert_true(fabs(iv->start - (closed - 1)) < 1e-6);
			assert_true(fabs(iv->end - closed) < 1e-6);
		}
	}
	assert_int_equal(closed, 2);
	perf_meter_finish(&m, 100.0 + 2.25, ops);	/* 0.25 s without completions */
	assert_int_equal(m.niv, 3);
	assert_int_equal(m.iv[0].ops, 1000);
	assert_int_equal(m.iv[0].bytes, 1000 * 4096);
	assert_int_equal(m.iv[1].ops, 500 + 1500);
	assert_int_equal(m.iv[2].ops, 0);
	assert_true(fabs(m.iv[2].end - 2.25) < 1e-6 && fabs(m.iv[2].start - 2.0) < 1e-6);
	/* the peak is the best 100 ms window's: 3000 ops/s, not the 1250 average */
	assert_true(fabs(perf_meter_peak(&m, ops, 2.25) - 3000) < 1);
	perf_meter_free(&m);
	/* a tail shorter than PERF_TAIL joins the last second */
	perf_meter_start(&m, 0, 10);
	assert_non_null(perf_meter_tick(&m, 1.0, 100));
	assert_null(perf_meter_tick(&m, 1.05, 104));
	perf_meter_finish(&m, 1.05, 105);
	assert_int_equal(m.niv, 1);
	assert_int_equal(m.iv[0].ops, 105);
	assert_int_equal(m.iv[0].bytes, 1050);
	assert_true(m.iv[0].start == 0 && fabs(m.iv[0].end - 1.05) < 1e-9);
	perf_meter_free(&m);
	/* a run shorter than a window: the peak is the average */
	perf_meter_start(&m, 0, 8);
	assert_null(perf_meter_tick(&m, 0.05, 10));
	perf_meter_finish(&m, 0.05, 10);
	assert_int_equal(m.niv, 1);
	assert_true(fabs(perf_meter_peak(&m, 10, 0.05) - 200) < 1e-9);
	perf_meter_free(&m);
}

static void bw_columns(FILE *f, void *gbits)
{
	perf_print_columns(f, true, *(bool *)gbits);
	perf_print_bw_row(f, 65536, 12345, 2.5 * PERF_MB * 1000, 2.0 * PERF_MB * 1000, 0.032,
			  *(bool *)gbits);
}

static void lat_columns(FILE *f, void *arg)
{
	struct perf_lat_summary s = { .min = 0.88, .max = 6.84, .typical = 0.98, .avg = 1.03,
				      .stdev = 0.2, .p99 = 1.21, .p999 = 5.42 };

	(void)arg;
	perf_print_columns(f, false, false);
	perf_print_lat_row(f, 2, 20000, &s);
}

/* The header rows are perftest's own, so its parsers find them. */
static void test_columns(void **state)
{
	bool gbits = false;
	char *t = capture(bw_columns, &gbits), *row;
	double peak, avg, mpps;
	unsigned size;
	unsigned long long iters;

	(void)state;
	assert_non_null(strstr(t, "\n #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"));
	assert_null(strstr(t, "t_min"));		/* no latency columns on a bandwidth test */
	row = strstr(t, "\n 65536 ");
	assert_non_null(row);
	assert_int_equal(sscanf(row, " %u %llu %lf %lf %lf", &size, &iters, &peak, &avg, &mpps), 5);
	assert_int_equal(size, 65536);
	assert_int_equal(iters, 12345);
	assert_true(peak == 2500.00 && avg == 2000.00 && mpps == 0.032);
	free(t);
	/* --report_gbits: 2000 MiB/s is 16.78 Gbit/s */
	gbits = true;
	t = capture(bw_columns, &gbits);
	assert_non_null(strstr(t, " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"));
	row = strstr(t, "\n 65536 ");
	assert_int_equal(sscanf(row, " %u %llu %lf %lf %lf", &size, &iters, &peak, &avg, &mpps), 5);
	assert_true(fabs(avg - 2000.0 * PERF_MB * 8 / 1e9) < 0.006);
	assert_true(fabs(peak - 2500.0 * PERF_MB * 8 / 1e9) < 0.006);
	free(t);
	t = capture(lat_columns, NULL);
	assert_non_null(strstr(t, "\n #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
				  "t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n"));
	assert_null(strstr(t, "BW"));
	row = strstr(t, "\n 2 ");
	assert_non_null(row);
	{
		double c[7];

		assert_int_equal(sscanf(row, " %u %llu %lf %lf %lf %lf %lf %lf %lf", &size, &iters, &c[0],
					&c[1], &c[2], &c[3], &c[4], &c[5], &c[6]), 9);
		assert_true(c[0] == 0.88 && c[1] == 6.84 && c[2] == 0.98 && c[3] == 1.03 && c[4] == 0.20 &&
			    c[5] == 1.21 && c[6] == 5.42);
	}
	free(t);
}

static void one_interval(FILE *f, void *arg)
{
	struct perf_interval iv = { .start = 1, .end = 2, .ops = 100, .bytes = 100 * PERF_MB };

	perf_print_interval(f, &iv, *(bool *)arg);
}

static void test_interval_line(void **state)
{
	bool gbits = false;
	char *t = capture(one_interval, &gbits);

	(void)state;
	assert_non_null(strstr(t, "1.00-   2.00 s]"));
	assert_non_null(strstr(t, " 100.00 MB/sec  0.000100 Mpps"));
	free(t);
	gbits = true;
	t = capture(one_interval, &gbits);
	assert_non_null(strstr(t, " 0.84 Gb/sec"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lat_summary),
		cmocka_unit_test(test_meter),
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_interval_line),
	};

	return cmocka_run_group_tests_name("mroce-perf report", tests, NULL, NULL);
}
