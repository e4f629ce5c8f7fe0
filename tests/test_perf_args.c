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
	assert_int_equal(a.depth, 128);
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
			       "--order", "unordered", "--iters", "1000", "--port", "9999", "--json"), 0);
	assert_int_equal(a.test, PERF_SEND_LAT);
	assert_int_equal(a.sizes[0], 4096);
	assert_int_equal(a.qps, 8);
	assert_int_equal(a.paths, 16);
	assert_int_equal(a.depth, 32);
	assert_true(a.unordered);
	assert_int_equal(a.iters, 1000);
	assert_int_equal(a.port, 9999);
	assert_true(a.json);
	assert_int_equal(PARSE(&a, err, "client", "--dev", "e", "--addr", "x", "--test", "send_bw",
			       "--duration", "0.5"), 0);
	assert_true(a.duration_s == 0.5);
	assert_int_equal(a.iters, 0);
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
	assert_false(a.umem);
	assert_int_equal(PARSE(&a, err, "server", "--dev", "e", "--addr", "x", "--memory", "dm"), 0);
	assert_true(a.dm);
	assert_false(a.umem);
	assert_int_equal(PARSE(&a, err, "server", "--dev", "e", "--addr", "x", "--memory", "umem"), 0);
	assert_true(a.umem);
	assert_false(a.dm);
	assert_int_equal(PARSE(&a, err, "help"), PERF_ARGS_HELP);
	assert_int_equal(PARSE(&a, err, "client", "--help"), PERF_ARGS_HELP);
	assert_int_equal(PARSE(&a, err, "--help"), PERF_ARGS_HELP);
	assert_int_equal(PARSE(&a, err, "client", "-h"), PERF_ARGS_HELP);
	assert_int_equal(PARSE(&a, err, "--version"), PERF_ARGS_VERSION);
	assert_int_equal(PARSE(&a, err, "server", "-V"), PERF_ARGS_VERSION);
	assert_int_equal(PARSE(&a, err, "client", "--version"), PERF_ARGS_VERSION);
}

/* -b: bandwidth tests only, sizes up to 32 MiB; the server takes it too (as perftest's) and ignores it. */
static void test_bidirectional(void **state)
{
	static const char *const bw[] = { "write_bw", "read_bw", "send_bw", "ib_write_bw" };
	static const char *const lat[] = { "write_lat", "read_lat", "send_lat" };
	struct perf_args a;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&a, err, "client", "--test", "write_bw", "-d", "va", "198.18.0.2"), 0);
	assert_false(a.bidir);
	for (size_t i = 0; i < sizeof(bw) / sizeof(bw[0]); i++) {
		assert_int_equal(PARSE(&a, err, "client", "--test", (char *)bw[i], "-d", "va", "-b", "198.18.0.2"), 0);
		assert_true(a.bidir);
		assert_int_equal(PARSE(&a, err, "client", "--test", (char *)bw[i], "-d", "va", "--bidirectional",
				       "-s", "32m", "198.18.0.2"), 0);
		assert_true(a.bidir);
		assert_int_equal(a.sizes[0], 32u << 20);
	}
	assert_int_equal(PARSE(&a, err, "client", "--test", "read_bw", "-d", "va", "-b", "-a", "198.18.0.2"), 0);
	for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++) {
		err[0] = 0;
		assert_int_equal(PARSE(&a, err, "client", "--test", (char *)lat[i], "-d", "va", "-b", "198.18.0.2"), -1);
		assert_non_null(strstr(err, "--bidirectional (-b): bandwidth tests only"));
		assert_non_null(strstr(err, lat[i]));
	}
	err[0] = 0;
	assert_int_equal(PARSE(&a, err, "client", "--test", "write_bw", "-d", "va", "-b", "-s", "33m", "198.18.0.2"), -1);
	assert_non_null(strstr(err, "sizes up to 32 MiB"));
	err[0] = 0;
	assert_int_equal(PARSE(&a, err, "client", "--test", "send_bw", "-d", "va", "-b", "--sweep", "198.18.0.2"), -1);
	assert_non_null(strstr(err, "not 67108864"));
	assert_int_equal(PARSE(&a, err, "server", "-d", "vb", "-b", "198.18.0.2"), 0);
	assert_true(a.server);
}

