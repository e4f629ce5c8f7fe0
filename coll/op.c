// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: running an operation. The algorithm is picked from the one
 * table (select.c) and driven by completions (coll_internal.h, "operations
 * as state machines"); coll_run drives it on the calling thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

int coll_op_start(struct mroce_coll_comm *c, const struct coll_args *a, struct coll_op *op)
{
	size_t n = (size_t)c->size;
	int err;

	memset(op, 0, sizeof(*op));
	op->c = c;
	op->a = *a;
	op->esz = mroce_coll_dtype_size(a->dtype);
	op->bytes = a->count * op->esz;
	/* all-reduce and broadcast are named by their buffer, the rest by all blocks */
	op->algo = coll_select(c, a->kind, a->kind == MROCE_COLL_ALLREDUCE ||
			       a->kind == MROCE_COLL_BROADCAST || a->kind == MROCE_COLL_SEND ||
			       a->kind == MROCE_COLL_RECV ? op->bytes : op->bytes * n);
	if (!op->algo)
		return -EINVAL;
	err = op->algo->start ? op->algo->start(op) : 0;
	if (err && op->algo->fini)
		op->algo->fini(op);	/* what start took before it failed */
	op->started = !err;
	return err;
}

int coll_op_progress(struct coll_op *op)
{
	struct mroce_coll_comm *c = op->c;

	if (c->err)
		return c->err;
	op->moved = false;
	if (!op->finished) {
		int k = op->algo->step(op);

		if (k <= 0)
			return k;
		op->finished = true;
	}
	/* done once nothing is sent from the caller's buffers any more */
	return c->op_sends ? 0 : 1;
}

int coll_op_end(struct coll_op *op, int err)
{
	struct mroce_coll_comm *c = op->c;

	/* A half-done operation leaves the ranks out of step: the communicator
	 * breaks (and its QPs stop) before the buffers' regions go. */
	if (err && !c->err)
		coll_fail(c, err);
	if (op->started && op->algo->fini)
		op->algo->fini(op);
	op->started = false;
	/* every rank counts the collectives alike (all-to-all's buffer offers
	 * name them); point to point involves two ranks only */
	if (op->a.kind != MROCE_COLL_SEND && op->a.kind != MROCE_COLL_RECV)
		c->op_seq++;
	return err;
}

int coll_run(struct mroce_coll_comm *c, const struct coll_args *a)
{
	struct coll_op op;
	int err, k = 0;

	if (c->err)
		return c->err;
	c->last_event_ns = coll_now_ns();
	if (c->self_progress)
		coll_progress_own(c, true);
	err = coll_op_start(c, a, &op);
	while (!err && (k = coll_op_progress(&op)) == 0)
		err = coll_step(c, !op.moved);
	if (!err && k < 0)
		err = k;
	if (c->self_progress)
		coll_progress_own(c, false);
	if (!op.algo)
		return err;
	return coll_op_end(&op, err);
}

/* A zero-length chunk to and from every peer: every QP carries traffic once. */
int coll_ping_all(struct mroce_coll_comm *c)
{
	struct coll_op op = { .c = c, .a = { .kind = MROCE_COLL_BARRIER } };
	struct xfer *x = calloc((size_t)c->size, sizeof(*x));
	int n = c->size, r = c->rank, err = 0, k;

	if (!x)
		return -ENOMEM;
	for (int s = 1; s < n; s++)
		x[s - 1] = xfer_make(coll_mod(r + s, n), NULL, 0, coll_mod(r - s, n), NULL, 0,
				     false);
	c->last_event_ns = coll_now_ns();
	if (c->self_progress)
		coll_progress_own(c, true);
	for (;;) {
		op.moved = false;
		k = xfer_step(&op, x, n - 1);
		if (k) {
			err = k < 0 ? k : 0;
			break;
		}
		if ((err = coll_step(c, !op.moved)))
			break;
	}
	if (c->self_progress)
		coll_progress_own(c, false);
	free(x);
	return err;
}
