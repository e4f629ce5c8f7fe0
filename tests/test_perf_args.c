// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mroce-perf's command line: defaults, every option, and a clear error for every bad one. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../perf/args.h"

#define ARGV(...) ((char *[]){ "mroce-perf", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "mroce-perf", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(a, err, ...) perf_parse_args(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), a, err, sizeof(err))

static void test_defaults(void **state)
{
	struct perf_args a;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&a, err, "client", "--dev", "eth0", "--addr", "198.18.0.2", "--test", "write_bw"), 0);
	assert_false(a.server);
	assert_string_equal(a.dev, "eth0");
	assert_string_equal(a.addr, "198.18.0.2");
	assert_int_equal(a.test, PERF_WRITE_BW);
	assert_int_equal(a.nsizes, 1);
	assert_int_equal(a.sizes[0], 65536);
	assert_int_equal(a.qps, 1);
	assert_int_equal(a.paths, 4);
	assert_int_equal(a.depth, 16);
	assert_int_equal(a.port, 18515);
	assert_false(a.json);
	assert_true(a.duration_s == 2);
	assert_int_equal(PARSE(&a, err, "client", "--dev", "e", "--addr", "x", "--test", "read_lat"), 0);
	assert_int_equal(a.sizes[0], 8);	/* latency tests default to 8 bytes */
	assert_int_equal(PARSE(&a, err, "server", "--dev", "e", "--addr", "198.18.0.2"), 0);
	assert_true(a.server);
}

static void test_every_option(void **state)
{
	struct perf_args a;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&a, err, "client", "--dev", "e", "--addr", "x", "--test", "send_lat",
			       "--size", "4k", "--qps", "8", "--paths", "16", "--depth", "32",
			       "--order", "unordered", "--iters", "1000", "--port", "9999", "--json",
			       "--duration", "0.5"), 0);
	assert_int_equal(a.test, PERF_SEND_LAT);
	assert_int_equal(a.sizes[0], 4096);
	assert_int_equal(a.qps, 8);
	assert_int_equal(a.paths, 16);
	assert_int_equal(a.depth, 32);
	assert_true(a.unordered);
	assert_int_equal(a.iters, 1000);
	assert_int_equal(a.port, 9999);
	assert_true(a.json);
	assert_true(a.duration_s == 0.5);
	assert_int_equal(PARSE(&a, err, "client", "--dev", "e", "--addr", "x", "--test", "write_bw",
			       "--sweep", "--gbn"), 0);
	assert_true(a.go_back_n);
	assert_int_equal(a.nsizes, 8);
	assert_int_equal(a.sizes[0], 8);
	assert_int_equal(a.sizes[7], 64u << 20);
	assert_int_equal(PARSE(&a, err, "client", "--dev", "e", "--addr", "x", "--test", "write_bw",
			       "--size", "64m"), 0);
	assert_int_equal(a.sizes[0], 64u << 20);
	assert_false(a.dm);	/* heap memory unless asked */
	assert_int_equal(PARSE(&a, err, "server", "--dev", "e", "--addr", "x", "--memory", "dm"), 0);
	assert_true(a.dm);
	assert_int_equal(PARSE(&a, err, "help"), 1);
	assert_int_equal(PARSE(&a, err, "client", "--help"), 1);
}

static void test_bad_arguments(void **state)
{
	static const struct {
		const char	*why;	/* part of the expected message */
		char		*argv[16];
	} cases[] = {
		{ "server or client", { "mroce-perf", NULL } },
		{ "unknown mode 'serve'", { "mroce-perf", "serve", NULL } },
		{ "--dev is required", { "mroce-perf", "client", "--addr", "x", "--test", "write_bw", NULL } },
		{ "--addr (the server's address)", { "mroce-perf", "client", "--dev", "e", "--test", "write_bw", NULL } },
		{ "--test is required", { "mroce-perf", "client", "--dev", "e", "--addr", "x", NULL } },
		{ "unknown test 'write'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write", NULL } },
		{ "--size: '4' is not a size", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--size", "4", NULL } },
		{ "--size: '65m'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--size", "65m", NULL } },
		{ "--size: '1x'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--size", "1x", NULL } },
		{ "--size: '-8'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--size", "-8", NULL } },
		{ "choose one", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--size", "8", "--sweep", NULL } },
		{ "--qps: '0'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--qps", "0", NULL } },
		{ "--qps: '129'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--qps", "129", NULL } },
		{ "--paths: '257'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--paths", "257", NULL } },
		{ "--depth: 'many'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--depth", "many", NULL } },
		{ "--order: 'random'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--order", "random", NULL } },
		{ "--duration: '0'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--duration", "0", NULL } },
		{ "--iters: '0'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--iters", "0", NULL } },
		{ "--port: '70000'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--port", "70000", NULL } },
		{ "not with --order unordered", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--gbn", "--order", "unordered", NULL } },
		{ "unknown option '--fast'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--fast", NULL } },
		{ "--qps needs a value", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--qps", NULL } },
		{ "unexpected argument 'extra'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "extra", NULL } },
		{ "--memory: 'gpu' (dm or heap)", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--memory", "gpu", NULL } },
		{ "the server takes no --test", { "mroce-perf", "server", "--dev", "e", "--addr", "x", "--test", "write_bw", NULL } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perf_args a;
		char err[256] = "", *argv[16];
		int argc = 0;

		while (cases[i].argv[argc])
			argc++;
		memcpy(argv, cases[i].argv, sizeof(argv));
		assert_int_equal(perf_parse_args(argc, argv, &a, err, sizeof(err)), -1);
		if (!strstr(err, cases[i].why))
			fail_msg("case %zu: got '%s', want it to mention '%s'", i, err, cases[i].why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_option),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests_name("mroce-perf arguments", tests, NULL, NULL);
}