/* perftest's flags, with perftest's meanings (ib_write_bw -d DEV -s SIZE ... SERVER). */
static void test_perftest_flags(void **state)
{
	struct perf_args a;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&a, err, "client", "--test", "write_bw", "-d", "va", "-s", "1m", "-D", "3",
			       "-q", "4", "-x", "3", "-F", "--report_gbits", "-t", "64", "-p", "4000",
			       "198.18.0.2"), 0);
	assert_string_equal(a.dev, "va");
	assert_string_equal(a.addr, "198.18.0.2");	/* the last argument, as perftest takes it */
	assert_int_equal(a.nsizes, 1);
	assert_int_equal(a.sizes[0], 1 << 20);
	assert_true(a.duration_s == 3);
	assert_int_equal(a.iters, 0);
	assert_int_equal(a.qps, 4);
	assert_int_equal(a.gid_index, 3);
	assert_true(a.gbits);
	assert_int_equal(a.depth, 64);			/* -t: perftest's tx depth */
	assert_int_equal(a.port, 4000);
	assert_int_equal(a.paths, 4);			/* untouched */
	/* -a: every power of two from 2 B to 8 MiB, as perftest's */
	assert_int_equal(PARSE(&a, err, "client", "-d", "va", "--test", "ib_read_lat", "-a", "-n", "1000",
			       "-R", "-c", "RC", "x"), 0);
	assert_int_equal(a.test, PERF_READ_LAT);	/* perftest's program name works as a test */
	assert_int_equal(a.nsizes, 23);
	for (__u32 i = 0; i < a.nsizes; i++)
		assert_int_equal(a.sizes[i], 2u << i);
	assert_int_equal(a.sizes[22], 8u << 20);
	assert_int_equal(a.iters, 1000);
	assert_false(a.gbits);
	assert_int_equal(a.gid_index, -1);		/* not given */
	assert_true(a.duration_s == 2);			/* the default, unused with -n */
	/* the long spellings perftest also has */
	assert_int_equal(PARSE(&a, err, "client", "--ib-dev", "vb", "--qp", "2", "--tx-depth", "8",
			       "--gid-index", "0", "--all", "--iters", "7", "--CPU-freq", "--test", "send_bw",
			       "--addr", "y"), 0);
	assert_string_equal(a.dev, "vb");
	assert_int_equal(a.qps, 2);
	assert_int_equal(a.depth, 8);
	assert_int_equal(a.gid_index, 0);
	assert_int_equal(a.nsizes, 23);
	assert_int_equal(a.iters, 7);
	/* the smallest size is now 1 byte */
	assert_int_equal(PARSE(&a, err, "client", "-d", "e", "--test", "write_bw", "-s", "1", "x"), 0);
	assert_int_equal(a.sizes[0], 1);
	/* the server takes its listen address the same way */
	assert_int_equal(PARSE(&a, err, "server", "-d", "vb", "198.18.0.2"), 0);
	assert_true(a.server);
	assert_string_equal(a.addr, "198.18.0.2");
}

/* The calls of selftests/ and selftests/bench/ keep their meaning. */
static void test_existing_callers(void **state)
{
	struct perf_args a;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&a, err, "client", "--dev", "va", "--addr", "198.18.0.2", "--json",
			       "--test", "write_bw", "--size", "1m", "--gbn", "--paths", "1",
			       "--duration", "3", "--window", "896", "--qps", "128", "--depth", "64",
			       "--progress", "poll", "--memory", "dm"), 0);
	assert_true(a.json && a.go_back_n && a.poll && a.dm);
	assert_int_equal(a.sizes[0], 1 << 20);
	assert_int_equal(a.paths, 1);
	assert_true(a.duration_s == 3);
	assert_int_equal(a.window, 896);
	assert_int_equal(a.qps, 128);
	assert_int_equal(a.depth, 64);
	assert_int_equal(PARSE(&a, err, "client", "--dev", "va", "--addr", "x", "--test", "write_bw",
			       "--qps", "128", "--size", "64m", "--iters", "200"), 0);
	assert_int_equal(a.iters, 200);
	assert_int_equal(a.sizes[0], 64u << 20);
	assert_int_equal(PARSE(&a, err, "client", "--dev", "va", "--addr", "x", "--test", "write_lat",
			       "--size", "8", "--progress", "thread"), 0);
	assert_false(a.poll);
	assert_int_equal(PARSE(&a, err, "server", "--dev", "vb", "--addr", "x", "--progress", "thread",
			       "--port", "4800"), 0);
	assert_false(a.poll);
	assert_int_equal(a.port, 4800);
}

