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

struct json_object;

/* One mroce-perf result line. */
struct perf_result {
	const char	*test, *mode, *dev;
	__u32		size, qps, paths;
	__u64		ops, retx, ooo, dup, tx_pkts, rto, retired;
	double		secs, gbps, mops, p50, p99, p999, cpu_s_per_gb;
	long		rss_kb;
};

/* mroce-coll-perf: the run, then one entry per message size. */
struct coll_run {
	const char	*coll, *type, *op;
	int		ranks, iters;
};

struct coll_result {
	const char	*algo;
	size_t		size, count;
	double		time_us, algbw, busbw;
	long long	wrong;
};

/* NULL when out of memory. */
struct json_object *perf_json_result(const struct perf_result *r);
struct json_object *perf_json_coll_run(const struct coll_run *r);
/* 0, or -ENOMEM. */
int perf_json_coll_add(struct json_object *run, const struct coll_result *r);

/* The report on one line, then frees it. 0, or -ENOMEM (NULL or out of memory). */
int perf_json_print(FILE *out, struct json_object *o);

#endif
