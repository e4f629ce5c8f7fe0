// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: transfers, the unit most algorithms are stages of. A
 * transfer sends a buffer to one peer while receiving one from another (or
 * the same), chunk by chunk through the channels of chan.c, reducing what
 * arrives into its destination when asked. A step moves every chunk the
 * credits and completions so far allow, and never waits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

int coll_mod(int a, int n)
{
	return ((a % n) + n) % n;
}

__u32 coll_nchunks(const struct mroce_coll_comm *c, size_t len)
{
	return len ? (__u32)((len + c->chunk - 1) / c->chunk) : 1;
}

int coll_reg_local(struct mroce_coll_comm *c, const void *buf, size_t len, struct mroce_mr **mr)
{
	return mroce_reg_mr(c->dev, (void *)buf, len, MROCE_ACCESS_LOCAL_WRITE, mr);
}

struct xfer xfer_make(int to, const void *src, size_t slen, int from, void *dst, size_t rlen,
		      bool reduce)
{
	return (struct xfer){ .to = to, .src = src, .slen = slen, .from = from, .dst = dst,
			      .rlen = rlen, .reduce = reduce,
			      .after_tx = to >= 0 && from >= 0 && src == dst,
			      .paced = to >= 0 && to == from };
}

static bool xfer_done(const struct mroce_coll_comm *c, const struct xfer *x)
{
	return (x->to < 0 || x->sc == coll_nchunks(c, x->slen)) &&
	       (x->from < 0 || x->rc == coll_nchunks(c, x->rlen));
}

static int xfer_try_send(struct mroce_coll_comm *c, struct xfer *x)
{
	size_t off = (size_t)x->sc * c->chunk;
	__u32 len = (__u32)(x->slen - off < c->chunk ? x->slen - off : c->chunk);
	int err;

	if (x->to < 0 || x->sc == coll_nchunks(c, x->slen))
		return 0;
	if (x->forward && x->rc <= x->sc)
		return 0;
	if (x->paced && x->rc < coll_nchunks(c, x->rlen) && x->sc >= x->rc + COLL_XFER_LEAD)
		return 0;	/* the peer has not caught up with this stage yet */
	if (x->lkey)
		err = coll_post_chunk(c, x->to, x->src + off, x->lkey, len, WR(WR_OP, 0));
	else
		err = coll_post_staged(c, x->to, len ? x->src + off : NULL, len);
	if (err == -EAGAIN)
		return 0;
	if (err)
		return err;
	x->sc++;
	return 1;
}

static int xfer_try_recv(struct coll_op *op, struct xfer *x)
{
	struct mroce_coll_comm *c = op->c;
	size_t off = (size_t)x->rc * c->chunk;
	size_t want = x->rlen - off < c->chunk ? x->rlen - off : c->chunk;
	const __u8 *data;
	__u32 len;

	if (x->from < 0 || x->rc == coll_nchunks(c, x->rlen))
		return 0;
	if (x->after_tx && x->sc <= x->rc)
		return 0;
	data = coll_peek(c, x->from, &len);
	if (!data)
		return 0;
	if (len != want)
		return coll_fail(c, -EPROTO);	/* ranks disagree on the operation */
	if (c->dry)
		;
	else if (x->reduce && x->from < c->rank)	/* the lower rank's operand first, */
		coll_reduce_first(op->a.dtype, op->a.op, x->dst + off, data, want / op->esz);
	else if (x->reduce)				/* at both ends: the same bits */
		coll_reduce(op->a.dtype, op->a.op, x->dst + off, data, want / op->esz);
	else if (want)
		memcpy(x->dst + off, data, want);
	coll_consume(c, x->from);
	x->rc++;
	return 1;
}

int xfer_step(struct coll_op *op, struct xfer *x, int n)
{
	bool done = true;

	for (int i = 0; i < n; i++) {
		int s = xfer_try_send(op->c, &x[i]), r = xfer_try_recv(op, &x[i]);

		if (s < 0 || r < 0)
			return s < 0 ? s : r;
		op->moved |= s > 0 || r > 0;
		done &= xfer_done(op->c, &x[i]);
	}
	return done;
}

int coll_staged_step(struct coll_op *op, struct coll_staged *s)
{
	if (!s->begun) {
		s->begun = true;
		s->k = 0;
		s->nx = s->stage(op, 0, s->x);
		if (s->nx < 0)
			return 1;
	}
	for (;;) {
		int k = xfer_step(op, s->x, s->nx);

		if (k <= 0)
			return k;
		s->nx = s->stage(op, ++s->k, s->x);
		if (s->nx < 0)
			return 1;
	}
}

int coll_staged_new(struct coll_op *op, int (*stage)(struct coll_op *, int, struct xfer *))
{
	struct coll_staged *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->stage = stage;
	op->priv = s;
	return 0;
}

int coll_staged_run(struct coll_op *op)
{
	return coll_staged_step(op, op->priv);
}

void coll_staged_free(struct coll_op *op)
{
	free(op->priv);
	op->priv = NULL;
}
