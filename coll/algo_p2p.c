// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: point to point. A message is a header chunk (its size and
 * tag), then the data in chunks, through the pair's inboxes like every
 * other operation: the n-th send to a peer meets its n-th receive. The
 * receiver checks the header against its own call: a mismatch would leave
 * the pair out of step, so it is an error (-EBADMSG) that breaks the
 * communicator.
 */
#include <errno.h>
#include <stdlib.h>

#include "coll_internal.h"

struct p2p_hdr {
	__u64	bytes;
	__u32	tag;
	__u32	magic;
};

#define P2P_MAGIC	0x6d703270u	/* "mp2p" */

struct p2p {
	struct coll_staged	s;	/* first: coll_staged_step reads it */
	struct p2p_hdr		h;
	struct mroce_mr		*mr;
	int			err;
};

static int send_stage(struct coll_op *op, int k, struct xfer *x)
{
	struct p2p *p = op->priv;

	if (k == 0) {
		x[0] = xfer_make(op->a.root, &p->h, sizeof(p->h), -1, NULL, 0, false);
		return 1;
	}
	if (k > 1 || !op->bytes)
		return -1;
	x[0] = xfer_make(op->a.root, op->a.sendbuf, op->bytes, -1, NULL, 0, false);
	x[0].lkey = p->mr ? mroce_mr_lkey(p->mr) : 0;
	return 1;
}

static int recv_stage(struct coll_op *op, int k, struct xfer *x)
{
	struct p2p *p = op->priv;

	if (k == 0) {
		x[0] = xfer_make(-1, NULL, 0, op->a.root, &p->h, sizeof(p->h), false);
		return 1;
	}
	if (k > 1)
		return -1;
	if (p->h.magic != P2P_MAGIC || p->h.bytes != op->bytes || p->h.tag != op->a.tag) {
		p->err = -EBADMSG;
		return -1;
	}
	if (!op->bytes)
		return -1;
	x[0] = xfer_make(-1, NULL, 0, op->a.root, op->a.recvbuf, op->bytes, false);
	return 1;
}

static int p2p_new(struct coll_op *op, int (*stage)(struct coll_op *, int, struct xfer *))
{
	struct p2p *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->s.stage = stage;
	op->priv = p;
	return 0;
}

static int send_start(struct coll_op *op)
{
	int err = p2p_new(op, send_stage);
	struct p2p *p = op->priv;

	if (err)
		return err;
	p->h = (struct p2p_hdr){ .bytes = op->bytes, .tag = op->a.tag, .magic = P2P_MAGIC };
	/* one chunk is staged (a copy); more are sent from the caller's buffer */
	if (op->bytes > op->c->chunk)
		err = coll_reg_local(op->c, op->a.sendbuf, op->bytes, &p->mr);
	return err;
}

static int recv_start(struct coll_op *op)
{
	return p2p_new(op, recv_stage);
}

static int p2p_step(struct coll_op *op)
{
	struct p2p *p = op->priv;
	int k = coll_staged_step(op, &p->s);

	return k == 1 && p->err ? p->err : k;
}

static void p2p_fini(struct coll_op *op)
{
	struct p2p *p = op->priv;

	if (p && p->mr)
		mroce_dereg_mr(p->mr);
	free(p);
	op->priv = NULL;
}

const struct coll_algo coll_algo_p2p_send = {
	.name = "p2p", .start = send_start, .step = p2p_step, .fini = p2p_fini,
};
const struct coll_algo coll_algo_p2p_recv = {
	.name = "p2p", .start = recv_start, .step = p2p_step, .fini = p2p_fini,
};
