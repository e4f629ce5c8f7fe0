// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce-coll-perf's command line: nccl-tests' flags with their meanings, the
 * older -c COLLECTIVE spelling the scripts use, the size sweep, and a clear
 * error naming the flag for every bad value.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../perf/coll_args.h"

#define ARGV(...) ((char *[]){ "mroce-coll-perf", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "mroce-coll-perf", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(a, err, ...) coll_parse_args(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), a, err, sizeof(err))

static void test_defaults(void **state)
{
	char *argv[] = { "mroce-coll-perf", NULL };
	struct coll_args a;
	char err[256] = "";

	(void)state;
	assert_int_equal(coll_parse_args(1, argv, &a, err, sizeof(err)), 0);
	assert_int_equal(a.kind, MROCE_COLL_ALLREDUCE);
	assert_int_equal(a.minb, 8);
	assert_int_equal(a.maxb, 16 << 20);
	assert_true(a.factor == 2);
	assert_int_equal(a.iters, 20);
	assert_int_equal(a.warmup, 5);
	assert_true(a.check);
	assert_true(a.blocking);
	assert_int_equal(a.dtype, MROCE_COLL_FLOAT32);
	assert_int_equal(a.op, MROCE_COLL_SUM);
	assert_int_equal(a.root, 0);
	assert_false(a.json);
	assert_int_equal(a.warmup_ms, 500);
}

static void test_nccl_flags(void **state)
{
	struct coll_args a;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&a, err, "-b", "1K", "-e", "2G", "-f", "4", "-n", "7", "-w", "0", "-c", "0",
			       "-z", "0", "-d", "int64", "-o", "max", "-g", "1", "-t", "1"), 0);
	assert_int_equal(a.minb, 1024);
	assert_int_equal(a.maxb, 2ULL << 30);
	assert_true(a.factor == 4);
	assert_int_equal(a.iters, 7);
	assert_int_equal(a.warmup, 0);
	assert_false(a.check);
	assert_false(a.blocking);
	assert_int_equal(a.dtype, MROCE_COLL_INT64);
	assert_int_equal(a.op, MROCE_COLL_MAX);
	assert_int_equal(a.kind, MROCE_COLL_ALLREDUCE);	/* -c 0 is the check, not a collective */
	assert_int_equal(PARSE(&a, err, "-c", "1", "-z", "1", "-d", "double", "-o", "prod"), 0);
	assert_true(a.check);
	assert_true(a.blocking);
	assert_int_equal(a.dtype, MROCE_COLL_FLOAT64);
	assert_int_equal(a.op, MROCE_COLL_PROD);
	/* -i: a step in bytes instead of a factor */
	assert_int_equal(PARSE(&a, err, "-b", "0", "-e", "3M", "-i", "1M"), 0);
	assert_true(a.factor == 0);
	assert_int_equal(a.stepbytes, 1 << 20);
	/* -r: broadcast's root; the collective by its long option */
	assert_int_equal(PARSE(&a, err, "--coll", "broadcast", "-r", "3", "-d", "uint8"), 0);
	assert_int_equal(a.kind, MROCE_COLL_BROADCAST);
	assert_int_equal(a.root, 3);
	assert_int_equal(a.dtype, MROCE_COLL_UINT8);
	/* the long spellings */
	assert_int_equal(PARSE(&a, err, "--minbytes", "64", "--maxbytes", "64", "--iters", "3",
			       "--warmup_iters", "2", "--check", "0", "--blocking", "0", "--datatype",
			       "float", "--op", "min", "--ngpus", "1"), 0);
	assert_int_equal(a.minb, 64);
	assert_int_equal(a.iters, 3);
	assert_int_equal(a.warmup, 2);
	assert_false(a.check);
	assert_int_equal(a.op, MROCE_COLL_MIN);
	assert_int_equal(PARSE(&a, err, "-h"), COLL_ARGS_HELP);
	assert_int_equal(PARSE(&a, err, "--help"), COLL_ARGS_HELP);
	assert_int_equal(PARSE(&a, err, "--version"), COLL_ARGS_VERSION);
	assert_int_equal(PARSE(&a, err, "-V"), COLL_ARGS_VERSION);
}

