// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives correctness, one rank of a job started by tools/mroce-launch
 * (RANK, WORLD_SIZE, MASTER_ADDR set). Every operation, type and reduction
 * on counts that do not divide by the rank count (0 and 1 included), in
 * place and out of place, blocking and non-blocking; results checked
 * element by element against a reference computed here in rank order:
 * integers exactly (wrapping like the library), floats within a relative
 * tolerance (1e-5 float, 1e-12 double), and every rank must hold the same
 * bits (their hashes are all-gathered and compared).
 *
 *   coll_check [--algo auto|ring|small|NAME[,NAME...]] [--loss PPM] [--dup PPM] [--reorder PPM]
 *              [--timeout-ms MS] [--max-count N] [--stats]
 *   coll_check --kill-test [--timeout-ms MS]   all-reduce until the job breaks
 *   coll_check --p2p-mismatch   rank 1 receives fewer elements than rank 0 sends
 *   coll_check --a2av-mismatch S,R   all-to-all-v: rank 0 sends rank 1 S elements,
 *                                    rank 1 expects R
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mroce/mroce.h>

static int rank, nranks, failures, checks;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void fail(const char *what, const char *detail)
{
	failures++;
	fprintf(stderr, "coll_check: rank %d: FAIL %s: %s\n", rank, what, detail);
}

static const char *err_str(int err)
{
	static char buf[128];

	mroce_strerror(err, buf, sizeof(buf));
	return buf;
}

/* ---- the pattern and its reference ----------------------------------------- */

static bool is_float(enum mroce_coll_dtype t)
{
	return t == MROCE_COLL_FLOAT32 || t == MROCE_COLL_FLOAT64;
}

/* Value rank r contributes at index i: small integers (products stay small). */
static long long pint(int r, size_t i, enum mroce_coll_redop op)
{
	return op == MROCE_COLL_PROD ? (long long)((r + i) % 2) + 1 :
	       (long long)((r * 7 + i * 3) % 11) + 1;
}

/* Floats get a fraction so that sums round. */
static double pval(enum mroce_coll_dtype t, int r, size_t i, enum mroce_coll_redop op)
{
	return is_float(t) ? (double)pint(r, i, op) + 0.1 * (r + 1) : (double)pint(r, i, op);
}

static void put(enum mroce_coll_dtype t, void *b, size_t i, int r, enum mroce_coll_redop op)
{
	long long v = pint(r, i, op);

	switch (t) {
	case MROCE_COLL_FLOAT32: ((float *)b)[i] = (float)pval(t, r, i, op); break;
	case MROCE_COLL_FLOAT64: ((double *)b)[i] = pval(t, r, i, op); break;
	case MROCE_COLL_INT32:	 ((int32_t *)b)[i] = (int32_t)v; break;
	case MROCE_COLL_INT64:	 ((int64_t *)b)[i] = v; break;
	case MROCE_COLL_UINT8:	 ((uint8_t *)b)[i] = (uint8_t)v; break;
	default: break;
	}
}

/* Is b[i] the reduction of the ranks' values at source index si? */
static bool ok_reduced(enum mroce_coll_dtype t, enum mroce_coll_redop op, const void *b,
		       size_t i, size_t si)
{
	if (is_float(t)) {
		double acc = pval(t, 0, si, op), got, tol;

		for (int r = 1; r < nranks; r++) {
			double x = pval(t, r, si, op);

			acc = op == MROCE_COLL_SUM ? acc + x : op == MROCE_COLL_PROD ? acc * x :
			      op == MROCE_COLL_MIN ? fmin(acc, x) : fmax(acc, x);
		}
		got = t == MROCE_COLL_FLOAT32 ? ((const float *)b)[i] : ((const double *)b)[i];
		tol = (t == MROCE_COLL_FLOAT32 ? 1e-5 : 1e-12) * fmax(1.0, fabs(acc));
		return fabs(got - acc) <= tol;
	}
	uint64_t acc = (uint64_t)pint(0, si, op);
	for (int r = 1; r < nranks; r++) {
		long long x = pint(r, si, op);

		acc = op == MROCE_COLL_SUM ? acc + (uint64_t)x : op == MROCE_COLL_PROD ?
		      acc * (uint64_t)x : op == MROCE_COLL_MIN ? ((long long)acc < x ? acc :
		      (uint64_t)x) : ((long long)acc > x ? acc : (uint64_t)x);
	}
	switch (t) {
	case MROCE_COLL_INT32: return ((const int32_t *)b)[i] == (int32_t)(uint32_t)acc;
	case MROCE_COLL_INT64: return ((const int64_t *)b)[i] == (int64_t)acc;
	case MROCE_COLL_UINT8: return ((const uint8_t *)b)[i] == (uint8_t)acc;
	default: return false;
	}
}

