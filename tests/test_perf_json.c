// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The perf tools' --json reports: strings with quotes, backslashes and
 * control characters come back unchanged from a JSON parser, every key the
 * bench scripts read is there, and each report is a single line.
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
#include <json-c/json.h>

#include "../perf/json.h"

#define NASTY	"q\"x\\y\t\x01\x1f\n}"

/* Print o as the tools do and parse the text back; the text must be one line. */
static struct json_object *round_trip(struct json_object *o)
{
	struct json_object *back;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(perf_json_print(f, o), 0);
	fclose(f);
	assert_true(len > 1 && text[len - 1] == '\n');
	assert_null(memchr(text, '\n', len - 1));
	back = json_tokener_parse(text);
	free(text);
	assert_non_null(back);
	return back;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	assert_true(json_object_object_get_ex(o, key, &v));
	return v;
}

static void test_result_escapes_dev(void **state)
{
	struct perf_result r = {
		.test = "write_bw", .mode = "ordered", .dev = NASTY, .size = 16777216, .qps = 1,
		.paths = 4, .ops = 48, .retx = 265, .ooo = 1, .dup = 2, .tx_pkts = 570601,
		.rto = 264, .retired = 3, .secs = 2.5, .gbps = 2.34, .mops = 0.000019,
		.p50 = 1.5, .p99 = 2.25, .p999 = 3.125, .cpu_s_per_gb = 1.84, .rss_kb = 123456,
	};
	struct json_object *o;

	(void)state;
	o = round_trip(perf_json_result(&r));
	assert_string_equal(json_object_get_string(get(o, "dev")), NASTY);
	assert_string_equal(json_object_get_string(get(o, "test")), "write_bw");
	assert_string_equal(json_object_get_string(get(o, "mode")), "ordered");
	assert_int_equal(json_object_get_uint64(get(o, "size")), 16777216);
	assert_int_equal(json_object_get_uint64(get(o, "tx_pkts")), 570601);
	assert_int_equal(json_object_get_uint64(get(o, "retransmitted")), 265);
	assert_int_equal(json_object_get_uint64(get(o, "rto_events")), 264);
	assert_int_equal(json_object_get_uint64(get(o, "paths_retired")), 3);
	assert_int_equal(json_object_get_int64(get(o, "rss_kb")), 123456);
	assert_true(json_object_get_double(get(o, "gbit_s")) == 2.34);
	assert_true(json_object_get_double(get(get(o, "lat_us"), "p999")) == 3.125);
	json_object_put(o);
}

/* -b: each direction, their sum, the check; end.sum_* the client's direction, *_bidir_reverse the server's. */
static void test_result_bidirectional(void **state)
{
	struct perf_interval iv[] = { { .start = 0, .end = 2, .ops = 300, .bytes = 300 * 4096 } };
	struct perf_result r = {
		.test = "read_bw", .mode = "ordered", .dev = "va", .size = 4096, .qps = 2, .paths = 4,
		.ops = 700, .secs = 2, .gbps = 0.004915 + 0.0065536, .intervals = iv, .nintervals = 1,
		.bidir = true, .verified = true,
		.dir = { { .ops = 300, .bytes = 300 * 4096, .secs = 2, .gbps = 0.0049152 },
			 { .ops = 400, .bytes = 400 * 4096, .secs = 2.5, .gbps = 0.0052429 } },
	};
	struct json_object *o, *b, *x, *end;

	(void)state;
	o = round_trip(perf_json_result(&r));
	b = get(o, "bidirectional");
	assert_int_equal(json_object_get_uint64(get(get(b, "client_to_server"), "ops")), 300);
	assert_int_equal(json_object_get_uint64(get(get(b, "server_to_client"), "bytes")), 400 * 4096);
	assert_true(json_object_get_double(get(get(b, "server_to_client"), "seconds")) == 2.5);
	x = get(b, "total");
	assert_int_equal(json_object_get_uint64(get(x, "ops")), 700);
	assert_int_equal(json_object_get_uint64(get(x, "bytes")), 700 * 4096);
	assert_true(fabs(json_object_get_double(get(x, "gbit_s")) - (0.0049152 + 0.0052429)) < 0.0001);
	assert_true(json_object_get_double(get(x, "seconds")) == 2.5);
	assert_true(json_object_get_boolean(get(b, "verified")));
	end = get(o, "end");
	assert_int_equal(json_object_get_uint64(get(get(end, "sum_sent"), "bytes")), 300 * 4096);
	assert_int_equal(json_object_get_uint64(get(get(end, "sum_received"), "bytes")), 300 * 4096);
	assert_int_equal(json_object_get_uint64(get(get(end, "sum_sent_bidir_reverse"), "bytes")), 400 * 4096);
	assert_true(json_object_get_double(get(get(end, "sum_received_bidir_reverse"), "seconds")) == 2.5);
	json_object_put(o);
	/* not -b: no such keys */
	r.bidir = false;
	o = round_trip(perf_json_result(&r));
	assert_false(json_object_object_get_ex(o, "bidirectional", NULL));
	assert_false(json_object_object_get_ex(get(o, "end"), "sum_sent_bidir_reverse", NULL));
	json_object_put(o);
}

