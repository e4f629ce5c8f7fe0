// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: the per-peer channels (coll_internal.h) and the progress
 * loop that drains the communicator's completion queue. Everything here
 * runs on the one thread that runs the current operation.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_internal.h"

__u64 coll_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* Tell every peer the communicator is broken, so nobody waits out the timeout. */
static void coll_abort_peers(struct mroce_coll_comm *c)
{
	for (int p = 0; p < c->size; p++)
		if (p != c->rank && c->peers[p].qp)
			coll_post_ctrl(c, p, IMM(IMM_CTRL, CTRL_ABORT), NULL, 0);
}

/*
 * Break the communicator: the operation that failed leaves the ranks out of
 * step. Peers hear an abort; then every QP is moved to the error state, so
 * that nothing is sent again from a buffer the caller may free once the
 * call returns.
 */
int coll_fail(struct mroce_coll_comm *c, int err)
{
	if (c->err)
		return c->err;
	c->err = err;
	coll_abort_peers(c);
	if (c->driven) {
		;	/* its driver runs the engine: the aborts go out with the next run */
	} else if (c->self_progress) {
		for (int i = 0; i < 4; i++)
			mroce_dev_progress(c->dev, 0);	/* the aborts go out now */
	} else {
		usleep(2000);	/* the device's own thread sends them */
	}
	for (int p = 0; p < c->size; p++)
		if (p != c->rank && c->peers[p].qp)
			mroce_qp_set_error(c->peers[p].qp);
	return c->err;
}

int coll_post_ctrl(struct mroce_coll_comm *c, int peer, __u32 imm, const void *payload,
		   __u32 len)
{
	struct coll_peer *pe = &c->peers[peer];
	struct mroce_sge sge = { .addr = (__u64)(unsigned long)payload, .length = len,
				 .lkey = mroce_mr_lkey(c->mr_local) };
	struct mroce_send_wr wr = {
		.wr_id = WR(len ? WR_OP : WR_NONE, 0),
		.opcode = MROCE_WR_SEND_WITH_IMM,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.imm_data = imm,
	};
	int err = coll_peer_use(c, peer, false);

	if (err)
		return err;
	err = mroce_post_send(pe->qp, &wr);
	if (err)
		return err;
	if (len)
		c->op_sends++;
	pe->tx_msgs++;
	/* an all-to-all offer: the pair is busy until the peer's write lands */
	if (imm == IMM(IMM_CTRL, CTRL_ADVERT) && len == COLL_A2A_MSG_LEN) {
		__u32 flags;

		memcpy(&flags, (const __u8 *)payload + 24, 4);
		if (flags & A2A_OFFER) {
			memcpy(&pe->offer_op, payload, 4);
			pe->offer_op = IMM_VAL(pe->offer_op);
			pe->offer_out = true;
		}
	}
	return 0;
}

/* Peer owes credits or receives that could not go out yet: coll_step retries. */
static void pend_add(struct mroce_coll_comm *c, int peer)
{
	struct coll_peer *pe = &c->peers[peer];

	if (pe->pend)
		return;
	pe->pend = true;
	pe->pend_next = c->pend_head;
	c->pend_head = peer;
}

/* Receive buffer i of peer: the payload of a control message lands there. */
static int post_recv(struct mroce_coll_comm *c, int peer, __u32 i)
{
	struct coll_peer *pe = &c->peers[peer];
	struct mroce_sge sge = {
		.addr = (__u64)(unsigned long)(pe->ctrl_rx + (size_t)i * COLL_CTRL_LEN),
		.length = COLL_CTRL_LEN,
		.lkey = pe->ctrl_lkey,
	};
	/* the connection's number too: a receive flushed by closing it is no news */
	struct mroce_recv_wr wr = { .wr_id = WR(WR_RECV, ((__u64)(pe->gen & 0xffffff) << 32) |
						((__u64)peer << 16) | i),
				    .sg_list = &sge, .num_sge = 1 };

	return mroce_post_recv(c->peers[peer].qp, &wr);
}

