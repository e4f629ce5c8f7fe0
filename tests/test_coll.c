// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives without a network: the reduction kernels (every type and
 * operation, integer wrap-around, float order), a communicator of one rank
 * (every operation local, in place and out of place, non-blocking), and
 * every argument and rendezvous-variable error.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mroce/mroce.h"
#include "../coll/coll_internal.h"

/* Internal to libmroce (coll/reduce.c); the static library exposes it. */
void coll_reduce(enum mroce_coll_dtype t, enum mroce_coll_redop op, void *inout,
		 const void *in, size_t n);
void coll_reduce_to(enum mroce_coll_dtype t, enum mroce_coll_redop op, void *out,
		    const void *a, const void *b, size_t n);

/* One element the plain way: the reference the reduction loops must match bit for bit. */
static float ref_f32(enum mroce_coll_redop op, float l, float x)
{
	switch (op) {
	case MROCE_COLL_SUM:	return l + x;
	case MROCE_COLL_PROD:	return l * x;
	case MROCE_COLL_MIN:	return x < l ? x : l;
	default:		return x > l ? x : l;
	}
}

/*
 * out = a OP b, into a third buffer and in place, for lengths that leave a
 * tail after any vector width and for unaligned starts: every output element
 * carries the bits of the one-element reference (NaN, -0.0 and infinities
 * included, local operand first), the local operand is left alone when out
 * is apart from it, and nothing beyond n is written.
 */
static void test_reduce_to_float(void **state)
{
	static const size_t lens[] = { 1, 3, 7, 37, 1001 };
	static const float special[] = { 0.0f, -0.0f, 1.0f / 0.0f, -1.0f / 0.0f, 0.0f / 0.0f,
					 1e-40f, 3.5f, -2.25f };
	float a[1010], b[1010], out[1012], ref[1010], keep[1010];

	(void)state;
	for (size_t i = 0; i < 1010; i++) {
		a[i] = (i % 11 == 0) ? special[i % 8] : (float)((int)(i * 7919 % 2001) - 1000) / 7.0f;
		b[i] = (i % 13 == 0) ? special[(i / 13) % 8] : (float)((int)(i * 104729 % 1999) - 999) / 3.0f;
	}
	for (int op = MROCE_COLL_SUM; op <= MROCE_COLL_MAX; op++)
		for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
			for (size_t skew = 0; skew < 3; skew++) {
				size_t n = lens[li];

				for (size_t i = 0; i < n; i++)
					ref[i] = ref_f32((enum mroce_coll_redop)op, a[skew + i],
							 b[skew + i]);
				memset(out, 0x5a, sizeof(out));
				memcpy(keep, a, sizeof(a));
				coll_reduce_to(MROCE_COLL_FLOAT32, (enum mroce_coll_redop)op,
					       out + 1 + skew, a + skew, b + skew, n);
				assert_memory_equal(out + 1 + skew, ref, n * sizeof(float));
				assert_memory_equal(a, keep, sizeof(a));
				for (size_t i = 0; i < 1 + skew; i++)
					assert_int_equal(((uint8_t *)&out[i])[0], 0x5a);
				assert_int_equal(((uint8_t *)&out[1 + skew + n])[0], 0x5a);
				/* in place: out is the local operand */
				memcpy(out + 1, a + skew, n * sizeof(float));
				coll_reduce_to(MROCE_COLL_FLOAT32, (enum mroce_coll_redop)op,
					       out + 1, out + 1, b + skew, n);
				assert_memory_equal(out + 1, ref, n * sizeof(float));
			}
}

static void test_reduce_to_ints(void **state)
{
	int64_t a[67], b[67], out[67];
	uint8_t x[67], y[67], o8[67];

	(void)state;
	for (int i = 0; i < 67; i++) {
		a[i] = (int64_t)i * 0x0123456789abcdefll;
		b[i] = INT64_MAX - i;
		x[i] = (uint8_t)(i * 37);
		y[i] = (uint8_t)(255 - i * 3);
	}
	coll_reduce_to(MROCE_COLL_INT64, MROCE_COLL_SUM, out, a, b, 67);
	coll_reduce_to(MROCE_COLL_UINT8, MROCE_COLL_PROD, o8, x, y, 67);
	for (int i = 0; i < 67; i++) {
		assert_true(out[i] == (int64_t)((uint64_t)a[i] + (uint64_t)b[i]));
		assert_int_equal(o8[i], (uint8_t)((unsigned int)x[i] * y[i]));
	}
	coll_reduce_to(MROCE_COLL_INT64, MROCE_COLL_MIN, out, a, b, 67);
	for (int i = 0; i < 67; i++)
		assert_true(out[i] == (b[i] < a[i] ? b[i] : a[i]));
}

static void test_reduce_int32(void **state)
{
	int32_t a[4] = { 1, -5, INT32_MAX, 7 }, b[4] = { 2, 3, 1, -7 };

	(void)state;
	coll_reduce(MROCE_COLL_INT32, MROCE_COLL_SUM, a, b, 4);
	assert_int_equal(a[0], 3);
	assert_int_equal(a[1], -2);
	assert_int_equal(a[2], INT32_MIN);	/* wraps, as in MPI: no UB, no trap */
	assert_int_equal(a[3], 0);
	int32_t c[3] = { 3, -4, 65536 }, d[3] = { -3, -4, 65536 };
	coll_reduce(MROCE_COLL_INT32, MROCE_COLL_PROD, c, d, 3);
	assert_int_equal(c[0], -9);
	assert_int_equal(c[1], 16);
	assert_int_equal(c[2], 0);		/* 2^32 wraps to 0 */
	int32_t e[2] = { -1, 5 }, f[2] = { 1, -5 };
	coll_reduce(MROCE_COLL_INT32, MROCE_COLL_MIN, e, f, 2);
	assert_int_equal(e[0], -1);
	assert_int_equal(e[1], -5);
	coll_reduce(MROCE_COLL_INT32, MROCE_COLL_MAX, e, f, 2);
	assert_int_equal(e[0], 1);
	assert_int_equal(e[1], -5);
}