/* Is b[i] exactly what rank r put at index si? */
static bool ok_copied(enum mroce_coll_dtype t, const void *b, size_t i, int r, size_t si)
{
	switch (t) {
	case MROCE_COLL_FLOAT32: return ((const float *)b)[i] == (float)pval(t, r, si, 0);
	case MROCE_COLL_FLOAT64: return ((const double *)b)[i] == pval(t, r, si, 0);
	case MROCE_COLL_INT32:	 return ((const int32_t *)b)[i] == (int32_t)pint(r, si, 0);
	case MROCE_COLL_INT64:	 return ((const int64_t *)b)[i] == pint(r, si, 0);
	case MROCE_COLL_UINT8:	 return ((const uint8_t *)b)[i] == (uint8_t)pint(r, si, 0);
	default: return false;
	}
}

static uint64_t fnv(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* Every rank must hold the same result bits (the documented fixed order). */
static void same_everywhere(struct mroce_coll_comm *c, const char *what, const void *b,
			    size_t n)
{
	int64_t h = (int64_t)fnv(b, n), *all = calloc((size_t)nranks, sizeof(*all));
	int err = mroce_coll_allgather(c, &h, all, 1, MROCE_COLL_INT64);

	if (err)
		fail(what, err_str(err));
	for (int r = 0; !err && r < nranks; r++)
		if (all[r] != all[0]) {
			fail(what, "ranks hold different results");
			break;
		}
	free(all);
}

/* ---- one check per operation ------------------------------------------------ */

static void check_allreduce(struct mroce_coll_comm *c, enum mroce_coll_dtype t,
			    enum mroce_coll_redop op, size_t n, bool in_place, bool nb)
{
	size_t esz = mroce_coll_dtype_size(t), bad = 0;
	uint8_t *s = malloc(n * esz + 1), *r = in_place ? s : malloc(n * esz + 1);
	char what[160];
	int err;

	snprintf(what, sizeof(what), "allreduce %s %s count %zu%s%s", mroce_coll_dtype_str(t),
		 mroce_coll_redop_str(op), n, in_place ? " in place" : "", nb ? " (nb)" : "");
	for (size_t i = 0; i < n; i++)
		put(t, s, i, rank, op);
	if (!in_place)
		memset(r, 0xee, n * esz);
	if (nb) {
		struct mroce_coll_req *req;

		err = mroce_coll_iallreduce(c, s, r, n, t, op, &req);
		if (!err)
			err = mroce_coll_wait(req);
	} else {
		err = mroce_coll_allreduce(c, s, r, n, t, op);
	}
	checks++;
	if (err) {
		fail(what, err_str(err));
	} else {
		for (size_t i = 0; i < n; i++)
			bad += !ok_reduced(t, op, r, i, i);
		if (bad) {
			char d[64];

			snprintf(d, sizeof(d), "%zu wrong elements", bad);
			fail(what, d);
		}
		same_everywhere(c, what, r, n * esz);
	}
	if (!in_place)
		free(r);
	free(s);
}

static void check_reduce_scatter(struct mroce_coll_comm *c, enum mroce_coll_dtype t,
				 enum mroce_coll_redop op, size_t n, bool in_place)
{
	size_t esz = mroce_coll_dtype_size(t), all = n * (size_t)nranks, bad = 0;
	uint8_t *s = malloc(all * esz + 1), *r = in_place ? s + (size_t)rank * n * esz :
					      malloc(n * esz + 1);
	char what[160];
	int err;

	snprintf(what, sizeof(what), "reduce_scatter %s %s count %zu%s", mroce_coll_dtype_str(t),
		 mroce_coll_redop_str(op), n, in_place ? " in place" : "");
	for (size_t i = 0; i < all; i++)
		put(t, s, i, rank, op);
	err = mroce_coll_reduce_scatter(c, s, r, n, t, op);
	checks++;
	if (err)
		fail(what, err_str(err));
	for (size_t i = 0; !err && i < n; i++)
		bad += !ok_reduced(t, op, r, i, (size_t)rank * n + i);
	if (bad)
		fail(what, "wrong elements");
	if (!in_place)
		free(r);
	free(s);
}

static void check_allgather(struct mroce_coll_comm *c, enum mroce_coll_dtype t, size_t n,
			    bool in_place)
{
	size_t esz = mroce_coll_dtype_size(t), all = n * (size_t)nranks, bad = 0;
	uint8_t *r = malloc(all * esz + 1), *s = in_place ? r + (size_t)rank * n * esz :
					      malloc(n * esz + 1);
	char what[160];
	int err;

	snprintf(what, sizeof(what), "allgather %s count %zu%s", mroce_coll_dtype_str(t), n,
		 in_place ? " in place" : "");
	memset(r, 0xee, all * esz);
	for (size_t i = 0; i < n; i++)
		put(t, s, i, rank, MROCE_COLL_SUM);
	err = mroce_coll_allgather(c, s, r, n, t);
	checks++;
	if (err)
		fail(what, err_str(err));
	for (int k = 0; !err && k < nranks; k++)
		for (size_t i = 0; i < n; i++)
			bad += !ok_copied(t, r, (size_t)k * n + i, k, i);
	if (bad)
		fail(what, "wrong elements");
	if (!in_place)
		free(s);
	free(r);
}

static void check_broadcast(struct mroce_coll_comm *c, enum mroce_coll_dtype t, size_t n,
			    int root)
{
	size_t esz = mroce_coll_dtype_size(t), bad = 0;
	uint8_t *b = malloc(n * esz + 1);
	char what[160];
	int err;

	snprintf(what, sizeof(what), "broadcast %s count %zu root %d", mroce_coll_dtype_str(t), n,
		 root);
	for (size_t i = 0; i < n; i++)
		if (rank == root)
			put(t, b, i, rank, MROCE_COLL_SUM);
		else
			memset(b + i * esz, 0xee, esz);
	err = mroce_coll_broadcast(c, b, n, t, root);
	checks++;
	if (err)
		fail(what, err_str(err));
	for (size_t i = 0; !err && i < n; i++)
		bad += !ok_copied(t, b, i, root, i);
	if (bad)
		fail(what, "wrong elements");
	free(b);
}

static void check_alltoall(struct mroce_coll_comm *c, enum mroce_coll_dtype t, size_t n,
			   bool in_place)
{
	size_t esz = mroce_coll_dtype_size(t), all = n * (size_t)nranks, bad = 0;
	uint8_t *s = malloc(all * esz + 1), *r = in_place ? s : malloc(all * esz + 1);
	char what[160];
	int err;

	snprintf(what, sizeof(what), "alltoall %s count %zu%s", mroce_coll_dtype_str(t), n,
		 in_place ? " in place" : "");
	for (size_t i = 0; i < all; i++)
		put(t, s, i, rank, MROCE_COLL_SUM);
	if (!in_place)
		memset(r, 0xee, all * esz);
	err = mroce_coll_alltoall(c, s, r, n, t);
	checks++;
	if (err)
		fail(what, err_str(err));
	/* block from rank k is what k meant for us: its elements rank*n .. */
	for (int k = 0; !err && k < nranks; k++)
		for (size_t i = 0; i < n; i++)
			bad += !ok_copied(t, r, (size_t)k * n + i, k, (size_t)rank * n + i);
	if (bad)
		fail(what, "wrong elements");
	if (!in_place)
		free(r);
	free(s);
}

/*
 * All-to-all-v: rank s sends rank d a2v_count(s, d) elements, zero for some
 * pairs, some blocks through the inboxes and some direct in one call. Send
 * blocks lie in reverse rank order, receive blocks in a rotated order, with
 * a gap of 3 elements around each that must keep its fill byte (nothing
 * lands outside its block). In place: both layouts in one buffer, the
 * receive blocks over other send blocks. Non-blocking: the arrays are
 * clobbered right after the start (the library copied them).
 */
static size_t a2v_count(int s, int d, size_t base)
{
	if ((s + 2 * d) % 4 == 1)
		return 0;
	return base * (size_t)((s * 7 + d * 3) % 5) + (size_t)((s + d) % 3);
}

static long long a2v_val(int s, int d, size_t i)
{
	return (long long)((s * 131 + d * 17 + (long long)i * 7) % 251) + 1;
}

static void put_v(enum mroce_coll_dtype t, void *b, size_t i, long long v)
{
	switch (t) {
	case MROCE_COLL_FLOAT32: ((float *)b)[i] = (float)v; break;
	case MROCE_COLL_FLOAT64: ((double *)b)[i] = (double)v; break;
	case MROCE_COLL_INT32:	 ((int32_t *)b)[i] = (int32_t)v; break;
	case MROCE_COLL_INT64:	 ((int64_t *)b)[i] = v; break;
	case MROCE_COLL_UINT8:	 ((uint8_t *)b)[i] = (uint8_t)v; break;
	default: break;
	}
}

static void check_alltoallv(struct mroce_coll_comm *c, enum mroce_coll_dtype t, size_t base,
			    bool in_place, bool nb)
{
	size_t esz = mroce_coll_dtype_size(t), n = (size_t)nranks, gap = 3, bad = 0, outside = 0;
	size_t *sc = calloc(n, sizeof(size_t)), *sd = calloc(n, sizeof(size_t));
	size_t *rc = calloc(n, sizeof(size_t)), *rd = calloc(n, sizeof(size_t));
	size_t send_end = gap, recv_end, len;
	uint8_t *s, *r, *want;
	char what[160];
	int err;

	for (int k = nranks - 1; k >= 0; k--) {	/* send blocks: last rank's first */
		sc[k] = a2v_count(rank, k, base);
		sd[k] = send_end;
		send_end += sc[k] + gap;
	}
	/* receive blocks: from rank+1 first; in place they start inside the send blocks */
	recv_end = in_place ? send_end / 3 : gap;
	for (int j = 0; j < nranks; j++) {
		int k = (rank + 1 + j) % nranks;

		rc[k] = a2v_count(k, rank, base);
		rd[k] = recv_end;
		recv_end += rc[k] + gap;
	}
	len = (in_place ? (send_end > recv_end ? send_end : recv_end) : recv_end) * esz;
	s = malloc((in_place ? len : send_end * esz) + 1);
	r = in_place ? s : malloc(len + 1);
	want = malloc(len + 1);
	snprintf(what, sizeof(what), "alltoallv %s base %zu%s%s", mroce_coll_dtype_str(t), base,
		 in_place ? " in place" : "", nb ? " (nb)" : "");
	memset(s, 0xee, in_place ? len : send_end * esz);
	if (!in_place)
		memset(r, 0xee, len);
	for (int k = 0; k < nranks; k++)
		for (size_t i = 0; i < sc[k]; i++)
			put_v(t, s, sd[k] + i, a2v_val(rank, k, i));
	memset(want, 0xee, len);
	if (in_place)	/* what is outside the receive blocks stays as it was */
		memcpy(want, s, len);
	for (int k = 0; k < nranks; k++) {
		memset(want + rd[k] * esz, 0xee, rc[k] * esz);
		for (size_t i = 0; i < rc[k]; i++)
			put_v(t, want, rd[k] + i, a2v_val(k, rank, i));
	}
	if (nb) {
		struct mroce_coll_req *req = NULL;

		err = mroce_coll_ialltoallv(c, s, sc, sd, r, rc, rd, t, &req);
		/* the library copied the arrays: garbage in them now changes nothing */
		memset(sc, 0xff, n * sizeof(size_t));
		memset(rd, 0xff, n * sizeof(size_t));
		if (!err)
			err = mroce_coll_wait(req);
	} else {
		err = mroce_coll_alltoallv(c, s, sc, sd, r, rc, rd, t);
	}
	checks++;
	if (err)
		fail(what, err_str(err));
	for (size_t i = 0; !err && i < len / esz; i++) {
		bool in_block = false;

		for (int k = 0; !nb && k < nranks; k++)
			in_block |= i >= rd[k] && i < rd[k] + rc[k];
		if (memcmp(r + i * esz, want + i * esz, esz)) {
			bad++;
			outside += !in_block;
		}
	}
	if (bad) {
		char d[128];

		snprintf(d, sizeof(d), "%zu wrong elements, %zu of them outside the blocks", bad,
			 nb ? bad : outside);
		fail(what, d);
	}
	free(want);
	if (!in_place)
		free(r);
	free(s);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
}

/*
 * Rank 0 sends rank 1 S int32 elements, rank 1 expects R; every other block
 * is empty. Ranks 0 and 1 must both get -EBADMSG (in the call or, if theirs
 * had returned, the next one) well before the timeout; rank 1's buffer must
 * hold nothing beyond R elements.
 */
static int a2av_mismatch_test(struct mroce_coll_comm *c, size_t S, size_t R)
{
	size_t n = (size_t)nranks, *sc = calloc(n, sizeof(size_t)), *rc = calloc(n, sizeof(size_t));
	size_t *z = calloc(n, sizeof(size_t)), big = (S > R ? S : R) + 64;
	int32_t *sb = malloc(big * 4), *rb = malloc(big * 4);
	double t0 = now_ms();
	int err, err2, code = 0;

	for (size_t i = 0; i < big; i++) {
		sb[i] = (int32_t)i + 1;
		rb[i] = -7;
	}
	if (rank == 0)
		sc[1] = S;
	if (rank == 1)
		rc[0] = R;
	/* every rank has joined before anyone can break the communicator (an
	 * error reaching a rank still in this barrier fails it: the call below
	 * then returns that error again) */
	mroce_coll_barrier(c);
	err = mroce_coll_alltoallv(c, sb, sc, z, rb, rc, z, MROCE_COLL_INT32);
	err2 = mroce_coll_barrier(c);
	printf("coll_check: rank %d: mismatched alltoallv %zu -> %zu: %d", rank, S, R, err);
	printf(" (%s); then barrier: %d", err_str(err), err2);
	printf(" (%s) (%.0f ms)\n", err_str(err2), now_ms() - t0);
	if (rank <= 1 && err != -EBADMSG && !(err == 0 && err2 == -EBADMSG)) {
		fprintf(stderr, "coll_check: FAIL: rank %d got %d then %d, not -EBADMSG\n", rank,
			err, err2);
		code = 1;
	}
	if (!err2) {
		fprintf(stderr, "coll_check: FAIL: the barrier after it succeeded\n");
		code = 1;
	}
	for (size_t i = R; rank == 1 && i < big; i++)
		if (rb[i] != -7) {
			fprintf(stderr, "coll_check: FAIL: element %zu written beyond the block of "
				"%zu\n", i, R);
			code = 1;
			break;
		}
	free(sb);
	free(rb);
	free(sc);
	free(rc);
	free(z);
	return code;
}

/*
 * Point to point round a ring: rank r sends to r + 1 what it means for it and
 * receives from r - 1. Even ranks send first, odd ones receive first, so a
 * message larger than the inboxes (it waits for its receive) cannot close a
 * cycle of senders. Non-blocking: both started, then waited.
 */
static void check_p2p(struct mroce_coll_comm *c, enum mroce_coll_dtype t, size_t n, bool nb)
{
	size_t esz = mroce_coll_dtype_size(t), bad = 0;
	int to = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks, es = 0, er = 0;
	uint8_t *s = malloc(n * esz + 1), *r = malloc(n * esz + 1);
	__u32 tag = (__u32)(n % 1000);
	char what[160];

	snprintf(what, sizeof(what), "send/recv %s count %zu%s", mroce_coll_dtype_str(t), n,
		 nb ? " (nb)" : "");
	for (size_t i = 0; i < n; i++)
		put(t, s, i, rank, MROCE_COLL_SUM);
	memset(r, 0xee, n * esz);
	if (nb) {
		struct mroce_coll_req *qs = NULL, *qr = NULL;

		es = mroce_coll_isend(c, s, n, t, to, tag, &qs);
		er = mroce_coll_irecv(c, r, n, t, from, tag, &qr);
		es = es ? es : mroce_coll_wait(qs);
		er = er ? er : mroce_coll_wait(qr);
	} else if (rank % 2 == 0) {
		es = mroce_coll_send(c, s, n, t, to, tag);
		er = es ? es : mroce_coll_recv(c, r, n, t, from, tag);
	} else {
		er = mroce_coll_recv(c, r, n, t, from, tag);
		es = er ? er : mroce_coll_send(c, s, n, t, to, tag);
	}
	checks++;
	if (es || er)
		fail(what, err_str(es ? es : er));
	for (size_t i = 0; !es && !er && i < n; i++)
		bad += !ok_copied(t, r, i, from, i);
	if (bad)
		fail(what, "wrong elements");
	free(s);
	free(r);
}

/*
 * A receive whose size disagrees with its send: the receiver fails with
 * -EBADMSG and breaks the communicator; every rank's next operation then
 * fails (never waits out more than the timeout).
 */
static int p2p_mismatch_test(struct mroce_coll_comm *c)
{
	int32_t x[64] = { 0 };
	double t0 = now_ms();
	int err = 0, err2;

	if (rank == 0)
		err = mroce_coll_send(c, x, 64, MROCE_COLL_INT32, 1, 5);
	else if (rank == 1)
		err = mroce_coll_recv(c, x, 32, MROCE_COLL_INT32, 0, 5);
	err2 = mroce_coll_barrier(c);
	printf("coll_check: rank %d: mismatched receive: %s; then barrier: %s (%.0f ms)\n", rank,
	       err_str(err), err_str(err2), now_ms() - t0);
	if (rank == 1 && err != -EBADMSG)
		return fprintf(stderr, "coll_check: FAIL: the receive gave %d, not -EBADMSG\n", err), 1;
	if (!err2)
		return fprintf(stderr, "coll_check: FAIL: the barrier after it succeeded\n"), 1;
	return 0;
}

/* After a barrier, every rank has entered it: no exit before the last entry. */
static void check_barrier(struct mroce_coll_comm *c)
{
	double *enter = calloc((size_t)nranks, sizeof(double)), mine, last = 0, out;
	int err;

	usleep((useconds_t)(rank * 20000));
	mine = now_ms();	/* CLOCK_MONOTONIC is one clock for every namespace */
	err = mroce_coll_barrier(c);
	out = now_ms();
	checks++;
	if (!err)
		err = mroce_coll_allgather(c, &mine, enter, 1, MROCE_COLL_FLOAT64);
	if (err) {
		fail("barrier", err_str(err));
	} else {
		for (int r = 0; r < nranks; r++)
			last = enter[r] > last ? enter[r] : last;
		if (out < last)
			fail("barrier", "left before the last rank entered");
	}
	free(enter);
}

/* Several started operations overlapping with local work, finished by test(). */
static void check_nonblocking(struct mroce_coll_comm *c)
{
	enum { K = 4 };
	struct mroce_coll_req *req[K] = { 0 };
	size_t n = 100000;
	int32_t *s[K], *r[K];
	int err = 0, pending = K;

	for (int k = 0; k < K; k++) {
		s[k] = malloc(n * 4);
		r[k] = malloc(n * 4);
		for (size_t i = 0; i < n; i++)
			put(MROCE_COLL_INT32, s[k], i, rank, MROCE_COLL_SUM);
	}
	for (int k = 0; k < K && !err; k++)
		err = mroce_coll_iallreduce(c, s[k], r[k], n, MROCE_COLL_INT32, MROCE_COLL_SUM,
					    &req[k]);
	checks++;
	while (!err && pending) {
		volatile double x = 0;

		for (int i = 0; i < 10000; i++)	/* "compute" */
			x += i;
		/* Ranks outnumber cores here: let the worker and the fabric's switch
		 * run between rounds (a spinning main thread on every rank once
		 * starved them long enough to exhaust a QP's retries). */
		sched_yield();
		pending = 0;
		for (int k = 0; k < K; k++) {
			int res;

			if (!req[k])
				continue;
			res = mroce_coll_test(req[k]);
			if (res == -EINPROGRESS) {
				pending++;
				continue;
			}
			req[k] = NULL;
			if (res)
				err = res;
		}
	}
	for (int k = 0; k < K; k++)
		if (req[k])
			mroce_coll_wait(req[k]);
	if (err)
		fail("iallreduce x4 + test", err_str(err));
	for (int k = 0; !err && k < K; k++)
		for (size_t i = 0; i < n; i++)
			if (!ok_reduced(MROCE_COLL_INT32, MROCE_COLL_SUM, r[k], i, i)) {
				fail("iallreduce x4 + test", "wrong elements");
				break;
			}
	for (int k = 0; k < K; k++) {
		free(s[k]);
		free(r[k]);
	}
}

/* Bad arguments come back as errors, and nothing is sent. */
static void check_bad_args(struct mroce_coll_comm *c)
{
	int32_t x[4] = { 0 };

	checks++;
	if (mroce_coll_allreduce(c, x, x, 4, 99, MROCE_COLL_SUM) != -EINVAL ||
	    mroce_coll_allreduce(c, x, x, 4, MROCE_COLL_INT32, 99) != -EINVAL ||
	    mroce_coll_allreduce(c, NULL, x, 4, MROCE_COLL_INT32, MROCE_COLL_SUM) != -EINVAL ||
	    mroce_coll_broadcast(c, x, 4, MROCE_COLL_INT32, nranks) != -EINVAL ||
	    mroce_coll_alltoall(c, x, x, SIZE_MAX / 2, MROCE_COLL_INT32) != -EOVERFLOW)
		fail("bad arguments", "not refused");
	size_t *one = calloc((size_t)nranks, sizeof(size_t)), *zero = calloc((size_t)nranks, sizeof(size_t));

	checks++;
	one[rank] = 1;
	if (mroce_coll_alltoallv(c, x, one, zero, x, NULL, zero, MROCE_COLL_INT32) != -EINVAL ||
	    mroce_coll_alltoallv(c, x, one, zero, x, zero, zero, MROCE_COLL_INT32) != -EINVAL ||
	    mroce_coll_alltoallv(c, x, one, zero, NULL, one, zero, MROCE_COLL_INT32) != -EINVAL ||
	    mroce_coll_alltoallv(c, x, zero, zero, x, zero, zero, 42) != -EINVAL)
		fail("bad alltoallv arguments", "not refused");
	/* two receive blocks at the same place */
	for (int k = 0; k < nranks; k++)
		one[k] = 1;
	if (nranks > 1 &&
	    mroce_coll_alltoallv(c, x, one, zero, x + 2, one, zero, MROCE_COLL_INT32) != -EINVAL)
		fail("bad alltoallv arguments", "not refused");
	free(one);
	free(zero);
}

/* ---- main ---------------------------------------------------------------------- */

static int kill_test(struct mroce_coll_comm *c)
{
	size_t n = 4 << 20;
	float *b = malloc(n * sizeof(float));
	double t0 = now_ms(), t_last = t0;
	struct timespec wall;
	int err = 0, iter = 0;

	for (size_t i = 0; i < n; i++)
		b[i] = 1.0f;
	while (!err && now_ms() - t0 < 60000) {
		t_last = now_ms();
		err = mroce_coll_allreduce(c, b, b, n, MROCE_COLL_FLOAT32, MROCE_COLL_SUM);
		iter++;
	}
	clock_gettime(CLOCK_REALTIME, &wall);
	printf("coll_check: rank %d: allreduce %d failed at %ld.%06ld: %s (%d), %.0f ms into it\n",
	       rank, iter, (long)wall.tv_sec, wall.tv_nsec / 1000, err_str(err), err,
	       now_ms() - t_last);
	fflush(stdout);
	/* later operations fail at once with the same error */
	if (mroce_coll_barrier(c) != err)
		fprintf(stderr, "coll_check: rank %d: barrier after failure did not fail\n", rank);
	free(b);
	return err ? 3 : 1;
}

/*
 * After a failed check, every rank's device counters: which end stopped
 * hearing (rx, xsk drops) and which kept resending (retx, rto) is the first
 * question an intermittent failure raises, and the run that shows it may not
 * come again.
 */
static void print_failure_stats(struct mroce_coll_comm *c, int rank)
{
	struct mroce_dev_stats st;

	if (mroce_dev_stats(mroce_coll_dev(c), &st))
		return;
	fprintf(stderr, "coll_check: rank %d device: tx %" PRIu64 " rx %" PRIu64 " retx %" PRIu64
		" rto %" PRIu64 " rx_dropped_window %" PRIu64 " xsk rx_dropped %" PRIu64
		" rx_ring_full %" PRIu64 " fill_ring_empty %" PRIu64 " rx_invalid %" PRIu64
		" tx_invalid %" PRIu64 "\n", rank, (uint64_t)st.tx_pkts, (uint64_t)st.rx_pkts,
		(uint64_t)st.retx_pkts, (uint64_t)st.rto_events, (uint64_t)st.rx_dropped_window,
		(uint64_t)st.xsk_rx_dropped, (uint64_t)st.xsk_rx_ring_full,
		(uint64_t)st.xsk_rx_fill_ring_empty, (uint64_t)st.xsk_rx_invalid_descs,
		(uint64_t)st.xsk_tx_invalid_descs);
}

/* --algo NAME: the names pinned must be what runs, for the kinds that have them
 * (list NULL: say what the table picks at 1 MiB). */
static int check_pinned(struct mroce_coll_comm *c, const char *list)
{
	static const enum mroce_coll_kind kinds[] = {
		MROCE_COLL_ALLREDUCE, MROCE_COLL_REDUCE_SCATTER, MROCE_COLL_ALLGATHER,
		MROCE_COLL_BROADCAST, MROCE_COLL_ALLTOALL };
	static const char *const names[] = { "allreduce", "reducescatter", "allgather",
					     "broadcast", "alltoall" };
	char want[256];
	int used = 0;

	snprintf(want, sizeof(want), ",%s,", list ? list : "");
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const char *got = mroce_coll_algo(c, kinds[k], 1 << 20);
		char pat[64];

		snprintf(pat, sizeof(pat), ",%s,", got ? got : "?");
		if (list && strstr(want, pat)) {
			used++;
			if (!rank)
				printf("coll_check: %s pinned to %s\n", names[k], got);
		} else if (!list && !rank) {
			printf("coll_check: %s of 1 MiB runs %s\n", names[k], got ? got : "?");
		}
	}
	if (list && !used && nranks > 1) {
		fprintf(stderr, "coll_check: rank %d: --algo %s: no operation runs it\n", rank, list);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "algo", required_argument, NULL, 'a' },
		{ "loss", required_argument, NULL, 'l' },
		{ "dup", required_argument, NULL, 'd' },
		{ "reorder", required_argument, NULL, 'o' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "max-count", required_argument, NULL, 'm' },
		{ "kill-test", no_argument, NULL, 'k' },
		{ "stats", no_argument, NULL, 's' },
		{ "p2p-mismatch", no_argument, NULL, 'P' },
		{ "a2av-mismatch", required_argument, NULL, 'V' },
		{ 0 }
	};
	struct mroce_faults faults = { .seed = 1 };
	MROCE_OPTS(mroce_coll_opts, opts, .rank = -1);
	const char *algo = "auto";
	size_t max_count = 200000;
	struct mroce_coll_comm *c;
	bool kill = false, faulty = false, stats = false, mismatch = false, v_mismatch = false;
	size_t v_send = 0, v_recv = 0;
	double t0 = now_ms();
	int o, err;

	while ((o = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (o) {
		case 'a': algo = optarg; break;
		case 'l': faults.tx_drop_ppm = (uint32_t)atoi(optarg); faulty = true; break;
		case 'd': faults.tx_dup_ppm = (uint32_t)atoi(optarg); faulty = true; break;
		case 'o': faults.tx_reorder_ppm = (uint32_t)atoi(optarg); faulty = true; break;
		case 't': opts.timeout_ms = (uint32_t)atoi(optarg); break;
		case 'm': max_count = strtoull(optarg, NULL, 0); break;
		case 'k': kill = true; break;
		case 's': stats = true; break;
		case 'P': mismatch = true; break;
		case 'V':
			if (sscanf(optarg, "%zu,%zu", &v_send, &v_recv) != 2)
				return fprintf(stderr, "coll_check: --a2av-mismatch SEND,RECV\n"), 2;
			v_mismatch = true;
			break;
		default:
			fprintf(stderr, "usage: coll_check [--algo auto|ring|small|NAMES] [--loss PPM] "
				"[--dup PPM] [--reorder PPM] [--timeout-ms MS] [--max-count N] "
				"[--stats] [--kill-test] [--p2p-mismatch] [--a2av-mismatch S,R]\n");
			return 2;
		}
	}
	if (!strcmp(algo, "ring"))
		opts.ring_only = true;
	else if (!strcmp(algo, "small"))
		opts.small_bytes = SIZE_MAX;
	else if (strcmp(algo, "auto"))
		setenv("MROCE_COLL_ALGO", algo, 1);	/* pinned by name (every rank alike) */
	if (faulty) {
		faults.seed = 1 + (uint32_t)atoi(getenv("RANK") ? getenv("RANK") : "0");
		opts.test_faults = &faults;
	}
	err = mroce_coll_comm_create(&opts, &c);
	if (err) {
		fprintf(stderr, "coll_check: joining the communicator: %s\n", err_str(err));
		return 1;
	}
	rank = mroce_coll_rank(c);
	nranks = mroce_coll_size(c);
	if (strcmp(algo, "auto") && strcmp(algo, "ring") && strcmp(algo, "small") &&
	    check_pinned(c, algo))
		return mroce_coll_comm_destroy(c), 1;
	if (!strcmp(algo, "auto"))
		check_pinned(c, NULL);
	if (v_mismatch) {
		int code = a2av_mismatch_test(c, v_send, v_recv);

		mroce_coll_comm_destroy(c);
		return code;
	}
	if (mismatch) {
		int code = p2p_mismatch_test(c);

		mroce_coll_comm_destroy(c);
		return code;
	}
	if (kill) {
		int code = kill_test(c);

		mroce_coll_comm_destroy(c);
		return code;
	}

	/* counts: empty, one element, fewer than the ranks, uneven, several chunks */
	size_t counts[] = { 0, 1, (size_t)nranks - 1 ? (size_t)nranks - 1 : 2, 1001, 33333,
			    max_count + 7 };
	enum mroce_coll_redop ops[] = { MROCE_COLL_SUM, MROCE_COLL_PROD, MROCE_COLL_MIN,
					MROCE_COLL_MAX };

	check_bad_args(c);
	for (enum mroce_coll_dtype t = 0; t < __MROCE_COLL_DTYPE_MAX; t++) {
		for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
			for (size_t o2 = 0; o2 < 4; o2++)
				check_allreduce(c, t, ops[o2], counts[k], false, false);
			check_reduce_scatter(c, t, ops[k % 4], counts[k] / 4, false);
			check_allgather(c, t, counts[k] / 4, false);
			check_broadcast(c, t, counts[k], (int)(k % (size_t)nranks));
			check_alltoall(c, t, counts[k] / 4, false);
			check_alltoallv(c, t, counts[k] / 8, false, false);
			check_p2p(c, t, counts[k], false);
		}
	}
	/* more than the inboxes hold (16 chunks): the send waits for its receive */
	check_p2p(c, MROCE_COLL_INT32, (5u << 20) / 4 + 3, false);
	check_p2p(c, MROCE_COLL_FLOAT64, 1001, true);
	check_p2p(c, MROCE_COLL_UINT8, 0, true);
	/* in place, non-blocking, and the block size where all-to-all goes direct */
	check_allreduce(c, MROCE_COLL_FLOAT32, MROCE_COLL_SUM, 77777, true, false);
	check_allreduce(c, MROCE_COLL_INT64, MROCE_COLL_MAX, 5, true, true);
	check_allreduce(c, MROCE_COLL_FLOAT64, MROCE_COLL_SUM, 123457, false, true);
	check_reduce_scatter(c, MROCE_COLL_INT32, MROCE_COLL_SUM, 20001, true);
	check_allgather(c, MROCE_COLL_UINT8, 70001, true);
	check_alltoall(c, MROCE_COLL_INT32, 30001, true);
	check_alltoall(c, MROCE_COLL_UINT8, 1, true);
	check_alltoallv(c, MROCE_COLL_INT32, 3000, true, false);
	check_alltoallv(c, MROCE_COLL_FLOAT64, 2500, false, true);
	check_alltoallv(c, MROCE_COLL_UINT8, 9000, true, true);
	check_nonblocking(c);
	check_barrier(c);

	printf("coll_check: rank %d of %d (%s%s): %d checks, %d failed, %.0f ms\n", rank, nranks,
	       algo, faulty ? ", faults" : "", checks, failures, now_ms() - t0);
	{
		struct mroce_dev_attr attr;

		/* where this rank received: several ranks per host each on queues of their own */
		if (!mroce_dev_query(mroce_coll_dev(c), &attr))
			printf("coll_check: rank %d: %s queues %u..%u, UDP port %u\n", rank, attr.ifname,
			       attr.queue, attr.queue + attr.queues - 1,
			       mroce_dev_udp_port(mroce_coll_dev(c)));
	}
	if (!rank && (faulty || stats)) {
		struct mroce_dev_stats st;

		if (!mroce_dev_stats(mroce_coll_dev(c), &st))
			printf("coll_check: rank 0 device: faults %" PRIu64 " retx %" PRIu64
			       " ooo %" PRIu64 " dup %" PRIu64 "\n", (uint64_t)st.faults,
			       (uint64_t)st.retx_pkts, (uint64_t)st.ooo_pkts,
			       (uint64_t)st.dup_pkts);
	}
	if (failures)
		print_failure_stats(c, rank);
	mroce_coll_comm_destroy(c);
	return failures ? 1 : 0;
}
