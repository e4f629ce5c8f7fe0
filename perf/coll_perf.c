// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce-coll-perf: collective bandwidth and time, nccl-tests style. One
 * process per rank (tools/mroce-launch starts them); rank 0 prints.
 * perf/coll_args.c has the flags (nccl-tests' -b -e -f -i -n -w -c -z -d
 * -o -r, and mroce's own); docs/tools.md explains them and the output.
 *
 * size is the bytes of one rank's full vector (all-reduce, broadcast: the
 * buffer; all-to-all, all-gather, reduce-scatter: the whole send or receive
 * buffer of count x ranks), rounded down to whole elements per rank; count
 * is size in elements (as nccl-tests prints it). Each size runs out of place
 * and then in place (the in-place layouts of include/mroce/coll.h); time is
 * the mean over ITERS, the slowest rank's. algbw = size / time; busbw =
 * algbw x 2(n-1)/n (all-reduce), x (n-1)/n (the others, 1 for broadcast):
 * what the busiest link carries, comparable across rank counts. #wrong
 * comes from a separate checked run (-c 1), every element against a
 * reference, summed over ranks. selftests/bench/mpi_coll_perf.c prints the
 * same figures for Open MPI.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mroce/mroce.h>
#include <mroce/proto.h>	/* MROCE_VERSION, the wire protocol's */

#include "coll_args.h"
#include "json.h"

#ifndef MROCE_TOOL_VERSION	/* the Makefile's VERSION */
#define MROCE_TOOL_VERSION MROCE_VERSION_STRING
#endif

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* ---- one size ------------------------------------------------------------------ */

struct bufs {
	void	*send, *recv;
	size_t	count;		/* elements per rank (all-reduce, broadcast: of the vector) */
	size_t	send_bytes, recv_bytes;
};

static void layout(const struct coll_args *a, int n, size_t size, struct bufs *b)
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

/*
 * The buffers an operation reads and writes. In place (include/mroce/coll.h):
 * one buffer, the receive buffer, except for reduce-scatter whose result is
 * rank r's block of the send buffer; all-gather sends from its own block.
 * Broadcast has one buffer either way.
 */
static void views(const struct coll_args *a, const struct bufs *b, int r, bool in_place,
		  void **send, void **recv)
{
	size_t blk = b->count * mroce_coll_dtype_size(a->dtype);

	*send = b->send;
	*recv = b->recv;
	if (!in_place)
		return;
	if (a->kind == MROCE_COLL_REDUCE_SCATTER)
		*recv = (char *)b->send + (size_t)r * blk;
	else if (a->kind == MROCE_COLL_ALLGATHER)
		*send = (char *)b->recv + (size_t)r * blk;
	else
		*send = b->recv;
}

/* One operation: blocking, or started (req set) to be waited for. */
static int start_op(struct mroce_coll_comm *c, const struct coll_args *a, const struct bufs *b,
		    bool in_place, struct mroce_coll_req **req)
{
	void *s, *d;

	views(a, b, mroce_coll_rank(c), in_place, &s, &d);
	switch (a->kind) {
	case MROCE_COLL_ALLREDUCE:
		return req ? mroce_coll_iallreduce(c, s, d, b->count, a->dtype, a->op, req) :
			     mroce_coll_allreduce(c, s, d, b->count, a->dtype, a->op);
	case MROCE_COLL_ALLTOALL:
		return req ? mroce_coll_ialltoall(c, s, d, b->count, a->dtype, req) :
			     mroce_coll_alltoall(c, s, d, b->count, a->dtype);
	case MROCE_COLL_ALLGATHER:
		return req ? mroce_coll_iallgather(c, s, d, b->count, a->dtype, req) :
			     mroce_coll_allgather(c, s, d, b->count, a->dtype);
	case MROCE_COLL_REDUCE_SCATTER:
		return req ? mroce_coll_ireduce_scatter(c, s, d, b->count, a->dtype, a->op, req) :
			     mroce_coll_reduce_scatter(c, s, d, b->count, a->dtype, a->op);
	default:
		return req ? mroce_coll_ibroadcast(c, d, b->count, a->dtype, a->root, req) :
			     mroce_coll_broadcast(c, d, b->count, a->dtype, a->root);
	}
}