static void test_reduce_int64_uint8(void **state)
{
	int64_t a[2] = { INT64_MAX, -3 }, b[2] = { 1, 4 };
	uint8_t x[3] = { 200, 16, 3 }, y[3] = { 100, 16, 250 };

	(void)state;
	coll_reduce(MROCE_COLL_INT64, MROCE_COLL_SUM, a, b, 2);
	assert_true(a[0] == INT64_MIN);
	assert_true(a[1] == 1);
	coll_reduce(MROCE_COLL_INT64, MROCE_COLL_PROD, a, b, 2);
	assert_true(a[0] == INT64_MIN);
	assert_true(a[1] == 4);
	coll_reduce(MROCE_COLL_UINT8, MROCE_COLL_SUM, x, y, 3);
	assert_int_equal(x[0], 44);		/* 300 mod 256 */
	assert_int_equal(x[1], 32);
	assert_int_equal(x[2], 253);
	coll_reduce(MROCE_COLL_UINT8, MROCE_COLL_PROD, x, y, 3);
	assert_int_equal(x[0], (44 * 100) % 256);
	assert_int_equal(x[1], 0);		/* 512 mod 256 */
	coll_reduce(MROCE_COLL_UINT8, MROCE_COLL_MAX, x, y, 3);
	assert_int_equal(x[0], 100);
	assert_int_equal(x[2], 250);
	coll_reduce(MROCE_COLL_UINT8, MROCE_COLL_MIN, x, y, 3);
	assert_int_equal(x[0], 100);
}

static void test_reduce_float(void **state)
{
	float a[3] = { 1.5f, -2.0f, 1e30f }, b[3] = { 0.25f, 3.0f, 1e30f };
	double c[2] = { 0.1, -1.0 }, d[2] = { 0.2, 1e-300 };

	(void)state;
	coll_reduce(MROCE_COLL_FLOAT32, MROCE_COLL_SUM, a, b, 3);
	assert_true(a[0] == 1.75f && a[1] == 1.0f && a[2] == 2e30f);
	coll_reduce(MROCE_COLL_FLOAT32, MROCE_COLL_PROD, a, b, 3);
	assert_true(a[0] == 0.4375f && a[1] == 3.0f && isinf(a[2]));
	coll_reduce(MROCE_COLL_FLOAT32, MROCE_COLL_MIN, a, b, 3);
	assert_true(a[0] == 0.25f && a[1] == 3.0f && a[2] == 1e30f);
	coll_reduce(MROCE_COLL_FLOAT64, MROCE_COLL_SUM, c, d, 2);
	assert_true(c[0] == 0.1 + 0.2);		/* exactly the IEEE sum, no reassociation */
	coll_reduce(MROCE_COLL_FLOAT64, MROCE_COLL_MAX, c, d, 2);
	assert_true(c[0] == 0.1 + 0.2 && c[1] == 1e-300);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(mroce_coll_dtype_size(MROCE_COLL_FLOAT64), 8);
	assert_int_equal(mroce_coll_dtype_size(MROCE_COLL_UINT8), 1);
	assert_int_equal(mroce_coll_dtype_size(__MROCE_COLL_DTYPE_MAX), 0);
	assert_string_equal(mroce_coll_dtype_str(MROCE_COLL_INT64), "int64");
	assert_string_equal(mroce_coll_redop_str(MROCE_COLL_PROD), "prod");
	assert_string_equal(mroce_coll_redop_str(99), "?");
}

/* ---- a communicator of one rank: no network at all -------------------------- */

static struct mroce_coll_comm *solo(void)
{
	MROCE_OPTS(mroce_coll_opts, o, .rank = 0, .world_size = 1);
	struct mroce_coll_comm *c = NULL;

	assert_int_equal(mroce_coll_comm_create(&o, &c), 0);
	assert_int_equal(mroce_coll_rank(c), 0);
	assert_int_equal(mroce_coll_size(c), 1);
	assert_null(mroce_coll_dev(c));
	return c;
}

