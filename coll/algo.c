// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: the algorithms. Each runs one whole operation on the calling
 * thread, moving chunks through the channels of coll_chan.c:
 *   all-reduce      ring reduce-scatter + all-gather, pipelined by chunk
 *                   (large); recursive doubling (small)
 *   reduce-scatter  the ring's first half; all-gather its second half
 *   broadcast       pipelined chain (large); binomial tree (small)
 *   all-to-all(-v)  per pair and direction: WRITE_WITH_IMM straight into the
 *                   peer's block (large); through the inboxes (blocks up to
 *                   16 KiB)
 *   barrier         dissemination, zero-length chunks
 * Reduction order (docs/collectives.md): the ring reduces segment k as
 * x_k+1, x_k+2, ..., x_k (rank k ends holding it) and recursive doubling
 * as a binary tree over rank order; every rank ends with the same bits.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

static int mod(int a, int n)
{
	return ((a % n) + n) % n;
}

static __u32 nchunks(const struct mroce_coll_comm *c, size_t len)
{
	return len ? (__u32)((len + c->chunk - 1) / c->chunk) : 1;
}

/* ---- transfers: send a buffer to one peer while receiving one from another */

struct xfer {
	int		to;		/* -1: nothing to send */
	const __u8	*src;
	__u32		lkey;		/* 0: stage each chunk through the pool */
	size_t		slen;
	__u32		sc;		/* chunks posted */
	bool		forward;	/* send only what has been received (chain) */
	bool		after_tx;	/* receive a chunk only once the same chunk is
					 * staged (src and dst are one buffer) */
	int		from;		/* -1: nothing to receive */
	__u8		*dst;
	size_t		rlen;
	__u32		rc;		/* chunks received */
	bool		reduce;
};

static bool xfer_done(const struct mroce_coll_comm *c, const struct xfer *x)
{
	return (x->to < 0 || x->sc == nchunks(c, x->slen)) &&
	       (x->from < 0 || x->rc == nchunks(c, x->rlen));
}