/* iters operations: one after another (-z 1), or all started, then waited for (-z 0). */
static int run_iters(struct mroce_coll_comm *c, const struct coll_args *a, const struct bufs *b,
		     bool in_place, int iters)
{
	struct mroce_coll_req **req;
	int err = 0, started = 0;

	if (a->blocking) {
		for (int i = 0; !err && i < iters; i++)
			err = start_op(c, a, b, in_place, NULL);
		return err;
	}
	if (!iters)
		return 0;
	if (!(req = calloc((size_t)iters, sizeof(*req))))
		return -ENOMEM;
	while (!err && started < iters) {
		err = start_op(c, a, b, in_place, &req[started]);
		if (!err)
			started++;
	}
	for (int i = 0; i < started; i++) {
		int e = mroce_coll_wait(req[i]);

		if (!err)
			err = e;
	}
	free(req);
	return err;
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
static void expect(const struct coll_args *a, int n, size_t si, void *want)
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
static long long check(struct mroce_coll_comm *c, const struct coll_args *a, struct bufs *b,
		       bool in_place, int *err)
{
	int r = mroce_coll_rank(c), n = mroce_coll_size(c);
	size_t esz = mroce_coll_dtype_size(a->dtype), nsend = b->send_bytes / esz;
	size_t nrecv = b->recv_bytes / esz, blk = b->count;
	long long wrong = 0;
	void *send, *recv;
	__u8 want[8];

	views(a, b, r, in_place, &send, &recv);
	/*
	 * The result starts as garbage, then the input goes where the operation
	 * reads it; in place, all-reduce, all-to-all and reduce-scatter read the
	 * whole buffer the result lands in.
	 */
	if (a->kind == MROCE_COLL_BROADCAST) {
		memset(recv, 0xee, b->recv_bytes);
		if (r == a->root)
			for (size_t i = 0; i < nrecv; i++)
				store(a->dtype, recv, i, v(r, i));
	} else {
		if (!in_place || a->kind == MROCE_COLL_ALLGATHER)
			memset(recv, 0xee, b->recv_bytes);
		for (size_t i = 0; i < nsend; i++)
			store(a->dtype, send, i, v(r, i));
	}
	*err = start_op(c, a, b, in_place, NULL);
	if (*err)
		return -1;
	for (size_t i = 0; i < nrecv; i++) {
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
			store(a->dtype, want, 0, v(a->root, i));
			break;
		}
		wrong += !equal(a->dtype, recv, i, want);
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

struct placement {
	double		tmax, algbw, busbw;
	long long	wrong;		/* over every rank; -1: not checked */
};

/* Warm-up, timed iterations, the check: one placement of one size, on every rank. */
static int measure(struct mroce_coll_comm *c, const struct coll_args *a, struct bufs *b,
		   bool in_place, size_t bytes, struct placement *out)
{
	int n = mroce_coll_size(c), err;
	long long wrong = 0;
	double t0, t;

	/* in place, the data is overwritten each time: zeros stay finite under any reduction */
	memset(b->send, in_place ? 0 : 1, b->send_bytes);
	memset(b->recv, 0, b->recv_bytes);
	err = run_iters(c, a, b, in_place, a->warmup);
	if (!err)
		err = mroce_coll_barrier(c);
	t0 = now_us();
	if (!err)
		err = run_iters(c, a, b, in_place, a->iters);
	t = (now_us() - t0) / a->iters;
	if (!err)
		err = mroce_coll_allreduce(c, &t, &out->tmax, 1, MROCE_COLL_FLOAT64, MROCE_COLL_MAX);
	out->wrong = -1;
	if (!err && a->check) {
		wrong = check(c, a, b, in_place, &err);
		if (!err)
			err = mroce_coll_allreduce(c, &wrong, &out->wrong, 1, MROCE_COLL_INT64,
						   MROCE_COLL_SUM);
	}
	if (err)
		return err;
	out->algbw = out->tmax > 0 ? (double)bytes / out->tmax / 1e3 : 0;
	out->busbw = out->algbw * (a->kind == MROCE_COLL_ALLREDUCE ? 2.0 * (n - 1) / n :
				   a->kind == MROCE_COLL_BROADCAST ? 1.0 : (double)(n - 1) / n);
	return 0;
}

/* nccl-tests prints times with as many decimals as fit in 7 columns. */
static void print_placement(const struct placement *p)
{
	char t[32], w[24];

	snprintf(t, sizeof(t), p->tmax >= 10000 ? "%.0f" : p->tmax >= 100 ? "%.1f" : "%.2f", p->tmax);
	if (p->wrong < 0)
		snprintf(w, sizeof(w), "N/A");
	else
		snprintf(w, sizeof(w), "%lld", p->wrong);
	printf("  %7s  %6.2f  %6.2f  %5s", t, p->algbw, p->busbw, w);
}

static void print_header(const struct coll_args *a, int n, bool reduces)
{
	printf("# nThread 1 nGpus 0 minBytes %zu maxBytes %zu step: ", a->minb, a->maxb);
	if (a->factor)
		printf("%g(factor)", a->factor);
	else
		printf("%zu(bytes)", a->stepbytes);
	printf(" warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0\n#\n", a->warmup,
	       a->iters, a->check);
	printf("# mroce-coll-perf %s: %s, %d ranks (a process each, no GPU), %s, %s%s%s, %s calls\n#\n",
	       MROCE_TOOL_VERSION, coll_kind_names[a->kind], n, "mroce over AF_XDP",
	       mroce_coll_dtype_str(a->dtype), reduces ? " " : "",
	       reduces ? mroce_coll_redop_str(a->op) : "", a->blocking ? "blocking" : "non-blocking");
	/* each placement's label centred over its 32 columns (a row: 52 + 2 x 32) */
	printf("#%73s%30s\n", "out-of-place", "in-place");
	printf("#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count",
	       "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
	       "#wrong");
	printf("#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s\n", "(B)",
	       "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)");
}

/* The algorithm of each run of sizes, as one comment line (nccl-tests has no such column). */
struct algos {
	char		line[512];
	const char	*last;
	size_t		from, to;
};

static void algo_flush(struct algos *s)
{
	size_t len = strlen(s->line);

	if (!s->last || len + 64 >= sizeof(s->line))
		return;
	len += (size_t)snprintf(s->line + len, sizeof(s->line) - len, "%s%zu", len ? ", " : "", s->from);
	if (s->to != s->from)
		len += (size_t)snprintf(s->line + len, sizeof(s->line) - len, "-%zu", s->to);
	snprintf(s->line + len, sizeof(s->line) - len, " %s", s->last);
}

static void algo_add(struct algos *s, size_t bytes, const char *algo)
{
	if (s->last && !strcmp(s->last, algo)) {
		s->to = bytes;
		return;
	}
	algo_flush(s);
	s->last = algo;
	s->from = s->to = bytes;
}

int main(int argc, char **argv)
{
	MROCE_OPTS(mroce_coll_opts, copts, .rank = -1);
	struct mroce_coll_comm *c;
	struct json_object *report = NULL;
	struct algos algos = { .line = "" };
	char msg[256];
	struct coll_args a;
	bool reduces, rooted;
	long long oob = 0;
	double bus_sum = 0;
	int err, n, r, nbus = 0;

	err = coll_parse_args(argc, argv, &a, msg, sizeof(msg));
	if (err == COLL_ARGS_HELP) {
		fputs(coll_usage, stdout);
		return 0;
	}
	if (err == COLL_ARGS_VERSION) {
		printf("mroce-coll-perf %s (wire protocol version %d)\n", MROCE_TOOL_VERSION,
		       MROCE_VERSION);
		return 0;
	}
	if (err) {
		fprintf(stderr, "mroce-coll-perf: %s (mroce-coll-perf --help)\n", msg);
		return 2;
	}
	if (coll_env_check(msg, sizeof(msg))) {
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
	if (a.root >= n) {
		fprintf(stderr, "mroce-coll-perf: -r %d: there are %d ranks (0..%d)\n", a.root, n, n - 1);
		mroce_coll_comm_destroy(c);
		return 2;
	}
	err = warm_up(c, a.warmup_ms);
	reduces = a.kind == MROCE_COLL_ALLREDUCE || a.kind == MROCE_COLL_REDUCE_SCATTER;
	rooted = a.kind == MROCE_COLL_BROADCAST;
	if (!r && a.json) {
		struct coll_run run = {
			.coll = coll_kind_names[a.kind], .ranks = n, .type = mroce_coll_dtype_str(a.dtype),
			.op = reduces ? mroce_coll_redop_str(a.op) : "-", .iters = a.iters,
		};

		if (!(report = perf_json_coll_run(&run)) && !err)
			err = -ENOMEM;
	} else if (!r) {
		print_header(&a, n, reduces);
	}
	size_t size = a.minb;

	/* coll_next_size is 0 past -e, never otherwise (each size is larger than the last) */
	for (bool more = true; more && !err; more = (size = coll_next_size(&a, size)) != 0) {
		struct bufs b = { 0 };
		struct placement out, in;
		size_t bytes;
		const char *algo;

		layout(&a, n, size, &b);
		bytes = b.send_bytes > b.recv_bytes ? b.send_bytes : b.recv_bytes;
		if (!bytes && size)
			continue;	/* fewer bytes than one element per rank */
		b.send = malloc(b.send_bytes + 64);
		b.recv = malloc(b.recv_bytes + 64);
		if (!b.send || !b.recv)
			err = -ENOMEM;
		if (!err)
			err = measure(c, &a, &b, false, bytes, &out);
		if (!err)
			err = measure(c, &a, &b, true, bytes, &in);
		free(b.send);
		free(b.recv);
		if (err)
			break;
		algo = mroce_coll_algo(c, a.kind, bytes);
		oob += (out.wrong > 0 ? out.wrong : 0) + (in.wrong > 0 ? in.wrong : 0);
		bus_sum += out.busbw + in.busbw;
		nbus += 2;
		if (r)
			continue;
		if (a.json) {
			struct coll_result res = {
				.size = bytes, .count = bytes / mroce_coll_dtype_size(a.dtype),
				.algo = algo, .time_us = out.tmax, .algbw = out.algbw, .busbw = out.busbw,
				.wrong = out.wrong, .ip_time_us = in.tmax, .ip_algbw = in.algbw,
				.ip_busbw = in.busbw, .ip_wrong = in.wrong, .root = rooted ? a.root : -1,
			};

			if (perf_json_coll_add(report, &res))
				err = -ENOMEM;
		} else {
			printf(" %11zu  %12zu  %8s  %6s  %6d", bytes, bytes / mroce_coll_dtype_size(a.dtype),
			       mroce_coll_dtype_str(a.dtype), reduces ? mroce_coll_redop_str(a.op) : "none",
			       rooted ? a.root : -1);
			print_placement(&out);
			print_placement(&in);
			printf("\n");
			algo_add(&algos, bytes, algo);
		}
		fflush(stdout);
	}
	/* Whatever was measured before a failure is still reported. */
	if (!r && a.json) {
		if (perf_json_coll_end(report, oob, nbus ? bus_sum / nbus : 0) && !err)
			err = -ENOMEM;
		if (perf_json_print(stdout, report) && !err)
			err = -ENOMEM;
	} else if (!r) {
		algo_flush(&algos);
		printf("# Out of bounds values : %lld %s\n", oob, oob ? "FAILED" : "OK");
		printf("# Avg bus bandwidth    : %g\n", nbus ? bus_sum / nbus : 0);
		printf("# Algorithms (bytes)   : %s\n#\n", algos.line);
		fflush(stdout);
	}
	if (!err && oob)
		err = -EBADMSG;
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
