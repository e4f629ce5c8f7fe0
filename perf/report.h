/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mroce-perf's figures and text: latency statistics from the samples,
 * per-second intervals and the peak rate from completions as they come,
 * and perftest's column rows. No transport here, so a unit test can check
 * every number and every line.
 */
#ifndef MROCE_PERF_REPORT_H
#define MROCE_PERF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/* perftest's MB/sec is 2^20 bytes per second; Gb/sec is 10^9 bits. */
#define PERF_MB		1048576.0

struct perf_lat_summary {
	double	min, max, typical, avg, stdev, p99, p999;	/* microseconds; typical: the median */
};

/* Sorts v (n samples, microseconds) and summarises it; all zero when n is 0. */
void perf_lat_summarize(double *v, size_t n, struct perf_lat_summary *s);

struct perf_interval {
	double	start, end;	/* seconds since the size's start */
	__u64	ops, bytes;
};

#define PERF_PEAK_WINDOW	0.1	/* seconds: the peak is the best such window's rate */

/* Completions counted into per-second intervals and PERF_PEAK_WINDOW windows. */
struct perf_meter {
	double			t0, tick, win;	/* start; current interval's and window's start */
	__u64			tick_ops, win_ops;
	__u32			size;
	double			peak_ops_s;	/* 0 until a window closed */
	struct perf_interval	*iv;
	size_t			niv, cap;
	bool			oom;		/* an interval could not be kept */
};

void perf_meter_start(struct perf_meter *m, double now, __u32 size);
/*
 * ops: completions so far. Closes the current interval once a second has
 * passed and the current window once PERF_PEAK_WINDOW has. Returns the
 * interval just closed, or NULL.
 */
const struct perf_interval *perf_meter_tick(struct perf_meter *m, double now, __u64 ops);
/*
 * The last, partial interval (if it holds any time or operation); one
 * shorter than PERF_TAIL joins the interval before it instead (the drain
 * after a timed run's last second). The peak of a run shorter than one
 * window is its average.
 */
#define PERF_TAIL	0.1
void perf_meter_finish(struct perf_meter *m, double now, __u64 ops);
/* The peak in operations per second. */
double perf_meter_peak(const struct perf_meter *m, __u64 ops, double secs);
void perf_meter_free(struct perf_meter *m);

/* The header line and the column row of a bandwidth or latency table. */
void perf_print_columns(FILE *out, bool bw, bool gbits);
/* Rates in bytes per second; Mpps is million operations per second. */
void perf_print_bw_row(FILE *out, __u32 size, __u64 iters, double peak_Bps, double avg_Bps,
		       double mpps, bool gbits);
void perf_print_lat_row(FILE *out, __u32 size, __u64 iters, const struct perf_lat_summary *s);
/* One per-second line of a bandwidth test. */
void perf_print_interval(FILE *out, const struct perf_interval *iv, bool gbits);

#endif
