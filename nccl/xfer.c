// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnccl-net-mroce: isend / irecv / test / close (docs/nccl.md, "Design").
 *
 * Receiver-posted buffers, as NCCL's IB transport does it: irecv() sends
 * the sender a clear-to-send (CTS, a SEND) naming each buffer of the
 * grouped receive (address, size, rkey, tag) and its request slot; isend()
 * waits (request NULL) until the CTS of the oldest unfinished receive is
 * there, takes its buffer with the same tag and WRITEs WITH IMMEDIATE into
 * it; the immediate names the receiver's slot and buffer, the completion's
 * byte_len is the size received. A request completes on its own QP's
 * completions, which test() polls; the peer dying shows as a transport
 * error on the QP or as the side-channel socket closing.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "plugin.h"

enum wr_kind { K_CTS_RX = 1, K_WRITE = 2, K_CTS_TX = 3, K_DATA_RX = 4 };
#define WR(kind, idx)	(((__u64)(kind) << 32) | (__u32)(idx))
#define WR_KIND(id)	((enum wr_kind)((id) >> 32))
#define WR_IDX(id)	((__u32)(id))

/* CTS wire format, little endian: seq, ridx, n, 2 pad, then n x (addr, size, rkey, tag). */
#define CTS_HDR		8
#define CTS_ENTRY	20
_Static_assert(CTS_HDR + MN_MAX_RECVS * CTS_ENTRY <= MN_CTS_LEN, "CTS too long");

/* Immediate: 23 bits of the CTS sequence, the receiver's slot (6 bits), the buffer (3). */
#define IMM_SEQ_MASK		0x7fffffu
#define IMM(seq, ridx, e)	((((seq) & IMM_SEQ_MASK) << 9) | ((__u32)(ridx) << 3) | (__u32)(e))
#define IMM_SEQ(imm)		((imm) >> 9)
#define IMM_RIDX(imm)		(((imm) >> 3) & 0x3f)
#define IMM_E(imm)		((imm) & 0x7)
_Static_assert(MN_RECV_SLOTS <= 64 && MN_MAX_RECVS <= 8, "immediate layout");
_Static_assert(MN_RECV_SLOTS <= MN_CTS_BUFS, "a recv slot's CTS lives in control buffer [slot]");

static void put32(__u8 *p, __u32 v) { v = htole32(v); memcpy(p, &v, 4); }
static void put64(__u8 *p, __u64 v) { v = htole64(v); memcpy(p, &v, 8); }
static __u32 get32(const __u8 *p) { __u32 v; memcpy(&v, p, 4); return le32toh(v); }
static __u64 get64(const __u8 *p) { __u64 v; memcpy(&v, p, 8); return le64toh(v); }

/* The first failure sticks; the QP stops (nothing more is sent from the caller's buffers). */
static ncclResult_t comm_fail(struct mn_comm *c, ncclResult_t r, const char *why)
{
	if (!c->err) {
		c->err = r;
		MN_WARN("%s comm on %s failed: %s", c->kind == MN_SEND ? "send" : "recv",
			c->d->ifname, why);
		mroce_qp_set_error(c->qp);
	}
	return c->err;
}

/*
 * The peer closed (or went) while nothing of ours was in flight: the normal
 * end of a connection, not a failure. The comm takes no more requests; a
 * WARN comes only if one is posted (comm_refuse()).
 */
static void comm_closed(struct mn_comm *c, const char *why)
{
	c->err = ncclRemoteError;
	c->closed = why;
	MN_INFO("%s comm on %s closed: %s, nothing in flight", c->kind == MN_SEND ? "send" : "recv",
		c->d->ifname, why);
	mroce_qp_set_error(c->qp);
}

static ncclResult_t comm_refuse(struct mn_comm *c, const char *call)
{
	if (c->closed) {
		MN_WARN("%s on a %s comm on %s: %s", call, c->kind == MN_SEND ? "send" : "recv",
			c->d->ifname, c->closed);
		c->closed = NULL;	/* said once */
	}
	return c->err;
}

