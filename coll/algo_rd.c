// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: recursive doubling (all-reduce of small buffers) and the
 * dissemination barrier: log2(N) stages, each one exchange with one peer.
 *
 * Recursive doubling: ranks beyond the largest power of two p2 first fold
 * their buffer into rank - p2 and get the result back last; the p2 ranks
 * exchange whole buffers with r ^ 1, r ^ 2, ... and reduce. Reduction
 * order: a binary tree over rank order (docs/collectives.md); every rank
 * ends with the same bits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

static int pow2_below(int n)
{
	int p2 = 1;

	while (p2 * 2 <= n)
		p2 *= 2;
	return p2;
}

static int rd_stage(struct coll_op *op, int k, struct xfer *x)
{
	int n = op->c->size, r = op->c->rank, p2 = pow2_below(n), steps = 0;
	__u8 *buf = op->a.recvbuf;
	size_t len = op->bytes;

	while ((1 << steps) < p2)
		steps++;
	if (k == 0) {		/* fold in */
		if (r >= p2)
			x[0] = xfer_make(r - p2, buf, len, -1, NULL, 0, false);
		else if (r + p2 < n)
			x[0] = xfer_make(-1, NULL, 0, r + p2, buf, len, true);
		else
			return 0;
		return 1;
	}
	if (k <= steps) {	/* exchange with r ^ 2^(k-1) */
		int peer = r ^ (1 << (k - 1));

		if (r >= p2)
			return 0;
		x[0] = xfer_make(peer, buf, len, peer, buf, len, true);
		return 1;
	}
	if (k == steps + 1) {	/* fold out */
		if (r >= p2)
			x[0] = xfer_make(-1, NULL, 0, r - p2, buf, len, false);
		else if (r + p2 < n)
			x[0] = xfer_make(r + p2, buf, len, -1, NULL, 0, false);
		else
			return 0;
		return 1;
	}
	return -1;
}

static int rd_start(struct coll_op *op)
{
	if (op->a.sendbuf != op->a.recvbuf && op->bytes && !op->c->dry)
		memcpy(op->a.recvbuf, op->a.sendbuf, op->bytes);
	return coll_staged_new(op, rd_stage);
}

/* Dissemination: at stage k a zero-length chunk to r + 2^k, one from r - 2^k. */
static int barrier_stage(struct coll_op *op, int k, struct xfer *x)
{
	int n = op->c->size, r = op->c->rank;

	if (k >= 31 || (1 << k) >= n)
		return -1;
	x[0] = xfer_make(coll_mod(r + (1 << k), n), NULL, 0, coll_mod(r - (1 << k), n), NULL, 0,
			 false);
	return 1;
}

static int barrier_start(struct coll_op *op)
{
	return coll_staged_new(op, barrier_stage);
}

const struct coll_algo coll_algo_rd = {
	.name = "rd", .start = rd_start, .step = coll_staged_run, .fini = coll_staged_free,
};
const struct coll_algo coll_algo_barrier = {
	.name = "dissemination", .start = barrier_start, .step = coll_staged_run, .fini = coll_staged_free,
};
