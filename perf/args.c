// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce-perf's command line: its own long options and perftest's short ones
 * (ib_write_bw and friends), with the meanings perftest gives them. Every
 * value is checked whole: a number with trailing garbage, a sign, or one out
 * of range is refused with the flag's name.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mroce/dp_maps.h"
#include "mroce/verbs.h"

#include "args.h"
#include "argerr.h"

const char perf_usage[] =
"usage: mroce-perf server --dev DEV --addr ADDR [--port N]\n"
"       mroce-perf client --dev DEV --addr SERVER [--port N] --test TEST [options]\n"
"       mroce-perf client -d DEV --test TEST [perftest flags] SERVER\n"
"tests: write_bw write_lat read_bw read_lat send_bw send_lat (perftest's ib_write_bw etc. too)\n"
"  -s, --size BYTES     message size, 1 B .. 64 MiB (suffix k, m: KiB, MiB);\n"
"                       default 65536 (bw), 8 (lat)\n"
"  -a, --all            sizes 2 B, 4 B, .. 8 MiB (perftest's -a)\n"
"      --sweep          sizes 8 B, 64 B, 512 B, 4 KiB, 64 KiB, 1 MiB, 16 MiB, 64 MiB\n"
"  -q, --qps N          connections (a data QP each, plus a control QP), 1..128 (default 1)\n"
"      --paths N        UDP source ports each QP sprays over, 1..256 (default 4)\n"
"      --queue N        the first receive queue to serve (default 0: the first free one)\n"
"      --queues N|all   receive queues to serve (default: one on veth, every one on a NIC)\n"
"  -t, --depth N        bandwidth tests: requests in flight per QP, 1..256 (default 128, as perftest)\n"
"  -b, --bidirectional  bandwidth tests: the server runs the same test toward the client at the\n"
"                       same time (perftest's -b); each end checks the other's data; sizes up to\n"
"                       32 MiB; the client reports each direction and their sum\n"
"      --window N       packets in flight per QP, 16..896 (default: the library's)\n"
"      --cc ALG         congestion control of the QPs that send: default (the library's:\n"
"                       ECN), none, ecn, delay or both\n"
"      --order ordered|unordered\n"
"      --gbn            go-back-N (RoCEv2-like) instead of selective repeat\n"
"  -D, --duration S     seconds per size, up to 3600 (default 2), or\n"
"  -n, --iters N        operations per size\n"
"  -d, --dev DEV        the network interface (perftest: the RDMA device)\n"
"      --addr ADDR      server: the address to listen on; client: the server's (or the\n"
"                       last argument, as perftest takes it)\n"
"  -p, --port N         connection manager TCP port (default 18515)\n"
"      --progress thread|poll  who runs the transport: the library's thread (sleeps when idle),\n"
"                       or this process busy-polling (default: poll for *_lat and the server)\n"
"      --memory heap|dm|umem where the buffers live: the heap (default); device memory,\n"
"                       into which XDP places arriving WRITEs itself (on veth that moves the\n"
"                       copy to the sender's CPU and does not pay); or the UMEM's\n"
"                       transmit pool, sent from without the library's copy (on veth copy mode\n"
"                       the kernel copies instead: no faster; for zero-copy drivers)\n"
"      --report_gbits   bandwidth in Gbit/s instead of MB/sec (2^20 bytes/s, perftest's unit)\n"
"      --json           one JSON object per size (with per-second intervals) instead of text\n"
"  -x, --gid-index N    accepted (0..255) and ignored: mroce addresses peers by IP\n"
"  -F, --CPU-freq       accepted and ignored (mroce measures with CLOCK_MONOTONIC)\n"
"  -R, --rdma_cm        accepted and ignored (mroce always connects through its TCP side channel)\n"
"  -c, --connection RC  the only connection type mroce has\n"
"  -h, --help           this text;  -V, --version  the version\n"
"The whole description: man mroce-perf\n";

static const char *const names[PERF_TESTS] = {
	"write_bw", "write_lat", "read_bw", "read_lat", "send_bw", "send_lat",
};

const char *perf_test_name(enum perf_test t)
{
	return t < PERF_TESTS ? names[t] : "?";
}

