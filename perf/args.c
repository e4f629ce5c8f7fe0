// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

const char perf_usage[] =
"usage: mroce-perf server --dev DEV --addr ADDR [--port N]\n"
"       mroce-perf client --dev DEV --addr SERVER [--port N] --test TEST [options]\n"
"tests: write_bw write_lat read_bw read_lat send_bw send_lat\n"
"  --size BYTES       message size, 8 B .. 64 MiB (suffix k, m: KiB, MiB); default 65536 (bw), 8 (lat)\n"
"  --sweep            sizes 8 B, 64 B, 512 B, 4 KiB, 64 KiB, 1 MiB, 16 MiB, 64 MiB\n"
"  --qps N            connections (a data QP each, plus a control QP), 1..128 (default 1)\n"
"  --paths N          UDP source ports each QP sprays over, 1..256 (default 4)\n"
"  --depth N          bandwidth tests: requests in flight per QP, 1..256 (default 16)\n"
"  --window N         packets in flight per QP, 16..896 (default: the library's)\n"
"  --order ordered|unordered\n"
"  --gbn              go-back-N (RoCEv2-like) instead of selective repeat\n"
"  --duration S       seconds per size (default 2), or\n"
"  --iters N          operations per size\n"
"  --port N           connection manager TCP port (default 18515)\n"
"  --progress thread|poll  who runs the transport: the library's thread (sleeps when idle),\n"
"                     or this process busy-polling (default: poll for *_lat and the server)\n"
"  --memory heap|dm   where the buffers live: the heap (default), or device memory,\n"
"                     into which XDP places arriving WRITEs itself (docs/benchmarks.md: on veth\n"
"                     that moves the copy to the sender's CPU and does not pay)\n"
"  --json             one JSON object per size instead of text\n";

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

