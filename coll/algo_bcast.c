// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: broadcast. Small buffers go down a binomial tree (log2(N)
 * stages, whole buffers); large ones down a chain, pipelined by chunk (each
 * rank forwards a chunk as soon as it has it).
 */
#include <errno.h>
#include <stdlib.h>

#include "coll_internal.h"

/* Stage 0: from the parent; stage k >= 1: to the k-th child, farthest first. */
static int tree_stage(struct coll_op *op, int k, struct xfer *x)
{
	int n = op->c->size, root = op->a.root, vr = coll_mod(op->c->rank - root, n);
	int top = 1, mask;

	if (k == 0) {
		if (!vr)
			return 0;
		mask = vr & -vr;	/* lowest bit set: the parent is vr - mask */
		x[0] = xfer_make(-1, NULL, 0, coll_mod(vr - mask + root, n), op->a.recvbuf,
				 op->bytes, false);
		return 1;
	}
	/* children: vr + m for m below our lowest set bit (any m for the root) */
	if (vr) {
		top = vr & -vr;
	} else {
		while (top < n)
			top <<= 1;
	}
	for (mask = top >> 1; mask > 0; mask >>= 1) {
		if (vr + mask >= n)
			continue;
		if (--k == 0) {
			x[0] = xfer_make(coll_mod(vr + mask + root, n), op->a.recvbuf, op->bytes, -1,
					 NULL, 0, false);
			return 1;
		}
	}
	return -1;
}

static int tree_start(struct coll_op *op)
{
	return coll_staged_new(op, tree_stage);
}

struct chain {
	struct coll_staged	s;	/* first: coll_staged_run reads it */
	struct mroce_mr		*mr;
};

static int chain_stage(struct coll_op *op, int k, struct xfer *x)
{
	struct chain *ch = op->priv;
	int n = op->c->size, r = op->c->rank, vr = coll_mod(r - op->a.root, n);

	if (k)
		return -1;
	x[0] = (struct xfer){
		.to = vr + 1 < n ? coll_mod(r + 1, n) : -1, .src = op->a.recvbuf,
		.slen = op->bytes, .lkey = mroce_mr_lkey(ch->mr),
		.from = vr ? coll_mod(r - 1, n) : -1, .dst = op->a.recvbuf, .rlen = op->bytes,
		.forward = vr != 0,
	};
	return 1;
}

static int chain_start(struct coll_op *op)
{
	struct chain *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return -ENOMEM;
	ch->s.stage = chain_stage;
	op->priv = ch;
	return coll_reg_local(op->c, op->a.recvbuf, op->bytes, &ch->mr);
}

static void chain_fini(struct coll_op *op)
{
	struct chain *ch = op->priv;

	if (ch && ch->mr)
		mroce_dereg_mr(ch->mr);
	free(ch);
	op->priv = NULL;
}

const struct coll_algo coll_algo_bcast_tree = {
	.name = "tree", .start = tree_start, .step = coll_staged_run, .fini = coll_staged_free,
};
const struct coll_algo coll_algo_bcast_chain = {
	.name = "chain", .start = chain_start, .step = coll_staged_run, .fini = chain_fini,
};