/* Requests of ours a peer's departure would strand: sends not delivered, receives not filled. */
static int in_flight(const struct mn_comm *c)
{
	int n = 0;

	for (int i = 0; i < c->nreqs; i++)
		n += c->reqs[i].state == MN_REQ_POSTED;
	return n;
}

static int post_cts_rx(struct mn_comm *c, __u32 i)
{
	struct mroce_sge sge = { .addr = (__u64)(uintptr_t)(c->ctl + (size_t)i * MN_CTS_LEN),
				 .length = MN_CTS_LEN, .lkey = mroce_mr_lkey(c->ctl_mr) };
	struct mroce_recv_wr wr = { .wr_id = WR(K_CTS_RX, i), .sg_list = &sge, .num_sge = 1 };

	return mroce_post_recv(c->qp, &wr);
}

/* A WRITE WITH IMMEDIATE consumes a receive but places nothing through it.
 * (sg_list points somewhere even so: libmroce copies num_sge entries from it.) */
static int post_data_rx(struct mn_comm *c)
{
	struct mroce_sge none = { 0 };
	struct mroce_recv_wr wr = { .wr_id = WR(K_DATA_RX, 0), .sg_list = &none, .num_sge = 0 };

	return mroce_post_recv(c->qp, &wr);
}

int mn_comm_post_initial(struct mn_comm *c)
{
	int err = 0;

	if (c->kind == MN_SEND)
		for (__u32 i = 0; !err && i < MN_CTS_BUFS; i++)
			err = post_cts_rx(c, i);
	else
		for (int i = 0; !err && i < MN_SEND_REQS; i++)
			err = post_data_rx(c);
	return err;
}

/* ---- completions ------------------------------------------------------------ */

static void on_cts(struct mn_comm *c, __u32 buf, __u32 len)
{
	const __u8 *p = c->ctl + (size_t)buf * MN_CTS_LEN;
	__u32 seq = get32(p), n = p[5];
	struct mn_cts *t = &c->cts[seq % MN_MAX_REQS];

	if (len < CTS_HDR || !n || n > MN_MAX_RECVS || len != CTS_HDR + n * CTS_ENTRY ||
	    p[4] >= MN_RECV_SLOTS || seq - c->seq >= MN_MAX_REQS || t->valid) {
		comm_fail(c, ncclRemoteError, "malformed clear-to-send from the receiver");
		return;
	}
	t->seq = seq;
	t->ridx = p[4];
	t->n = (__u8)n;
	for (__u32 i = 0; i < n; i++) {
		const __u8 *e = p + CTS_HDR + i * CTS_ENTRY;

		t->e[i] = (struct mn_cts_entry){ .addr = get64(e), .size = get32(e + 8),
						 .rkey = get32(e + 12), .tag = (__s32)get32(e + 16) };
	}
	t->valid = true;
	if (post_cts_rx(c, buf))
		comm_fail(c, ncclSystemError, "cannot repost a CTS buffer");
}

static void on_data(struct mn_comm *c, const struct mroce_wc *wc)
{
	__u32 imm = wc->imm_data;
	struct mn_req *r = &c->reqs[IMM_RIDX(imm) % MN_RECV_SLOTS];
	__u32 e = IMM_E(imm);

	if (!(wc->wc_flags & MROCE_WC_WITH_IMM) || r->state != MN_REQ_POSTED ||
	    IMM_RIDX(imm) >= MN_RECV_SLOTS || IMM_SEQ(imm) != (r->seq & IMM_SEQ_MASK) ||
	    e >= r->n || (r->got & (1u << e)) ||
	    wc->byte_len > (__u32)r->sizes[e]) {
		comm_fail(c, ncclRemoteError, "a write that matches no posted receive");
		return;
	}
	r->sizes[e] = (int)wc->byte_len;
	r->got |= (__u8)(1u << e);
	c->nmsgs++;
	if (r->got == (1u << r->n) - 1)
		r->state = MN_REQ_DONE;
	if (post_data_rx(c))
		comm_fail(c, ncclSystemError, "cannot repost a receive");
}