static int bad(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* A whole number in [lo, hi], with an optional k/m (KiB/MiB) suffix if sized. */
static int number(const char *s, unsigned long long lo, unsigned long long hi, bool sized,
		  unsigned long long *v)
{
	char *end;
	unsigned long long n;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (sized && (*end == 'k' || *end == 'K')) {
		n <<= 10;
		end++;
	} else if (sized && (*end == 'm' || *end == 'M')) {
		n <<= 20;
		end++;
	}
	if (*end || n < lo || n > hi)
		return -ERANGE;
	*v = n;
	return 0;
}

int perf_parse_args(int argc, char **argv, struct perf_args *a, char *err, size_t errlen)
{
	static const struct option lo[] = {
		{ "dev", 1, 0, 'd' }, { "addr", 1, 0, 'a' }, { "port", 1, 0, 'p' },
		{ "test", 1, 0, 't' }, { "size", 1, 0, 's' }, { "sweep", 0, 0, 'S' },
		{ "qps", 1, 0, 'q' }, { "paths", 1, 0, 'P' }, { "depth", 1, 0, 'D' },
		{ "order", 1, 0, 'o' }, { "gbn", 0, 0, 'g' }, { "duration", 1, 0, 'u' },
		{ "iters", 1, 0, 'n' }, { "json", 0, 0, 'j' }, { "help", 0, 0, 'h' },
		{ "progress", 1, 0, 'm' }, { "window", 1, 0, 'W' }, { "memory", 1, 0, 'M' },
		{ 0, 0, 0, 0 },
	};
	static const __u32 sweep[] = { 8, 64, 512, 4096, 65536, 1 << 20, 16 << 20, 64 << 20 };
	unsigned long long v;
	bool have_test = false, have_size = false, have_progress = false;
	int c;

	memset(a, 0, sizeof(*a));
	a->port = 18515;
	a->qps = 1;
	a->paths = 4;
	a->depth = 16;
	a->duration_s = 2;
	if (argc < 2)
		return bad(err, errlen, "server or client?");
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return 1;
	if (strcmp(argv[1], "server") && strcmp(argv[1], "client"))
		return bad(err, errlen, "unknown mode '%s' (server or client)", argv[1]);
	a->server = !strcmp(argv[1], "server");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, ":", lo, NULL)) != -1) {
		/* argv + 1 is what getopt sees: its argv[optind - 1] is our argv[optind]. */
		const char *opt = argv[optind] ? argv[optind] : "?";

		switch (c) {
		case 'd': a->dev = optarg; break;
		case 'a': a->addr = optarg; break;
		case 'p':
			if (number(optarg, 1, 65535, false, &v))
				return bad(err, errlen, "--port: '%s' is not a port (1-65535)", optarg);
			a->port = (__u16)v;
			break;
		case 't':
			for (c = 0; c < PERF_TESTS && strcmp(optarg, names[c]); c++)
				;
			if (c == PERF_TESTS)
				return bad(err, errlen, "--test: unknown test '%s' (write_bw write_lat read_bw "
					   "read_lat send_bw send_lat)", optarg);
			a->test = (enum perf_test)c;
			have_test = true;
			break;
		case 's':
			if (number(optarg, PERF_MIN_SIZE, PERF_MAX_SIZE, true, &v))
				return bad(err, errlen, "--size: '%s' is not a size from 8 B to 64 MiB", optarg);
			if (a->nsizes)
				return bad(err, errlen, "--size and --sweep: choose one");
			a->sizes[a->nsizes++] = (__u32)v;
			have_size = true;
			break;
		case 'S':
			if (a->nsizes)
				return bad(err, errlen, "--size and --sweep: choose one");
			memcpy(a->sizes, sweep, sizeof(sweep));
			a->nsizes = sizeof(sweep) / sizeof(sweep[0]);
			have_size = true;
			break;
		case 'q':
			if (number(optarg, 1, PERF_MAX_QPS, false, &v))
				return bad(err, errlen, "--qps: '%s' is not 1..%d", optarg, PERF_MAX_QPS);
			a->qps = (__u32)v;
			break;
		case 'P':
			if (number(optarg, 1, 256, false, &v))
				return bad(err, errlen, "--paths: '%s' is not 1..256", optarg);
			a->paths = (__u32)v;
			break;
		case 'D':
			if (number(optarg, 1, 256, false, &v))
				return bad(err, errlen, "--depth: '%s' is not 1..256", optarg);
			a->depth = (__u32)v;
			break;
		case 'o':
			if (strcmp(optarg, "ordered") && strcmp(optarg, "unordered"))
				return bad(err, errlen, "--order: '%s' (ordered or unordered)", optarg);
			a->unordered = !strcmp(optarg, "unordered");
			break;
		case 'g': a->go_back_n = true; break;
		case 'W':
			if (number(optarg, 16, 896, false, &v))
				return bad(err, errlen, "--window: '%s' is not 16..896", optarg);
			a->window = (__u32)v;
			break;
		case 'u': {
			char *end;

			a->duration_s = strtod(optarg, &end);
			if (end == optarg || *end || !(a->duration_s > 0) || a->duration_s > 3600)
				return bad(err, errlen, "--duration: '%s' is not 0..3600 seconds", optarg);
			break;
		}
		case 'n':
			if (number(optarg, 1, 1ULL << 40, false, &v))
				return bad(err, errlen, "--iters: '%s' is not a positive count", optarg);
			a->iters = v;
			break;
		case 'j': a->json = true; break;
		case 'm':
			if (strcmp(optarg, "thread") && strcmp(optarg, "poll"))
				return bad(err, errlen, "--progress: '%s' (thread or poll)", optarg);
			a->poll = !strcmp(optarg, "poll");
			have_progress = true;
			break;
		case 'M':
			if (strcmp(optarg, "dm") && strcmp(optarg, "heap"))
				return bad(err, errlen, "--memory: '%s' (dm or heap)", optarg);
			a->dm = !strcmp(optarg, "dm");
			break;
		case 'h': return 1;
		case ':':
			return bad(err, errlen, "%s needs a value", opt);
		default:
			return bad(err, errlen, "unknown option '%s'", opt);
		}
	}
	if (optind + 1 < argc)
		return bad(err, errlen, "unexpected argument '%s'", argv[optind + 1]);
	if (!a->dev)
		return bad(err, errlen, "--dev is required");
	if (!a->addr)
		return bad(err, errlen, a->server ? "--addr (the address to listen on) is required" :
						    "--addr (the server's address) is required");
	if (a->server) {
		if (have_test || have_size)
			return bad(err, errlen, "the server takes no --test or --size: the client chooses");
		if (!have_progress)
			a->poll = true;
		return 0;
	}
	if (!have_test)
		return bad(err, errlen, "--test is required");
	if (a->go_back_n && a->unordered)
		return bad(err, errlen, "--gbn delivers in order: not with --order unordered");
	if (!a->nsizes)
		a->sizes[a->nsizes++] = perf_test_is_bw(a->test) ? 65536 : 8;
	if (!have_progress)
		a->poll = !perf_test_is_bw(a->test);
	return 0;
}
