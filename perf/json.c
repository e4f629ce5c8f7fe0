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
	put_u64(o, "paths_retired", r->retired);
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
	if (json_object_array_add(res, o)) {
		json_object_put(o);
		return -ENOMEM;
	}
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