int coll_post_recvs(struct mroce_coll_comm *c, int peer)
{
	for (__u32 i = 0; i < COLL_CTRL_BUFS; i++) {
		int err = post_recv(c, peer, i);

		if (err)
			return err;
	}
	return 0;
}

static int repost_pending(struct mroce_coll_comm *c, int peer)
{
	struct coll_peer *pe = &c->peers[peer];

	if (!pe->qp) {
		pe->nrepost = 0;	/* closed: a new connection posts them all */
		return 0;
	}
	while (pe->nrepost) {
		int err = post_recv(c, peer, pe->repost[pe->nrepost - 1]);

		if (err == -EAGAIN) {
			pend_add(c, peer);
			return 0;
		}
		if (err)
			return coll_fail(c, -EIO);
		pe->nrepost--;
	}
	return 0;
}

/* The peers on the pending list only: the cost is theirs, not the communicator's size. */
static void flush_credits(struct mroce_coll_comm *c)
{
	int p = c->pend_head;

	c->pend_head = -1;
	while (p >= 0) {
		struct coll_peer *pe = &c->peers[p];
		int next = pe->pend_next;

		pe->pend = false;
		if (pe->qp) {
			if (pe->nrepost)
				repost_pending(c, p);
			/* -EAGAIN: the send queue is full; the next step retries */
			if (pe->credits_owed >= COLL_CREDIT_BATCH &&
			    !coll_post_ctrl(c, p, IMM(IMM_CREDIT, pe->credits_owed), NULL, 0))
				pe->credits_owed = 0;
			if (pe->credits_owed >= COLL_CREDIT_BATCH)
				pend_add(c, p);
		}
		p = next;
	}
}

static int on_recv(struct mroce_coll_comm *c, const struct mroce_wc *wc)
{
	int peer = (int)((WR_VAL(wc->wr_id) >> 16) & 0xffff);
	__u32 buf = (__u32)(WR_VAL(wc->wr_id) & 0xffff);
	struct coll_peer *pe = &c->peers[peer];
	__u32 v = IMM_VAL(wc->imm_data);
	const __u8 *payload;

	if (!(wc->wc_flags & MROCE_WC_WITH_IMM))
		return coll_fail(c, -EPROTO);
	if (!pe->qp)
		return coll_fail(c, -EPROTO);	/* a driver closed a connection still busy */
	if (IMM_TYPE(wc->imm_data) != IMM_DIRECT)
		pe->rx_msgs++;
	switch (IMM_TYPE(wc->imm_data)) {
	case IMM_DATA: {
		__u32 slot = v % COLL_SLOTS;

		/* Within the credit window and not overwriting an unconsumed chunk. */
		if (((v - pe->rx_seq) & 0x3fffffffu) >= COLL_SLOTS || pe->rx_ready[slot] ||
		    wc->byte_len > c->chunk)
			return coll_fail(c, -EPROTO);
		pe->rx_len[slot] = wc->byte_len;
		pe->rx_ready[slot] = true;
		break;
	}
	case IMM_CREDIT:
		pe->credits += v;
		if (pe->credits > COLL_SLOTS)
			return coll_fail(c, -EPROTO);
		break;
	case IMM_DIRECT:
		if (pe->direct_op != v) {
			pe->direct_op = v;
			pe->direct_got = 0;
		}
		pe->direct_got++;
		pe->direct_len = wc->byte_len;
		if (pe->offer_out && pe->offer_op == v)
			pe->offer_out = false;
		break;
	case IMM_CTRL:
		payload = pe->ctrl_rx + (size_t)buf * COLL_CTRL_LEN;
		if (v == CTRL_ABORT)
			return coll_fail(c, -ECONNABORTED);
		/* the peer's all-to-all blocks and ours disagree in size */
		if (v == CTRL_BADMSG)
			return coll_fail(c, -EBADMSG);
		if (v == CTRL_ADVERT && wc->byte_len == COLL_A2A_MSG_LEN) {
			struct coll_advert a = { .valid = true };

			memcpy(&a.op, payload, 4);
			memcpy(&a.rkey, payload + 4, 4);
			memcpy(&a.addr, payload + 8, 8);
			memcpy(&a.rlen, payload + 16, 4);
			memcpy(&a.slen, payload + 20, 4);
			memcpy(&a.flags, payload + 24, 4);
			pe->adv[a.op % COLL_ADV_RING] = a;
			break;
		}
		return coll_fail(c, -EPROTO);
	}
	pe->repost[pe->nrepost++] = (__u16)buf;
	return repost_pending(c, peer);
}