/* What selftests/test_coll.sh and selftests/bench/coll_bench.py pass. */
static void test_existing_callers(void **state)
{
	struct coll_args a;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&a, err, "-c", "allreduce", "-b", "8", "-e", "8M", "-f", "32", "-n", "5",
			       "-w", "1"), 0);
	assert_int_equal(a.kind, MROCE_COLL_ALLREDUCE);
	assert_true(a.check);
	assert_int_equal(a.maxb, 8 << 20);
	assert_true(a.factor == 32);
	assert_int_equal(PARSE(&a, err, "-c", "alltoall", "-b", "96", "-e", "24M", "-f", "64", "-n", "3",
			       "-w", "1", "--json"), 0);
	assert_int_equal(a.kind, MROCE_COLL_ALLTOALL);
	assert_true(a.json);
	assert_int_equal(a.minb, 96);
	assert_int_equal(PARSE(&a, err, "-c", "reducescatter", "--stats", "--warmup-ms", "0",
			       "--chunk", "64K"), 0);
	assert_int_equal(a.kind, MROCE_COLL_REDUCE_SCATTER);
	assert_true(a.stats);
	assert_int_equal(a.warmup_ms, 0);
	assert_int_equal(a.chunk, 65536);
	assert_int_equal(PARSE(&a, err, "-c", "allgather", "-c", "0"), 0);
	assert_int_equal(a.kind, MROCE_COLL_ALLGATHER);
	assert_false(a.check);
}

/* nccl-tests' program names pick the collective. */
static void test_program_name(void **state)
{
	static const struct { char *name; enum mroce_coll_kind kind; } names[] = {
		{ "all_reduce_perf", MROCE_COLL_ALLREDUCE },
		{ "/usr/local/bin/all_gather_perf", MROCE_COLL_ALLGATHER },
		{ "./alltoall_perf", MROCE_COLL_ALLTOALL },
		{ "reduce_scatter_perf", MROCE_COLL_REDUCE_SCATTER },
		{ "build/broadcast_perf", MROCE_COLL_BROADCAST },
		{ "/nccl-tests/build/all_gather_perf_mpi", MROCE_COLL_ALLGATHER },	/* MPI=1 */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *argv[] = { names[i].name, "-b", "8", NULL };
		struct coll_args a;
		char err[256] = "";

		assert_int_equal(coll_parse_args(3, argv, &a, err, sizeof(err)), 0);
		assert_int_equal(a.kind, names[i].kind);
	}
}

/*
 * nccl-tests' names for collectives mroce does not have are refused, naming
 * the program and what it has, never run as all-reduce; -c still picks one,
 * and --help still answers.
 */
static void test_unimplemented_program_names(void **state)
{
	static char *const names[] = {
		"reduce_perf", "gather_perf", "sendrecv_perf", "hypercube_perf", "scatter_perf",
		"/opt/nccl-tests/build/reduce_perf", "./alltoallv_perf", "sendrecv_perf_mpi",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *argv[] = { names[i], "-b", "8", NULL };
		const char *base = strrchr(names[i], '/') ? strrchr(names[i], '/') + 1 : names[i];
		struct coll_args a;
		char err[256] = "";

		assert_int_equal(coll_parse_args(3, argv, &a, err, sizeof(err)), -1);
		if (!strstr(err, base) || !strstr(err, "does not have") || !strstr(err, "all_reduce_perf") ||
		    !strstr(err, "alltoall_perf"))
			fail_msg("%s: got '%s'", names[i], err);
		{
			char *help[] = { names[i], "--help", NULL };
			char *pick[] = { names[i], "-c", "allgather", NULL };

			assert_int_equal(coll_parse_args(2, help, &a, err, sizeof(err)), COLL_ARGS_HELP);
			assert_int_equal(coll_parse_args(3, pick, &a, err, sizeof(err)), 0);
			assert_int_equal(a.kind, MROCE_COLL_ALLGATHER);
		}
	}
	{	/* mroce's own name (and any name that is not nccl-tests'): all-reduce by default */
		char *argv[] = { "/usr/bin/mroce-coll-perf", NULL };
		struct coll_args a;
		char err[256] = "";

		assert_int_equal(coll_parse_args(1, argv, &a, err, sizeof(err)), 0);
		assert_int_equal(a.kind, MROCE_COLL_ALLREDUCE);
	}
}

