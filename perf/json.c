// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The perf tools' JSON reports (keys and layout as the bench scripts in
 * selftests/bench/ parse them). Numbers keep the precision the tools have
 * always printed; json-c does the quoting.
 */
#include <errno.h>
#include <json-c/json.h>

#include "json.h"

/* A double printed with a fixed format (json-c would print 17 digits). */
static void put_fixed(struct json_object *o, const char *key, const char *fmt, double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), fmt, v);
	json_object_object_add(o, key, json_object_new_double_s(v, buf));
}

static void put_u64(struct json_object *o, const char *key, __u64 v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void put_i64(struct json_object *o, const char *key, long long v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

static void put_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

/* perftest's figures: bandwidth peak and average in both units, the latency columns. */
static void put_perftest(struct json_object *o, struct json_object *lat, const struct perf_result *r)
{
	put_fixed(o, "bw_peak_gbit_s", "%.4f", r->peak_gbps);
	put_fixed(o, "bw_peak_mb_s", "%.2f", r->peak_gbps * 1e9 / 8 / PERF_MB);
	put_fixed(o, "bw_avg_mb_s", "%.2f", r->gbps * 1e9 / 8 / PERF_MB);
	put_fixed(o, "msg_rate_mpps", "%.6f", r->mops);
	json_object_object_add(o, "latency_test", json_object_new_boolean(r->latency_test));
	put_fixed(lat, "min", "%.3f", r->lat.min);
	put_fixed(lat, "max", "%.3f", r->lat.max);
	put_fixed(lat, "typical", "%.3f", r->lat.typical);
	put_fixed(lat, "avg", "%.3f", r->lat.avg);
	put_fixed(lat, "stdev", "%.3f", r->lat.stdev);
}

/* iperf3's summary object: start, end, seconds, bytes, bits_per_second. */
static struct json_object *span(double start, double end, __u64 bytes)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	put_fixed(o, "start", "%.6f", start);
	put_fixed(o, "end", "%.6f", end);
	put_fixed(o, "seconds", "%.6f", end - start);
	put_u64(o, "bytes", bytes);
	put_fixed(o, "bits_per_second", "%.1f", end > start ? (double)bytes * 8 / (end - start) : 0);
	return o;
}

/* intervals: one per second (the last one partial); end: the whole run. 0 or -ENOMEM. */
static int put_iperf3(struct json_object *o, const struct perf_result *r)
{
	struct json_object *iv = json_object_new_array(), *end = json_object_new_object(), *x;
	__u64 bytes = r->bidir ? r->dir[0].bytes : r->ops * r->size;
	double secs = r->bidir ? r->dir[0].secs : r->secs;

	json_object_object_add(o, "intervals", iv);
	json_object_object_add(o, "end", end);
	if (!iv || !end)
		return -ENOMEM;
	for (size_t i = 0; i < r->nintervals; i++) {
		const struct perf_interval *v = &r->intervals[i];

		if (!(x = span(v->start, v->end, v->bytes)) || json_object_array_add(iv, x)) {
			json_object_put(x);
			return -ENOMEM;
		}
		put_u64(x, "ops", v->ops);
	}
	if (!(x = span(0, secs, bytes)))
		return -ENOMEM;
	json_object_object_add(end, "sum_sent", x);
	if (!(x = span(0, secs, bytes)))
		return -ENOMEM;
	json_object_object_add(end, "sum_received", x);
	if (!r->bidir)
		return 0;
	if (!(x = span(0, r->dir[1].secs, r->dir[1].bytes)))
		return -ENOMEM;
	json_object_object_add(end, "sum_sent_bidir_reverse", x);
	if (!(x = span(0, r->dir[1].secs, r->dir[1].bytes)))
		return -ENOMEM;
	json_object_object_add(end, "sum_received_bidir_reverse", x);
	return 0;
}

static struct json_object *direction(const struct perf_dir *d)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	put_u64(o, "ops", d->ops);
	put_u64(o, "bytes", d->bytes);
	put_fixed(o, "seconds", "%.6f", d->secs);
	put_fixed(o, "gbit_s", "%.4f", d->gbps);
	return o;
}

