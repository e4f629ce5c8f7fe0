// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce-coll-perf: collective bandwidth and time, nccl-tests style. One
 * process per rank (tools/mroce-launch starts them); rank 0 prints.
 *
 *   mroce-coll-perf [-c allreduce|alltoall|allgather|reducescatter|broadcast]
 *                   [-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-n ITERS] [-w WARMUP]
 *                   [-d float|double|int32|int64|uint8] [-o sum|prod|min|max] [--json]
 *                   [--stats]   (each rank's transport counters on stderr at the end)
 *                   [--warmup-ms MS]   (back-to-back 64 KiB all-reduces first; 500)
 *                   [--chunk BYTES]    (the communicator's pipeline unit; 256K)
 *
 * size is the bytes of one rank's full vector (all-reduce, broadcast: the
 * buffer; all-to-all, all-gather, reduce-scatter: the whole send or receive
 * buffer of count x ranks), rounded down to whole elements per rank; count
 * is size in elements (as nccl-tests prints it). time is the mean over ITERS, the slowest rank's.
 * algbw = size / time; busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n
 * (the others, 1 for broadcast): what the busiest link carries, comparable
 * across rank counts. #wrong comes from a separate checked run, every
 * element against a reference (summed over ranks). selftests/bench/
 * mpi_coll_perf.c prints the same for Open MPI.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mroce/mroce.h>

#include "json.h"

struct args {
	enum mroce_coll_kind	kind;
	size_t			minb, maxb;
	double			factor;
	int			iters, warmup;
	enum mroce_coll_dtype	dtype;
	enum mroce_coll_redop	op;
	bool			json;
	bool			stats;
	int			warmup_ms;
	size_t			chunk;
};

static const char *const kind_names[] = {
	[MROCE_COLL_ALLREDUCE] = "allreduce", [MROCE_COLL_REDUCE_SCATTER] = "reducescatter",
	[MROCE_COLL_ALLGATHER] = "allgather", [MROCE_COLL_BROADCAST] = "broadcast",
	[MROCE_COLL_ALLTOALL] = "alltoall",
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	switch (*end) {
	case 'K': case 'k': v *= 1024; end++; break;
	case 'M': case 'm': v *= 1024 * 1024; end++; break;
	case 'G': case 'g': v *= 1024.0 * 1024 * 1024; end++; break;
	}
	if (*end || v > (double)(1ull << 40))
		return -1;
	*out = (size_t)v;
	return 0;
}

static int lookup(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return i;
	return -1;
}

static int parse_args(int argc, char **argv, struct args *a, char *err, size_t errlen)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' }, { "stats", no_argument, NULL, 's' },
		{ "warmup-ms", required_argument, NULL, 'W' },
		{ "chunk", required_argument, NULL, 'C' }, { 0 }
	};
	static const char *const dtypes[] = { "float", "double", "int32", "int64", "uint8" };
	static const char *const ops[] = { "sum", "prod", "min", "max" };
	int o, v;

	*a = (struct args){ .kind = MROCE_COLL_ALLREDUCE, .minb = 8, .maxb = 16 << 20,
			    .factor = 2, .iters = 20, .warmup = 5, .warmup_ms = 500 };
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "c:b:e:f:n:w:d:o:", lopts, NULL)) != -1) {
		switch (o) {
		case 'c':
			v = lookup(optarg, kind_names, 5);
			if (v < 0)
				return snprintf(err, errlen, "-c: unknown collective '%s'", optarg), -1;
			a->kind = (enum mroce_coll_kind)v;
			break;
		case 'b':
		case 'e':
			if (parse_size(optarg, o == 'b' ? &a->minb : &a->maxb))
				return snprintf(err, errlen, "-%c: bad size '%s'", o, optarg), -1;
			break;
		case 'f':
			a->factor = atof(optarg);
			if (a->factor <= 1)
				return snprintf(err, errlen, "-f: factor must be > 1"), -1;
			break;
		case 'n':
		case 'w':
			v = atoi(optarg);
			if (v < (o == 'n') || v > 1000000)
				return snprintf(err, errlen, "-%c: bad count '%s'", o, optarg), -1;
			*(o == 'n' ? &a->iters : &a->warmup) = v;
			break;
		case 'd':
			v = lookup(optarg, dtypes, 5);
			if (v < 0)
				return snprintf(err, errlen, "-d: unknown type '%s'", optarg), -1;
			a->dtype = (enum mroce_coll_dtype)v;
			break;
		case 'o':
			v = lookup(optarg, ops, 4);
			if (v < 0)
				return snprintf(err, errlen, "-o: unknown reduction '%s'", optarg), -1;
			a->op = (enum mroce_coll_redop)v;
			break;
		case 'j':
			a->json = true;
			break;
		case 's':
			a->stats = true;
			break;
		case 'C':
			if (parse_size(optarg, &a->chunk) || a->chunk > (1 << 20))
				return snprintf(err, errlen, "--chunk: bad size '%s'", optarg), -1;
			break;
		case 'W':
			v = atoi(optarg);
			if (v < 0 || v > 600000)
				return snprintf(err, errlen, "--warmup-ms: bad time '%s'", optarg), -1;
			a->warmup_ms = v;
			break;
		default:
			return snprintf(err, errlen, "unknown option or missing value: %s",
					argv[optind - 1]), -1;
		}
	}
	if (optind < argc)
		return snprintf(err, errlen, "unexpected argument '%s'", argv[optind]), -1;
	if (a->minb > a->maxb)
		return snprintf(err, errlen, "-b is larger than -e"), -1;
	return 0;
}

