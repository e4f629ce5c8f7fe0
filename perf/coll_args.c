// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <arpa/inet.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argerr.h"
#include "coll_args.h"

const char *const coll_kind_names[] = {
	[MROCE_COLL_ALLREDUCE] = "allreduce", [MROCE_COLL_REDUCE_SCATTER] = "reducescatter",
	[MROCE_COLL_ALLGATHER] = "allgather", [MROCE_COLL_BROADCAST] = "broadcast",
	[MROCE_COLL_ALLTOALL] = "alltoall",
};

/* nccl-tests' program names, same order */
static const char *const nccl_names[] = {
	[MROCE_COLL_ALLREDUCE] = "all_reduce_perf", [MROCE_COLL_REDUCE_SCATTER] = "reduce_scatter_perf",
	[MROCE_COLL_ALLGATHER] = "all_gather_perf", [MROCE_COLL_BROADCAST] = "broadcast_perf",
	[MROCE_COLL_ALLTOALL] = "alltoall_perf",
};

#define NKINDS	((int)(sizeof(coll_kind_names) / sizeof(coll_kind_names[0])))

const char coll_usage[] =
"usage: mroce-coll-perf [options]   (one process per rank: mroce-launch starts them)\n"
"  -c, --coll NAME      allreduce (default), reducescatter, allgather, broadcast, alltoall\n"
"  -b, --minbytes N     smallest size (suffix K, M, G: KiB, MiB, GiB; default 8)\n"
"  -e, --maxbytes N     largest size (default 16M)\n"
"  -f, --stepfactor F   multiply the size by F > 1 each step (default 2), or\n"
"  -i, --stepbytes N    add N bytes each step\n"
"  -n, --iters N        timed iterations per size, 1..1000000 (default 20)\n"
"  -w, --warmup_iters N untimed iterations first, 0..1000000 (default 5)\n"
"  -c, --check 0|1      count wrong elements in a separate run of each size (default 1)\n"
"  -z, --blocking 0|1   1: blocking calls (default); 0: start all iterations, then wait\n"
"  -d, --datatype T     float (default), double, int32, int64, uint8\n"
"  -o, --op OP          sum (default), prod, min, max\n"
"  -r, --root R         broadcast's root rank (default 0)\n"
"  -g, --ngpus 1        accepted as 1 only: a rank is a process on a NIC, no GPU\n"
"  -t, --nthreads 1     accepted as 1 only: one thread per rank\n"
"      --json           one JSON object on rank 0's stdout instead of the table\n"
"      --stats          each rank's transport counters on stderr at the end\n"
"      --warmup-ms MS   back-to-back 64 KiB all-reduces first, 0..600000 (default 500)\n"
"      --chunk BYTES    the communicator's pipeline unit (default 256K)\n"
"  -h, --help           this text;  -V, --version  the version\n"
"The collective may also come from the program's name, as in nccl-tests (a link named\n"
"all_reduce_perf, all_gather_perf, alltoall_perf, reduce_scatter_perf or broadcast_perf,\n"
"with or without nccl-tests' MPI suffix _mpi). Its other names (reduce_perf, gather_perf,\n"
"scatter_perf, sendrecv_perf, hypercube_perf) are refused: mroce lacks those collectives.\n"
"The whole description: man mroce-coll-perf\n";

/* Whole decimal digits, then optionally K, M or G (powers of 1024); <= max. */
static int parse_size(const char *s, unsigned long long max, size_t *out)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	}
	if (*end || n > (max >> shift))
		return -1;
	*out = (size_t)(n << shift);
	return 0;
}