bool perf_test_is_bw(enum perf_test t)
{
	return t == PERF_WRITE_BW || t == PERF_READ_BW || t == PERF_SEND_BW;
}

/*
 * A whole decimal number in [lo, hi], with an optional k/m (KiB/MiB) suffix
 * if sized: digits first (no sign, space or base prefix), nothing after.
 */
static int number(const char *s, unsigned long long lo, unsigned long long hi, bool sized,
		  unsigned long long *v)
{
	char *end;
	unsigned long long n;
	unsigned int shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	if (sized && (*end == 'k' || *end == 'K'))
		shift = 10;
	else if (sized && (*end == 'm' || *end == 'M'))
		shift = 20;
	if (shift) {
		if (n > (~0ULL >> shift))
			return -ERANGE;
		n <<= shift;
		end++;
	}
	if (*end || n < lo || n > hi)
		return -ERANGE;
	*v = n;
	return 0;
}

/* Seconds: a plain decimal (digits, an optional fraction), > 0 and <= 3600. */
static int seconds(const char *s, double *v)
{
	char *end;
	double d;

	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -EINVAL;
	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(d) || !(d > 0) || d > 3600)
		return -ERANGE;
	*v = d;
	return 0;
}

static int test_of(const char *s)
{
	if (!strncmp(s, "ib_", 3))	/* perftest's program names */
		s += 3;
	for (int t = 0; t < PERF_TESTS; t++)
		if (!strcmp(s, names[t]))
			return t;
	return -1;
}

enum {	/* long options without a short one */
	O_ADDR = 256, O_SWEEP, O_PATHS, O_ORDER, O_GBN, O_JSON, O_PROGRESS, O_WINDOW, O_MEMORY,
	O_GBITS, O_TEST, O_CC, O_QUEUE, O_QUEUES,
};