/* ---- one size ------------------------------------------------------------------ */

struct bufs {
	void	*send, *recv;
	size_t	count;		/* elements per rank (all-reduce, broadcast: of the vector) */
	size_t	send_bytes, recv_bytes;
};

static void layout(const struct args *a, int n, size_t size, struct bufs *b)
{
	size_t esz = mroce_coll_dtype_size(a->dtype);

	switch (a->kind) {
	case MROCE_COLL_ALLREDUCE:
	case MROCE_COLL_BROADCAST:
		b->count = size / esz;
		b->send_bytes = b->recv_bytes = b->count * esz;
		break;
	case MROCE_COLL_ALLTOALL:
		b->count = size / esz / (size_t)n;
		b->send_bytes = b->recv_bytes = b->count * esz * (size_t)n;
		break;
	case MROCE_COLL_ALLGATHER:
		b->count = size / esz / (size_t)n;
		b->send_bytes = b->count * esz;
		b->recv_bytes = b->count * esz * (size_t)n;
		break;
	default:	/* reduce-scatter */
		b->count = size / esz / (size_t)n;
		b->send_bytes = b->count * esz * (size_t)n;
		b->recv_bytes = b->count * esz;
		break;
	}
}

static int run_op(struct mroce_coll_comm *c, const struct args *a, struct bufs *b)
{
	switch (a->kind) {
	case MROCE_COLL_ALLREDUCE:
		return mroce_coll_allreduce(c, b->send, b->recv, b->count, a->dtype, a->op);
	case MROCE_COLL_ALLTOALL:
		return mroce_coll_alltoall(c, b->send, b->recv, b->count, a->dtype);
	case MROCE_COLL_ALLGATHER:
		return mroce_coll_allgather(c, b->send, b->recv, b->count, a->dtype);
	case MROCE_COLL_REDUCE_SCATTER:
		return mroce_coll_reduce_scatter(c, b->send, b->recv, b->count, a->dtype, a->op);
	default:
		return mroce_coll_broadcast(c, b->recv, b->count, a->dtype, 0);
	}
}

/* The same pattern as mpi_coll_perf: v(r, i) = ((7r + 3i) mod 11) + 1. */
static double v(int r, size_t i)
{
	return (double)((r * 7 + i * 3) % 11) + 1;
}

static void store(enum mroce_coll_dtype t, void *p, size_t i, double x)
{
	switch (t) {
	case MROCE_COLL_FLOAT32: ((float *)p)[i] = (float)x; break;
	case MROCE_COLL_FLOAT64: ((double *)p)[i] = x; break;
	case MROCE_COLL_INT32:	 ((int32_t *)p)[i] = (int32_t)x; break;
	case MROCE_COLL_INT64:	 ((int64_t *)p)[i] = (int64_t)x; break;
	default:		 ((uint8_t *)p)[i] = (uint8_t)x; break;
	}
}

static bool equal(enum mroce_coll_dtype t, const void *p, size_t i, const void *want)
{
	switch (t) {
	case MROCE_COLL_FLOAT32: {
		float g = ((const float *)p)[i], w = *(const float *)want;

		return fabsf(g - w) <= 1e-5f * fmaxf(1.0f, fabsf(w));
	}
	case MROCE_COLL_FLOAT64: {
		double g = ((const double *)p)[i], w = *(const double *)want;

		return fabs(g - w) <= 1e-12 * fmax(1.0, fabs(w));
	}
	case MROCE_COLL_INT32:	return ((const int32_t *)p)[i] == *(const int32_t *)want;
	case MROCE_COLL_INT64:	return ((const int64_t *)p)[i] == *(const int64_t *)want;
	default:		return ((const uint8_t *)p)[i] == *(const uint8_t *)want;
	}
}