/* A receive flushed when its connection closed (driven: closed idle, by design). */
static bool stale_flush(const struct mroce_coll_comm *c, const struct mroce_wc *wc)
{
	__u64 v = WR_VAL(wc->wr_id);
	int peer = (int)((v >> 16) & 0xffff);

	if (!c->driven || wc->status != MROCE_WC_WR_FLUSH_ERR || WR_KIND(wc->wr_id) != WR_RECV ||
	    peer >= c->size)
		return false;
	return !c->peers[peer].qp || (__u32)(v >> 32) != (c->peers[peer].gen & 0xffffff);
}

static int on_wc(struct mroce_coll_comm *c, const struct mroce_wc *wc)
{
	if (stale_flush(c, wc))
		return 0;
	if (wc->status != MROCE_WC_SUCCESS)
		return coll_fail(c, -EIO);	/* a peer is gone (retries exhausted), or flushed */
	if (wc->opcode == MROCE_WC_RECV || wc->opcode == MROCE_WC_RECV_RDMA_WITH_IMM)
		return on_recv(c, wc);
	switch (WR_KIND(wc->wr_id)) {
	case WR_POOL:
		c->pool_free |= 1ull << WR_VAL(wc->wr_id);
		break;
	case WR_OP:
		if (c->op_busy && WR_VAL(wc->wr_id))
			c->op_busy[WR_VAL(wc->wr_id) - 1]--;
		c->op_sends--;
		break;
	}
	return 0;
}

/*
 * Drain the completion queue once. With may_block and nothing to do: spin
 * for COLL_SPIN_US after the last event (a reply is usually that close), then
 * sleep on the CQ's fd. Fails the communicator after timeout_ms without
 * any completion.
 */
int coll_step(struct mroce_coll_comm *c, bool may_block)
{
	struct mroce_wc wc[32];
	__u64 now;
	int n;

	if (c->err)
		return c->err;
	flush_credits(c);
	if (c->self_progress)
		mroce_dev_progress(c->dev, 0);
	n = mroce_poll_cq(c->cq, 32, wc);
	c->last_polled = n > 0 ? n : 0;
	if (n < 0)
		return coll_fail(c, n);
	if (n > 0) {
		if (!c->driven)	/* driven: no clock; its driver bounds the time */
			c->last_event_ns = coll_now_ns();
		for (int i = 0; i < n; i++)
			on_wc(c, &wc[i]);
		return c->err;
	}
	if (!may_block)
		return 0;
	now = coll_now_ns();
	if (now - c->last_event_ns > (__u64)c->timeout_ms * 1000000ull)
		return coll_fail(c, -ETIMEDOUT);
	if (now - c->last_event_ns < (__u64)COLL_SPIN_US * 1000ull) {
		sched_yield();	/* ranks may outnumber cores */
	} else if (c->self_progress) {
		mroce_dev_progress(c->dev, 1);	/* sleeps until a packet, a timer or 1 ms */
	} else {
		struct pollfd pfd = { .fd = mroce_cq_fd(c->cq), .events = POLLIN };

		poll(&pfd, 1, 1);
	}
	return 0;
}