/* Whole decimal digits in [lo, hi]. */
static int parse_int(const char *s, long lo, long hi, int *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int lookup(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return i;
	return -1;
}

static int dtype_of(const char *s)
{
	static const struct { const char *name; enum mroce_coll_dtype t; } types[] = {
		{ "float", MROCE_COLL_FLOAT32 }, { "float32", MROCE_COLL_FLOAT32 },
		{ "double", MROCE_COLL_FLOAT64 }, { "float64", MROCE_COLL_FLOAT64 },
		{ "int32", MROCE_COLL_INT32 }, { "int", MROCE_COLL_INT32 },
		{ "int64", MROCE_COLL_INT64 }, { "uint8", MROCE_COLL_UINT8 },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(s, types[i].name))
			return (int)types[i].t;
	return -1;
}

enum { O_JSON = 256, O_STATS, O_WARMUP_MS, O_CHUNK };

int coll_parse_args(int argc, char **argv, struct coll_args *a, char *err, size_t errlen)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, O_JSON }, { "stats", no_argument, NULL, O_STATS },
		{ "warmup-ms", required_argument, NULL, O_WARMUP_MS },
		{ "chunk", required_argument, NULL, O_CHUNK },
		{ "coll", required_argument, NULL, 'C' }, { "check", required_argument, NULL, 'c' },
		{ "minbytes", required_argument, NULL, 'b' }, { "maxbytes", required_argument, NULL, 'e' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "stepbytes", required_argument, NULL, 'i' }, { "iters", required_argument, NULL, 'n' },
		{ "warmup_iters", required_argument, NULL, 'w' },
		{ "blocking", required_argument, NULL, 'z' },
		{ "datatype", required_argument, NULL, 'd' }, { "op", required_argument, NULL, 'o' },
		{ "root", required_argument, NULL, 'r' }, { "ngpus", required_argument, NULL, 'g' },
		{ "nthreads", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' }, { 0, 0, 0, 0 }
	};
	static const char *const ops[] = { "sum", "prod", "min", "max" };
	const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
	bool have_f = false, have_i = false;
	const char *bad_name = NULL;
	char name[64];
	size_t blen;
	int o, v;

	*a = (struct coll_args){ .kind = MROCE_COLL_ALLREDUCE, .minb = 8, .maxb = 16 << 20,
				 .factor = 2, .iters = 20, .warmup = 5, .warmup_ms = 500,
				 .check = true, .blocking = true };
	base = base ? base + 1 : argc > 0 && argv[0] ? argv[0] : "";
	/* nccl-tests built with MPI=1 names them all_reduce_perf_mpi and so on */
	blen = strlen(base);
	if (blen > 4 && !strcmp(base + blen - 4, "_mpi"))
		blen -= 4;
	snprintf(name, sizeof(name), "%.*s", (int)blen, base);
	if ((v = lookup(name, nccl_names, NKINDS)) >= 0)
		a->kind = (enum mroce_coll_kind)v;
	else if (strstr(base, "_perf"))	/* nccl-tests' reduce_perf, sendrecv_perf, ...: not here */
		bad_name = base;
	optind = 0;	/* 0: glibc forgets a cluster left half-read by an earlier call */
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":c:b:e:f:i:n:w:z:d:o:r:g:t:hV", lopts, NULL)) != -1) {
		switch (o) {
		case 'c':	/* nccl-tests' check flag, or (mroce's older spelling) the collective */
			if (!strcmp(optarg, "0") || !strcmp(optarg, "1")) {
				a->check = optarg[0] == '1';
				break;
			}
			/* fall through */
		case 'C':
			v = lookup(optarg, coll_kind_names, NKINDS);
			if (v < 0)
				return perf_bad(err, errlen, "%s: '%s' is neither 0/1 (check) nor a collective "
					   "(allreduce reducescatter allgather broadcast alltoall)",
					   o == 'c' ? "-c" : "--coll", optarg);
			a->kind = (enum mroce_coll_kind)v;
			bad_name = NULL;	/* chosen by name: the program's name does not matter */
			break;
		case 'b':
		case 'e':
			if (parse_size(optarg, COLL_MAX_BYTES, o == 'b' ? &a->minb : &a->maxb))
				return perf_bad(err, errlen, "-%c: '%s' is not a size from 0 to 1024G (digits, "
					   "then K, M or G)", o, optarg);
			break;
		case 'f': {
			char *end;

			errno = 0;
			a->factor = isdigit((unsigned char)optarg[0]) ? strtod(optarg, &end) : 0;
			if (!isdigit((unsigned char)optarg[0]) || errno || *end || !isfinite(a->factor) ||
			    a->factor <= 1 || a->factor > 1024)
				return perf_bad(err, errlen, "-f: '%s' is not a step factor > 1 (up to 1024)",
					   optarg);
			have_f = true;
			break;
		}
		case 'i':
			if (parse_size(optarg, COLL_MAX_BYTES, &a->stepbytes) || !a->stepbytes)
				return perf_bad(err, errlen, "-i: '%s' is not a step of 1 byte to 1024G", optarg);
			have_i = true;
			break;
		case 'n':
			if (parse_int(optarg, 1, 1000000, &a->iters))
				return perf_bad(err, errlen, "-n: '%s' is not a count from 1 to 1000000", optarg);
			break;
		case 'w':
			if (parse_int(optarg, 0, 1000000, &a->warmup))
				return perf_bad(err, errlen, "-w: '%s' is not a count from 0 to 1000000", optarg);
			break;
		case 'z':
			if (parse_int(optarg, 0, 1, &v))
				return perf_bad(err, errlen, "-z: '%s' is not 0 or 1", optarg);
			a->blocking = v;
			break;
		case 'd':
			if ((v = dtype_of(optarg)) < 0)
				return perf_bad(err, errlen, "-d: type '%s' is not one mroce has (float, double, "
					   "int32, int64, uint8)", optarg);
			a->dtype = (enum mroce_coll_dtype)v;
			break;
		case 'o':
			if ((v = lookup(optarg, ops, 4)) < 0)
				return perf_bad(err, errlen, "-o: reduction '%s' is not one mroce has (sum, prod, "
					   "min, max)", optarg);
			a->op = (enum mroce_coll_redop)v;
			break;
		case 'r':
			if (parse_int(optarg, 0, 4095, &a->root))
				return perf_bad(err, errlen, "-r: '%s' is not a rank", optarg);
			break;
		case 'g':
			if (strcmp(optarg, "1"))
				return perf_bad(err, errlen, "-g %s: there are no GPUs here: a rank is one process "
					   "on one NIC (mroce-launch -n N starts N ranks); only -g 1",
					   optarg);
			break;
		case 't':
			if (strcmp(optarg, "1"))
				return perf_bad(err, errlen, "-t %s: a rank is one process with one thread "
					   "(mroce-launch -n N starts N ranks); only -t 1", optarg);
			break;
		case O_JSON:
			a->json = true;
			break;
		case O_STATS:
			a->stats = true;
			break;
		case O_CHUNK:
			if (parse_size(optarg, 1 << 20, &a->chunk))
				return perf_bad(err, errlen, "--chunk: '%s' is not a size up to 1M", optarg);
			break;
		case O_WARMUP_MS:
			if (parse_int(optarg, 0, 600000, &a->warmup_ms))
				return perf_bad(err, errlen, "--warmup-ms: '%s' is not 0..600000 ms", optarg);
			break;
		case 'h':
			return COLL_ARGS_HELP;
		case 'V':
			return COLL_ARGS_VERSION;
		default:	/* '?' or ':' */
			return perf_bad_option(err, errlen, argc, argv, lopts, o);
		}
	}
	if (bad_name)	/* after the options: --help, --version and -c still answer */
		return perf_bad(err, errlen, "'%s' is a collective mroce-coll-perf does not have: "
				"run it as all_reduce_perf, reduce_scatter_perf, all_gather_perf, "
				"broadcast_perf or alltoall_perf, or pick one with -c", bad_name);
	if (optind < argc)
		return perf_bad(err, errlen, "unexpected argument '%s'", argv[optind]);
	if (a->minb > a->maxb)
		return perf_bad(err, errlen, "-b is larger than -e");
	if (have_f && have_i)
		return perf_bad(err, errlen, "-f and -i: choose one (a factor or a step in bytes)");
	if (have_i)
		a->factor = 0;
	if (a->root && a->kind != MROCE_COLL_BROADCAST)
		return perf_bad(err, errlen, "-r: only broadcast has a root");
	return 0;
}

