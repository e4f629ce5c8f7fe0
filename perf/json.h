/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The perf tools' --json reports, built with json-c so that every string
 * (an interface name may hold quotes, backslashes, control characters) is
 * escaped; kept apart from the tools so that a unit test can parse them back.
 */
#ifndef MROCE_PERF_JSON_H
#define MROCE_PERF_JSON_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "report.h"

struct json_object;

/*
 * One mroce-perf result line. Besides the keys the bench scripts read, the
 * perftest figures (bw_*, lat_us's min/max/avg/stdev) and iperf3's shape:
 * intervals (one per second) and end.sum_sent / end.sum_received.
 */
/* One direction of a bidirectional (-b) run, as its sender counted it. */
struct perf_dir {
	__u64		ops, bytes;
	double		secs, gbps;
};

struct perf_result {
	const char	*test, *mode, *dev;
	__u32		size, qps, paths;
	__u64		ops, retx, ooo, dup, tx_pkts, rto, retired;
	__u64		asks;			/* timers that asked instead of resending */
	double		secs, gbps, mops, p50, p99, p999, cpu_s_per_gb;
	double		peak_gbps;		/* the best PERF_PEAK_WINDOW's rate */
	struct perf_lat_summary lat;		/* all zero on bandwidth tests */
	bool		latency_test;
	const struct perf_interval *intervals;
	size_t		nintervals;
	long		rss_kb;
	/*
	 * -b: ops, gbps, mops and peak_gbps are both directions' sums (perftest's
	 * figures); dir[0] is the client's direction (the intervals and
	 * end.sum_sent / sum_received, as iperf3 --bidir), dir[1] the server's
	 * (end.*_bidir_reverse); verified: each end held the other's data.
	 */
	bool		bidir, verified;
	struct perf_dir	dir[2];
};

/* mroce-coll-perf: the run, then one entry per message size. */
struct coll_run {
	const char	*coll, *type, *op;
	int		ranks, iters;
};

/* wrong: -1 when not checked (-c 0); ip_*: the in-place run. */
struct coll_result {
	const char	*algo;
	size_t		size, count;
	double		time_us, algbw, busbw;
	long long	wrong;
	double		ip_time_us, ip_algbw, ip_busbw;
	long long	ip_wrong;
	int		root;		/* -1: the operation has none */
};

/* NULL when out of memory. */
struct json_object *perf_json_result(const struct perf_result *r);
struct json_object *perf_json_coll_run(const struct coll_run *r);
/* 0, or -ENOMEM. */
int perf_json_coll_add(struct json_object *run, const struct coll_result *r);
/* nccl-tests' footer figures: out_of_bounds (wrong elements, all sizes), avg_busbw. */
int perf_json_coll_end(struct json_object *run, long long out_of_bounds, double avg_busbw);

/* The report on one line, then frees it. 0, or -ENOMEM (NULL or out of memory). */
int perf_json_print(FILE *out, struct json_object *o);

#endif
