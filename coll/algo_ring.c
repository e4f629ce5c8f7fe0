// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: the ring. Reduce-scatter then all-gather, 2(N-1) steps,
 * pipelined by chunk: chunk ci of step g may be sent once chunk ci of step
 * g-1 was received. All-reduce runs both halves, reduce-scatter the first,
 * all-gather the second. Bandwidth-optimal, but every step costs a round
 * trip's latency: the table (select.c) keeps it for few ranks.
 *
 * Reduction order (docs/collectives.md): segment k is reduced as
 * x_k+1, x_k+2, ..., x_k (rank k ends holding it); every rank ends with the
 * same bits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

struct ring {
	__u8	*buf;			/* the work buffer */
	struct mroce_mr *mr;
	/* Out of place: the input, never written. The reduce-scatter sends its
	 * first step from here and reduces src OP incoming into buf; every
	 * location of buf is written by the ring, so buf needs no copy of src. */
	const __u8 *src;
	struct mroce_mr *smr;
	__u8	*own;			/* reduce-scatter: buf, allocated here */
	bool	rs, ag;
	__u32	C;			/* chunks per segment */
	size_t	*seg_off, *seg_len, *cs;	/* [size]; cs: chunk bytes of each segment */
	__u32	*busy;			/* [size * C]: sends reading that chunk */
	__u32	nrs, total, sent, got;
};

/* Split count elements into size segments (the first count % size get one more). */
static void ring_layout(struct mroce_coll_comm *c, struct ring *rg, size_t count, size_t esz)
{
	size_t off = 0, maxlen = 0;

	for (int k = 0; k < c->size; k++) {
		size_t n = count / (size_t)c->size + ((size_t)k < count % (size_t)c->size);

		rg->seg_off[k] = off;
		rg->seg_len[k] = n * esz;
		off += n * esz;
		if (n * esz > maxlen)
			maxlen = n * esz;
	}
	/* At least 4 chunks per segment, so that a segment's steps overlap. */
	rg->C = coll_nchunks(c, maxlen);
	if (rg->C < 4)
		rg->C = 4;
	for (int k = 0; k < c->size; k++) {
		size_t elems = rg->seg_len[k] / esz;

		rg->cs[k] = (elems + rg->C - 1) / rg->C * esz;
	}
}

static void ring_chunk(const struct ring *rg, int seg, __u32 ci, size_t *off, size_t *len)
{
	size_t o = (size_t)ci * rg->cs[seg];

	*off = rg->seg_off[seg] + (o < rg->seg_len[seg] ? o : rg->seg_len[seg]);
	*len = o < rg->seg_len[seg] ? (rg->seg_len[seg] - o < rg->cs[seg] ?
				       rg->seg_len[seg] - o : rg->cs[seg]) : 0;
}

static void ring_fini(struct coll_op *op)
{
	struct ring *rg = op->priv;

	if (!rg)
		return;
	op->c->op_busy = NULL;
	if (rg->smr)
		mroce_dereg_mr(rg->smr);
	if (rg->mr)
		mroce_dereg_mr(rg->mr);
	free(rg->own);
	free(rg->busy);
	free(rg->seg_off);
	free(rg->seg_len);
	free(rg->cs);
	free(rg);
	op->priv = NULL;
}

/* work: the buffer the ring runs in; src: the input when it is not work (the
 * reduce-scatter's first step reads it), else NULL; count: elements in work */
static int ring_setup(struct coll_op *op, void *work, const void *src, size_t count, bool rs,
		      bool ag)
{
	struct mroce_coll_comm *c = op->c;
	size_t n = (size_t)c->size;
	struct ring *rg = calloc(1, sizeof(*rg));
	int err;

	if (!rg)
		return -ENOMEM;
	op->priv = rg;
	rg->seg_off = calloc(n, sizeof(size_t));
	rg->seg_len = calloc(n, sizeof(size_t));
	rg->cs = calloc(n, sizeof(size_t));
	if (!rg->seg_off || !rg->seg_len || !rg->cs)
		return -ENOMEM;
	ring_layout(c, rg, count, op->esz);
	rg->busy = calloc(n * rg->C, sizeof(*rg->busy));
	if (!rg->busy)
		return -ENOMEM;
	rg->rs = rs;
	rg->ag = ag;
	rg->nrs = rs ? (__u32)n - 1 : 0;
	rg->total = (rg->nrs + (ag ? (__u32)n - 1 : 0)) * rg->C;
	rg->buf = work;
	err = coll_reg_local(c, work, count * op->esz, &rg->mr);
	if (!err && src && src != work) {
		err = coll_reg_local(c, src, count * op->esz, &rg->smr);
		rg->src = src;
	}
	if (!err)
		c->op_busy = rg->busy;
	return err;
}