/* The rendezvous variables: the one missing or malformed is named. */
static void test_env_check(void **state)
{
	static const struct {
		const char *rank, *world, *master, *port;
		const char *why;	/* NULL: accepted */
	} cases[] = {
		{ NULL, NULL, NULL, NULL, "WORLD_SIZE is not set" },
		{ "0", NULL, "198.18.2.1", NULL, "WORLD_SIZE is not set" },
		{ NULL, "2", "198.18.2.1", NULL, "RANK is not set" },
		{ "", "2", "198.18.2.1", NULL, "RANK is not set" },
		{ "0", "2", NULL, NULL, "MASTER_ADDR is not set" },
		{ "0", "2", "master", NULL, "MASTER_ADDR='master' is not an IPv4 address" },
		{ "2", "2", "198.18.2.1", NULL, "RANK='2' is not a rank of WORLD_SIZE=2" },
		{ "-1", "2", "198.18.2.1", NULL, "RANK='-1'" },
		{ "0", "abc", "198.18.2.1", NULL, "WORLD_SIZE='abc'" },
		{ "0", "257", "198.18.2.1", NULL, "WORLD_SIZE='257' is not a number of ranks from 1 to 256" },
		{ "0", "0", "198.18.2.1", NULL, "WORLD_SIZE='0'" },
		{ "1", "2", "198.18.2.1", "0", "MASTER_PORT='0'" },
		{ "1", "2", "198.18.2.1", "29500x", "MASTER_PORT='29500x'" },
		{ "0", "1", NULL, NULL, NULL },		/* alone: no master needed */
		{ "1", "2", "198.18.2.1", NULL, NULL },
		{ "255", "256", "198.18.2.1", "29501", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		int rc;

		cases[i].rank ? setenv("RANK", cases[i].rank, 1) : unsetenv("RANK");
		cases[i].world ? setenv("WORLD_SIZE", cases[i].world, 1) : unsetenv("WORLD_SIZE");
		cases[i].master ? setenv("MASTER_ADDR", cases[i].master, 1) : unsetenv("MASTER_ADDR");
		cases[i].port ? setenv("MASTER_PORT", cases[i].port, 1) : unsetenv("MASTER_PORT");
		rc = coll_env_check(err, sizeof(err));
		if (!cases[i].why && rc)
			fail_msg("case %zu refused: '%s'", i, err);
		if (cases[i].why && (rc != -1 || !strstr(err, cases[i].why)))
			fail_msg("case %zu: rc %d, '%s', want '%s'", i, rc, err, cases[i].why);
	}
	unsetenv("RANK");
	unsetenv("WORLD_SIZE");
	unsetenv("MASTER_ADDR");
	unsetenv("MASTER_PORT");
}

/* The sizes a sweep visits. */
static void test_sweep(void **state)
{
	struct { const char *b, *e, *flag, *step; size_t want[8]; size_t n; } cases[] = {
		{ "8", "8M", "-f", "32", { 8, 256, 8192, 262144, 8 << 20 }, 5 },
		{ "96", "24M", "-f", "64", { 96, 6144, 393216, 24 << 20 }, 4 },
		{ "0", "4", "-f", "2", { 0, 1, 2, 4 }, 4 },
		{ "0", "3M", "-i", "1M", { 0, 1 << 20, 2 << 20, 3 << 20 }, 4 },
		{ "5", "5", "-f", "2", { 5 }, 1 },
		{ "1", "1K", "-i", "2K", { 1 }, 1 },	/* a step larger than -e */
		{ "3", "10", "-f", "1.5", { 3, 4, 6, 9 }, 4 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = { "mroce-coll-perf", "-b", (char *)cases[i].b, "-e", (char *)cases[i].e,
				 (char *)cases[i].flag, (char *)cases[i].step, NULL };
		struct coll_args a;
		char err[256] = "";
		size_t size, n = 0;

		assert_int_equal(coll_parse_args(7, argv, &a, err, sizeof(err)), 0);
		size = a.minb;
		do {
			assert_true(n < cases[i].n);
			if (size != cases[i].want[n])
				fail_msg("case %zu: size %zu is %zu, want %zu", i, n, size, cases[i].want[n]);
			n++;
		} while ((size = coll_next_size(&a, size)));
		assert_int_equal(n, cases[i].n);
	}
	/* the largest -e: no overflow past it */
	{
		char *argv[] = { "mroce-coll-perf", "-b", "1024G", "-e", "1024G", "-i", "1024G", NULL };
		struct coll_args a;
		char err[256] = "";

		assert_int_equal(coll_parse_args(7, argv, &a, err, sizeof(err)), 0);
		assert_int_equal(coll_next_size(&a, a.minb), 0);
	}
}

static void test_bad_arguments(void **state)
{
	static const struct {
		const char	*why;
		char		*argv[8];
	} cases[] = {
		{ "-w: 'abc'", { "p", "-w", "abc", NULL } },
		{ "-w: '-1'", { "p", "-w", "-1", NULL } },
		{ "-n: '0'", { "p", "-n", "0", NULL } },
		{ "-n: '5x'", { "p", "-n", "5x", NULL } },
		{ "-n: '1000001'", { "p", "-n", "1000001", NULL } },
		{ "-n: '99999999999999999999'", { "p", "-n", "99999999999999999999", NULL } },
		{ "-b: '12q'", { "p", "-b", "12q", NULL } },
		{ "-b: '-8'", { "p", "-b", "-8", NULL } },
		{ "-b: '1.5K'", { "p", "-b", "1.5K", NULL } },
		{ "-e: 'nan'", { "p", "-e", "nan", NULL } },
		{ "-e: '2T'", { "p", "-e", "2T", NULL } },
		{ "-e: '1025G'", { "p", "-e", "1025G", NULL } },
		{ "-e: '18446744073709551615G'", { "p", "-e", "18446744073709551615G", NULL } },
		{ "-f: '1'", { "p", "-f", "1", NULL } },
		{ "-f: 'two'", { "p", "-f", "two", NULL } },
		{ "-f: 'inf'", { "p", "-f", "inf", NULL } },
		{ "-f: '2x'", { "p", "-f", "2x", NULL } },
		{ "-i: '0'", { "p", "-i", "0", NULL } },
		{ "-f and -i: choose one", { "p", "-f", "2", "-i", "8", NULL } },
		{ "-c: '2' is neither", { "p", "-c", "2", NULL } },
		{ "-c: 'allreduse'", { "p", "-c", "allreduse", NULL } },
		{ "-z: '2'", { "p", "-z", "2", NULL } },
		{ "-z: 'yes'", { "p", "-z", "yes", NULL } },
		{ "-d: type 'half'", { "p", "-d", "half", NULL } },
		{ "-d: type 'bfloat16'", { "p", "-d", "bfloat16", NULL } },
		{ "-o: reduction 'avg'", { "p", "-o", "avg", NULL } },
		{ "-r: 'x'", { "p", "-c", "broadcast", "-r", "x", NULL } },
		{ "-r: only broadcast has a root", { "p", "-r", "1", NULL } },
		{ "-g 8: there are no GPUs", { "p", "-g", "8", NULL } },
		{ "-t 2: a rank is one process", { "p", "-t", "2", NULL } },
		{ "-b is larger than -e", { "p", "-b", "1M", "-e", "1K", NULL } },
		{ "--chunk: '2M'", { "p", "--chunk", "2M", NULL } },
		{ "--warmup-ms: '-5'", { "p", "--warmup-ms", "-5", NULL } },
		{ "-n needs a value", { "p", "-n", NULL } },
		{ "unknown option '-x'", { "p", "-x", NULL } },
		{ "unknown option '--fast'", { "p", "--fast", NULL } },
		/* the argument named is the one at fault, wherever it sits */
		{ "unknown option '-x'", { "p", "-n", "5", "-x", NULL } },
		{ "unknown option '-q'", { "p", "-d", "float", "-qq", "X", NULL } },
		{ "unknown option '--fast'", { "p", "-n", "5", "--fast=1", NULL } },
		{ "unknown option '-a'", { "p", "--json", "-a", NULL } },
		{ "--json takes no value", { "p", "--json=1", NULL } },
		{ "--iters needs a value", { "p", "-w", "1", "--iters", NULL } },
		{ "-w needs a value", { "p", "-n", "5", "-w", NULL } },
		{ "option '--c' is ambiguous", { "p", "--c", "1", NULL } },
		{ "-o: reduction 'avg' is not one mroce has (sum, prod, min, max)", { "p", "-o", "avg", NULL } },
		{ "-c: 'reduce' is neither", { "p", "-c", "reduce", NULL } },
		{ "--coll: 'sendrecv' is neither", { "p", "--coll", "sendrecv", NULL } },
		{ "unexpected argument 'extra'", { "p", "extra", NULL } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct coll_args a;
		char err[256] = "", *argv[8];
		int argc = 0;

		while (cases[i].argv[argc])
			argc++;
		memcpy(argv, cases[i].argv, sizeof(argv));
		assert_int_equal(coll_parse_args(argc, argv, &a, err, sizeof(err)), -1);
		if (!strstr(err, cases[i].why))
			fail_msg("case %zu: got '%s', want it to mention '%s'", i, err, cases[i].why);
		if (strstr(err, "--help"))	/* the tool adds the one pointer to --help */
			fail_msg("case %zu: '%s' carries its own --help hint", i, err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_nccl_flags),
		cmocka_unit_test(test_existing_callers),
		cmocka_unit_test(test_program_name),
		cmocka_unit_test(test_unimplemented_program_names),
		cmocka_unit_test(test_env_check),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests_name("mroce-coll-perf arguments", tests, NULL, NULL);
}