/* -b: "bidirectional": each direction, their sum, and whether both ends held the other's data. */
static int put_bidir(struct json_object *o, const struct perf_result *r)
{
	struct json_object *b = json_object_new_object(), *x;
	struct perf_dir sum = { .ops = r->dir[0].ops + r->dir[1].ops,
				.bytes = r->dir[0].bytes + r->dir[1].bytes,
				.secs = r->dir[0].secs > r->dir[1].secs ? r->dir[0].secs : r->dir[1].secs,
				.gbps = r->dir[0].gbps + r->dir[1].gbps };
	static const char *const names[] = { "client_to_server", "server_to_client" };

	json_object_object_add(o, "bidirectional", b);
	if (!b)
		return -ENOMEM;
	for (int i = 0; i < 2; i++) {
		if (!(x = direction(&r->dir[i])))
			return -ENOMEM;
		json_object_object_add(b, names[i], x);
	}
	if (!(x = direction(&sum)))
		return -ENOMEM;
	json_object_object_add(b, "total", x);
	json_object_object_add(b, "verified", json_object_new_boolean(r->verified));
	return 0;
}

struct json_object *perf_json_result(const struct perf_result *r)
{
	struct json_object *o = json_object_new_object(), *lat = json_object_new_object();

	if (!o || !lat) {
		json_object_put(o);
		json_object_put(lat);
		return NULL;
	}
	put_str(o, "test", r->test);
	put_u64(o, "size", r->size);
	put_u64(o, "qps", r->qps);
	put_u64(o, "paths", r->paths);
	put_str(o, "mode", r->mode);
	put_str(o, "dev", r->dev);
	put_u64(o, "ops", r->ops);
	put_fixed(o, "seconds", "%.6f", r->secs);
	put_fixed(o, "gbit_s", "%.4f", r->gbps);
	put_fixed(o, "mops", "%.6f", r->mops);
	put_fixed(lat, "p50", "%.3f", r->p50);
	put_fixed(lat, "p99", "%.3f", r->p99);
	put_fixed(lat, "p999", "%.3f", r->p999);
	json_object_object_add(o, "lat_us", lat);
	put_u64(o, "retransmitted", r->retx);
	put_u64(o, "out_of_order", r->ooo);
	put_u64(o, "duplicates", r->dup);
	put_fixed(o, "cpu_s_per_gb", "%.4f", r->cpu_s_per_gb);
	put_i64(o, "rss_kb", r->rss_kb);
	put_u64(o, "tx_pkts", r->tx_pkts);
	put_u64(o, "rto_events", r->rto);
	put_u64(o, "asks", r->asks);
	put_u64(o, "paths_retired", r->retired);
	put_perftest(o, lat, r);
	if (put_iperf3(o, r) || (r->bidir && put_bidir(o, r))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

struct json_object *perf_json_coll_run(const struct coll_run *r)
{
	struct json_object *o = json_object_new_object(), *res = json_object_new_array();

	if (!o || !res) {
		json_object_put(o);
		json_object_put(res);
		return NULL;
	}
	put_str(o, "impl", "mroce");
	put_str(o, "coll", r->coll);
	put_i64(o, "ranks", r->ranks);
	put_str(o, "type", r->type);
	put_str(o, "op", r->op);
	put_i64(o, "iters", r->iters);
	json_object_object_add(o, "results", res);
	return o;
}

int perf_json_coll_add(struct json_object *run, const struct coll_result *r)
{
	struct json_object *res, *o;

	if (!run || !json_object_object_get_ex(run, "results", &res) || !(o = json_object_new_object()))
		return -ENOMEM;
	put_u64(o, "size", r->size);
	put_u64(o, "count", r->count);
	put_str(o, "algo", r->algo);
	put_fixed(o, "time_us", "%.2f", r->time_us);
	put_fixed(o, "algbw", "%.4f", r->algbw);
	put_fixed(o, "busbw", "%.4f", r->busbw);
	put_i64(o, "wrong", r->wrong);
	put_i64(o, "root", r->root);
	{
		struct json_object *ip = json_object_new_object();

		if (!ip) {
			json_object_put(o);
			return -ENOMEM;
		}
		put_fixed(ip, "time_us", "%.2f", r->ip_time_us);
		put_fixed(ip, "algbw", "%.4f", r->ip_algbw);
		put_fixed(ip, "busbw", "%.4f", r->ip_busbw);
		put_i64(ip, "wrong", r->ip_wrong);
		json_object_object_add(o, "in_place", ip);
	}
	if (json_object_array_add(res, o)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return 0;
}

int perf_json_coll_end(struct json_object *run, long long out_of_bounds, double avg_busbw)
{
	if (!run)
		return -ENOMEM;
	put_i64(run, "out_of_bounds", out_of_bounds);
	put_fixed(run, "avg_busbw", "%.4f", avg_busbw);
	return 0;
}

int perf_json_print(FILE *out, struct json_object *o)
{
	const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;

	if (s) {
		fprintf(out, "%s\n", s);
		fflush(out);
	}
	json_object_put(o);
	return s ? 0 : -ENOMEM;
}