static void on_wc(struct mn_comm *c, const struct mroce_wc *wc)
{
	__u32 idx = WR_IDX(wc->wr_id);

	if (wc->status != MROCE_WC_SUCCESS) {
		/* Retries exhausted, RNR, remote access: the peer; local errors: us. */
		comm_fail(c, wc->status == MROCE_WC_LOC_LEN_ERR ||
			     wc->status == MROCE_WC_LOC_PROT_ERR ? ncclSystemError : ncclRemoteError,
			  mroce_wc_status_str(wc->status));
		return;
	}
	switch (WR_KIND(wc->wr_id)) {
	case K_CTS_RX:
		if (c->kind == MN_SEND && idx < MN_CTS_BUFS)
			on_cts(c, idx, wc->byte_len);
		break;
	case K_WRITE:
		if (c->kind == MN_SEND && idx < MN_SEND_REQS && c->reqs[idx].state == MN_REQ_POSTED)
			c->reqs[idx].state = MN_REQ_DONE;
		break;
	case K_CTS_TX:
		if (c->kind == MN_RECV && idx < MN_RECV_SLOTS) {
			struct mn_req *r = &c->reqs[idx];

			r->cts_busy = false;
			if (r->tested)
				r->state = MN_REQ_FREE;
		}
		break;
	case K_DATA_RX:
		if (c->kind == MN_RECV)
			on_data(c, wc);
		break;
	}
}

/*
 * The side channel: the peer's kernel closes it when the peer process dies.
 * A receiver that closes its comm first sends CLOSE_LEN bytes on it: 'C' and
 * how many messages it received, so that its sender can complete the sends
 * that did arrive (in order: the QP is ordered) whose ACK never will.
 * Returns the reason the peer is gone, or NULL while it is up.
 */
#define CLOSE_LEN	9

static const char *peer_gone(struct mn_comm *c)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN | POLLRDHUP };
	__u8 b[CLOSE_LEN];
	__u64 now = mn_now_ns();
	ssize_t n;

	if (now < c->next_live_check)
		return NULL;
	c->next_live_check = now + MN_LIVE_CHECK_NS;
	if (poll(&pfd, 1, 0) <= 0)
		return NULL;
	n = recv(c->fd, b, CLOSE_LEN, MSG_PEEK | MSG_DONTWAIT);
	if (n == CLOSE_LEN && b[0] == 'C' && c->kind == MN_SEND) {
		__u64 delivered = get64(b + 1);

		for (int i = 0; i < c->nreqs; i++)
			if (c->reqs[i].state == MN_REQ_POSTED && c->reqs[i].wseq < delivered)
				c->reqs[i].state = MN_REQ_DONE;
		return "the peer closed its receive side";
	}
	if (n > 0 && (b[0] != 'C' || c->kind != MN_SEND))
		return "unexpected bytes on the side channel";
	if (n > 0 && !(pfd.revents & (POLLHUP | POLLRDHUP | POLLERR)))
		return NULL;	/* the rest of the close notice is on its way */
	if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ||
	    (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR)))
		return "the peer closed the connection or died";
	return NULL;
}

static int drain(struct mn_comm *c)
{
	struct mroce_wc wc[32];
	int n;

	while ((n = mroce_poll_cq(c->cq, 32, wc)) > 0)
		for (int i = 0; i < n; i++)
			on_wc(c, &wc[i]);
	return n;
}

static void progress(struct mn_comm *c)
{
	const char *why;

	if (drain(c) < 0)
		comm_fail(c, ncclSystemError, "polling the completion queue failed");
	if (!c->err && (why = peer_gone(c))) {
		drain(c);	/* what completed before the peer went still counts */
		if (in_flight(c))
			comm_fail(c, ncclRemoteError, why);
		else
			comm_closed(c, why);
	}
}

