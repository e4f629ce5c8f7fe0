// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: the algorithms. Each runs one whole operation on the calling
 * thread, moving chunks through the channels of coll_chan.c:
 *   all-reduce      ring reduce-scatter + all-gather, pipelined by chunk
 *                   (large); recursive doubling (small)
 *   reduce-scatter  the ring's first half; all-gather its second half
 *   broadcast       pipelined chain (large); binomial tree (small)
 *   all-to-all      pairwise WRITE_WITH_IMM straight into the peers' buffers
 *                   (large); through the inboxes (blocks up to 16 KiB)
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

static int alltoall_inbox(struct mroce_coll_comm *c, const struct coll_args *a,
			  const __u8 *src, __u8 *dst, size_t blk)
{
	struct xfer *x = calloc((size_t)c->size, sizeof(*x));
	int n = c->size, r = c->rank, err;

	if (!x)
		return -ENOMEM;
	for (int s = 1; s < n; s++) {
		int to = mod(r + s, n), from = mod(r - s, n);

		x[s - 1] = (struct xfer){ .to = to, .src = src + (size_t)to * blk, .slen = blk,
					  .from = from, .dst = dst + (size_t)from * blk,
					  .rlen = blk };
	}
	err = xfer_run(c, x, n - 1, a);
	free(x);
	return err;
}

/*
 * Every rank offers its receive buffer to every peer (address, rkey), then
 * writes its block for peer r+s at step s straight into that peer's buffer
 * with an immediate; a peer's block has arrived when its immediate has.
 */
static int alltoall_direct(struct mroce_coll_comm *c, const struct coll_args *a,
			   const __u8 *src, __u8 *dst, size_t blk)
{
	int n = c->size, r = c->rank, err;
	struct mroce_mr *smr = NULL, *rmr = NULL;
	__u32 op = c->op_seq;

	(void)a;	/* blk fits 32 bits: checked with the arguments */
	err = reg_local(c, (void *)src, (size_t)n * blk, &smr);
	if (!err)
		err = mroce_reg_mr(c->dev, dst, (size_t)n * blk,
				   MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE, &rmr);
	for (int p = 0; !err && p < n; p++) {
		__u8 *m = c->peers[p].ctrl_tx + (op % COLL_ADV_RING) * COLL_CTRL_LEN;
		__u32 rkey = mroce_mr_rkey(rmr);
		__u64 addr = (__u64)(unsigned long)dst;

		if (p == r)
			continue;
		memcpy(m, &op, 4);
		memcpy(m + 4, &rkey, 4);
		memcpy(m + 8, &addr, 8);
		while (!err && (err = coll_post_ctrl(c, p, IMM(IMM_CTRL, CTRL_ADVERT), m, 16)) ==
			       -EAGAIN)
			err = coll_step(c, true);
		if (err && err != -EAGAIN)
			err = coll_fail(c, -EIO);
	}
	for (int s = 1; !err && s < n; s++) {
		int to = mod(r + s, n);
		struct coll_advert *adv = &c->peers[to].adv[op % COLL_ADV_RING];
		struct mroce_sge sge = { .addr = (__u64)(unsigned long)(src + (size_t)to * blk),
					 .length = (__u32)blk, .lkey = mroce_mr_lkey(smr) };
		struct mroce_send_wr wr = { .wr_id = WR(WR_OP, 0),
					    .opcode = MROCE_WR_RDMA_WRITE_WITH_IMM,
					    .sg_list = &sge, .num_sge = blk ? 1 : 0,
					    .imm_data = IMM(IMM_DIRECT, op) };

		while (!err && !(adv->valid && adv->op == op))
			err = coll_step(c, true);
		if (err)
			break;
		wr.remote_addr = adv->addr + (__u64)r * blk;
		wr.rkey = adv->rkey;
		while ((err = mroce_post_send(c->peers[to].qp, &wr)) == -EAGAIN &&
		       !(err = coll_step(c, true)))
			;
		if (err) {
			err = coll_fail(c, err == -EAGAIN ? c->err : -EIO);
			break;
		}
		c->op_sends++;
		adv->valid = false;
	}
	for (int s = 1; !err && s < n; s++) {
		struct coll_peer *pe = &c->peers[mod(r - s, n)];

		while (!err && !(pe->direct_op == (op & 0x3fffffffu) && pe->direct_got == 1))
			err = coll_step(c, true);
	}
	if (!err)
		err = coll_wait_sends(c);
	/* Deregistering first closes the buffer to late or stray writes. */
	if (rmr)
		mroce_dereg_mr(rmr);
	if (smr)
		mroce_dereg_mr(smr);
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

static int run_alltoall(struct mroce_coll_comm *c, const struct coll_args *a)
{
	size_t blk = a->count * mroce_coll_dtype_size(a->dtype), all = blk * (size_t)c->size;
	const __u8 *src = a->sendbuf;
	__u8 *copy = NULL;
	int err;

	if (src == a->recvbuf && all) {
		/* In place: peers write into the buffer we still read from. */
		copy = malloc(all);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, src, all);
		src = copy;
	}
	memcpy((__u8 *)a->recvbuf + (size_t)c->rank * blk, src + (size_t)c->rank * blk, blk);
	if (c->size == 1)
		err = 0;
	else if (blk <= a2a_inbox_max(c))
		err = alltoall_inbox(c, a, src, a->recvbuf, blk);
	else
		err = alltoall_direct(c, a, src, a->recvbuf, blk);
	free(copy);
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
		return bytes ? run_alltoall(c, a) : 0;
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