/* want = fold over ranks 0..n-1 of v(r, si), in the element type's arithmetic */
static void expect(const struct args *a, int n, size_t si, void *want)
{
	double acc = v(0, si);
	uint64_t iacc = (uint64_t)acc;

	for (int r = 1; r < n; r++) {
		double x = v(r, si);

		switch (a->op) {
		case MROCE_COLL_SUM:  acc += x; iacc += (uint64_t)x; break;
		case MROCE_COLL_PROD: acc *= x; iacc *= (uint64_t)x; break;
		case MROCE_COLL_MIN:  acc = fmin(acc, x); iacc = (uint64_t)acc; break;
		default:	      acc = fmax(acc, x); iacc = (uint64_t)acc; break;
		}
	}
	switch (a->dtype) {
	case MROCE_COLL_FLOAT32: *(float *)want = (float)acc; break;
	case MROCE_COLL_FLOAT64: *(double *)want = acc; break;
	case MROCE_COLL_INT32:	 *(int32_t *)want = (int32_t)(uint32_t)iacc; break;
	case MROCE_COLL_INT64:	 *(int64_t *)want = (int64_t)iacc; break;
	default:		 *(uint8_t *)want = (uint8_t)iacc; break;
	}
}

/* Fill, run once, count wrong elements on this rank. */
static long long check(struct mroce_coll_comm *c, const struct args *a, struct bufs *b, int *err)
{
	int r = mroce_coll_rank(c), n = mroce_coll_size(c);
	size_t esz = mroce_coll_dtype_size(a->dtype), nsend = b->send_bytes / esz;
	size_t nrecv = b->recv_bytes / esz;
	long long wrong = 0;
	__u8 want[8];

	for (size_t i = 0; i < nsend; i++)
		store(a->dtype, b->send, i, v(r, i));
	memset(b->recv, 0xee, b->recv_bytes);
	if (a->kind == MROCE_COLL_BROADCAST && r == 0)
		memcpy(b->recv, b->send, b->recv_bytes);
	*err = run_op(c, a, b);
	if (*err)
		return -1;
	for (size_t i = 0; i < nrecv; i++) {
		size_t blk = b->count;

		switch (a->kind) {
		case MROCE_COLL_ALLREDUCE:
			expect(a, n, i, want);
			break;
		case MROCE_COLL_REDUCE_SCATTER:
			expect(a, n, (size_t)r * blk + i, want);
			break;
		case MROCE_COLL_ALLGATHER:
			store(a->dtype, want, 0, v((int)(i / blk), i % blk));
			break;
		case MROCE_COLL_ALLTOALL:
			store(a->dtype, want, 0, v((int)(i / blk), (size_t)r * blk + i % blk));
			break;
		default:
			store(a->dtype, want, 0, v(0, i));
			break;
		}
		wrong += !equal(a->dtype, b->recv, i, want);
	}
	return wrong;
}

/*
 * Back-to-back 64 KiB all-reduces for warmup_ms (rank 0's clock decides, so
 * every rank runs the same number). On veth, the kernel's XDP receive path
 * runs at about half speed for the first few thousand packets of an
 * interface (sendto() of one frame took 40-48 us, then 22 us); a training
 * job is long past that, a benchmark's first sizes are not.
 */
static int warm_up(struct mroce_coll_comm *c, int ms)
{
	float *b = calloc(16384, sizeof(float));
	double t0 = now_us();
	int err = b ? 0 : -ENOMEM;

	for (int go = ms > 0; !err && go;) {
		err = mroce_coll_allreduce(c, b, b, 16384, MROCE_COLL_FLOAT32, MROCE_COLL_SUM);
		go = now_us() - t0 < ms * 1e3;
		if (!err)
			err = mroce_coll_broadcast(c, &go, 1, MROCE_COLL_INT32, 0);
	}
	free(b);
	return err;
}