/* ---- the calls ---------------------------------------------------------------- */

static bool in_region(const struct mn_mr *m, const void *data, __u64 size)
{
	__u64 a = (__u64)(uintptr_t)data;

	return !size || (m->mr && a >= m->addr && size <= m->len && a - m->addr <= m->len - size);
}

ncclResult_t mn_isend(void *send_comm, void *data, int size, int tag, void *mhandle,
		      void **request)
{
	struct mn_comm *c = send_comm;
	const struct mn_mr *m = mhandle;
	struct mn_cts *t;
	struct mn_cts_entry *e = NULL;
	struct mn_req *r = NULL;
	int i, err, left = 0;

	if (!c || c->kind != MN_SEND || !request || !m || size < 0 ||
	    !in_region(m, data, (__u64)size))
		return ncclInternalError;
	*request = NULL;
	progress(c);
	if (c->err)
		return comm_refuse(c, "isend");
	t = &c->cts[c->seq % MN_MAX_REQS];
	if (!t->valid || t->seq != c->seq)
		return ncclSuccess;	/* the receiver has not posted it yet: call again */
	for (i = 0; i < t->n; i++) {
		if (!t->e[i].used && t->e[i].tag == tag && !e)
			e = &t->e[i];
		left += !t->e[i].used;
	}
	if (!e)
		return ncclSuccess;	/* the oldest receive has no buffer with this tag (yet) */
	if ((__u32)size > e->size) {
		MN_WARN("isend of %d bytes, tag %d: the receive posted only %u", size, tag, e->size);
		return ncclInvalidUsage;
	}
	for (i = 0; i < c->nreqs && !r; i++)
		if (c->reqs[i].state == MN_REQ_FREE)
			r = &c->reqs[i];
	if (!r)
		return ncclSuccess;	/* every slot in flight (beyond NCCL's limit): call again */
	{
		struct mroce_sge sge = { .addr = (__u64)(uintptr_t)data, .length = (__u32)size,
					 .lkey = size ? mroce_mr_lkey(m->mr) : 0 };
		struct mroce_send_wr wr = {
			.wr_id = WR(K_WRITE, r - c->reqs),
			.opcode = MROCE_WR_RDMA_WRITE_WITH_IMM,
			.sg_list = &sge,
			.num_sge = size ? 1 : 0,
			.imm_data = IMM(t->seq, t->ridx, e - t->e),
			.remote_addr = e->addr,
			.rkey = e->rkey,
		};

		err = mroce_post_send(c->qp, &wr);
	}
	if (err == -EAGAIN)
		return ncclSuccess;	/* send queue full: call again */
	if (err)
		return comm_fail(c, ncclSystemError, "posting a write failed");
	e->used = true;
	r->wseq = c->nmsgs++;
	if (left == 1) {
		t->valid = false;
		c->seq++;
	}
	r->state = MN_REQ_POSTED;
	r->n = 1;
	r->sizes[0] = size;
	*request = r;
	return ncclSuccess;
}