/* iperf3's shape beside the old keys: intervals[] and end.sum_sent / sum_received. */
static void test_result_intervals(void **state)
{
	struct perf_interval iv[] = {
		{ .start = 0, .end = 1, .ops = 1000, .bytes = 1000 * 65536 },
		{ .start = 1, .end = 2, .ops = 1500, .bytes = 1500 * 65536 },
		{ .start = 2, .end = 2.5, .ops = 250, .bytes = 250 * 65536 },
	};
	struct perf_result r = {
		.test = "write_bw", .mode = "ordered", .dev = "va", .size = 65536, .qps = 1, .paths = 4,
		.ops = 2750, .secs = 2.5, .gbps = 0.5767168, .mops = 0.0011, .peak_gbps = 0.9,
		.intervals = iv, .nintervals = 3,
	};
	struct json_object *o, *a, *x, *end;

	(void)state;
	o = round_trip(perf_json_result(&r));
	/* the old keys are all still there */
	static const char *const keys[] = { "test", "size", "qps", "paths", "mode", "dev", "ops", "seconds",
		"gbit_s", "mops", "lat_us", "retransmitted", "out_of_order", "duplicates", "cpu_s_per_gb",
		"rss_kb", "tx_pkts", "rto_events", "paths_retired" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		get(o, keys[i]);
	a = get(o, "intervals");
	assert_int_equal(json_object_array_length(a), 3);
	x = json_object_array_get_idx(a, 1);
	assert_true(json_object_get_double(get(x, "start")) == 1);
	assert_true(json_object_get_double(get(x, "end")) == 2);
	assert_true(json_object_get_double(get(x, "seconds")) == 1);
	assert_int_equal(json_object_get_uint64(get(x, "bytes")), 1500 * 65536);
	assert_int_equal(json_object_get_uint64(get(x, "ops")), 1500);
	assert_true(json_object_get_double(get(x, "bits_per_second")) == 1500.0 * 65536 * 8);
	x = json_object_array_get_idx(a, 2);
	assert_true(json_object_get_double(get(x, "seconds")) == 0.5);
	assert_true(json_object_get_double(get(x, "bits_per_second")) == 250.0 * 65536 * 8 * 2);
	end = get(o, "end");
	for (int k = 0; k < 2; k++) {
		x = get(end, k ? "sum_received" : "sum_sent");
		assert_int_equal(json_object_get_uint64(get(x, "bytes")), 2750 * 65536);
		assert_true(json_object_get_double(get(x, "seconds")) == 2.5);
		assert_true(json_object_get_double(get(x, "bits_per_second")) == 2750.0 * 65536 * 8 / 2.5);
	}
	/* perftest's figures: MB/sec is 2^20 bytes a second */
	assert_true(fabs(json_object_get_double(get(o, "bw_avg_mb_s")) - 0.5767168e9 / 8 / 1048576) < 0.01);
	assert_true(json_object_get_double(get(o, "bw_peak_gbit_s")) == 0.9);
	assert_false(json_object_get_boolean(get(o, "latency_test")));
	json_object_put(o);
}

static void test_coll_report(void **state)
{
	struct coll_run run = { .coll = "allreduce", .type = NASTY, .op = "sum", .ranks = 4, .iters = 20 };
	struct coll_result a = { .algo = "ring\"\\", .size = 1024, .count = 256, .time_us = 12.5,
				 .algbw = 0.08, .busbw = 0.12, .wrong = 0, .ip_time_us = 11.25,
				 .ip_algbw = 0.09, .ip_busbw = 0.135, .ip_wrong = 3, .root = -1 };
	struct coll_result b = { .algo = "tree", .size = 4096, .count = 1024, .time_us = 20,
				 .algbw = 0.2, .busbw = 0.3, .wrong = -1 };
	struct json_object *o = perf_json_coll_run(&run), *res;

	(void)state;
	assert_non_null(o);
	assert_int_equal(perf_json_coll_add(o, &a), 0);
	assert_int_equal(perf_json_coll_add(o, &b), 0);
	assert_int_equal(perf_json_coll_end(o, 3, 0.25), 0);
	o = round_trip(o);
	assert_int_equal(json_object_get_int64(get(o, "out_of_bounds")), 3);
	assert_true(json_object_get_double(get(o, "avg_busbw")) == 0.25);
	{
		struct json_object *ip = get(json_object_array_get_idx(get(o, "results"), 0), "in_place");

		assert_true(json_object_get_double(get(ip, "time_us")) == 11.25);
		assert_true(json_object_get_double(get(ip, "busbw")) == 0.135);
		assert_int_equal(json_object_get_int64(get(ip, "wrong")), 3);
		assert_int_equal(json_object_get_int64(get(json_object_array_get_idx(get(o, "results"), 0),
							   "root")), -1);
	}
	assert_string_equal(json_object_get_string(get(o, "impl")), "mroce");
	assert_string_equal(json_object_get_string(get(o, "type")), NASTY);
	assert_int_equal(json_object_get_int(get(o, "ranks")), 4);
	res = get(o, "results");
	assert_int_equal(json_object_array_length(res), 2);
	assert_string_equal(json_object_get_string(get(json_object_array_get_idx(res, 0), "algo")),
			    "ring\"\\");
	assert_int_equal(json_object_get_int64(get(json_object_array_get_idx(res, 1), "wrong")), -1);
	assert_true(json_object_get_double(get(json_object_array_get_idx(res, 0), "time_us")) == 12.5);
	json_object_put(o);
}

static void test_print_null(void **state)
{
	(void)state;
	assert_int_equal(perf_json_print(stdout, NULL), -12);
	assert_int_equal(perf_json_coll_add(NULL, &(struct coll_result){ 0 }), -12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_escapes_dev),
		cmocka_unit_test(test_result_intervals),
		cmocka_unit_test(test_result_bidirectional),
		cmocka_unit_test(test_coll_report),
		cmocka_unit_test(test_print_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
