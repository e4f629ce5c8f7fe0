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
 *
 * Window: peers are taken by distance d = 1, 2, ..., N/2 (r + d and r - d
 * both, each direction with each), and at most COLL_A2A_WINDOW peers are in
 * flight at once: a peer's control message goes out, and its direct block's
 * region is registered, only once its distance enters the window; the region
 * goes as soon as the block has landed, and the next distance opens as soon
 * as fewer than the window's distances are open and not done (a slow peer
 * holds its own distance, not the window) (coll_a2a_window(): 32 peers, more for
 * blocks under 128 KiB so that 4 MiB stay in flight; MROCE_COLL_A2A_WINDOW
 * fixes it). Both ends of a pair are at the same distance from each other,
 * so they open each other in the same window; the lowest distance any rank
 * has not finished is open everywhere, so the operation always progresses.
 * 1024-way all-to-all of 64 KiB blocks thus keeps 64 offers and regions open
 * per rank, of 1 MiB blocks 32, not 1023 (blocks of 16 KiB or less go through
 * the inboxes: no offer, no region). The direct sends read the send blocks
 * through one local region over all of them.
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
	struct mroce_mr	*rmr;		/* direct receive: exactly the block */
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
static int a2a_try_send(struct mroce_coll_comm *c, int to, struct a2a_peer *b, __u32 op,
			__u32 lkey)
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
				  .lkey = lkey };
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
	struct mroce_mr	*smr;		/* local: every direct send block */
	__u32		op;
	int		left;		/* blocks still to send and receive */
	int		ndist;		/* distances: 1 .. size / 2 */
	int		dlo;		/* the lowest distance not done */
	int		dopen;		/* distances 1 .. dopen are open */
	int		window;		/* distances open at once */
};

/*
 * Distances open at once (both neighbours of a distance count). Peers in
 * flight: MROCE_COLL_A2A_WINDOW if set, else at least COLL_A2A_WINDOW and as
 * many as carry COLL_A2A_WINDOW_BYTES, so that small blocks (1 KiB at 1024
 * ranks) still keep that much in flight. Ranks may differ (all-to-all-v):
 * each always opens its lowest distance not done, which is all progress needs.
 */
int coll_a2a_window(const struct mroce_coll_comm *c, size_t moved)
{
	size_t peers = (size_t)c->a2a_window, per;

	if (!peers) {
		per = c->size > 1 ? moved / (2 * (size_t)(c->size - 1)) : 0;
		peers = per ? COLL_A2A_WINDOW_BYTES / per : (size_t)c->size;
		if (peers < COLL_A2A_WINDOW)
			peers = COLL_A2A_WINDOW;
	}
	if (peers > (size_t)c->size)
		peers = (size_t)c->size;
	return peers / 2 > 1 ? (int)(peers / 2) : 1;
}

/* The peers at distance d: r + d and r - d, one when they are the same. */
static int a2a_peers_at(int r, int n, int d, int p[2])
{
	p[0] = coll_mod(r + d, n);
	p[1] = coll_mod(r - d, n);
	return p[0] == p[1] ? 1 : 2;
}

static void a2a_fini(struct coll_op *op)
{
	struct a2a *s = op->priv;

	if (!s)
		return;
	/* Deregistering first closes the buffer to late or stray writes. */
	for (int p = 0; s->bl && p < op->c->size; p++)
		if (s->bl[p].rmr)
			mroce_dereg_mr(s->bl[p].rmr);
	if (s->smr)
		mroce_dereg_mr(s->smr);
	free(s->copy);
	free(s->bl);
	free(s);
	op->priv = NULL;
}

static int a2a_start(struct coll_op *op)
{
	struct mroce_coll_comm *c = op->c;
	const struct coll_args *a = &op->a;
	size_t esz = op->esz, T = coll_a2a_inbox_max(c), tot = 0, moved = 0;
	int n = c->size, r = c->rank;
	struct a2a *s = calloc(1, sizeof(*s));
	struct a2a_peer *bl;
	uintptr_t smin = UINTPTR_MAX, smax = 0;
	bool overlap = false;

	if (!s)
		return -ENOMEM;
	op->priv = s;
	s->bl = bl = calloc((size_t)n, sizeof(*bl));
	if (!bl)
		return -ENOMEM;
	s->op = c->op_seq;
	s->left = 2 * (n - 1);
	s->ndist = n / 2;
	s->dlo = 1;
	for (int p = 0; p < n; p++) {
		__u8 *src;

		a2a_block(a->sendbuf, a->scounts, a->sdispls, a->count, p, esz, &src, &bl[p].slen);
		a2a_block(a->recvbuf, a->rcounts, a->rdispls, a->count, p, esz, &bl[p].dst,
			  &bl[p].rlen);
		bl[p].src = src;
		tot += bl[p].slen;
		if (p != r)
			moved += bl[p].slen + bl[p].rlen;
	}
	s->window = coll_a2a_window(c, moved);
	/* In place, or any send block overlapping a receive block: peers would
	 * write where we still read, so the send blocks are copied first. */
	if (!a->v)	/* the blocks tile each buffer: the buffers are the spans */
		overlap = spans_overlap(a->sendbuf, op->bytes * (size_t)n, a->recvbuf,
					op->bytes * (size_t)n);
	for (int p = 0; a->v && !overlap && p < n; p++)
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
		if (bl[p].s_direct) {
			if ((uintptr_t)bl[p].src < smin)
				smin = (uintptr_t)bl[p].src;
			if ((uintptr_t)bl[p].src + bl[p].slen > smax)
				smax = (uintptr_t)bl[p].src + bl[p].slen;
		}
	}
	/* one local region (no remote access) over the direct send blocks; the
	 * receive regions open with the window (a2a_open) */
	if (smax)
		return coll_reg_local(c, (const void *)smin, smax - smin, &s->smr);
	return 0;
}

