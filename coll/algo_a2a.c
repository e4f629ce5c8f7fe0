// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: all-to-all and all-to-all-v, pairwise.
 *
 * One implementation for all-to-all and all-to-all-v: per peer, the block
 * we send it (src, slen) and where its block to us goes (dst, rlen). Each
 * direction of each pair picks its path by its own block size: up to
 * coll_a2a_inbox_max() through the pair's inbox (one staged chunk, no round trip
 * first), beyond it a WRITE with immediate straight into the receiver's
 * buffer, at the address the receiver offered for exactly that block.
 *
 * The sizes are checked pairwise, never trusted: a rank sends a peer one
 * control message per operation when either direction between them goes
 * direct, saying how many bytes it sends (and whether directly) and, for a
 * direct receive, offering its block's address with a region of exactly
 * that block. A direct sender writes only once the offer's length is its
 * own; an inbox receiver checks the chunk's length; a direct receiver takes
 * an inbox chunk, or a sender announcing otherwise, as the disagreement it
 * is. Either end that sees a disagreement tells the other (both fail with
 * -EBADMSG) and breaks the communicator.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

struct a2a_peer {
	const __u8	*src;
	__u8		*dst;
	size_t		slen, rlen;
	struct mroce_mr	*smr, *rmr;	/* direct: exactly the block */
	bool		s_direct, r_direct;
	bool		told;		/* our message for this operation is posted */
	bool		sent, got;
};

/* The pair disagrees: tell the peer first (it fails with -EBADMSG too), then break. */
static int a2a_mismatch(struct mroce_coll_comm *c, int peer)
{
	if (!c->err)
		coll_post_ctrl(c, peer, IMM(IMM_CTRL, CTRL_BADMSG), NULL, 0);
	return coll_fail(c, -EBADMSG);
}

static const struct coll_advert *a2a_msg(struct mroce_coll_comm *c, int peer, __u32 op)
{
	const struct coll_advert *m = &c->peers[peer].adv[op % COLL_ADV_RING];

	return m->valid && m->op == op ? m : NULL;
}

/* Our message to peer p for operation op: 1 posted, 0 no room yet, < 0 failed. */
static int a2a_tell(struct mroce_coll_comm *c, int p, struct a2a_peer *b, __u32 op)
{
	__u8 *m = c->peers[p].ctrl_tx + (op % COLL_ADV_RING) * COLL_CTRL_LEN;
	__u32 rkey = b->rmr ? mroce_mr_rkey(b->rmr) : 0;
	__u32 rlen = (__u32)b->rlen, slen = (__u32)b->slen;
	__u32 flags = (b->r_direct ? A2A_OFFER : 0) | (b->s_direct ? A2A_DIRECT : 0);
	__u64 addr = (__u64)(unsigned long)b->dst;
	int err;

	memset(m, 0, COLL_CTRL_LEN);
	memcpy(m, &op, 4);
	memcpy(m + 4, &rkey, 4);
	memcpy(m + 8, &addr, 8);
	memcpy(m + 16, &rlen, 4);
	memcpy(m + 20, &slen, 4);
	memcpy(m + 24, &flags, 4);
	err = coll_post_ctrl(c, p, IMM(IMM_CTRL, CTRL_ADVERT), m, COLL_A2A_MSG_LEN);
	if (err == -EAGAIN)
		return 0;
	return err ? coll_fail(c, -EIO) : 1;
}