int main(int argc, char **argv)
{
	MROCE_OPTS(mroce_coll_opts, copts, .rank = -1);
	struct mroce_coll_comm *c;
	struct json_object *report = NULL;
	char msg[160];
	struct args a;
	bool reduces;
	int err, n, r;

	if (parse_args(argc, argv, &a, msg, sizeof(msg))) {
		fprintf(stderr, "mroce-coll-perf: %s\n", msg);
		return 2;
	}
	copts.chunk_bytes = (__u32)a.chunk;
	err = mroce_coll_comm_create(&copts, &c);
	if (err) {
		mroce_strerror(err, msg, sizeof(msg));
		fprintf(stderr, "mroce-coll-perf: joining the communicator: %s\n", msg);
		return 1;
	}
	n = mroce_coll_size(c);
	r = mroce_coll_rank(c);
	err = warm_up(c, a.warmup_ms);
	reduces = a.kind == MROCE_COLL_ALLREDUCE || a.kind == MROCE_COLL_REDUCE_SCATTER;
	if (!r && a.json) {
		struct coll_run run = {
			.coll = kind_names[a.kind], .ranks = n, .type = mroce_coll_dtype_str(a.dtype),
			.op = reduces ? mroce_coll_redop_str(a.op) : "-", .iters = a.iters,
		};

		if (!(report = perf_json_coll_run(&run)) && !err)
			err = -ENOMEM;
	} else if (!r)
		printf("# mroce-coll-perf: %s, %d ranks, %s%s%s, %d iters\n"
		       "#%12s %11s %7s %7s %15s %11s %12s %12s %7s\n", kind_names[a.kind], n,
		       mroce_coll_dtype_str(a.dtype), reduces ? " " : "",
		       reduces ? mroce_coll_redop_str(a.op) : "", a.iters, "size", "count", "type",
		       "redop", "algo", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
	for (size_t size = a.minb; !err && size <= a.maxb;
	     size = (size_t)fmax((double)size * a.factor, (double)size + 1)) {
		struct bufs b = { 0 };
		double t0, t, tmax, algbw, busbw;
		long long wrong, total = 0;
		size_t bytes;
		const char *algo;

		layout(&a, n, size, &b);
		bytes = b.send_bytes > b.recv_bytes ? b.send_bytes : b.recv_bytes;
		if (!bytes && size)
			continue;	/* fewer bytes than one element per rank */
		b.send = malloc(b.send_bytes + 64);
		b.recv = malloc(b.recv_bytes + 64);
		if (!b.send || !b.recv) {
			err = -ENOMEM;
			break;
		}
		memset(b.send, 1, b.send_bytes);
		for (int i = 0; !err && i < a.warmup; i++)
			err = run_op(c, &a, &b);
		if (!err)
			err = mroce_coll_barrier(c);
		t0 = now_us();
		for (int i = 0; !err && i < a.iters; i++)
			err = run_op(c, &a, &b);
		t = (now_us() - t0) / a.iters;
		if (!err)
			err = mroce_coll_allreduce(c, &t, &tmax, 1, MROCE_COLL_FLOAT64,
						   MROCE_COLL_MAX);
		wrong = err ? -1 : check(c, &a, &b, &err);
		if (!err)
			err = mroce_coll_allreduce(c, &wrong, &total, 1, MROCE_COLL_INT64,
						   MROCE_COLL_SUM);
		free(b.send);
		free(b.recv);
		if (err)
			break;
		algbw = tmax > 0 ? (double)bytes / tmax / 1e3 : 0;
		busbw = algbw * (a.kind == MROCE_COLL_ALLREDUCE ? 2.0 * (n - 1) / n :
				 a.kind == MROCE_COLL_BROADCAST ? 1.0 : (double)(n - 1) / n);
		algo = mroce_coll_algo(c, a.kind, bytes);
		if (r)
			continue;
		if (a.json) {
			struct coll_result res = {
				.size = bytes, .count = bytes / mroce_coll_dtype_size(a.dtype),
				.algo = algo, .time_us = tmax, .algbw = algbw, .busbw = busbw,
				.wrong = total,
			};

			if (perf_json_coll_add(report, &res))
				err = -ENOMEM;
		} else {
			printf(" %12zu %11zu %7s %7s %15s %11.2f %12.3f %12.3f %7lld\n", bytes,
			       bytes / mroce_coll_dtype_size(a.dtype), mroce_coll_dtype_str(a.dtype),
			       reduces ? mroce_coll_redop_str(a.op) : "-", algo, tmax, algbw, busbw,
			       total);
		}
		fflush(stdout);
		if (total)
			err = -EBADMSG;
	}
	/* Whatever was measured before a failure is still reported, as before. */
	if (!r && a.json && perf_json_print(stdout, report) && !err)
		err = -ENOMEM;
	if (err) {
		mroce_strerror(err, msg, sizeof(msg));
		fprintf(stderr, "mroce-coll-perf: rank %d: %s\n", r,
			err == -EBADMSG ? "wrong elements" : msg);
	}
	if (a.stats) {
		struct mroce_dev_stats st;

		if (!mroce_dev_stats(mroce_coll_dev(c), &st))
			fprintf(stderr, "rank %d transport: tx %llu rx %llu resent %llu rto %llu "
				"out-of-order %llu duplicate %llu acks %llu/%llu\n", r,
				(unsigned long long)st.tx_pkts, (unsigned long long)st.rx_pkts,
				(unsigned long long)st.retx_pkts, (unsigned long long)st.rto_events,
				(unsigned long long)st.ooo_pkts, (unsigned long long)st.dup_pkts,
				(unsigned long long)st.acks_tx, (unsigned long long)st.acks_rx);
	}
	mroce_coll_comm_destroy(c);
	return err ? 1 : 0;
}