static int xfer_try_send(struct mroce_coll_comm *c, struct xfer *x)
{
	size_t off = (size_t)x->sc * c->chunk;
	__u32 len = (__u32)(x->slen - off < c->chunk ? x->slen - off : c->chunk);
	int err;

	if (x->to < 0 || x->sc == nchunks(c, x->slen))
		return 0;
	if (x->forward && x->rc <= x->sc)
		return 0;
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

static int xfer_try_recv(struct mroce_coll_comm *c, struct xfer *x, const struct coll_args *a)
{
	size_t off = (size_t)x->rc * c->chunk, esz = mroce_coll_dtype_size(a->dtype);
	size_t want = x->rlen - off < c->chunk ? x->rlen - off : c->chunk;
	const __u8 *data;
	__u32 len;

	if (x->from < 0 || x->rc == nchunks(c, x->rlen))
		return 0;
	if (x->after_tx && x->sc <= x->rc)
		return 0;
	data = coll_peek(c, x->from, &len);
	if (!data)
		return 0;
	if (len != want)
		return coll_fail(c, -EPROTO);	/* ranks disagree on the operation */
	if (x->reduce)
		coll_reduce(a->dtype, a->op, x->dst + off, data, want / esz);
	else if (want)
		memcpy(x->dst + off, data, want);
	coll_consume(c, x->from);
	x->rc++;
	return 1;
}

/* Run transfers to completion, all at once. */
static int xfer_run(struct mroce_coll_comm *c, struct xfer *x, int n, const struct coll_args *a)
{
	for (;;) {
		bool done = true, moved = false;
		int err;

		for (int i = 0; i < n; i++) {
			int s = xfer_try_send(c, &x[i]), r = xfer_try_recv(c, &x[i], a);

			if (s < 0 || r < 0)
				return s < 0 ? s : r;
			moved |= s > 0 || r > 0;
			done &= xfer_done(c, &x[i]);
		}
		if (done)
			return 0;
		err = coll_step(c, !moved);
		if (err)
			return err;
	}
}

static int exchange(struct mroce_coll_comm *c, const struct coll_args *a, int to, const void *src,
		    size_t slen, int from, void *dst, size_t rlen, bool reduce)
{
	struct xfer x = { .to = to, .src = src, .slen = slen, .from = from, .dst = dst,
			  .rlen = rlen, .reduce = reduce, .after_tx = src == dst };

	return xfer_run(c, &x, 1, a);
}

/* ---- ring ----------------------------------------------------------------- */

struct ring {
	__u8	*buf;
	__u32	lkey;
	/* Out of place: the input, never written. The reduce-scatter sends its
	 * first step from here and reduces src OP incoming into buf; every
	 * location of buf is written by the ring, so buf needs no copy of src. */
	const __u8 *src;
	__u32	src_lkey;
	__u32	C;			/* chunks per segment */
	size_t	seg_off[COLL_MAX_RANKS], seg_len[COLL_MAX_RANKS];
	size_t	cs[COLL_MAX_RANKS];	/* chunk bytes of each segment */
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
	rg->C = nchunks(c, maxlen);
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

/*
 * Steps g = 0 .. S-1; reduce-scatter steps first (rank r ends holding
 * segment r), then all-gather steps. Chunk ci of step g may be sent once
 * chunk ci of step g-1 was received: that is what pipelines the ring.
 */
static int ring_run(struct mroce_coll_comm *c, const struct coll_args *a, struct ring *rg,
		    bool rs, bool ag)
{
	int n = c->size, r = c->rank, right = mod(r + 1, n), left = mod(r - 1, n);
	__u32 nrs = rs ? (__u32)n - 1 : 0, S = nrs + (ag ? (__u32)n - 1 : 0);
	__u32 total = S * rg->C, sent = 0, got = 0;
	size_t esz = mroce_coll_dtype_size(a->dtype);
	__u32 *busy = calloc((size_t)n * rg->C, sizeof(*busy));
	int err = 0;

	if (!busy)
		return -ENOMEM;
	c->op_busy = busy;
	while (!err && (sent < total || got < total)) {
		bool moved = false;

		if (sent < total && (sent < rg->C || got > sent - rg->C)) {
			__u32 g = sent / rg->C, ci = sent % rg->C;
			int seg = g < nrs ? mod(r - (int)g - 1, n) : mod(r - (int)(g - nrs), n);
			size_t off, len;

			bool from_src = rg->src && g == 0 && nrs;

			ring_chunk(rg, seg, ci, &off, &len);
			err = from_src ? coll_post_chunk(c, right, rg->src + off, rg->src_lkey,
							 (__u32)len, WR(WR_OP, 0)) :
					 coll_post_chunk(c, right, rg->buf + off, rg->lkey, (__u32)len,
							 WR(WR_OP, (size_t)seg * rg->C + ci + 1));
			if (!err) {
				if (!from_src)
					busy[(size_t)seg * rg->C + ci]++;
				sent++;
				moved = true;
			} else if (err == -EAGAIN) {
				err = 0;
			}
		}
		if (!err && got < total) {
			__u32 g = got / rg->C, ci = got % rg->C, len;
			int seg = g < nrs ? mod(r - (int)g - 2, n) : mod(r - (int)(g - nrs) - 1, n);
			const __u8 *data = busy[(size_t)seg * rg->C + ci] ? NULL :
					   coll_peek(c, left, &len);
			size_t off, want;

			if (data) {
				ring_chunk(rg, seg, ci, &off, &want);
				if (len != want) {
					err = coll_fail(c, -EPROTO);
					break;
				}
				if (g < nrs)
					coll_reduce_to(a->dtype, a->op, rg->buf + off,
						       rg->src ? rg->src + off : rg->buf + off, data,
						       want / esz);
				else if (want)
					memcpy(rg->buf + off, data, want);
				coll_consume(c, left);
				got++;
				moved = true;
			}
		}
		if (!err)
			err = coll_step(c, !moved);
	}
	if (!err)
		err = coll_wait_sends(c);
	c->op_busy = NULL;
	free(busy);
	return err;
}

static int reg_local(struct mroce_coll_comm *c, void *buf, size_t len, struct mroce_mr **mr)
{
	return mroce_reg_mr(c->dev, buf, len, MROCE_ACCESS_LOCAL_WRITE, mr);
}

/* src: the input when it is not work (reduce-scatter first), else NULL */
static int ring_collective(struct mroce_coll_comm *c, const struct coll_args *a, void *work,
			   const void *src, size_t count, bool rs, bool ag)
{
	size_t esz = mroce_coll_dtype_size(a->dtype);
	struct ring *rg = calloc(1, sizeof(*rg));
	struct mroce_mr *mr = NULL, *smr = NULL;
	int err;

	if (!rg)
		return -ENOMEM;
	ring_layout(c, rg, count, esz);
	err = reg_local(c, work, count * esz, &mr);
	if (!err && src && src != work)
		err = reg_local(c, (void *)src, count * esz, &smr);
	if (!err) {
		rg->buf = work;
		rg->lkey = mroce_mr_lkey(mr);
		if (smr) {
			rg->src = src;
			rg->src_lkey = mroce_mr_lkey(smr);
		}
		err = ring_run(c, a, rg, rs, ag);
	}
	if (smr)
		mroce_dereg_mr(smr);
	if (mr)
		mroce_dereg_mr(mr);
	free(rg);
	return err;
}

/* ---- recursive doubling ----------------------------------------------------- */

static int allreduce_rd(struct mroce_coll_comm *c, const struct coll_args *a, __u8 *buf,
			size_t len)
{
	int n = c->size, r = c->rank, p2 = 1, err = 0;

	while (p2 * 2 <= n)
		p2 *= 2;
	/* Ranks beyond the largest power of two fold into rank - p2 first. */
	if (r >= p2)
		err = exchange(c, a, r - p2, buf, len, -1, NULL, 0, false);
	else if (r + p2 < n)
		err = exchange(c, a, -1, NULL, 0, r + p2, buf, len, true);
	if (r < p2)
		for (int mask = 1; !err && mask < p2; mask <<= 1)
			err = exchange(c, a, r ^ mask, buf, len, r ^ mask, buf, len, true);
	if (!err && r >= p2)
		err = exchange(c, a, -1, NULL, 0, r - p2, buf, len, false);
	else if (!err && r + p2 < n)
		err = exchange(c, a, r + p2, buf, len, -1, NULL, 0, false);
	return err;
}

/* ---- broadcast ---------------------------------------------------------------- */

static int bcast_tree(struct mroce_coll_comm *c, const struct coll_args *a, __u8 *buf,
		      size_t len)
{
	int n = c->size, vr = mod(c->rank - a->root, n), mask = 1, err = 0;

	while (mask < n) {
		if (vr & mask) {
			err = exchange(c, a, -1, NULL, 0, mod(vr - mask + a->root, n), buf, len,
				       false);
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; !err && mask > 0; mask >>= 1)
		if (vr + mask < n)
			err = exchange(c, a, mod(vr + mask + a->root, n), buf, len, -1, NULL, 0,
				       false);
	return err;
}

static int bcast_chain(struct mroce_coll_comm *c, const struct coll_args *a, __u8 *buf,
		       size_t len)
{
	int n = c->size, vr = mod(c->rank - a->root, n);
	struct mroce_mr *mr;
	struct xfer x = {
		.to = vr + 1 < n ? mod(c->rank + 1, n) : -1, .src = buf, .slen = len,
		.from = vr ? mod(c->rank - 1, n) : -1, .dst = buf, .rlen = len,
		.forward = vr != 0,
	};
	int err = reg_local(c, buf, len, &mr);

	if (err)
		return err;
	x.lkey = mroce_mr_lkey(mr);
	err = xfer_run(c, &x, 1, a);
	if (!err)
		err = coll_wait_sends(c);
	mroce_dereg_mr(mr);
	return err;
}

/* ---- all-to-all ------------------------------------------------------------------- */

/*
 * One implementation for all-to-all and all-to-all-v: per peer, the block
 * we send it (src, slen) and where its block to us goes (dst, rlen). Each
 * direction of each pair picks its path by its own block size: up to
 * a2a_inbox_max() through the pair's inbox (one staged chunk, no round trip
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
struct a2a_peer {
	const __u8	*src;
	__u8		*dst;
	size_t		slen, rlen;
	struct mroce_mr	*smr, *rmr;	/* direct: exactly the block */
	bool		s_direct, r_direct;
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
	while ((err = coll_post_ctrl(c, p, IMM(IMM_CTRL, CTRL_ADVERT), m, COLL_A2A_MSG_LEN)) ==
	       -EAGAIN)
		if ((err = coll_step(c, true)))
			return err;
	return err ? coll_fail(c, -EIO) : 0;
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
	if (len)
		memcpy(b->dst, data, len);
	coll_consume(c, from);
	return 1;
}

static int a2a_exchange(struct mroce_coll_comm *c, struct a2a_peer *bl)
{
	int n = c->size, r = c->rank, left = 2 * (n - 1), err = 0;
	__u32 op = c->op_seq;

	/* regions for the direct blocks, then the messages, peers in step order */
	for (int p = 0; !err && p < n; p++) {
		struct a2a_peer *b = &bl[p];

		if (p == r)
			continue;
		if (b->s_direct)
			err = reg_local(c, (void *)b->src, b->slen, &b->smr);
		if (!err && b->r_direct)
			err = mroce_reg_mr(c->dev, b->dst, b->rlen,
					   MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE,
					   &b->rmr);
	}
	for (int s = 1; !err && s < n; s++) {
		int p = mod(r + s, n);

		if (bl[p].s_direct || bl[p].r_direct)
			err = a2a_tell(c, p, &bl[p], op);
	}
	while (!err && left) {
		bool moved = false;

		for (int s = 1; !err && s < n; s++) {
			int to = mod(r + s, n), from = mod(r - s, n), k;

			if (!bl[to].sent && (k = a2a_try_send(c, to, &bl[to], op)) != 0) {
				err = k < 0 ? k : 0;
				bl[to].sent = k > 0;
				left -= k > 0;
				moved = true;
			}
			if (!err && !bl[from].got && (k = a2a_try_recv(c, from, &bl[from], op)) != 0) {
				err = k < 0 ? k : 0;
				bl[from].got = k > 0;
				left -= k > 0;
				moved = true;
			}
		}
		if (!err)
			err = coll_step(c, !moved);
	}
	if (!err)
		err = coll_wait_sends(c);
	/* Deregistering first closes the buffer to late or stray writes. */
	for (int p = 0; p < n; p++) {
		if (bl[p].rmr)
			mroce_dereg_mr(bl[p].rmr);
		if (bl[p].smr)
			mroce_dereg_mr(bl[p].smr);
	}
	return err;
}

/* ---- point to point ------------------------------------------------------------ */

/*
 * A message is a header chunk (its size and tag), then the data in chunks,
 * through the pair's inboxes like every other operation: the n-th send to a
 * peer meets its n-th receive. The receiver checks the header against its
 * own call: a mismatch would leave the pair out of step, so it is an error
 * (-EBADMSG) that breaks the communicator.
 */
struct p2p_hdr {
	__u64	bytes;
	__u32	tag;
	__u32	magic;
};

#define P2P_MAGIC	0x6d703270u	/* "mp2p" */

static int p2p_send(struct mroce_coll_comm *c, const struct coll_args *a, size_t bytes)
{
	struct p2p_hdr h = { .bytes = bytes, .tag = a->tag, .magic = P2P_MAGIC };
	struct xfer x = { .to = a->root, .src = a->sendbuf, .slen = bytes, .from = -1 };
	struct mroce_mr *mr = NULL;
	int err = exchange(c, a, a->root, &h, sizeof(h), -1, NULL, 0, false);

	/* one chunk is staged (a copy); more are sent from the caller's buffer */
	if (!err && bytes > c->chunk) {
		err = reg_local(c, (void *)a->sendbuf, bytes, &mr);
		if (!err)
			x.lkey = mroce_mr_lkey(mr);
	}
	if (!err && bytes)
		err = xfer_run(c, &x, 1, a);
	if (!err)
		err = coll_wait_sends(c);
	if (mr)
		mroce_dereg_mr(mr);
	return err;
}

static int p2p_recv(struct mroce_coll_comm *c, const struct coll_args *a, size_t bytes)
{
	struct p2p_hdr h = { 0 };
	int err = exchange(c, a, -1, NULL, 0, a->root, &h, sizeof(h), false);

	if (err)
		return err;
	if (h.magic != P2P_MAGIC || h.bytes != bytes || h.tag != a->tag)
		return -EBADMSG;
	return bytes ? exchange(c, a, -1, NULL, 0, a->root, a->recvbuf, bytes, false) : 0;
}

/* ---- dispatch -------------------------------------------------------------------- */

/*
 * All-to-all blocks up to this size go through the inboxes: no buffer offer
 * to wait for, but a copy on each side. Beyond it the copies cost more than
 * the offer's round trip.
 */
static size_t a2a_inbox_max(const struct mroce_coll_comm *c)
{
	return c->small_bytes < c->chunk ? c->small_bytes : c->chunk;
}

const char *mroce_coll_algo(const struct mroce_coll_comm *c, enum mroce_coll_kind kind,
			    size_t bytes)
{
	bool small = c && !c->ring_only && bytes <= c->small_bytes;

	if (!c)
		return NULL;
	switch (kind) {
	case MROCE_COLL_ALLREDUCE:	return c->size == 1 ? "local" : small ? "rd" : "ring";
	case MROCE_COLL_REDUCE_SCATTER:
	case MROCE_COLL_ALLGATHER:	return c->size == 1 ? "local" : "ring";
	case MROCE_COLL_BROADCAST:	return c->size == 1 ? "local" : small ? "tree" : "chain";
	case MROCE_COLL_ALLTOALL:
		return c->size == 1 ? "local" : bytes / (size_t)c->size <= a2a_inbox_max(c) ?
		       "pairwise-inbox" : "pairwise-direct";
	case MROCE_COLL_BARRIER:	return "dissemination";
	case MROCE_COLL_SEND:
	case MROCE_COLL_RECV:		return "p2p";
	}
	return NULL;
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

static int run_alltoall(struct mroce_coll_comm *c, const struct coll_args *a)
{
	size_t esz = mroce_coll_dtype_size(a->dtype), T = a2a_inbox_max(c), tot = 0;
	int n = c->size, r = c->rank, err = 0;
	struct a2a_peer *bl = calloc((size_t)n, sizeof(*bl));
	bool overlap = false;
	__u8 *copy = NULL;

	if (!bl)
		return -ENOMEM;
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

		copy = malloc(tot);
		if (!copy) {
			free(bl);
			return -ENOMEM;
		}
		for (int p = 0; p < n; p++) {
			if (bl[p].slen)
				memcpy(copy + off, bl[p].src, bl[p].slen);
			bl[p].src = copy + off;
			off += bl[p].slen;
		}
	}
	if (bl[r].rlen)	/* the same size: checked with the arguments */
		memcpy(bl[r].dst, bl[r].src, bl[r].rlen);
	for (int p = 0; p < n; p++) {
		bl[p].s_direct = p != r && bl[p].slen > T;
		bl[p].r_direct = p != r && bl[p].rlen > T;
	}
	if (n > 1)
		err = a2a_exchange(c, bl);
	free(copy);
	free(bl);
	return err;
}

static int run_one(struct mroce_coll_comm *c, const struct coll_args *a)
{
	size_t esz = mroce_coll_dtype_size(a->dtype), n = (size_t)c->size;
	size_t bytes = a->count * esz;
	const char *algo = mroce_coll_algo(c, a->kind, a->kind == MROCE_COLL_ALLREDUCE ||
				a->kind == MROCE_COLL_BROADCAST ? bytes : bytes * n);
	__u8 *work;
	int err, r = c->rank;

	switch (a->kind) {
	case MROCE_COLL_ALLREDUCE:
		/* the ring reads the input where it is (no copy first) */
		if (a->sendbuf != a->recvbuf && bytes && (n == 1 || !strcmp(algo, "rd")))
			memcpy(a->recvbuf, a->sendbuf, bytes);
		if (!bytes || n == 1)
			return 0;
		if (!strcmp(algo, "rd"))
			return allreduce_rd(c, a, a->recvbuf, bytes);
		return ring_collective(c, a, a->recvbuf, a->sendbuf, a->count, true, true);
	case MROCE_COLL_REDUCE_SCATTER:
		if (!bytes)
			return 0;
		if (n == 1) {
			if (a->sendbuf != a->recvbuf)
				memcpy(a->recvbuf, a->sendbuf, bytes);
			return 0;
		}
		work = malloc(bytes * n);
		if (!work)
			return -ENOMEM;
		err = ring_collective(c, a, work, a->sendbuf, a->count * n, true, false);
		if (!err)
			memcpy(a->recvbuf, work + (size_t)r * bytes, bytes);
		free(work);
		return err;
	case MROCE_COLL_ALLGATHER:
		if (!bytes)
			return 0;
		if (a->sendbuf != (__u8 *)a->recvbuf + (size_t)r * bytes)
			memcpy((__u8 *)a->recvbuf + (size_t)r * bytes, a->sendbuf, bytes);
		return n == 1 ? 0 : ring_collective(c, a, a->recvbuf, NULL, a->count * n, false,
						    true);
	case MROCE_COLL_BROADCAST:
		if (!bytes || n == 1)
			return 0;
		return !strcmp(algo, "tree") ? bcast_tree(c, a, a->recvbuf, bytes) :
					       bcast_chain(c, a, a->recvbuf, bytes);
	case MROCE_COLL_ALLTOALL:
		/* all-to-all-v always runs: only the pairs' messages show that
		 * every rank agrees on the sizes */
		return bytes || a->v ? run_alltoall(c, a) : 0;
	case MROCE_COLL_SEND:
		return p2p_send(c, a, bytes);
	case MROCE_COLL_RECV:
		return p2p_recv(c, a, bytes);
	case MROCE_COLL_BARRIER:
		for (int k = 1; k < (int)n; k <<= 1) {
			err = exchange(c, a, mod(r + k, (int)n), NULL, 0, mod(r - k, (int)n), NULL,
				       0, false);
			if (err)
				return err;
		}
		return 0;
	}
	return -EINVAL;
}

/* A zero-length chunk to and from every peer: every QP carries traffic once. */
int coll_ping_all(struct mroce_coll_comm *c)
{
	struct coll_args a = { .kind = MROCE_COLL_BARRIER };
	struct xfer *x = calloc((size_t)c->size, sizeof(*x));
	int n = c->size, r = c->rank, err;

	if (!x)
		return -ENOMEM;
	for (int s = 1; s < n; s++)
		x[s - 1] = (struct xfer){ .to = mod(r + s, n), .from = mod(r - s, n) };
	c->last_event_ns = coll_now_ns();
	if (c->self_progress)
		coll_progress_own(c, true);
	err = xfer_run(c, x, n - 1, &a);
	if (c->self_progress)
		coll_progress_own(c, false);
	free(x);
	return err;
}

int coll_run(struct mroce_coll_comm *c, const struct coll_args *a)
{
	int err;

	if (c->err)
		return c->err;
	c->last_event_ns = coll_now_ns();
	if (c->self_progress)
		coll_progress_own(c, true);
	err = run_one(c, a);
	if (c->self_progress)
		coll_progress_own(c, false);
	/* every rank counts the collectives alike (all-to-all's buffer offers
	 * name them); point to point involves two ranks only */
	if (a->kind != MROCE_COLL_SEND && a->kind != MROCE_COLL_RECV)
		c->op_seq++;
	if (err && !c->err)
		coll_fail(c, err);	/* a half-done operation leaves the ranks out of step */
	return err;
}