static void test_solo_ops(void **state)
{
	struct mroce_coll_comm *c = solo();
	int32_t s[5] = { 1, 2, 3, 4, 5 }, r[5] = { 0 };
	struct mroce_coll_req *req;

	(void)state;
	assert_int_equal(mroce_coll_allreduce(c, s, r, 5, MROCE_COLL_INT32, MROCE_COLL_SUM), 0);
	assert_memory_equal(s, r, sizeof(s));
	assert_int_equal(mroce_coll_allreduce(c, s, s, 5, MROCE_COLL_INT32, MROCE_COLL_PROD), 0);
	assert_int_equal(s[4], 5);
	memset(r, 0, sizeof(r));
	assert_int_equal(mroce_coll_alltoall(c, s, r, 5, MROCE_COLL_INT32), 0);
	assert_memory_equal(s, r, sizeof(s));
	assert_int_equal(mroce_coll_alltoall(c, r, r, 5, MROCE_COLL_INT32), 0);	/* in place */
	assert_memory_equal(s, r, sizeof(s));
	memset(r, 0, sizeof(r));
	assert_int_equal(mroce_coll_allgather(c, s, r, 5, MROCE_COLL_INT32), 0);
	assert_memory_equal(s, r, sizeof(s));
	memset(r, 0, sizeof(r));
	assert_int_equal(mroce_coll_reduce_scatter(c, s, r, 5, MROCE_COLL_INT32, MROCE_COLL_MAX), 0);
	assert_memory_equal(s, r, sizeof(s));
	assert_int_equal(mroce_coll_broadcast(c, s, 5, MROCE_COLL_INT32, 0), 0);
	assert_int_equal(mroce_coll_barrier(c), 0);
	assert_int_equal(mroce_coll_allreduce(c, NULL, NULL, 0, MROCE_COLL_INT32, MROCE_COLL_SUM), 0);
	memset(r, 0, sizeof(r));
	assert_int_equal(mroce_coll_iallreduce(c, s, r, 5, MROCE_COLL_INT32, MROCE_COLL_MIN, &req), 0);
	assert_int_equal(mroce_coll_wait(req), 0);
	assert_memory_equal(s, r, sizeof(s));
	assert_int_equal(mroce_coll_ibarrier(c, &req), 0);
	int res;
	while ((res = mroce_coll_test(req)) == -EINPROGRESS)
		;
	assert_int_equal(res, 0);
	assert_string_equal(mroce_coll_algo(c, MROCE_COLL_ALLREDUCE, 1 << 20), "local");
	assert_string_equal(mroce_coll_algo(c, MROCE_COLL_SEND, 1 << 20), "p2p");
	assert_string_equal(mroce_coll_algo(c, MROCE_COLL_RECV, 0), "p2p");
	assert_int_equal(mroce_coll_error(c), 0);
	mroce_coll_comm_destroy(c);
}

static void test_bad_arguments(void **state)
{
	struct mroce_coll_comm *c = solo();
	int32_t x[4] = { 0 };
	struct mroce_coll_req *req = NULL;

	(void)state;
	assert_int_equal(mroce_coll_allreduce(NULL, x, x, 4, MROCE_COLL_INT32, MROCE_COLL_SUM), -EINVAL);
	assert_int_equal(mroce_coll_allreduce(c, x, x, 4, 99, MROCE_COLL_SUM), -EINVAL);
	assert_int_equal(mroce_coll_allreduce(c, x, x, 4, MROCE_COLL_INT32, 99), -EINVAL);
	assert_int_equal(mroce_coll_allreduce(c, NULL, x, 4, MROCE_COLL_INT32, MROCE_COLL_SUM), -EINVAL);
	assert_int_equal(mroce_coll_allreduce(c, x, NULL, 4, MROCE_COLL_INT32, MROCE_COLL_SUM), -EINVAL);
	assert_int_equal(mroce_coll_broadcast(c, x, 4, MROCE_COLL_INT32, 1), -EINVAL);
	assert_int_equal(mroce_coll_broadcast(c, x, 4, MROCE_COLL_INT32, -1), -EINVAL);
	/* point to point: the peer is another rank, the buffer is there */
	assert_int_equal(mroce_coll_send(c, x, 4, MROCE_COLL_INT32, 0, 0), -EINVAL);
	assert_int_equal(mroce_coll_recv(c, x, 4, MROCE_COLL_INT32, 0, 0), -EINVAL);
	assert_int_equal(mroce_coll_send(c, x, 4, MROCE_COLL_INT32, 1, 0), -EINVAL);
	assert_int_equal(mroce_coll_recv(c, x, 4, MROCE_COLL_INT32, -1, 0), -EINVAL);
	assert_int_equal(mroce_coll_send(c, NULL, 4, MROCE_COLL_INT32, 1, 0), -EINVAL);
	assert_int_equal(mroce_coll_send(c, x, 4, 42, 1, 0), -EINVAL);
	assert_int_equal(mroce_coll_isend(c, x, 4, MROCE_COLL_INT32, 0, 0, &req), -EINVAL);
	assert_int_equal(mroce_coll_irecv(c, x, 4, MROCE_COLL_INT32, 1, 0, NULL), -EINVAL);
	assert_int_equal(mroce_coll_irecv(c, x, SIZE_MAX / 2, MROCE_COLL_INT32, 1, 0, &req),
			 -EOVERFLOW);
	assert_int_equal(mroce_coll_alltoall(c, x, x, SIZE_MAX / 2, MROCE_COLL_INT32), -EOVERFLOW);
	assert_int_equal(mroce_coll_alltoall(c, x, x, 1ull << 30, MROCE_COLL_INT32), -EMSGSIZE);
	assert_int_equal(mroce_coll_error(c), 0);	/* argument errors leave it usable */
	assert_int_equal(mroce_coll_iallreduce(c, x, x, 4, MROCE_COLL_INT32, MROCE_COLL_SUM, NULL), -EINVAL);
	assert_int_equal(mroce_coll_iallgather(c, x, x, 4, 42, &req), -EINVAL);
	assert_null(req);
	assert_int_equal(mroce_coll_wait(NULL), -EINVAL);
	assert_int_equal(mroce_coll_test(NULL), -EINVAL);
	assert_int_equal(mroce_coll_rank(NULL), -EINVAL);
	assert_null(mroce_coll_algo(NULL, MROCE_COLL_ALLREDUCE, 8));
	mroce_coll_comm_destroy(c);
	mroce_coll_comm_destroy(NULL);
}

/*
 * All-to-all-v on one rank: the one block lands at its displacement and
 * nothing else is written; in place (overlapping blocks) reads the send
 * block as it was; zero counts with NULL buffers are fine; every argument
 * error is refused before anything is touched.
 */
