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

static void test_coll_report(void **state)
{
	struct coll_run run = { .coll = "allreduce", .type = NASTY, .op = "sum", .ranks = 4, .iters = 20 };
	struct coll_result a = { .algo = "ring\"\\", .size = 1024, .count = 256, .time_us = 12.5,
				 .algbw = 0.08, .busbw = 0.12, .wrong = 0 };
	struct coll_result b = { .algo = "tree", .size = 4096, .count = 1024, .time_us = 20,
				 .algbw = 0.2, .busbw = 0.3, .wrong = -1 };
	struct json_object *o = perf_json_coll_run(&run), *res;

	(void)state;
	assert_non_null(o);
	assert_int_equal(perf_json_coll_add(o, &a), 0);
	assert_int_equal(perf_json_coll_add(o, &b), 0);
	o = round_trip(o);
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
		cmocka_unit_test(test_coll_report),
		cmocka_unit_test(test_print_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