/* 1: sent, 0: not yet (no offer, credit or room), < 0: failed */
static int a2a_try_send(struct mroce_coll_comm *c, int to, struct a2a_peer *b, __u32 op)
{
	const struct coll_advert *m;
	struct mroce_sge sge;
	struct mroce_send_wr wr;
	int err;

	if (!b->s_direct) {
		err = coll_post_staged(c, to, b->slen ? b->src : NULL, (__u32)b->slen);
		return err == -EAGAIN ? 0 : err ? err : 1;
	}
	m = a2a_msg(c, to, op);
	if (!m)
		return 0;
	/* written only where the peer offered exactly this block */
	if (!(m->flags & A2A_OFFER) || m->rlen != b->slen)
		return a2a_mismatch(c, to);
	sge = (struct mroce_sge){ .addr = (__u64)(unsigned long)b->src, .length = (__u32)b->slen,
				  .lkey = mroce_mr_lkey(b->smr) };
	wr = (struct mroce_send_wr){ .wr_id = WR(WR_OP, 0),
				     .opcode = MROCE_WR_RDMA_WRITE_WITH_IMM,
				     .sg_list = &sge, .num_sge = 1,
				     .imm_data = IMM(IMM_DIRECT, op),
				     .remote_addr = m->addr, .rkey = m->rkey };
	err = mroce_post_send(c->peers[to].qp, &wr);
	if (err == -EAGAIN)
		return 0;
	if (err)
		return coll_fail(c, -EIO);
	c->op_sends++;
	return 1;
}

/* 1: received, 0: not yet, < 0: failed */
static int a2a_try_recv(struct mroce_coll_comm *c, int from, struct a2a_peer *b, __u32 op)
{
	struct coll_peer *pe = &c->peers[from];
	const struct coll_advert *m = a2a_msg(c, from, op);
	const __u8 *data;
	__u32 len;

	if (b->r_direct) {
		/* The peer's direct write has landed (checked before its later chunks:
		 * completions arrive in order, so a chunk seen first came first). */
		if (pe->direct_op == IMM_VAL(op) && pe->direct_got) {
			if (pe->direct_got != 1 || pe->direct_len != b->rlen)
				return a2a_mismatch(c, from);
			pe->direct_got = 0;
			return 1;
		}
		if (coll_peek(c, from, &len) || (m && !(m->flags & A2A_DIRECT)))
			return a2a_mismatch(c, from);	/* it sends through the inbox */
		return 0;
	}
	if (m && (m->flags & A2A_DIRECT))
		return a2a_mismatch(c, from);	/* it waits for an offer we never make */
	data = coll_peek(c, from, &len);
	if (!data)
		return 0;
	if (len != b->rlen)
		return a2a_mismatch(c, from);
	if (len && !c->dry)
		memcpy(b->dst, data, len);
	coll_consume(c, from);
	return 1;
}

/* Peer p's block in buf: count x esz bytes at displacement x esz (checked not to wrap). */
static void a2a_block(const void *buf, const size_t *counts, const size_t *displs, size_t count,
		      int p, size_t esz, __u8 **addr, size_t *len)
{
	size_t off = displs ? displs[p] * esz : (size_t)p * count * esz;

	*len = (counts ? counts[p] : count) * esz;
	*addr = (__u8 *)((uintptr_t)buf + off);
}

static bool spans_overlap(const __u8 *a, size_t alen, const __u8 *b, size_t blen)
{
	return alen && blen && (uintptr_t)a < (uintptr_t)b + blen &&
	       (uintptr_t)b < (uintptr_t)a + alen;
}

struct a2a {
	struct a2a_peer	*bl;
	__u8		*copy;		/* the send blocks, when they overlap the receive blocks */
	__u32		op;
	int		left;		/* blocks still to send and receive */
	int		tell;		/* the next peer offset (1 .. size-1) to tell */
};

static void a2a_fini(struct coll_op *op)
{
	struct a2a *s = op->priv;

	if (!s)
		return;
	/* Deregistering first closes the buffer to late or stray writes. */
	for (int p = 0; s->bl && p < op->c->size; p++) {
		if (s->bl[p].rmr)
			mroce_dereg_mr(s->bl[p].rmr);
		if (s->bl[p].smr)
			mroce_dereg_mr(s->bl[p].smr);
	}
	free(s->copy);
	free(s->bl);
	free(s);
	op->priv = NULL;
}