static void test_solo_alltoallv(void **state)
{
	struct mroce_coll_comm *c = solo();
	int32_t s[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, r[8], b[8];
	size_t three = 3, zero = 0, one = 1, two = 2, five = 5, huge = SIZE_MAX / 2;
	size_t big = (1ull << 30), wrap = SIZE_MAX / 4 - 1;
	struct mroce_coll_req *req = NULL;

	(void)state;
	memset(r, 0xee, sizeof(r));
	assert_int_equal(mroce_coll_alltoallv(c, s, &three, &two, r, &three, &five,
					      MROCE_COLL_INT32), 0);
	assert_memory_equal(r + 5, s + 2, 3 * sizeof(int32_t));
	for (int i = 0; i < 5; i++)
		assert_int_equal(r[i], (int32_t)0xeeeeeeee);
	/* in place, the receive block over the send block shifted by one */
	memcpy(b, s, sizeof(b));
	assert_int_equal(mroce_coll_alltoallv(c, b, &five, &one, b, &five, &two,
					      MROCE_COLL_INT32), 0);
	assert_memory_equal(b + 2, s + 1, 5 * sizeof(int32_t));
	assert_int_equal(b[0], 1);
	assert_int_equal(b[1], 2);
	assert_int_equal(b[7], 8);
	assert_int_equal(mroce_coll_alltoallv(c, NULL, &zero, &zero, NULL, &zero, &zero,
					      MROCE_COLL_FLOAT64), 0);
	/* non-blocking: the arrays may change once it started */
	size_t cnt = 4, sd = 0, rd = 4;
	memset(r, 0, sizeof(r));
	assert_int_equal(mroce_coll_ialltoallv(c, s, &cnt, &sd, r, &cnt, &rd, MROCE_COLL_INT32,
					       &req), 0);
	cnt = 1;
	rd = 0;
	assert_int_equal(mroce_coll_wait(req), 0);
	assert_memory_equal(r + 4, s, 4 * sizeof(int32_t));
	assert_int_equal(r[0], 0);
	/* argument errors */
	assert_int_equal(mroce_coll_alltoallv(NULL, s, &one, &zero, r, &one, &zero,
					      MROCE_COLL_INT32), -EINVAL);
	assert_int_equal(mroce_coll_alltoallv(c, s, NULL, &zero, r, &one, &zero,
					      MROCE_COLL_INT32), -EINVAL);
	assert_int_equal(mroce_coll_alltoallv(c, s, &one, NULL, r, &one, &zero,
					      MROCE_COLL_INT32), -EINVAL);
	assert_int_equal(mroce_coll_alltoallv(c, s, &one, &zero, r, NULL, &zero,
					      MROCE_COLL_INT32), -EINVAL);
	assert_int_equal(mroce_coll_alltoallv(c, s, &one, &zero, r, &one, NULL,
					      MROCE_COLL_INT32), -EINVAL);
	assert_int_equal(mroce_coll_alltoallv(c, s, &one, &zero, r, &one, &zero, 42), -EINVAL);
	assert_int_equal(mroce_coll_alltoallv(c, NULL, &one, &zero, r, &one, &zero,
					      MROCE_COLL_INT32), -EINVAL);
	assert_int_equal(mroce_coll_alltoallv(c, s, &one, &zero, NULL, &one, &zero,
					      MROCE_COLL_INT32), -EINVAL);
	/* our own block: the same size both ways */
	assert_int_equal(mroce_coll_alltoallv(c, s, &one, &zero, r, &two, &zero,
					      MROCE_COLL_INT32), -EINVAL);
	/* sizes and ends that do not fit */
	assert_int_equal(mroce_coll_alltoallv(c, s, &huge, &zero, r, &huge, &zero,
					      MROCE_COLL_INT32), -EOVERFLOW);
	assert_int_equal(mroce_coll_alltoallv(c, s, &one, &huge, r, &one, &zero,
					      MROCE_COLL_INT32), -EOVERFLOW);
	assert_int_equal(mroce_coll_alltoallv(c, s, &one, &zero, r, &one, &wrap,
					      MROCE_COLL_INT32), -EOVERFLOW);
	assert_int_equal(mroce_coll_alltoallv(c, s, &big, &zero, r, &big, &zero,
					      MROCE_COLL_INT32), -EMSGSIZE);
	assert_int_equal(mroce_coll_ialltoallv(c, s, &one, &zero, r, &one, &zero,
					       MROCE_COLL_INT32, NULL), -EINVAL);
	assert_int_equal(mroce_coll_error(c), 0);	/* argument errors leave it usable */
	memset(r, 0, sizeof(r));
	assert_int_equal(mroce_coll_alltoallv(c, s, &one, &zero, r, &one, &zero,
					      MROCE_COLL_INT32), 0);
	assert_int_equal(r[0], 1);
	mroce_coll_comm_destroy(c);
}

static int create_with_env(const char *rank, const char *world, const char *master)
{
	struct mroce_coll_comm *c = NULL;
	int err;

	rank ? setenv("RANK", rank, 1) : unsetenv("RANK");
	world ? setenv("WORLD_SIZE", world, 1) : unsetenv("WORLD_SIZE");
	master ? setenv("MASTER_ADDR", master, 1) : unsetenv("MASTER_ADDR");
	err = mroce_coll_comm_create(NULL, &c);
	if (!err)
		mroce_coll_comm_destroy(c);
	unsetenv("RANK");
	unsetenv("WORLD_SIZE");
	unsetenv("MASTER_ADDR");
	return err;
}

static void test_rendezvous_variables(void **state)
{
	(void)state;
	assert_int_equal(create_with_env("0", "1", NULL), 0);		/* alone: no master needed */
	assert_int_equal(create_with_env(NULL, "2", "198.18.0.1"), -EINVAL);
	assert_int_equal(create_with_env("0", NULL, "198.18.0.1"), -EINVAL);
	assert_int_equal(create_with_env("2", "2", "198.18.0.1"), -EINVAL);	/* rank >= world */
	assert_int_equal(create_with_env("-1", "2", "198.18.0.1"), -EINVAL);
	assert_int_equal(create_with_env("0", "abc", "198.18.0.1"), -EINVAL);
	assert_int_equal(create_with_env("0", "257", "198.18.0.1"), -EINVAL);
	assert_int_equal(create_with_env("1", "2", NULL), -EDESTADDRREQ);
	assert_int_equal(create_with_env("1", "2", "not-an-address"), -EDESTADDRREQ);
	/* set but malformed: refused, never the default instead */
	setenv("MASTER_PORT", "80x", 1);
	assert_int_equal(create_with_env("0", "1", NULL), -EINVAL);
	setenv("MASTER_PORT", "70000", 1);
	assert_int_equal(create_with_env("0", "1", NULL), -EINVAL);
	unsetenv("MASTER_PORT");
	setenv("MROCE_COLL_TIMEOUT_MS", "soon", 1);
	assert_int_equal(create_with_env("0", "1", NULL), -EINVAL);
	unsetenv("MROCE_COLL_TIMEOUT_MS");
	assert_int_equal(create_with_env("0", "1", NULL), 0);
}

static void test_bad_options(void **state)
{
	struct mroce_coll_comm *c = NULL;
	struct { struct mroce_coll_opts o; char newer[8]; } big = { 0 };

	(void)state;
	assert_int_equal(mroce_coll_comm_create(NULL, NULL), -EINVAL);
	MROCE_OPTS(mroce_coll_opts, o, .rank = 0, .world_size = 1, .chunk_bytes = 1000);
	assert_int_equal(mroce_coll_comm_create(&o, &c), -EINVAL);	/* not a multiple of 64 */
	o.chunk_bytes = 2 << 20;
	assert_int_equal(mroce_coll_comm_create(&o, &c), -EINVAL);	/* above 1 MiB */
	/* A newer caller's field this library does not know, set: refused. */
	big.o.sz = sizeof(big);
	big.o.rank = 0;
	big.o.world_size = 1;
	big.newer[3] = 1;
	assert_int_equal(mroce_coll_comm_create(&big.o, &c), -EINVAL);
	big.newer[3] = 0;
	assert_int_equal(mroce_coll_comm_create(&big.o, &c), 0);
	mroce_coll_comm_destroy(c);
}

/* ---- the one table (coll/select.c): what is chosen when -------------------- */

static const char *pick(int size, enum mroce_coll_kind k, size_t bytes, const char *pin,
			bool ring_only)
{
	struct mroce_coll_comm c = { .size = size, .chunk = 256 * 1024, .small_bytes = 16 * 1024,
				     .force_algo = (char *)pin, .ring_only = ring_only };

	return mroce_coll_algo(&c, k, bytes);
}

/*
 * Two ranks reducing each other's value: each takes the lower rank's operand
 * first (xfer.c), so min and max agree bit for bit where the operands
 * compare equal (-0, +0) or one is NaN; each end's own first would not.
 */
static void test_reduce_operand_order(void **state)
{
	const float lo[3] = { 1.0f, -0.0f, NAN }, hi[3] = { NAN, 0.0f, 2.0f };
	const enum mroce_coll_redop ops[2] = { MROCE_COLL_MIN, MROCE_COLL_MAX };

	(void)state;
	for (int k = 0; k < 2; k++) {
		float r0[3], r1[3], own1[3];

		memcpy(r0, lo, sizeof(r0));	/* rank 0: its own first, the higher rank's second */
		coll_reduce(MROCE_COLL_FLOAT32, ops[k], r0, hi, 3);
		memcpy(r1, hi, sizeof(r1));	/* rank 1: the lower rank's first */
		coll_reduce_first(MROCE_COLL_FLOAT32, ops[k], r1, lo, 3);
		assert_memory_equal(r0, r1, sizeof(r0));
		memcpy(own1, hi, sizeof(own1));	/* rank 1 its own first: differs */
		coll_reduce(MROCE_COLL_FLOAT32, ops[k], own1, lo, 3);
		assert_memory_not_equal(r0, own1, sizeof(r0));
	}
}

static void test_table(void **state)
{
	const size_t K = 1024, M = 1024 * 1024;

	(void)state;
	/* few ranks (2 - 8): today's choices, the ring and the chain */
	for (int n = 2; n <= 8; n++) {
		assert_string_equal(pick(n, MROCE_COLL_ALLREDUCE, 4 * K, NULL, false), "rd");
		assert_string_equal(pick(n, MROCE_COLL_ALLREDUCE, 16 * K + 4, NULL, false), "ring");
		assert_string_equal(pick(n, MROCE_COLL_ALLREDUCE, 64 * M, NULL, false), "ring");
		assert_string_equal(pick(n, MROCE_COLL_REDUCE_SCATTER, 1 * M, NULL, false), "ring");
		assert_string_equal(pick(n, MROCE_COLL_ALLGATHER, 1 * M, NULL, false), "ring");
		assert_string_equal(pick(n, MROCE_COLL_BROADCAST, 4 * K, NULL, false), "tree");
		assert_string_equal(pick(n, MROCE_COLL_BROADCAST, 1 * M, NULL, false), "chain");
		assert_string_equal(pick(n, MROCE_COLL_ALLTOALL, (size_t)n * K, NULL, false),
				    "pairwise-inbox");
		assert_string_equal(pick(n, MROCE_COLL_ALLTOALL, (size_t)n * M, NULL, false),
				    "pairwise-direct");
	}
	/* beyond 8 ranks: the log-step algorithms, unless each rank's segment is a chunk */
	for (int n = 9; n <= 1024; n = n * 2 + 1) {
		assert_string_equal(pick(n, MROCE_COLL_ALLREDUCE, 4 * K, NULL, false), "rd");
		assert_string_equal(pick(n, MROCE_COLL_ALLREDUCE, 1 * M, NULL, false), "rhd");
		assert_string_equal(pick(n, MROCE_COLL_ALLREDUCE, (size_t)n * 256 * K - 1, NULL, false),
				    "rhd");
		assert_string_equal(pick(n, MROCE_COLL_ALLREDUCE, (size_t)n * 256 * K, NULL, false),
				    "ring");
		assert_string_equal(pick(n, MROCE_COLL_REDUCE_SCATTER, (size_t)n * 256 * K, NULL, false),
				    "ring");
		assert_string_equal(pick(n, MROCE_COLL_ALLGATHER, (size_t)n * 256 * K - 1, NULL, false),
				    "rd");
		assert_string_equal(pick(n, MROCE_COLL_REDUCE_SCATTER, 1 * K, NULL, false), "rhd");
		assert_string_equal(pick(n, MROCE_COLL_ALLGATHER, 1 * M, NULL, false), "rd");
		assert_string_equal(pick(n, MROCE_COLL_BROADCAST, 4 * K, NULL, false), "tree");
		assert_string_equal(pick(n, MROCE_COLL_BROADCAST, 1 * M, NULL, false), "scatter-ag");
		assert_string_equal(pick(n, MROCE_COLL_ALLTOALL, (size_t)n * M, NULL, false),
				    "pairwise-direct");
		/* the tests' ring_only keeps the ring at any rank count */
		assert_string_equal(pick(n, MROCE_COLL_ALLREDUCE, 1 * M, NULL, true), "ring");
		assert_string_equal(pick(n, MROCE_COLL_ALLGATHER, 1 * M, NULL, true), "ring");
	}
	/* a broadcast of many chunks per rank: the chain at any rank count */
	assert_string_equal(pick(9, MROCE_COLL_BROADCAST, 64 * M, NULL, false), "chain");
	assert_string_equal(pick(1024, MROCE_COLL_BROADCAST, 64 * M, NULL, false), "scatter-ag");
	assert_string_equal(pick(1024, MROCE_COLL_BROADCAST, 1024 * M, NULL, false), "chain");
	/* one rank or nothing to move: local, whatever is pinned */
	assert_string_equal(pick(1, MROCE_COLL_ALLREDUCE, 1 * M, "rhd", false), "local");
}

static void test_table_pinned(void **state)
{
	const size_t M = 1024 * 1024;

	(void)state;
	/* the first name of the list that the kind has; the table for the rest */
	assert_string_equal(pick(4, MROCE_COLL_ALLREDUCE, 1 * M, "rhd", false), "rhd");
	assert_string_equal(pick(4, MROCE_COLL_ALLREDUCE, 8, "rhd", false), "rhd");
	assert_string_equal(pick(4, MROCE_COLL_REDUCE_SCATTER, 1 * M, "rhd", false), "rhd");
	assert_string_equal(pick(4, MROCE_COLL_ALLGATHER, 1 * M, "rhd", false), "ring");
	assert_string_equal(pick(4, MROCE_COLL_ALLGATHER, 1 * M, "rhd,rd", false), "rd");
	assert_string_equal(pick(4, MROCE_COLL_ALLREDUCE, 1 * M, "rhd,rd", false), "rhd");
	assert_string_equal(pick(4, MROCE_COLL_ALLREDUCE, 1 * M, "rd,rhd", false), "rd");
	assert_string_equal(pick(4, MROCE_COLL_BROADCAST, 1 * M, "rd,scatter-ag", false),
			    "scatter-ag");
	assert_string_equal(pick(64, MROCE_COLL_ALLREDUCE, 1 * M, "ring", false), "ring");
	assert_string_equal(pick(64, MROCE_COLL_BROADCAST, 1 * M, "ring,tree", false), "tree");
	/* a prefix is not a name */
	assert_string_equal(pick(64, MROCE_COLL_ALLREDUCE, 1 * M, "rh", false), "rhd");
	assert_string_equal(pick(4, MROCE_COLL_ALLREDUCE, 1 * M, "rhdx", false), "ring");
	assert_true(coll_algo_names_valid("rhd"));
	assert_true(coll_algo_names_valid("ring,rd,scatter-ag,chain,tree,pairwise-direct"));
	assert_false(coll_algo_names_valid(""));
	assert_false(coll_algo_names_valid("rhd,"));
	assert_false(coll_algo_names_valid("rhd,bogus"));
	assert_false(coll_algo_names_valid("rh"));
}

/* All-to-all's window: distances open at once (2 peers each). */
static size_t blocks(int n, size_t block)
{
	return 2 * (size_t)(n - 1) * block;	/* bytes to and from the peers */
}

static void test_a2a_window(void **state)
{
	struct mroce_coll_comm c = { .size = 1024 };

	(void)state;
	assert_int_equal(coll_a2a_window(&c, blocks(1024, 1024)), 512);	/* 1 KiB: all */
	assert_int_equal(coll_a2a_window(&c, blocks(1024, 16384)), 128);	/* 256 peers: 4 MiB */
	assert_int_equal(coll_a2a_window(&c, blocks(1024, 65536)), 32);		/* 64 peers */
	assert_int_equal(coll_a2a_window(&c, blocks(1024, 1 << 20)), 16);	/* 32 at least */
	assert_int_equal(coll_a2a_window(&c, blocks(1024, 64 << 20)), 16);
	assert_int_equal(coll_a2a_window(&c, 0), 512);				/* empty blocks */
	c.a2a_window = 2;	/* MROCE_COLL_A2A_WINDOW fixes it */
	assert_int_equal(coll_a2a_window(&c, blocks(1024, 1024)), 1);
	c.a2a_window = 64;
	assert_int_equal(coll_a2a_window(&c, blocks(1024, 1024)), 32);
	c = (struct mroce_coll_comm){ .size = 4 };	/* fewer ranks than the window: all */
	assert_int_equal(coll_a2a_window(&c, blocks(4, 64 << 20)), 2);
	c.size = 2;
	assert_int_equal(coll_a2a_window(&c, blocks(2, 1 << 20)), 1);
}

/* MROCE_COLL_ALGO: pins (mroce_coll_algo says so); a name no algorithm has is refused. */
static void test_algo_env(void **state)
{
	MROCE_OPTS(mroce_coll_opts, o, .rank = 0, .world_size = 1);
	struct mroce_coll_comm *c = NULL;

	(void)state;
	setenv("MROCE_COLL_ALGO", "ring,bogus", 1);
	assert_int_equal(mroce_coll_comm_create(&o, &c), -EINVAL);
	setenv("MROCE_COLL_ALGO", "rhd,rd", 1);
	assert_int_equal(mroce_coll_comm_create(&o, &c), 0);
	assert_string_equal(c->force_algo, "rhd,rd");
	mroce_coll_comm_destroy(c);
	unsetenv("MROCE_COLL_ALGO");
	setenv("MROCE_COLL_A2A_WINDOW", "1", 1);
	assert_int_equal(mroce_coll_comm_create(&o, &c), -EINVAL);
	setenv("MROCE_COLL_A2A_WINDOW", "4", 1);
	assert_int_equal(mroce_coll_comm_create(&o, &c), 0);
	assert_int_equal(c->a2a_window, 4);
	mroce_coll_comm_destroy(c);
	unsetenv("MROCE_COLL_A2A_WINDOW");
	assert_int_equal(mroce_coll_comm_create(&o, &c), 0);
	assert_null(c->force_algo);
	assert_int_equal(c->a2a_window, 0);	/* by block size */
	mroce_coll_comm_destroy(c);
}

/* ---- the staged algorithms' schedules at up to 1024 ranks, without a network ----
 *
 * Every rank's operation is started as the library starts it (the table, the pin),
 * then its stages are run against the others in one process: a send copies its
 * bytes into a first-in first-out queue for the pair, a receive takes the pair's
 * oldest message (its length must be the one expected) and copies or adds it in,
 * as the channels do. Stages run in each rank's own order, as far as messages
 * allow; a pass where no rank moves with ranks not done is a deadlock. Results
 * (int64 sums of distinct keys) are checked element by element. */

struct sched_msg {
	int		from;
	size_t		len;
	__u8		*data;
	struct sched_msg *next;
};

struct sched_rank {
	struct mroce_coll_comm	c;
	struct coll_op		op;
	int64_t			*send, *recv;
	struct xfer		x[COLL_STAGE_XFERS];
	int			k, nx;
	bool			loaded, done, got[COLL_STAGE_XFERS];
	struct sched_msg	*inbox, **tail;	/* messages for this rank, in arrival order */
};

static int64_t key(int r, size_t e)
{
	return (int64_t)(((uint64_t)r + 1) * 0x9e3779b97f4a7c15ull ^ (e * 0x2545f4914f6cdd1dull));
}

static bool take(struct sched_rank *rk, int from, __u8 *dst, size_t want, bool reduce)
{
	for (struct sched_msg **pp = &rk->inbox; *pp; pp = &(*pp)->next) {
		struct sched_msg *m = *pp;

		if (m->from != from)
			continue;
		assert_int_equal(m->len, want);	/* the pair agrees on the length */
		if (reduce)
			coll_reduce(MROCE_COLL_INT64, MROCE_COLL_SUM, dst, m->data, want / 8);
		else if (want)
			memcpy(dst, m->data, want);
		*pp = m->next;
		if (rk->tail == &m->next)
			rk->tail = pp;
		free(m->data);
		free(m);
		return true;
	}
	return false;
}

static bool spans_meet(const __u8 *a, size_t alen, const __u8 *b, size_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/* One operation of kind on n ranks, algorithm pinned by name; count per rank
 * (all-reduce, broadcast: the vector). */
static void sched_run(int n, enum mroce_coll_kind kind, const char *algo, size_t count, int root)
{
	struct sched_rank *rk = calloc((size_t)n, sizeof(*rk));
	size_t in = kind == MROCE_COLL_REDUCE_SCATTER ? count * (size_t)n : count;
	size_t out = kind == MROCE_COLL_ALLGATHER ? count * (size_t)n : count;
	int left = n;

	assert_non_null(rk);
	for (int r = 0; r < n; r++) {
		struct sched_rank *q = &rk[r];
		struct coll_args a = { .kind = kind, .count = count, .dtype = MROCE_COLL_INT64,
				       .op = MROCE_COLL_SUM, .root = root };

		q->c = (struct mroce_coll_comm){ .size = n, .rank = r, .chunk = 4096,
						 .small_bytes = 16 * 1024,
						 .force_algo = (char *)algo };
		q->send = calloc(in + 1, 8);
		q->recv = calloc(out + 1, 8);
		assert_true(q->send && q->recv);
		for (size_t e = 0; e < in; e++)
			q->send[e] = key(r, e);
		if (kind == MROCE_COLL_BROADCAST)
			for (size_t e = 0; e < out; e++)
				q->recv[e] = r == root ? key(r, e) : -1;
		a.sendbuf = kind == MROCE_COLL_BROADCAST ? q->recv : q->send;
		a.recvbuf = q->recv;
		q->tail = &q->inbox;
		assert_int_equal(coll_op_start(&q->c, &a, &q->op), 0);
		assert_string_equal(q->op.algo->name, algo);
	}
	while (left) {
		bool moved = false;

		for (int r = 0; r < n; r++) {
			struct sched_rank *q = &rk[r];
			struct coll_staged *st = q->op.priv;
			bool all = true;

			if (q->done)
				continue;
			if (!q->loaded) {
				q->nx = st->stage(&q->op, q->k, q->x);
				if (q->nx < 0) {
					q->done = true;
					left--;
					moved = true;
					continue;
				}
				q->loaded = true;
				moved = true;
				for (int i = 0; i < q->nx; i++) {
					struct xfer *x = &q->x[i];

					q->got[i] = false;
					/* what a stage sends is never what it receives into, but
					 * for one buffer both ways, each chunk staged before the
					 * same chunk is received (after_tx: rd) */
					if (!x->after_tx || x->src != x->dst)
						assert_false(spans_meet(x->src, x->to >= 0 ? x->slen : 0,
									x->dst, x->from >= 0 ? x->rlen : 0));
					if (x->to >= 0) {
						struct sched_msg *m = calloc(1, sizeof(*m));

						assert_true(x->to != r && x->to < n);
						m->from = r;
						m->len = x->slen;
						m->data = malloc(x->slen + 1);
						memcpy(m->data, x->src, x->slen);
						*rk[x->to].tail = m;
						rk[x->to].tail = &m->next;
					}
				}
			}
			for (int i = 0; i < q->nx; i++) {
				struct xfer *x = &q->x[i];

				if (x->from >= 0 && !q->got[i]) {
					assert_true(x->from != r && x->from < n);
					q->got[i] = take(q, x->from, x->dst, x->rlen, x->reduce);
					moved |= q->got[i];
				}
				all &= x->from < 0 || q->got[i];
			}
			if (all) {
				q->k++;
				q->loaded = false;
			}
		}
		if (!moved)
			fail_msg("%s %d ranks: deadlock", algo, n);
	}
	for (int r = 0; r < n; r++) {
		struct sched_rank *q = &rk[r];
		struct coll_staged *st = q->op.priv;

		assert_null(q->inbox);	/* every message taken */
		if (kind == MROCE_COLL_REDUCE_SCATTER) {
			/* the step after the last stage: the segment out of the work buffer */
			st->begun = true;
			st->nx = 0;
			st->k = q->k - 1;
			assert_int_equal(q->op.algo->step(&q->op), 1);
		}
		for (size_t e = 0; e < out; e++) {
			int64_t want = 0;

			if (kind == MROCE_COLL_ALLREDUCE || kind == MROCE_COLL_REDUCE_SCATTER) {
				for (int s2 = 0; s2 < n; s2++)
					want = (int64_t)((uint64_t)want + (uint64_t)key(s2,
						kind == MROCE_COLL_ALLREDUCE ? e : (size_t)r * count + e));
			} else if (kind == MROCE_COLL_ALLGATHER) {
				want = key((int)(e / count), e % count);
			} else {
				want = key(root, e);
			}
			if (q->recv[e] != want)
				fail_msg("%s %d ranks count %zu: rank %d element %zu wrong", algo, n,
					 count, r, e);
		}
		coll_op_end(&q->op, 0);
		free(q->send);
		free(q->recv);
	}
	free(rk);
}

static void test_sched_log_algos(void **state)
{
	static const int ranks[] = { 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 31, 33, 64, 100, 255,
				     256, 257, 1000, 1024 };

	(void)state;
	for (size_t i = 0; i < sizeof(ranks) / sizeof(ranks[0]); i++) {
		int n = ranks[i];
		size_t big = n <= 64 ? 3000 : 700;	/* several chunks of 4 KiB */

		sched_run(n, MROCE_COLL_ALLREDUCE, "rhd", 1, 0);
		sched_run(n, MROCE_COLL_ALLREDUCE, "rhd", (size_t)n - 1, 0);
		sched_run(n, MROCE_COLL_ALLREDUCE, "rhd", (size_t)n * 3 + 5, 0);
		sched_run(n, MROCE_COLL_ALLREDUCE, "rhd", big, 0);
		sched_run(n, MROCE_COLL_REDUCE_SCATTER, "rhd", 1, 0);
		sched_run(n, MROCE_COLL_REDUCE_SCATTER, "rhd", n <= 64 ? 600 : 3, 0);
		sched_run(n, MROCE_COLL_ALLGATHER, "rd", 1, 0);
		sched_run(n, MROCE_COLL_ALLGATHER, "rd", n <= 64 ? 600 : 3, 0);
		sched_run(n, MROCE_COLL_BROADCAST, "scatter-ag", 1, n - 1);
		sched_run(n, MROCE_COLL_BROADCAST, "scatter-ag", (size_t)n + 1, n / 2);
		sched_run(n, MROCE_COLL_BROADCAST, "scatter-ag", big, 1 % n);
		sched_run(n, MROCE_COLL_BROADCAST, "tree", big, n / 3);
		sched_run(n, MROCE_COLL_ALLREDUCE, "rd", 7, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reduce_int32),
		cmocka_unit_test(test_reduce_int64_uint8),
		cmocka_unit_test(test_reduce_float),
		cmocka_unit_test(test_reduce_to_float),
		cmocka_unit_test(test_reduce_to_ints),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_solo_ops),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_solo_alltoallv),
		cmocka_unit_test(test_rendezvous_variables),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_reduce_operand_order),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_pinned),
		cmocka_unit_test(test_algo_env),
		cmocka_unit_test(test_a2a_window),
		cmocka_unit_test(test_sched_log_algos),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
