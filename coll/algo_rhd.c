// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: the log-step bandwidth algorithms, recursive halving and
 * recursive doubling over blocks (docs/collectives.md, "Algorithms").
 *
 *   rhd all-reduce        fold in, recursive halving reduce-scatter, recursive
 *                         doubling all-gather, fold out (Rabenseifner)
 *   rhd reduce-scatter    fold in, recursive halving, each rank's segment to it
 *   rd all-gather         fold in, recursive doubling, fold out
 *   scatter-ag broadcast  binomial scatter, then the rd all-gather (van de Geijn)
 *
 * 2 log2(p) stages of one exchange each, p the largest power of two <= N;
 * each rank sends and receives 2 (p-1)/p of the vector, as the ring does, but
 * a rank waits for log2(p) round trips instead of N-1.
 *
 * Ranks not a power of two: with rem = N - p, the first 2 rem ranks pair up
 * (2v, 2v+1); the odd one folds its vector into the even one before the log
 * stages and gets its result after them; the others are active as they are.
 * Active rank v (v < rem: rank 2v, else rank v + rem) is virtual rank v of
 * the power-of-two stages. The vector is cut into units: p for all-reduce
 * (unit u: the u-th p-th of the elements, the first count mod p one longer),
 * N for the others (unit u: rank u's segment). Virtual rank v's block is unit v
 * (all-reduce), or the units of the ranks it stands for (2v and 2v+1, or
 * v + rem): blocks are contiguous, in rank order, so every stage moves one
 * contiguous span each way, in chunks through the channels.
 *
 * Halving stage i with mask m: v and v ^ m share a window of blocks (the
 * same for both: the earlier stages' bits of v pick it); the one with bit m
 * clear keeps the lower half and sends the upper, the other the reverse, each
 * reducing what it receives into what it keeps. Doubling stages run the
 * halving backwards, swapping windows. Masks: reduce-scatter p/2, p/4, ..., 1
 * (v ends with block v, its own); all-reduce 1, 2, ..., p/2, so that its
 * biggest exchanges (half the vector) are with the nearest ranks, as a
 * fat tree's leaf holds them, and only the smallest cross the spine.
 *
 * Reduction order: x_2v o x_2v+1 for the folded pairs (y_v, else y_v = x_v+rem),
 * then a binary tree: all-reduce over rank order ((y_0 o y_1) o (y_2 o y_3)) o ...,
 * reduce-scatter by the highest bit first ((y_0 o y_p/2) o (y_p/4 o y_3p/4)) o ...;
 * each element is reduced by one rank and copied to the others, so every
 * rank holds the same bits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

enum rhd_mode { RHD_ALLREDUCE, RHD_REDUCE_SCATTER, RHD_ALLGATHER, RHD_BCAST };

struct rhd {
	struct coll_staged	s;	/* first: coll_staged_run reads it */
	enum rhd_mode		mode;
	__u8			*buf;	/* the work buffer */
	__u8			*own;	/* reduce-scatter: buf, allocated here */
	int			n, x;	/* ranks; our rank relative to base */
	int			base;	/* broadcast: the root (rank = x + base) */
	int			p2, rem, L;	/* largest power of two <= n; n - p2; log2 p2 */
	int			v;	/* our virtual rank, -1: folded */
	int			U;	/* units */
	size_t			E, esz;	/* elements of the work buffer; element size */
	int			Ls;	/* broadcast: scatter stages after the first */
	bool			near_first;	/* halving masks 1, 2, ..: all-reduce */
};

static int phys(const struct rhd *h, int rel)
{
	return coll_mod(rel + h->base, h->n);
}

/* Byte offset of unit u (u = U: the end). */
static size_t unit_off(const struct rhd *h, int u)
{
	size_t q = h->E / (size_t)h->U, rm = h->E % (size_t)h->U;

	return ((size_t)u * q + ((size_t)u < rm ? (size_t)u : rm)) * h->esz;
}

/* First unit of virtual rank v's block (v = p2: the end). */
static int bstart(const struct rhd *h, int v)
{
	if (h->U == h->p2)
		return v;
	return v + (v < h->rem ? v : h->rem);
}

static size_t boff(const struct rhd *h, int v)
{
	return unit_off(h, bstart(h, v));
}

/* Rank (relative) of virtual rank v. */
static int vrel(const struct rhd *h, int v)
{
	return v < h->rem ? 2 * v : v + h->rem;
}

/* Exchange blocks [slo, shi) for blocks [rlo, rhi) with virtual rank pv. */
static struct xfer block_xfer(struct rhd *h, int pv, int slo, int shi, int rlo, int rhi,
			      bool reduce)
{
	int peer = phys(h, vrel(h, pv));
	size_t so = boff(h, slo), ro = boff(h, rlo);

	return xfer_make(peer, h->buf + so, boff(h, shi) - so, peer, h->buf + ro,
			 boff(h, rhi) - ro, reduce);
}

/* Fold in: the odd rank of a pair gives its vector (reducing) or its unit (gathering). */
static int fold_in(struct rhd *h, struct xfer *x, bool reduce)
{
	int me = h->x;
	size_t all = unit_off(h, h->U);

	if (me >= 2 * h->rem)
		return 0;
	if (reduce) {
		if (me & 1)
			x[0] = xfer_make(phys(h, me - 1), h->buf, all, -1, NULL, 0, false);
		else
			x[0] = xfer_make(-1, NULL, 0, phys(h, me + 1), h->buf, all, true);
	} else {
		size_t o = unit_off(h, me | 1), len = unit_off(h, (me | 1) + 1) - o;

		if (me & 1)
			x[0] = xfer_make(phys(h, me - 1), h->buf + o, len, -1, NULL, 0, false);
		else
			x[0] = xfer_make(-1, NULL, 0, phys(h, me + 1), h->buf + o, len, false);
	}
	return 1;
}

/* Fold out: the odd rank of a pair gets the whole result (or, reduce-scatter, its unit). */
static int fold_out(struct rhd *h, struct xfer *x, bool own_unit)
{
	int me = h->x;
	size_t o = 0, len = unit_off(h, h->U);

	if (me >= 2 * h->rem)
		return 0;
	if (own_unit) {
		o = unit_off(h, me | 1);
		len = unit_off(h, (me | 1) + 1) - o;
	}
	if (me & 1)
		x[0] = xfer_make(-1, NULL, 0, phys(h, me - 1), h->buf + o, len, false);
	else
		x[0] = xfer_make(phys(h, me + 1), h->buf + o, len, -1, NULL, 0, false);
	return 1;
}

/* The mask of halving stage i: all-reduce nearest first (1, 2, .., p2/2), the
 * others farthest first (p2/2, .., 1: virtual rank v ends with block v). */
static int hmask(const struct rhd *h, int i)
{
	return h->near_first ? 1 << i : h->p2 >> (i + 1);
}

/* First block of v's window after the first `steps` halving stages: each
 * stage's bit of v picks the upper or the lower half. */
static int window(const struct rhd *h, int v, int steps)
{
	int lo = 0;

	for (int t = 0; t < steps; t++)
		if (v & hmask(h, t))
			lo += h->p2 >> (t + 1);
	return lo;
}

/* Halving stage i (0 .. L-1): keep one half of the window, reduce into it. */
static int halving(struct rhd *h, int i, struct xfer *x)
{
	int m = hmask(h, i), v = h->v, lo, half;

	if (v < 0)
		return 0;
	lo = window(h, v, i);
	half = h->p2 >> (i + 1);
	if (v & m)
		x[0] = block_xfer(h, v ^ m, lo, lo + half, lo + half, lo + 2 * half, true);
	else
		x[0] = block_xfer(h, v ^ m, lo + half, lo + 2 * half, lo, lo + half, true);
	return 1;
}

/* Doubling stage i (0 .. L-1): halving stage L-1-i backwards, windows swapped. */
static int doubling(struct rhd *h, int i, struct xfer *x)
{
	int j = h->L - 1 - i, v = h->v, lo, plo, size;

	if (v < 0)
		return 0;
	size = h->p2 >> (j + 1);
	lo = window(h, v, j + 1);
	plo = (v & hmask(h, j)) ? lo - size : lo + size;
	x[0] = block_xfer(h, v ^ hmask(h, j), lo, lo + size, plo, plo + size, false);
	return 1;
}

/* Broadcast's binomial scatter: stage 0 from the parent, stage k to the child
 * at distance 2^(Ls-k); each subtree's units [c, c + its size) go down whole. */
static int scatter(struct rhd *h, int k, struct xfer *x)
{
	int vr = h->x, n = h->n, top, mask, hi;

	if (k == 0) {
		if (!vr)
			return 0;
		mask = vr & -vr;
		hi = vr + mask < n ? vr + mask : n;
		x[0] = xfer_make(-1, NULL, 0, phys(h, vr - mask), h->buf + unit_off(h, vr),
				 unit_off(h, hi) - unit_off(h, vr), false);
		return 1;
	}
	mask = 1 << (h->Ls - k);
	top = vr ? (vr & -vr) : 1 << h->Ls;
	if (mask >= top || vr + mask >= n)
		return 0;
	hi = vr + 2 * mask < n ? vr + 2 * mask : n;
	x[0] = xfer_make(phys(h, vr + mask), h->buf + unit_off(h, vr + mask),
			 unit_off(h, hi) - unit_off(h, vr + mask), -1, NULL, 0, false);
	return 1;
}

static int rhd_stage(struct coll_op *op, int k, struct xfer *x)
{
	struct rhd *h = op->priv;
	int L = h->L;

	switch (h->mode) {
	case RHD_ALLREDUCE:
		if (k == 0)
			return fold_in(h, x, true);
		if (k <= L)
			return halving(h, k - 1, x);
		if (k <= 2 * L)
			return doubling(h, k - L - 1, x);
		return k == 2 * L + 1 ? fold_out(h, x, false) : -1;
	case RHD_REDUCE_SCATTER:
		if (k == 0)
			return fold_in(h, x, true);
		if (k <= L)
			return halving(h, k - 1, x);
		return k == L + 1 ? fold_out(h, x, true) : -1;
	case RHD_BCAST:
		if (k <= h->Ls)
			return scatter(h, k, x);
		k -= h->Ls + 1;
		__attribute__((fallthrough));	/* the all-gather */
	case RHD_ALLGATHER:
		if (k == 0)
			return fold_in(h, x, false);
		if (k <= L)
			return doubling(h, k - 1, x);
		return k == L + 1 ? fold_out(h, x, false) : -1;
	}
	return -1;
}

static void rhd_fini(struct coll_op *op)
{
	struct rhd *h = op->priv;

	if (h)
		free(h->own);
	free(h);
	op->priv = NULL;
}

static int rhd_setup(struct coll_op *op, enum rhd_mode mode, __u8 *buf, size_t elems, int units,
		     int base)
{
	struct mroce_coll_comm *c = op->c;
	struct rhd *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	op->priv = h;
	h->s.stage = rhd_stage;
	h->mode = mode;
	h->buf = buf;
	h->n = c->size;
	h->base = base;
	h->x = coll_mod(c->rank - base, c->size);
	for (h->p2 = 1; h->p2 * 2 <= h->n; h->p2 *= 2)
		h->L++;
	h->rem = h->n - h->p2;
	h->v = h->x < 2 * h->rem ? ((h->x & 1) ? -1 : h->x / 2) : h->x - h->rem;
	h->U = units ? units : h->p2;
	h->E = elems;
	h->esz = op->esz;
	while ((1 << h->Ls) < h->n)
		h->Ls++;
	return 0;
}

static int allreduce_start(struct coll_op *op)
{
	if (op->a.sendbuf != op->a.recvbuf && op->bytes && !op->c->dry)
		memcpy(op->a.recvbuf, op->a.sendbuf, op->bytes);
	int err = rhd_setup(op, RHD_ALLREDUCE, op->a.recvbuf, op->a.count, 0, 0);

	/* the biggest exchanges with the nearest ranks (a leaf's, on a fat tree) */
	if (!err)
		((struct rhd *)op->priv)->near_first = true;
	return err;
}

static int reduce_scatter_start(struct coll_op *op)
{
	size_t n = (size_t)op->c->size;
	__u8 *work = malloc(op->bytes ? op->bytes * n : 1);
	int err;

	if (!work)
		return -ENOMEM;
	if (!op->c->dry)
		memcpy(work, op->a.sendbuf, op->bytes * n);
	err = rhd_setup(op, RHD_REDUCE_SCATTER, work, op->a.count * n, op->c->size, 0);
	if (op->priv)
		((struct rhd *)op->priv)->own = work;
	else
		free(work);
	return err;
}

static int reduce_scatter_step(struct coll_op *op)
{
	struct rhd *h = op->priv;
	int k = coll_staged_step(op, &h->s);

	/* our segment out of the work buffer */
	if (k == 1 && op->bytes && !op->c->dry)
		memcpy(op->a.recvbuf, h->buf + unit_off(h, op->c->rank), op->bytes);
	return k;
}

static int allgather_start(struct coll_op *op)
{
	__u8 *mine = (__u8 *)op->a.recvbuf + (size_t)op->c->rank * op->bytes;

	if (op->a.sendbuf != mine && !op->c->dry)
		memcpy(mine, op->a.sendbuf, op->bytes);
	return rhd_setup(op, RHD_ALLGATHER, op->a.recvbuf, op->a.count * (size_t)op->c->size,
			 op->c->size, 0);
}

static int bcast_start(struct coll_op *op)
{
	/* units relative to the root: unit u goes to rank u + root */
	return rhd_setup(op, RHD_BCAST, op->a.recvbuf, op->a.count, op->c->size, op->a.root);
}

static int rhd_step(struct coll_op *op)
{
	return coll_staged_step(op, op->priv);
}

const struct coll_algo coll_algo_rhd_allreduce = {
	.name = "rhd", .start = allreduce_start, .step = rhd_step, .fini = rhd_fini,
};
const struct coll_algo coll_algo_rhd_reduce_scatter = {
	.name = "rhd", .start = reduce_scatter_start, .step = reduce_scatter_step, .fini = rhd_fini,
};
const struct coll_algo coll_algo_rd_allgather = {
	.name = "rd", .start = allgather_start, .step = rhd_step, .fini = rhd_fini,
};
const struct coll_algo coll_algo_bcast_sag = {
	.name = "scatter-ag", .start = bcast_start, .step = rhd_step, .fini = rhd_fini,
};