/* Post one chunk into peer's inbox; -EAGAIN without a credit or SQ room. */
int coll_post_chunk(struct mroce_coll_comm *c, int peer, const void *src, __u32 lkey,
		    __u32 len, __u64 wr_id)
{
	struct coll_peer *pe = &c->peers[peer];
	struct mroce_sge sge = { .addr = (__u64)(unsigned long)src, .length = len, .lkey = lkey };
	struct mroce_send_wr wr = {
		.wr_id = wr_id,
		.opcode = MROCE_WR_RDMA_WRITE_WITH_IMM,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.imm_data = IMM(IMM_DATA, pe->tx_seq),
		.remote_addr = pe->r_inbox + (__u64)(pe->tx_seq % COLL_SLOTS) * c->chunk,
		.rkey = pe->r_rkey,
	};
	int err;

	if (!pe->credits)
		return -EAGAIN;
	if ((err = coll_peer_use(c, peer, true)))
		return err == -EAGAIN ? err : coll_fail(c, err);
	wr.remote_addr = pe->r_inbox + (__u64)(pe->tx_seq % COLL_SLOTS) * c->chunk;
	wr.rkey = pe->r_rkey;
	err = mroce_post_send(pe->qp, &wr);
	if (err == -EAGAIN)
		return err;
	if (err)
		return coll_fail(c, -EIO);
	pe->credits--;
	pe->tx_seq++;
	pe->tx_msgs++;
	if (WR_KIND(wr_id) == WR_OP)
		c->op_sends++;
	return 0;
}

/* Copy into a staging buffer and post; -EAGAIN without buffer, credit or room. */
int coll_post_staged(struct mroce_coll_comm *c, int peer, const void *src, __u32 len)
{
	unsigned int b;
	int err;

	if (!c->pool_free || !c->peers[peer].credits)
		return -EAGAIN;
	b = (unsigned int)__builtin_ctzll(c->pool_free);
	if (len && !c->dry)
		memcpy(c->pool + (size_t)b * c->chunk, src, len);
	err = coll_post_chunk(c, peer, c->pool + (size_t)b * c->chunk,
			      mroce_mr_lkey(c->mr_local), len, WR(WR_POOL, b));
	if (!err)
		c->pool_free &= ~(1ull << b);
	return err;
}

const __u8 *coll_peek(struct mroce_coll_comm *c, int peer, __u32 *len)
{
	struct coll_peer *pe = &c->peers[peer];
	__u32 slot = pe->rx_seq % COLL_SLOTS;

	if (!pe->rx_ready[slot])
		return NULL;
	*len = pe->rx_len[slot];
	return pe->inbox + (size_t)slot * c->chunk;
}

void coll_consume(struct mroce_coll_comm *c, int peer)
{
	struct coll_peer *pe = &c->peers[peer];

	pe->rx_ready[pe->rx_seq % COLL_SLOTS] = false;
	pe->rx_seq++;
	/* Credits go back in batches. Holding back fewer than half the slots
	 * cannot deadlock: a sender out of credits then has more than half the
	 * slots full here, and consuming them returns the batch. */
	if (++pe->credits_owed >= COLL_CREDIT_BATCH) {
		if (!coll_post_ctrl(c, peer, IMM(IMM_CREDIT, pe->credits_owed), NULL, 0))
			pe->credits_owed = 0;
		else
			pend_add(c, peer);
	}
}

/* Wait until every send of the operation has completed (its source is free again). */
int coll_wait_sends(struct mroce_coll_comm *c)
{
	int err = 0;

	while (!err && c->op_sends)
		err = coll_step(c, true);
	return err;
}

/* Wait until the staging pool is idle: every staged chunk reached its peer. */
int coll_drain_pool(struct mroce_coll_comm *c)
{
	int err = 0;

	_Static_assert(COLL_POOL == 64, "pool_free is one 64-bit mask");
	while (!err && c->pool_free != ~0ull)
		err = coll_step(c, true);
	return err;
}