/* Open peer p: its region for a direct receive, our message: 1 done, 0 not yet, < 0 failed. */
static int a2a_open(struct mroce_coll_comm *c, struct a2a *s, int p)
{
	struct a2a_peer *b = &s->bl[p];
	int k;

	if (b->told)
		return 1;
	if (b->r_direct && !b->rmr && !b->got) {
		k = mroce_reg_mr(c->dev, b->dst, b->rlen,
				 MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE, &b->rmr);
		if (k)
			return k;
	}
	if ((k = a2a_tell(c, p, b, s->op)) <= 0)
		return k;
	b->told = true;
	return 1;
}

/* Move what can move with peer p: 1 moved, 0 nothing, < 0 failed. */
static int a2a_peer_step(struct mroce_coll_comm *c, struct a2a *s, int p)
{
	struct a2a_peer *b = &s->bl[p];
	int moved = 0, k;

	if (!b->sent && (k = a2a_try_send(c, p, b, s->op, s->smr ? mroce_mr_lkey(s->smr) : 0))) {
		if (k < 0)
			return k;
		b->sent = true;
		s->left--;
		moved = 1;
	}
	if (!b->got && (k = a2a_try_recv(c, p, b, s->op))) {
		if (k < 0)
			return k;
		b->got = true;
		s->left--;
		moved = 1;
		if (b->rmr) {	/* the block has landed: its region goes now */
			mroce_dereg_mr(b->rmr);
			b->rmr = NULL;
		}
	}
	return moved;
}

/* Distances open and not done both ways with both their peers. */
static int a2a_open_not_done(const struct a2a *s, int r, int n)
{
	int pp[2], np, open = 0;

	for (int d = s->dlo; d <= s->dopen; d++) {
		bool done = true;

		np = a2a_peers_at(r, n, d, pp);
		for (int i = 0; i < np; i++)
			done &= s->bl[pp[i]].sent && s->bl[pp[i]].got;
		open += !done;
	}
	return open;
}

static int a2a_step(struct coll_op *op)
{
	struct mroce_coll_comm *c = op->c;
	struct a2a *s = op->priv;
	struct a2a_peer *bl = s->bl;
	int n = c->size, r = c->rank, pp[2], np, k;

	for (;;) {
		bool moved = false;

		/* open distances, nearest first, while fewer than the window are
		 * open and not done: a slow peer holds its own distance, not the
		 * window (the lowest distance not done is always open, which is
		 * all progress needs) */
		while (s->dopen < s->ndist && a2a_open_not_done(s, r, n) < s->window) {
			bool all = true;

			np = a2a_peers_at(r, n, s->dopen + 1, pp);
			for (int i = 0; i < np; i++) {
				if (bl[pp[i]].told)
					continue;
				if ((k = a2a_open(c, s, pp[i])) < 0)
					return k;
				if (k == 0)
					all = false;
				else
					moved = true;
			}
			if (!all)
				break;	/* no room for a message yet: the next step */
			s->dopen++;
		}
		for (int d = s->dlo; d <= s->dopen; d++) {
			np = a2a_peers_at(r, n, d, pp);
			for (int i = 0; i < np; i++) {
				if ((k = a2a_peer_step(c, s, pp[i])) < 0)
					return k;
				moved |= k > 0;
			}
		}
		/* the window moves past the distances done */
		while (s->dlo <= s->dopen) {
			bool done = true;

			np = a2a_peers_at(r, n, s->dlo, pp);
			for (int i = 0; i < np; i++)
				done &= bl[pp[i]].sent && bl[pp[i]].got;
			if (!done)
				break;
			s->dlo++;
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