static int ring_step(struct coll_op *op)
{
	struct mroce_coll_comm *c = op->c;
	struct ring *rg = op->priv;
	int n = c->size, r = c->rank, right = coll_mod(r + 1, n), left = coll_mod(r - 1, n);
	int err = 0;

	for (;;) {
		bool moved = false;

		if (rg->sent < rg->total && (rg->sent < rg->C || rg->got > rg->sent - rg->C)) {
			__u32 g = rg->sent / rg->C, ci = rg->sent % rg->C;
			int seg = g < rg->nrs ? coll_mod(r - (int)g - 1, n) :
						coll_mod(r - (int)(g - rg->nrs), n);
			bool from_src = rg->src && g == 0 && rg->nrs;
			size_t off, len;

			ring_chunk(rg, seg, ci, &off, &len);
			err = from_src ? coll_post_chunk(c, right, rg->src + off,
							 mroce_mr_lkey(rg->smr), (__u32)len,
							 WR(WR_OP, 0)) :
					 coll_post_chunk(c, right, rg->buf + off,
							 mroce_mr_lkey(rg->mr), (__u32)len,
							 WR(WR_OP, (size_t)seg * rg->C + ci + 1));
			if (!err) {
				if (!from_src)
					rg->busy[(size_t)seg * rg->C + ci]++;
				rg->sent++;
				moved = true;
			} else if (err == -EAGAIN) {
				err = 0;
			} else {
				return err;
			}
		}
		if (rg->got < rg->total) {
			__u32 g = rg->got / rg->C, ci = rg->got % rg->C, len;
			int seg = g < rg->nrs ? coll_mod(r - (int)g - 2, n) :
						coll_mod(r - (int)(g - rg->nrs) - 1, n);
			const __u8 *data = rg->busy[(size_t)seg * rg->C + ci] ? NULL :
					   coll_peek(c, left, &len);
			size_t off, want;

			if (data) {
				ring_chunk(rg, seg, ci, &off, &want);
				if (len != want)
					return coll_fail(c, -EPROTO);
				if (c->dry)
					;
				else if (g < rg->nrs)
					coll_reduce_to(op->a.dtype, op->a.op, rg->buf + off,
						       rg->src ? rg->src + off : rg->buf + off,
						       data, want / op->esz);
				else if (want)
					memcpy(rg->buf + off, data, want);
				coll_consume(c, left);
				rg->got++;
				moved = true;
			}
		}
		op->moved |= moved;
		if (!moved)
			break;
	}
	if (rg->sent < rg->total || rg->got < rg->total)
		return 0;
	/* reduce-scatter: our segment out of the work buffer */
	if (rg->own && !c->dry)
		memcpy(op->a.recvbuf, rg->own + (size_t)c->rank * op->bytes, op->bytes);
	return 1;
}

static int allreduce_start(struct coll_op *op)
{
	/* the ring reads the input where it is (no copy first) */
	return ring_setup(op, op->a.recvbuf, op->a.sendbuf, op->a.count, true, true);
}

static int reduce_scatter_start(struct coll_op *op)
{
	size_t n = (size_t)op->c->size;
	__u8 *work = malloc(op->bytes * n);
	int err;

	if (!work)
		return -ENOMEM;
	err = ring_setup(op, work, op->a.sendbuf, op->a.count * n, true, false);
	if (op->priv)
		((struct ring *)op->priv)->own = work;
	else
		free(work);
	return err;
}

static int allgather_start(struct coll_op *op)
{
	__u8 *mine = (__u8 *)op->a.recvbuf + (size_t)op->c->rank * op->bytes;

	if (op->a.sendbuf != mine && !op->c->dry)
		memcpy(mine, op->a.sendbuf, op->bytes);
	return ring_setup(op, op->a.recvbuf, NULL, op->a.count * (size_t)op->c->size, false, true);
}

const struct coll_algo coll_algo_ring_allreduce = {
	.name = "ring", .start = allreduce_start, .step = ring_step, .fini = ring_fini,
};
const struct coll_algo coll_algo_ring_reduce_scatter = {
	.name = "ring", .start = reduce_scatter_start, .step = ring_step, .fini = ring_fini,
};
const struct coll_algo coll_algo_ring_allgather = {
	.name = "ring", .start = allgather_start, .step = ring_step, .fini = ring_fini,
};