/* $name as whole decimal digits in [lo, hi]: 0, -ENOENT if unset or empty, -EINVAL. */
static int env_number(const char *name, long lo, long hi, long *out, const char **val)
{
	char *end;
	long v;

	*val = getenv(name);
	if (!*val || !**val)
		return -ENOENT;
	if (!isdigit((unsigned char)**val))
		return -EINVAL;
	errno = 0;
	v = strtol(*val, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

#define LAUNCHED_BY "one process per rank, as mroce-launch -n N or torchrun start them"

int coll_env_check(char *err, size_t errlen)
{
	struct in_addr addr;
	const char *s;
	long rank = 0, size = 0, port;
	int e;

	e = env_number("WORLD_SIZE", 1, MROCE_COLL_MAX_RANKS, &size, &s);
	if (e == -ENOENT)
		return perf_bad(err, errlen, "WORLD_SIZE is not set: the number of ranks (" LAUNCHED_BY ")");
	if (e)
		return perf_bad(err, errlen, "WORLD_SIZE='%s' is not a number of ranks from 1 to %d",
				s, MROCE_COLL_MAX_RANKS);
	e = env_number("RANK", 0, size - 1, &rank, &s);
	if (e == -ENOENT)
		return perf_bad(err, errlen, "RANK is not set: this process's rank, 0..%ld (" LAUNCHED_BY ")",
				size - 1);
	if (e)
		return perf_bad(err, errlen, "RANK='%s' is not a rank of WORLD_SIZE=%ld (0..%ld)", s, size,
				size - 1);
	if (size > 1) {
		s = getenv("MASTER_ADDR");
		if (!s || !*s)
			return perf_bad(err, errlen, "MASTER_ADDR is not set: rank 0's IPv4 address, where the "
					"ranks meet (" LAUNCHED_BY ")");
		if (inet_pton(AF_INET, s, &addr) != 1)
			return perf_bad(err, errlen, "MASTER_ADDR='%s' is not an IPv4 address such as "
					"198.18.2.1", s);
	}
	if (env_number("MASTER_PORT", 1, 65535, &port, &s) == -EINVAL)
		return perf_bad(err, errlen, "MASTER_PORT='%s' is not a TCP port (1-65535)", s);
	return 0;
}

size_t coll_next_size(const struct coll_args *a, size_t size)
{
	double next;

	if (!a->factor)
		return a->stepbytes > a->maxb || size > a->maxb - a->stepbytes ? 0 : size + a->stepbytes;
	next = fmax((double)size * a->factor, (double)size + 1);
	return next > (double)a->maxb ? 0 : (size_t)next;
}