static void test_bad_arguments(void **state)
{
	static const struct {
		const char	*why;	/* part of the expected message */
		char		*argv[20];
	} cases[] = {
		{ "server or client", { "mroce-perf", NULL } },
		{ "unknown mode 'serve'", { "mroce-perf", "serve", NULL } },
		{ "--dev (-d) is required", { "mroce-perf", "client", "--addr", "x", "--test", "write_bw", NULL } },
		{ "--addr (the server's address)", { "mroce-perf", "client", "--dev", "e", "--test", "write_bw", NULL } },
		{ "--test is required", { "mroce-perf", "client", "--dev", "e", "--addr", "x", NULL } },
		{ "unknown test 'write'", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write", NULL } },
		{ "--size: '0' is not a size", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--size", "0", NULL } },
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
		{ "--memory: 'gpu' (heap, dm or umem)", { "mroce-perf", "client", "--dev", "e", "--addr", "x", "--test", "write_bw", "--memory", "gpu", NULL } },
		{ "the server takes no --test", { "mroce-perf", "server", "--dev", "e", "--addr", "x", "--test", "write_bw", NULL } },
		/* garbage for perftest's flags: each names its flag */
		{ "--size: '12q'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-s", "12q", "x", NULL } },
		{ "--size: ' 8'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-s", " 8", "x", NULL } },
		{ "--size: '+8'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-s", "+8", "x", NULL } },
		{ "--size: '0x10'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-s", "0x10", "x", NULL } },
		{ "--size: '99999999999999999999'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-s", "99999999999999999999", "x", NULL } },
		{ "--size: '18014398509481985m'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-s", "18014398509481985m", "x", NULL } },
		{ "--duration: 'abc'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-D", "abc", "x", NULL } },
		{ "--duration: '-1'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-D", "-1", "x", NULL } },
		{ "--duration: 'nan'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-D", "nan", "x", NULL } },
		{ "--duration: 'inf'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-D", "inf", "x", NULL } },
		{ "--duration: '3601'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-D", "3601", "x", NULL } },
		{ "--duration: '2s'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-D", "2s", "x", NULL } },
		{ "--iters: 'abc'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-n", "abc", "x", NULL } },
		{ "--iters: '-5'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-n", "-5", "x", NULL } },
		{ "--iters: '18446744073709551616'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-n", "18446744073709551616", "x", NULL } },
		{ "--qps: 'two'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-q", "two", "x", NULL } },
		{ "--depth: '0'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-t", "0", "x", NULL } },
		{ "--gid-index: 'abc'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-x", "abc", "x", NULL } },
		{ "--gid-index: '256'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-x", "256", "x", NULL } },
		{ "--port: '0'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-p", "0", "x", NULL } },
		{ "--connection: 'UD'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-c", "UD", "x", NULL } },
		{ "choose one", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-a", "-s", "8", "x", NULL } },
		{ "choose one", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "--sweep", "-a", "x", NULL } },
		{ "--iters (-n) and --duration (-D): choose one", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-n", "5", "-D", "1", "x", NULL } },
		{ "-D needs a value", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "x", "-D", NULL } },
		{ "unknown option '-w'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "-w", "abc", "x", NULL } },
		/* the argument named is the one at fault, wherever it sits */
		{ "unknown option '-z'", { "mroce-perf", "client", "-d", "lo", "-zz", "X", NULL } },
		{ "unknown option '-z'", { "mroce-perf", "client", "-d", "lo", "-az", "X", NULL } },
		{ "unknown option '-w'", { "mroce-perf", "client", "--json", "-w", "X", NULL } },
		{ "unknown option '--fast'", { "mroce-perf", "client", "-d", "e", "--fast=1", "x", NULL } },
		{ "--json takes no value", { "mroce-perf", "client", "-d", "e", "--json=1", "x", NULL } },
		{ "--port needs a value", { "mroce-perf", "client", "-d", "e", "x", "--port", NULL } },
		{ "--dev needs a value", { "mroce-perf", "client", "-q", "2", "--dev", NULL } },
		{ "option '--d' is ambiguous", { "mroce-perf", "client", "--d", "e", "x", NULL } },
		{ "unexpected argument 'y' (--addr is x)", { "mroce-perf", "client", "-d", "e", "--addr", "x", "--test", "write_bw", "y", NULL } },
		{ "unexpected argument 'z'", { "mroce-perf", "client", "-d", "e", "--test", "write_bw", "y", "z", NULL } },
		{ "--dev (-d) is required", { "mroce-perf", "client", "--test", "write_bw", "y", NULL } },
		{ "unknown test 'ib_atomic_bw'", { "mroce-perf", "client", "-d", "e", "--test", "ib_atomic_bw", "y", NULL } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perf_args a;
		char err[256] = "", *argv[20];
		int argc = 0;

		while (cases[i].argv[argc])
			argc++;
		memcpy(argv, cases[i].argv, sizeof(argv));
		assert_int_equal(perf_parse_args(argc, argv, &a, err, sizeof(err)), -1);
		if (!strstr(err, cases[i].why))
			fail_msg("case %zu: got '%s', want it to mention '%s'", i, err, cases[i].why);
		/* the tool adds the one pointer to --help: none in the message */
		if (strstr(err, "--help"))
			fail_msg("case %zu: '%s' carries its own --help hint", i, err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_option),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_perftest_flags),
		cmocka_unit_test(test_bidirectional),
		cmocka_unit_test(test_existing_callers),
	};

	return cmocka_run_group_tests_name("mroce-perf arguments", tests, NULL, NULL);
}