static int a2a_start(struct coll_op *op)
{
	struct mroce_coll_comm *c = op->c;
	const struct coll_args *a = &op->a;
	size_t esz = op->esz, T = coll_a2a_inbox_max(c), tot = 0;
	int n = c->size, r = c->rank, err = 0;
	struct a2a *s = calloc(1, sizeof(*s));
	struct a2a_peer *bl;
	bool overlap = false;

	if (!s)
		return -ENOMEM;
	op->priv = s;
	s->bl = bl = calloc((size_t)n, sizeof(*bl));
	if (!bl)
		return -ENOMEM;
	s->op = c->op_seq;
	s->left = 2 * (n - 1);
	s->tell = 1;
	for (int p = 0; p < n; p++) {
		__u8 *src;

		a2a_block(a->sendbuf, a->scounts, a->sdispls, a->count, p, esz, &src, &bl[p].slen);
		a2a_block(a->recvbuf, a->rcounts, a->rdispls, a->count, p, esz, &bl[p].dst,
			  &bl[p].rlen);
		bl[p].src = src;
		tot += bl[p].slen;
	}
	/* In place, or any send block overlapping a receive block: peers would
	 * write where we still read, so the send blocks are copied first. */
	for (int p = 0; !overlap && p < n; p++)
		for (int q = 0; !overlap && q < n; q++)
			overlap = spans_overlap(bl[p].src, bl[p].slen, bl[q].dst, bl[q].rlen);
	if (overlap) {
		size_t off = 0;

		s->copy = malloc(tot);
		if (!s->copy)
			return -ENOMEM;
		for (int p = 0; p < n; p++) {
			if (bl[p].slen && !c->dry)
				memcpy(s->copy + off, bl[p].src, bl[p].slen);
			bl[p].src = s->copy + off;
			off += bl[p].slen;
		}
	}
	if (bl[r].rlen && !c->dry)	/* the same size: checked with the arguments */
		memcpy(bl[r].dst, bl[r].src, bl[r].rlen);
	for (int p = 0; p < n; p++) {
		bl[p].s_direct = p != r && bl[p].slen > T;
		bl[p].r_direct = p != r && bl[p].rlen > T;
		bl[p].told = !bl[p].s_direct && !bl[p].r_direct;
	}
	/* regions for the direct blocks */
	for (int p = 0; !err && p < n; p++) {
		struct a2a_peer *b = &bl[p];

		if (p == r)
			continue;
		if (b->s_direct)
			err = coll_reg_local(c, b->src, b->slen, &b->smr);
		if (!err && b->r_direct)
			err = mroce_reg_mr(c->dev, b->dst, b->rlen,
					   MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE,
					   &b->rmr);
	}
	return err;
}

static int a2a_step(struct coll_op *op)
{
	struct mroce_coll_comm *c = op->c;
	struct a2a *s = op->priv;
	struct a2a_peer *bl = s->bl;
	int n = c->size, r = c->rank, k;

	/* the messages first, peers in step order */
	for (; s->tell < n; s->tell++) {
		int p = coll_mod(r + s->tell, n);

		if (bl[p].told)
			continue;
		if ((k = a2a_tell(c, p, &bl[p], s->op)) <= 0)
			return k;
		bl[p].told = true;
		op->moved = true;
	}
	for (;;) {
		bool moved = false;

		for (int st = 1; st < n; st++) {
			int to = coll_mod(r + st, n), from = coll_mod(r - st, n);

			if (!bl[to].sent && (k = a2a_try_send(c, to, &bl[to], s->op)) != 0) {
				if (k < 0)
					return k;
				bl[to].sent = true;
				s->left--;
				moved = true;
			}
			if (!bl[from].got && (k = a2a_try_recv(c, from, &bl[from], s->op)) != 0) {
				if (k < 0)
					return k;
				bl[from].got = true;
				s->left--;
				moved = true;
			}
		}
		op->moved |= moved;
		if (!moved)
			break;
	}
	return s->left == 0;
}

const struct coll_algo coll_algo_a2a_inbox = {
	.name = "pairwise-inbox", .start = a2a_start, .step = a2a_step, .fini = a2a_fini,
};
const struct coll_algo coll_algo_a2a_direct = {
	.name = "pairwise-direct", .start = a2a_start, .step = a2a_step, .fini = a2a_fini,
};