ncclResult_t mn_irecv(void *recv_comm, int n, void **data, int *sizes, int *tags,
		      void **mhandles, void **request)
{
	struct mn_comm *c = recv_comm;
	struct mn_req *r = NULL;
	__u8 *p;
	int i, err, busy;

	if (!c || c->kind != MN_RECV || !request || n < 1 || n > MN_MAX_RECVS || !data ||
	    !sizes || !tags || !mhandles)
		return ncclInternalError;
	*request = NULL;
	for (i = 0; i < n; i++)
		if (sizes[i] < 0 || !mhandles[i] ||
		    !in_region(mhandles[i], data[i], (__u64)sizes[i]))
			return ncclInternalError;
	progress(c);
	if (c->err)
		return comm_refuse(c, "irecv");
	/*
	 * At most MN_MAX_REQS receives not yet reported done (the sender keeps
	 * that many CTSs); the slots of those reported done whose CTS SEND has
	 * not completed yet come on top, so NCCL's own limit always finds one.
	 * Past either, the call cannot be performed now: no request, NCCL calls
	 * again (the v8 API).
	 */
	for (i = 0, busy = 0; i < c->nreqs; i++) {
		if (c->reqs[i].state == MN_REQ_FREE) {
			if (!r)
				r = &c->reqs[i];
		} else if (!c->reqs[i].tested) {
			busy++;
		}
	}
	if (!r || busy >= MN_MAX_REQS)
		return ncclSuccess;
	p = c->ctl + (size_t)(r - c->reqs) * MN_CTS_LEN;
	put32(p, c->seq);
	p[4] = (__u8)(r - c->reqs);
	p[5] = (__u8)n;
	p[6] = p[7] = 0;
	for (i = 0; i < n; i++) {
		const struct mn_mr *m = mhandles[i];
		__u8 *e = p + CTS_HDR + i * CTS_ENTRY;

		put64(e, (__u64)(uintptr_t)data[i]);
		put32(e + 8, (__u32)sizes[i]);
		put32(e + 12, sizes[i] ? mroce_mr_rkey(m->mr) : 0);
		put32(e + 16, (__u32)tags[i]);
		r->sizes[i] = sizes[i];
	}
	{
		struct mroce_sge sge = { .addr = (__u64)(uintptr_t)p,
					 .length = CTS_HDR + (__u32)n * CTS_ENTRY,
					 .lkey = mroce_mr_lkey(c->ctl_mr) };
		struct mroce_send_wr wr = { .wr_id = WR(K_CTS_TX, r - c->reqs),
					    .opcode = MROCE_WR_SEND, .sg_list = &sge,
					    .num_sge = 1 };

		err = mroce_post_send(c->qp, &wr);
	}
	if (err == -EAGAIN)
		return ncclSuccess;
	if (err)
		return comm_fail(c, ncclSystemError, "posting a clear-to-send failed");
	r->state = MN_REQ_POSTED;
	r->cts_busy = true;
	r->tested = false;
	r->n = (__u8)n;
	r->got = 0;
	r->seq = c->seq++;
	*request = r;
	return ncclSuccess;
}

ncclResult_t mn_test(void *request, int *done, int *sizes)
{
	struct mn_req *r = request;
	struct mn_comm *c;

	if (!r || !done || !r->c || r->state == MN_REQ_FREE || r->tested)
		return ncclInternalError;
	c = r->c;
	*done = 0;
	progress(c);
	if (r->state != MN_REQ_DONE)
		return c->err;
	*done = 1;
	if (sizes)
		memcpy(sizes, r->sizes, sizeof(int) * r->n);
	if (c->kind == MN_RECV && r->cts_busy)
		r->tested = true;	/* the slot is free once its CTS completes */
	else
		r->state = MN_REQ_FREE;
	return ncclSuccess;
}

ncclResult_t mn_close_comm(void *comm)
{
	struct mn_comm *c = comm;
	__u8 b[CLOSE_LEN] = { 'C' };

	if (!c)
		return ncclInternalError;
	/* Tell the sender how many of its messages arrived (see peer_gone()). */
	if (c->kind == MN_RECV && !c->err && drain(c) >= 0) {
		put64(b + 1, c->nmsgs);
		if (send(c->fd, b, CLOSE_LEN, MSG_NOSIGNAL | MSG_DONTWAIT) == CLOSE_LEN)
			;
		else if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)
			MN_INFO("close: the sender has closed already");	/* nobody to tell */
		else
			MN_WARN("close: the close notice did not go out: %s", strerror(errno));
	}
	mn_comm_free(c);	/* requests in flight go with it: the QP is destroyed first */
	return ncclSuccess;
}