int perf_parse_args(int argc, char **argv, struct perf_args *a, char *err, size_t errlen)
{
	static const struct option lo[] = {
		{ "dev", 1, 0, 'd' }, { "ib-dev", 1, 0, 'd' }, { "addr", 1, 0, O_ADDR },
		{ "port", 1, 0, 'p' }, { "test", 1, 0, O_TEST }, { "size", 1, 0, 's' },
		{ "all", 0, 0, 'a' }, { "sweep", 0, 0, O_SWEEP }, { "qps", 1, 0, 'q' },
		{ "qp", 1, 0, 'q' }, { "paths", 1, 0, O_PATHS }, { "depth", 1, 0, 't' },
		{ "tx-depth", 1, 0, 't' }, { "order", 1, 0, O_ORDER }, { "gbn", 0, 0, O_GBN },
		{ "duration", 1, 0, 'D' }, { "iters", 1, 0, 'n' }, { "json", 0, 0, O_JSON },
		{ "help", 0, 0, 'h' }, { "version", 0, 0, 'V' }, { "progress", 1, 0, O_PROGRESS },
		{ "window", 1, 0, O_WINDOW }, { "memory", 1, 0, O_MEMORY }, { "cc", 1, 0, O_CC },
		{ "report_gbits", 0, 0, O_GBITS }, { "gid-index", 1, 0, 'x' },
		{ "CPU-freq", 0, 0, 'F' }, { "rdma_cm", 0, 0, 'R' }, { "connection", 1, 0, 'c' },
		{ "queue", 1, 0, O_QUEUE }, { "queues", 1, 0, O_QUEUES },
		{ "bidirectional", 0, 0, 'b' },
		{ 0, 0, 0, 0 },
	};
	static const __u32 sweep[] = { 8, 64, 512, 4096, 65536, 1 << 20, 16 << 20, 64 << 20 };
	unsigned long long v;
	bool have_test = false, have_size = false, have_progress = false, have_duration = false;
	int c;

	memset(a, 0, sizeof(*a));
	a->port = 18515;
	a->qps = 1;
	a->paths = 4;
	a->depth = 128;	/* perftest's tx-depth */
	a->duration_s = 2;
	a->gid_index = -1;
	if (argc < 2)
		return perf_bad(err, errlen, "server or client?");
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return PERF_ARGS_HELP;
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))
		return PERF_ARGS_VERSION;
	if (strcmp(argv[1], "server") && strcmp(argv[1], "client"))
		return perf_bad(err, errlen, "unknown mode '%s' (server or client)", argv[1]);
	a->server = !strcmp(argv[1], "server");
	optind = 0;	/* 0: glibc forgets a cluster left half-read by an earlier call */
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, ":s:aD:n:q:d:x:FRp:t:c:bhV", lo, NULL)) != -1) {
		switch (c) {
		case 'd': a->dev = optarg; break;
		case O_ADDR: a->addr = optarg; break;
		case 'p':
			if (number(optarg, 1, 65535, false, &v))
				return perf_bad(err, errlen, "--port: '%s' is not a port (1-65535)", optarg);
			a->port = (__u16)v;
			break;
		case O_TEST:
			if ((c = test_of(optarg)) < 0)
				return perf_bad(err, errlen, "--test: unknown test '%s' (write_bw write_lat read_bw "
					   "read_lat send_bw send_lat)", optarg);
			a->test = (enum perf_test)c;
			have_test = true;
			break;
		case 's':
			if (number(optarg, PERF_MIN_SIZE, PERF_MAX_SIZE, true, &v))
				return perf_bad(err, errlen, "--size: '%s' is not a size from 1 B to 64 MiB", optarg);
			if (a->nsizes)
				return perf_bad(err, errlen, "--size, --all and --sweep: choose one");
			a->sizes[a->nsizes++] = (__u32)v;
			have_size = true;
			break;
		case 'a':
			if (a->nsizes)
				return perf_bad(err, errlen, "--size, --all and --sweep: choose one");
			for (__u32 s = 2; s <= (8u << 20); s <<= 1)
				a->sizes[a->nsizes++] = s;
			have_size = true;
			break;
		case O_SWEEP:
			if (a->nsizes)
				return perf_bad(err, errlen, "--size, --all and --sweep: choose one");
			memcpy(a->sizes, sweep, sizeof(sweep));
			a->nsizes = sizeof(sweep) / sizeof(sweep[0]);
			have_size = true;
			break;
		case 'q':
			if (number(optarg, 1, PERF_MAX_QPS, false, &v))
				return perf_bad(err, errlen, "--qps: '%s' is not 1..%d", optarg, PERF_MAX_QPS);
			a->qps = (__u32)v;
			break;
		case O_PATHS:
			if (number(optarg, 1, 256, false, &v))
				return perf_bad(err, errlen, "--paths: '%s' is not 1..256", optarg);
			a->paths = (__u32)v;
			break;
		case 't':
			if (number(optarg, 1, 256, false, &v))
				return perf_bad(err, errlen, "--depth: '%s' is not 1..256", optarg);
			a->depth = (__u32)v;
			break;
		case O_ORDER:
			if (strcmp(optarg, "ordered") && strcmp(optarg, "unordered"))
				return perf_bad(err, errlen, "--order: '%s' (ordered or unordered)", optarg);
			a->unordered = !strcmp(optarg, "unordered");
			break;
		case O_GBN: a->go_back_n = true; break;
		case O_QUEUE:
			if (number(optarg, 0, MROCE_MAX_QUEUES - 1, false, &v))
				return perf_bad(err, errlen, "--queue: '%s' is not 0..%d", optarg,
						MROCE_MAX_QUEUES - 1);
			a->queue = (__u32)v;
			break;
		case O_QUEUES:
			if (!strcmp(optarg, "all"))
				v = MROCE_QUEUES_ALL;
			else if (number(optarg, 1, MROCE_MAX_QUEUES, false, &v))
				return perf_bad(err, errlen, "--queues: '%s' is not 1..%d or all", optarg,
						MROCE_MAX_QUEUES);
			a->queues = (__u32)v;
			break;
		case O_CC:
			if (strcmp(optarg, "default") && strcmp(optarg, "none") && strcmp(optarg, "ecn") &&
			    strcmp(optarg, "delay") && strcmp(optarg, "both"))
				return perf_bad(err, errlen, "--cc: '%s' (default, none, ecn, delay or both)",
						optarg);
			a->no_cc = !strcmp(optarg, "none");
			a->cc_ecn = !strcmp(optarg, "ecn") || !strcmp(optarg, "both");
			a->cc_delay = !strcmp(optarg, "delay") || !strcmp(optarg, "both");
			break;
		case O_WINDOW:
			if (number(optarg, 16, 896, false, &v))
				return perf_bad(err, errlen, "--window: '%s' is not 16..896", optarg);
			a->window = (__u32)v;
			break;
		case 'D':
			if (seconds(optarg, &a->duration_s))
				return perf_bad(err, errlen, "--duration: '%s' is not a number of seconds above 0, up to 3600", optarg);
			have_duration = true;
			break;
		case 'n':
			if (number(optarg, 1, 1ULL << 40, false, &v))
				return perf_bad(err, errlen, "--iters: '%s' is not a count from 1 to 2^40", optarg);
			a->iters = v;
			break;
		case O_JSON: a->json = true; break;
		case O_GBITS: a->gbits = true; break;
		case O_PROGRESS:
			if (strcmp(optarg, "thread") && strcmp(optarg, "poll"))
				return perf_bad(err, errlen, "--progress: '%s' (thread or poll)", optarg);
			a->poll = !strcmp(optarg, "poll");
			have_progress = true;
			break;
		case O_MEMORY:
			if (strcmp(optarg, "dm") && strcmp(optarg, "heap") && strcmp(optarg, "umem"))
				return perf_bad(err, errlen, "--memory: '%s' (heap, dm or umem)", optarg);
			a->dm = !strcmp(optarg, "dm");
			a->umem = !strcmp(optarg, "umem");
			break;
		case 'x':
			if (number(optarg, 0, 255, false, &v))
				return perf_bad(err, errlen, "--gid-index: '%s' is not 0..255", optarg);
			a->gid_index = (int)v;
			break;
		case 'c':
			if (strcmp(optarg, "RC"))
				return perf_bad(err, errlen, "--connection: '%s': mroce has reliable connected "
					   "QPs only (RC)", optarg);
			break;
		case 'b': a->bidir = true; break;
		case 'F':
		case 'R':
			break;
		case 'h': return PERF_ARGS_HELP;
		case 'V': return PERF_ARGS_VERSION;
		default:	/* '?' or ':'; getopt saw argv + 1 */
			return perf_bad_option(err, errlen, argc - 1, argv + 1, lo, c);
		}
	}
	/* perftest takes the server's address as the last argument. */
	if (optind + 1 < argc) {
		if (a->addr)
			return perf_bad(err, errlen, "unexpected argument '%s' (--addr is %s)", argv[optind + 1],
				   a->addr);
		a->addr = argv[optind + 1];
		if (optind + 2 < argc)
			return perf_bad(err, errlen, "unexpected argument '%s'", argv[optind + 2]);
	}
	if (!a->dev)
		return perf_bad(err, errlen, "--dev (-d) is required: the network interface");
	if (!a->addr)
		return perf_bad(err, errlen, a->server ? "--addr (the address to listen on) is required" :
						    "--addr (the server's address) is required");
	if (a->server) {
		/* -b on the server too, as perftest's: accepted; the client's START says what to run */
		if (have_test || have_size)
			return perf_bad(err, errlen, "the server takes no --test or --size: the client chooses");
		if (!have_progress)
			a->poll = true;
		return 0;
	}
	if (!have_test)
		return perf_bad(err, errlen, "--test is required");
	if (a->iters && have_duration)
		return perf_bad(err, errlen, "--iters (-n) and --duration (-D): choose one");
	if (a->go_back_n && a->unordered)
		return perf_bad(err, errlen, "--gbn delivers in order: not with --order unordered");
	if (a->bidir && !perf_test_is_bw(a->test))
		return perf_bad(err, errlen, "--bidirectional (-b): bandwidth tests only (write_bw, read_bw, "
				"send_bw), not %s", perf_test_name(a->test));
	if (!a->nsizes)
		a->sizes[a->nsizes++] = perf_test_is_bw(a->test) ? 65536 : 8;
	for (__u32 i = 0; a->bidir && i < a->nsizes; i++)
		if (a->sizes[i] > PERF_MAX_BIDIR_SIZE)
			return perf_bad(err, errlen, "--bidirectional (-b): sizes up to 32 MiB (each end's "
					"buffer holds both directions), not %u", a->sizes[i]);
	if (!have_progress)
		a->poll = !perf_test_is_bw(a->test);
	return 0;
}
