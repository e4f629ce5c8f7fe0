// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The reliability engine: packetise requests, place arriving packets in any
 * order, acknowledge with cumulative PSN + SACK bitmap, detect loss from
 * SACK holes (with a reordering allowance) and a retransmission timer, and
 * resend only what was lost. Runs with dev->lock held.
 *
 * Sender PSN space: requests (WRITE*, SEND*, READ_REQ) and the READ
 * responses this side serves, interleaved. Each in-flight PSN has a record
 * (pkts[]) naming its request and byte offset, so a lost packet is rebuilt
 * from the application's memory, never kept as a copy.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "engine.h"

#define PKT(qp, psn)	(&(qp)->pkts[(psn) & (MROCE_PKT_RING - 1)])
#define MSG(qp, msn)	(&(qp)->msgs[(msn) & (MROCE_MSG_SLOTS - 1)])
#define SWQE(qp, seq)	(&(qp)->sq[(seq) % (qp)->attr.sq_depth])
#define RWQE(qp, seq)	(&(qp)->rq[(seq) % (qp)->attr.rq_depth])
#define TX_BURST	32
#define RX_BUDGET	64

enum place_result {
	PLACED = 0,
	NOT_NOW = -1,	/* no resources: do not mark, the sender will retry */
	RNR = -2,	/* no receive posted: NACK RNR, do not mark */
};

static inline bool psn_before(__u32 a, __u32 b) { return (__s32)(a - b) < 0; }
static void path_scoreboard(struct mroce_qp *qp, __u64 now);
static __u64 head_due(const struct mroce_qp *qp, const struct mroce_txpkt *rec);

/* Copy len bytes between a linear buffer and an SG list starting at byte off. */
static void sg_copy(const struct mroce_sge *sg, __u32 n, __u32 off, void *lin, __u32 len, bool to_sg)
{
	__u8 *p = lin;

	for (__u32 i = 0; i < n && len; i++) {
		__u32 chunk;

		if (off >= sg[i].length) {
			off -= sg[i].length;
			continue;
		}
		chunk = sg[i].length - off < len ? sg[i].length - off : len;
		if (to_sg)
			memcpy((__u8 *)(unsigned long)sg[i].addr + off, p, chunk);
		else
			memcpy(p, (const __u8 *)(unsigned long)sg[i].addr + off, chunk);
		p += chunk;
		len -= chunk;
		off = 0;
	}
}

/* ---- transmit ------------------------------------------------------------ */

/*
 * Build and send one packet. The payload comes from an SG list (requests)
 * or linear memory (READ responses) and is copied straight into the frame.
 */
static int emit(struct mroce_qp *qp, struct mroce_hdr *h, const struct mroce_sge *sg, __u32 nsge,
		__u32 sg_off, const void *lin, __u8 path)
{
	struct mroce_dev *dev = qp->dev;
	struct mroce_route rt = qp->route;
	__u32 cap;
	void *buf = dev->ops->tx_buf(dev->port, &cap);
	int hdr;

	if (!buf)
		return -EAGAIN;
	/* Source port: the ephemeral range, at the QP's offset plus the path's entropy. */
	rt.sport = (__u16)(49152 + (qp->route.sport + qp->paths[path].entropy) % MROCE_ENTROPY_SPACE);
	rt.ecn = 2;	/* ECT(0) */
	h->dqpn = qp->rqpn;
	h->token = mroce_be64(qp->token_be);
	h->ts = (__u32)dev->ops->now_us(dev->port);
	/* ACKs and NACKs carry the path slot of the newest data packet they cover, set by the caller. */
	if (h->opcode != MROCE_OP_ACK && h->opcode != MROCE_OP_NACK)
		h->path = path;
	hdr = mroce_frame_hdrs(buf, cap, &rt, h);
	if (hdr < 0) {
		dev->ops->tx_send(dev->port, buf, 0);	/* give the buffer back */
		return hdr;
	}
	if (h->payload_len) {
		if (lin)
			memcpy((__u8 *)buf + hdr, lin, h->payload_len);
		else
			sg_copy(sg, nsge, sg_off, (__u8 *)buf + hdr, h->payload_len, false);
	}
	mroce_frame_finish(buf, (__u32)hdr + h->payload_len, rt.family);
	dev->stats.tx_pkts++;
	dev->stats.tx_bytes += (__u32)hdr + h->payload_len;
	mroce_dev_xmit(dev, buf, (__u32)hdr + h->payload_len);
	return 0;
}

/* Rebuild the packet of a PSN from its record and send it. */
static int send_psn(struct mroce_qp *qp, __u32 psn, struct mroce_txpkt *rec, bool resend)
{
	struct mroce_hdr h = { .psn = psn };
	const struct mroce_sge *sg = NULL;
	const void *lin = NULL;
	__u32 nsge = 0;

	if (rec->wqe & PKT_RJOB) {
		struct mroce_rjob *j = &qp->rjobs[rec->wqe & ~PKT_RJOB];
		__u32 off = j->base + rec->offset;

		h.opcode = MROCE_OP_READ_RESP;
		h.msn = j->msn;
		h.msg_len = j->msg_len;
		h.offset = off;
		h.payload_len = rec->len;
		h.flags = (off == 0 ? MROCE_F_FIRST : 0) |
			  (off + rec->len == j->msg_len ? MROCE_F_LAST : 0);
		lin = j->src + rec->offset;
	} else {
		struct mroce_swqe *w = SWQE(qp, rec->wqe);

		h.opcode = w->opcode;
		h.msn = w->msn;
		h.raddr = w->raddr;
		h.rkey = w->rkey;
		h.imm = w->imm;
		h.msg_len = w->len;
		if (w->opcode == MROCE_OP_READ_REQ) {
			h.offset = 0;
			h.rd_len = w->len;
		} else {
			h.offset = rec->offset;
			h.payload_len = rec->len;
			h.flags = (rec->offset == 0 ? MROCE_F_FIRST : 0) |
				  (rec->offset + rec->len == w->len ? MROCE_F_LAST : 0);
			if (h.flags & MROCE_F_LAST && w->flags & MROCE_SEND_SOLICITED)
				h.flags |= MROCE_F_SOLICITED;
			sg = w->sge;
			nsge = w->num_sge;
		}
	}
	if (resend)
		h.flags |= MROCE_F_RETX;
	if (emit(qp, &h, sg, nsge, rec->offset, lin, rec->path))
		return -EAGAIN;
	qp->st.tx_pkts++;
	qp->st.retx_pkts += resend;
	return 0;
}

static __u8 pick_path(struct mroce_qp *qp)
{
	__u8 p = (__u8)(qp->next_path % qp->attr.paths);

	qp->next_path++;
	return p;
}

/* Packets a READ response needs (a zero-length one still sends one). */
static __u32 rjob_pkts(const struct mroce_qp *qp, const struct mroce_rjob *j)
{
	return j->len ? (j->len + qp->payload_max - 1) / qp->payload_max : 1;
}

/* Next request bytes to packetise: a READ response first, then the send queue. */
static bool next_new(struct mroce_qp *qp, __u32 *wqe, __u32 *off, __u32 *len)
{
	for (__u32 n = 0; n < MROCE_READ_JOBS; n++) {
		__u32 i = (qp->rjob_next + n) % MROCE_READ_JOBS;
		struct mroce_rjob *j = &qp->rjobs[i];

		if (!j->used || j->emitted == rjob_pkts(qp, j))
			continue;
		*wqe = PKT_RJOB | i;
		*off = j->sent;
		*len = j->len - j->sent < qp->payload_max ? j->len - j->sent : qp->payload_max;
		return true;
	}
	while (qp->sq_next != qp->sq_tail) {
		struct mroce_swqe *w = SWQE(qp, qp->sq_next);

		if (w->done || w->emitted == w->npkts) {
			qp->sq_next++;
			continue;
		}
		*wqe = qp->sq_next;
		*off = w->sent;
		*len = w->opcode == MROCE_OP_READ_REQ ? 0 :
		       w->len - w->sent < qp->payload_max ? w->len - w->sent : qp->payload_max;
		return true;
	}
	return false;
}

static void fail_wqe_of(struct mroce_qp *qp, struct mroce_txpkt *rec, enum mroce_wc_status st)
{
	if (!(rec->wqe & PKT_RJOB)) {
		struct mroce_swqe *w = SWQE(qp, rec->wqe);

		w->done = 1;
		w->status = (__u8)st;
	}
	mroce_qp_fail(qp, st);
}

/* Packets the QP may have in flight: the BDP cap, or less while congestion control says so. */
static __u32 qp_window(const struct mroce_qp *qp)
{
	__u32 cw = qp->cwnd_x256 / 256;

	if (!qp->attr.cc_ecn && !qp->attr.cc_delay)
		return qp->attr.max_inflight;
	return cw < 1 ? 1 : cw < qp->attr.max_inflight ? cw : qp->attr.max_inflight;
}

static int qp_tx(struct mroce_qp *qp, __u64 now)
{
	int sent = 0;

	if (qp->state != MROCE_QPS_RTS || now < qp->rnr_until_us)
		return 0;
	/* Retransmissions first: they hold the window back. */
	for (__u32 psn = qp->snd_una; qp->nlost && psn != qp->snd_nxt && sent < TX_BURST; psn++) {
		struct mroce_txpkt *rec = PKT(qp, psn);

		if (rec->state != PKT_LOST)
			continue;
		if (!rec->gbn && rec->retx >= qp->attr.retry_cnt) {
			fail_wqe_of(qp, rec, MROCE_WC_RETRY_EXC_ERR);
			return sent;
		}
		/*
		 * Resend on another path: first on the one that last delivered a
		 * first transmission, known to work lately; if that fails too,
		 * on each next slot in turn, so that retries reach every path
		 * rather than bounce between two that may share a dead route.
		 */
		rec->path = !rec->retx && qp->good_path != rec->path && qp->good_path < qp->attr.paths ?
			    qp->good_path : (__u8)((rec->path + 1) % qp->attr.paths);
		if (send_psn(qp, psn, rec, true))
			return sent;	/* no transmit buffer now: still lost, tried next round */
		qp->paths[rec->path].sent++;
		rec->entropy = qp->paths[rec->path].entropy;
		if (!rec->gbn)
			rec->retx++;
		rec->gbn = 0;
		rec->state = PKT_INFLIGHT;
		rec->sent_us = now;
		rec->tx_seq = qp->tx_seq++;
		qp->nlost--;
		if (psn == qp->snd_una && rec->retx &&
		    (!qp->rack_timer_us || head_due(qp, rec) < qp->rack_timer_us))
			qp->rack_timer_us = head_due(qp, rec);
		qp->dev->stats.retx_pkts++;
		sent++;
	}
	while (sent < TX_BURST && qp->snd_nxt - qp->snd_una < qp_window(qp)) {
		struct mroce_txpkt *rec;
		__u32 wqe, off, len;

		if (!next_new(qp, &wqe, &off, &len))
			break;
		rec = PKT(qp, qp->snd_nxt);
		*rec = (struct mroce_txpkt){ .wqe = wqe, .offset = off, .len = (__u16)len,
					     .state = PKT_INFLIGHT, .path = pick_path(qp),
					     .sent_us = now, .tx_seq = qp->tx_seq };
		if (send_psn(qp, qp->snd_nxt, rec, false)) {
			rec->state = PKT_FREE;
			break;
		}
		qp->paths[rec->path].sent++;
		rec->entropy = qp->paths[rec->path].entropy;
		if (qp->snd_nxt == qp->snd_una)
			qp->last_progress_us = now;	/* the timer starts with the first packet */
		qp->snd_nxt++;
		qp->tx_seq++;
		if (wqe & PKT_RJOB) {
			struct mroce_rjob *j = &qp->rjobs[wqe & ~PKT_RJOB];

			j->sent += len;
			j->emitted++;
			qp->rjob_next = (wqe & ~PKT_RJOB) + 1;
		} else {
			struct mroce_swqe *w = SWQE(qp, wqe);

			if (!w->emitted)
				w->first_psn = qp->snd_nxt - 1;
			w->sent += len;
			w->emitted++;
		}
		sent++;
	}
	return sent;
}

/*
 * ACKs are sprayed too, round robin over at least MROCE_ACK_PATHS source
 * ports: on one fixed path, a failure of that path would silence every ACK
 * and fail the sender's QP although data still gets through. Each ACK
 * repeats the whole SACK state, so losing a share of them costs little.
 */
static __u8 ack_path(struct mroce_qp *qp)
{
	__u32 n = qp->attr.paths > MROCE_ACK_PATHS ? qp->attr.paths : MROCE_ACK_PATHS;

	return (__u8)(qp->ack_path++ % n);
}

static void send_ack(struct mroce_qp *qp)
{
	const struct mroce_flow *f = qp->flow;
	struct mroce_hdr h = { .opcode = MROCE_OP_ACK, .psn = qp->snd_nxt };
	__u32 base = f->rx_base;

	h.cum_psn = base;
	for (__u32 i = 0; i < 64 * MROCE_SACK_WORDS; i++)
		if (mroce_rxwin_check(f, base + 1 + i) == MROCE_RXWIN_DUP)
			h.sack[i / 64] |= 1ULL << (i % 64);
	h.ts_echo = qp->ts_echo;
	h.path = qp->echo_path;
	h.ecn_ce = qp->ecn_ce;
	h.ecn_pkts = qp->ecn_pkts;
	if (qp->ecn_ce)
		h.flags |= MROCE_F_ECN_ECHO;
	h.ack_msn = qp->rq_head;
	h.rwnd = MROCE_RXWIN_PSNS;
	if (emit(qp, &h, NULL, 0, 0, NULL, ack_path(qp)))
		return;	/* no TX buffer: the ACK stays due */
	qp->dev->stats.acks_tx++;
	qp->unacked = 0;
	qp->ack_due_us = 0;
	qp->ack_now = false;
	qp->ecn_ce = qp->ecn_pkts = 0;
}

static void send_nack(struct mroce_qp *qp, __u8 code, __u32 psn, __u32 msn)
{
	struct mroce_hdr h = { .opcode = MROCE_OP_NACK, .psn = qp->snd_nxt, .nak_code = code,
			       .nak_psn = psn, .nak_msn = msn };

	if (!emit(qp, &h, NULL, 0, 0, NULL, ack_path(qp)))
		qp->dev->stats.nacks_tx++;
}

/* ---- completions --------------------------------------------------------- */

static void complete_sq(struct mroce_qp *qp)
{
	bool ordered = qp->attr.order == MROCE_ORDERED;

	for (__u32 i = qp->sq_head; i != qp->sq_next && qp->state == MROCE_QPS_RTS; i++) {
		struct mroce_swqe *w = SWQE(qp, i);
		struct mroce_wc wc = { .wr_id = w->wr_id, .qp_num = qp->qpn };

		if (!w->done) {
			if (ordered)
				break;
			continue;
		}
		if (w->reported)
			continue;
		if (w->status) {
			mroce_qp_fail(qp, (enum mroce_wc_status)w->status);
			return;
		}
		wc.status = MROCE_WC_SUCCESS;
		wc.opcode = mroce_send_wc_opcode(w->opcode);
		wc.byte_len = w->len;
		mroce_cq_push(qp->send_cq, &wc);
		w->reported = 1;
	}
	while (qp->sq_head != qp->sq_next && SWQE(qp, qp->sq_head)->reported)
		qp->sq_head++;
	/* Requests failed at posting (local protection) complete in their turn. */
	while (qp->state == MROCE_QPS_RTS && qp->sq_head != qp->sq_tail) {
		struct mroce_swqe *w = SWQE(qp, qp->sq_head);

		if (!(w->done && w->status && qp->sq_head == qp->sq_next))
			break;
		mroce_qp_fail(qp, (enum mroce_wc_status)w->status);
	}
}

static void report_recv(struct mroce_qp *qp, struct mroce_msgslot *m)
{
	struct mroce_rwqe *r = RWQE(qp, m->msn);
	struct mroce_wc wc = { .wr_id = r->wr_id, .qp_num = qp->qpn, .byte_len = m->len };

	wc.opcode = m->opcode == MROCE_OP_WRITE_IMM ? MROCE_WC_RECV_RDMA_WITH_IMM : MROCE_WC_RECV;
	if (m->opcode != MROCE_OP_SEND) {
		wc.wc_flags = MROCE_WC_WITH_IMM;
		wc.imm_data = m->imm;
	}
	mroce_cq_push(qp->recv_cq, &wc);
	r->reported = 1;
}

/*
 * Receive completions. Ordered: in message order, and only once every PSN
 * up to the message's last one is placed (so an earlier WRITE is visible
 * before a later SEND completes). Unordered: as soon as a message is whole.
 */
static void complete_rq(struct mroce_qp *qp)
{
	__u32 base = qp->flow->rx_base;

	while (qp->rq_head != qp->rq_tail) {
		struct mroce_msgslot *m = MSG(qp, qp->rq_head);
		struct mroce_rwqe *r = RWQE(qp, qp->rq_head);

		if (!r->reported) {
			if (m->state != MSG_WHOLE || m->msn != qp->rq_head)
				break;
			if (qp->attr.order == MROCE_ORDERED && !psn_before(m->max_psn, base))
				break;
			report_recv(qp, m);
		}
		if (m->msn == qp->rq_head)
			m->state = MSG_FREE;
		qp->rq_head++;
	}
}

/* ---- receive: placement -------------------------------------------------- */

/* Is [addr, addr + len) inside mr? Written so that nothing can overflow. */
static bool mr_covers(const struct mroce_mr *mr, __u64 addr, __u64 len)
{
	__u64 start = (__u64)(unsigned long)mr->addr;

	return addr >= start && addr - start <= mr->length && len <= mr->length - (addr - start);
}

/* Start or continue tracking a receive-consuming message; NULL means RNR. */
static struct mroce_msgslot *msg_slot(struct mroce_qp *qp, const struct mroce_hdr *h, __u32 psn)
{
	struct mroce_msgslot *m = MSG(qp, h->msn);

	if (!psn_before(h->msn, qp->rq_tail) || psn_before(h->msn, qp->rq_head))
		return NULL;
	if (m->state == MSG_FREE) {
		*m = (struct mroce_msgslot){ .msn = h->msn, .len = h->msg_len, .max_psn = psn,
					     .imm = h->imm, .opcode = h->opcode, .state = MSG_ACTIVE };
	} else if (m->msn != h->msn) {
		return NULL;	/* cannot happen with the window bound; be safe */
	}
	if (psn_before(m->max_psn, psn))
		m->max_psn = psn;
	return m;
}

static void msg_account(struct mroce_qp *qp, struct mroce_msgslot *m, __u32 bytes)
{
	m->got += bytes;
	if (m->got == m->len && m->state == MSG_ACTIVE) {
		m->state = MSG_WHOLE;
		if (qp->attr.order == MROCE_UNORDERED)
			report_recv(qp, m);
	}
}

static int place_write(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload,
		       __u32 psn)
{
	struct mroce_mr *mr = mroce_mr_by_rkey(qp->dev, h->rkey);
	struct mroce_msgslot *m = NULL;
	__u64 target = h->raddr + h->offset;

	if (h->opcode == MROCE_OP_WRITE_IMM) {
		m = msg_slot(qp, h, psn);
		if (!m)
			return RNR;
	}
	if (h->msg_len) {
		if (!mr || !(mr->access & MROCE_ACCESS_REMOTE_WRITE) || target < h->raddr ||
		    !mr_covers(mr, h->raddr, h->msg_len))
			return MROCE_NAK_REMOTE_ACCESS;
		memcpy((__u8 *)(unsigned long)target, payload, h->payload_len);
	}
	if (m)
		msg_account(qp, m, h->payload_len);
	return PLACED;
}

static int place_send(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload,
		      __u32 psn)
{
	struct mroce_msgslot *m = msg_slot(qp, h, psn);
	struct mroce_rwqe *r;

	if (!m)
		return RNR;
	r = RWQE(qp, h->msn);
	if (h->msg_len > r->len) {
		/* The receive buffer is too small: its owner sees a length error. */
		struct mroce_wc wc = { .wr_id = r->wr_id, .qp_num = qp->qpn,
				       .status = MROCE_WC_LOC_LEN_ERR, .opcode = MROCE_WC_RECV };

		if (!r->reported) {
			mroce_cq_push(qp->recv_cq, &wc);
			r->reported = 1;
		}
		return MROCE_NAK_INVALID_REQ;
	}
	sg_copy(r->sge, r->num_sge, h->offset, (void *)payload, h->payload_len, true);
	msg_account(qp, m, h->payload_len);
	return PLACED;
}

static int place_read_req(struct mroce_qp *qp, const struct mroce_hdr *h)
{
	struct mroce_mr *mr = mroce_mr_by_rkey(qp->dev, h->rkey);
	__u64 src = h->raddr + h->offset;

	if (h->rd_len && (!mr || !(mr->access & MROCE_ACCESS_REMOTE_READ) || src < h->raddr ||
			  !mr_covers(mr, src, h->rd_len)))
		return MROCE_NAK_REMOTE_ACCESS;
	for (__u32 i = 0; i < MROCE_READ_JOBS; i++) {
		struct mroce_rjob *j = &qp->rjobs[i];

		if (j->used)
			continue;
		*j = (struct mroce_rjob){ .src = (const __u8 *)(unsigned long)src, .msn = h->msn,
					  .msg_len = h->msg_len, .base = h->offset, .len = h->rd_len,
					  .used = true };
		return PLACED;
	}
	return NOT_NOW;
}

static void pkt_acked(struct mroce_qp *qp, struct mroce_txpkt *rec, __u64 now);

/*
 * A READ is finished once all of its response is placed and its request is
 * acknowledged: no in-flight record may still point at an SQ entry that
 * completion is about to recycle.
 */
static void read_maybe_done(struct mroce_swqe *w)
{
	if (!w->done && w->rd_seen && w->rd_got == w->len && w->acked == w->npkts) {
		w->done = 1;
		w->status = MROCE_WC_SUCCESS;
	}
}

static int place_read_resp(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload)
{
	struct mroce_swqe *w = SWQE(qp, h->msn);

	/* Must name a READ of ours that is still waiting, and stay inside it. */
	if (psn_before(h->msn, qp->sq_head) || !psn_before(h->msn, qp->sq_tail) ||
	    w->opcode != MROCE_OP_READ_REQ || w->msn != h->msn || w->done || h->msg_len != w->len)
		return MROCE_NAK_INVALID_REQ;
	sg_copy(w->sge, w->num_sge, h->offset, (void *)payload, h->payload_len, true);
	w->rd_got += h->payload_len;
	w->rd_seen = 1;
	/* A response proves the request arrived: count it acknowledged now. */
	if (!w->acked && w->emitted && !psn_before(w->first_psn, qp->snd_una)) {
		struct mroce_txpkt *rec = PKT(qp, w->first_psn);

		if ((rec->state == PKT_INFLIGHT || rec->state == PKT_LOST) && rec->wqe == h->msn)
			pkt_acked(qp, rec, qp->dev->ops->now_us(qp->dev->port));
	}
	read_maybe_done(w);
	return PLACED;
}

/* ---- receive: acknowledgements ------------------------------------------ */

/*
 * First acknowledgement of a PSN. A first transmission whose path slot
 * still holds the same entropy value is an RTT sample for that path (Karn:
 * a resend's sample could belong to either copy).
 */
static void pkt_acked(struct mroce_qp *qp, struct mroce_txpkt *rec, __u64 now)
{
	struct mroce_path *p = &qp->paths[rec->path];

	qp->st.acked_bytes += rec->len;
	if (!rec->retx && !rec->gbn && p->entropy == rec->entropy && now >= rec->sent_us) {
		__u32 rtt = (__u32)(now - rec->sent_us);

		p->srtt_us = p->srtt_us ? (7 * p->srtt_us + rtt) / 8 : rtt;
		p->samples++;
		qp->good_path = rec->path;
	}
	/* Newest transmission known delivered (for a resent packet, assume its last copy). */
	if ((__s32)(rec->tx_seq - qp->rack_seq) > 0 || !qp->rack_sent_us) {
		qp->rack_seq = rec->tx_seq;
		qp->rack_sent_us = rec->sent_us;
	}
	if (rec->state == PKT_LOST)
		qp->nlost--;
	rec->state = PKT_SACKED;
	if (rec->wqe & PKT_RJOB) {
		struct mroce_rjob *j = &qp->rjobs[rec->wqe & ~PKT_RJOB];

		if (++j->acked == rjob_pkts(qp, j))
			j->used = false;
	} else {
		struct mroce_swqe *w = SWQE(qp, rec->wqe);

		if (++w->acked == w->npkts && w->opcode != MROCE_OP_READ_REQ && !w->done) {
			w->done = 1;
			w->status = MROCE_WC_SUCCESS;
		} else if (w->opcode == MROCE_OP_READ_REQ) {
			read_maybe_done(w);
		}
	}
}

/*
 * IRN's two timeouts: a low one while few packets are in flight (a tail loss
 * has nothing behind it to reveal it), a high one otherwise; never below a
 * few measured RTTs, since a software path's RTT varies far more than a NIC's.
 */
static __u32 rto_base(const struct mroce_qp *qp, __u32 inflight)
{
	__u32 rto = inflight < 3 ? qp->attr.rto_low_us : qp->attr.rto_high_us;

	return rto > 3 * qp->srtt_us ? rto : 3 * qp->srtt_us;
}

/*
 * Congestion control, once per RTT (an epoch): DCTCP cuts the window by half
 * the moving fraction of CE-marked packets; Swift-like delay control cuts it
 * in proportion to how far the RTT overshoots a target. Without a cut the
 * window grows by one packet per RTT, up to the BDP cap.
 */
static void cc_on_ack(struct mroce_qp *qp, const struct mroce_hdr *h, __u32 rtt, __u64 now)
{
	__u32 cw = qp->cwnd_x256, floor = 2 * 256, cap = qp->attr.max_inflight * 256;
	bool cut = false;

	qp->cc_ce += h->ecn_ce;
	qp->cc_pkts += h->ecn_pkts;

	if (rtt > qp->cc_rtt_max)
		qp->cc_rtt_max = rtt;
	if (now - qp->cc_epoch_us < (qp->srtt_us > 20 ? qp->srtt_us : 20))
		return;
	if (qp->attr.cc_ecn && qp->cc_pkts) {
		__u32 frac = qp->cc_ce * 1024 / qp->cc_pkts;

		qp->alpha_x1024 = qp->alpha_x1024 - qp->alpha_x1024 / 16 + frac / 16;
		if (qp->cc_ce) {
			cw = (__u32)((__u64)cw * (2048 - qp->alpha_x1024) / 2048);
			cut = true;
		}
	}
	if (qp->attr.cc_delay && qp->cc_rtt_max) {
		__u32 base = qp->min_rtt_us ? qp->min_rtt_us : qp->cc_rtt_max;
		__u32 target = qp->attr.target_delay_us ? qp->attr.target_delay_us :
			       3 * base > 50 ? 3 * base : 50;

		if (qp->cc_rtt_max > target) {
			__u32 over = (qp->cc_rtt_max - target) * 1024 / qp->cc_rtt_max;

			/* at most halve per RTT */
			cw = (__u32)((__u64)cw * (1024 - (over > 512 ? 512 : over)) / 1024);
			cut = true;
		}
	}
	if (cut) {
		qp->dev->stats.cc_cuts++;
		qp->st.cc_cuts++;
	}
	else
		cw += 256;
	qp->cwnd_x256 = cw < floor ? floor : cw > cap ? cap : cw;
	qp->cc_ce = qp->cc_pkts = qp->cc_rtt_max = 0;
	qp->cc_epoch_us = now;
}

/*
 * Holes, judged by transmission order and time (RACK, RFC 8985), not PSN: a
 * packet is lost once something transmitted after it (or with it) has been
 * delivered and an RTT plus a reordering allowance has passed since it was
 * sent. The allowance grows with the RTT's deviation, which is what
 * spraying over paths of different delay produces; nothing waits for three
 * duplicate ACKs; a retransmission is judged only by what was sent after it.
 * Runs on every ACK and, for holes not yet ripe, on a timer.
 */
/*
 * The head of the window, once resent, can only be proven lost again by
 * something transmitted after it; with the window full, nothing is. So it
 * gets a timer of its own, two RTTs plus the reordering allowance after its
 * last copy, doubling with each resend (retry_cnt still bounds how often):
 * waiting for the RTO instead would resend the whole window, most of it
 * already delivered beyond what one SACK bitmap can tell.
 */
static __u64 head_due(const struct mroce_qp *qp, const struct mroce_txpkt *rec)
{
	__u32 base = 2 * qp->srtt_us + 4 * qp->rttvar_us + 20;

	return rec->sent_us + ((__u64)base << (rec->retx > 10 ? 10 : rec->retx - 1));
}

static void head_timer(struct mroce_qp *qp, __u64 now)
{
	struct mroce_txpkt *rec = PKT(qp, qp->snd_una);
	__u64 due;

	if (qp->snd_una == qp->snd_nxt || rec->state != PKT_INFLIGHT || !rec->retx || rec->gbn)
		return;
	due = head_due(qp, rec);
	if (now >= due) {
		rec->state = PKT_LOST;
		qp->nlost++;
	} else if (!qp->rack_timer_us || due < qp->rack_timer_us) {
		qp->rack_timer_us = due;
	}
}

static void rack_detect(struct mroce_qp *qp, __u64 now)
{
	__u32 thresh = qp->srtt_us + 4 * qp->rttvar_us + 20;

	qp->rack_timer_us = 0;
	head_timer(qp, now);
	if (!qp->have_sack)
		return;
	for (__u32 psn = qp->snd_una; psn_before(psn, qp->high_sacked); psn++) {
		struct mroce_txpkt *rec = PKT(qp, psn);

		if (rec->state != PKT_INFLIGHT || (__s32)(qp->rack_seq - rec->tx_seq) <= 0)
			continue;
		if (now >= rec->sent_us + thresh &&
		    (qp->rack_seq - rec->tx_seq >= qp->attr.reorder_pkts ||
		     qp->rack_sent_us + qp->srtt_us / 2 >= rec->sent_us)) {
			rec->state = PKT_LOST;
			if (qp->paths[rec->path].entropy == rec->entropy)
				qp->paths[rec->path].lost++;	/* a retired value is history */
			qp->nlost++;
		} else if (!qp->rack_timer_us || rec->sent_us + thresh < qp->rack_timer_us) {
			qp->rack_timer_us = rec->sent_us + thresh;
		}
	}
	path_scoreboard(qp, now);
}

static void handle_ack(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now)
{
	__u32 cum = h->cum_psn, inflight;
	bool progress = false;

	qp->dev->stats.acks_rx++;
	/* Ignore what acknowledges PSNs we never sent. */
	if (psn_before(qp->snd_nxt, cum))
		return;
	/* Marks count for the path scoreboard whether or not congestion control is on. */
	qp->st.ecn_ce += h->ecn_ce;
	if (h->ecn_ce && h->path < qp->attr.paths)
		qp->paths[h->path].marks += h->ecn_ce;
	for (; psn_before(qp->snd_una, cum); qp->snd_una++) {
		struct mroce_txpkt *rec = PKT(qp, qp->snd_una);

		if (rec->state == PKT_INFLIGHT || rec->state == PKT_LOST)
			pkt_acked(qp, rec, now);
		rec->state = PKT_FREE;
		progress = true;
	}
	for (__u32 i = 0; i < 64 * MROCE_SACK_WORDS; i++) {
		__u32 psn = cum + 1 + i;
		struct mroce_txpkt *rec;

		if (!(h->sack[i / 64] >> (i % 64) & 1))
			continue;
		if (!psn_before(psn, qp->snd_nxt))
			break;
		/*
		 * A late ACK (they take different paths) may name PSNs already
		 * behind snd_una, whose ring slots now hold PSNs 1024 later: those
		 * must not be taken as delivered.
		 */
		if (psn_before(psn, qp->snd_una))
			continue;
		rec = PKT(qp, psn);
		if (rec->state == PKT_INFLIGHT || rec->state == PKT_LOST) {
			pkt_acked(qp, rec, now);
			progress = true;
		}
		if (!qp->have_sack || psn_before(qp->high_sacked, psn)) {
			qp->high_sacked = psn;
			qp->have_sack = true;
		}
	}
	if (qp->have_sack && psn_before(qp->high_sacked, qp->snd_una))
		qp->have_sack = false;
	/*
	 * An RTT sample only from an ACK that acknowledges something new: one
	 * sent again for a duplicate echoes the newest packet's time, which may
	 * be long past while the sender only resends, and would inflate the RTT
	 * until loss detection waits for ever.
	 */
	if (h->ts_echo && progress) {
		__u32 rtt = (__u32)now - h->ts_echo;

		if (rtt < 10000000) {
			__u32 dev_us = rtt > qp->srtt_us ? rtt - qp->srtt_us : qp->srtt_us - rtt;

			qp->rttvar_us = qp->srtt_us ? (3 * qp->rttvar_us + dev_us) / 4 : rtt / 2;
			qp->srtt_us = qp->srtt_us ? (7 * qp->srtt_us + rtt) / 8 : rtt;
			if (!qp->min_rtt_us || rtt < qp->min_rtt_us)
				qp->min_rtt_us = rtt;
			if (qp->attr.cc_ecn || qp->attr.cc_delay)
				cc_on_ack(qp, h, rtt, now);
		}
	}
	inflight = qp->snd_nxt - qp->snd_una;
	if (progress) {
		qp->last_progress_us = now;
		qp->rto_us = rto_base(qp, inflight);
		qp->rnr_count = 0;
		qp->timeouts = 0;
	}
	rack_detect(qp, now);
}

static void handle_nack(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now)
{
	__u32 psn = h->nak_psn;
	struct mroce_txpkt *rec;

	qp->dev->stats.nacks_rx++;
	if (psn_before(psn, qp->snd_una) || !psn_before(psn, qp->snd_nxt))
		return;	/* stale */
	rec = PKT(qp, psn);
	switch (h->nak_code) {
	case MROCE_NAK_REMOTE_ACCESS:
		fail_wqe_of(qp, rec, MROCE_WC_REM_ACCESS_ERR);
		break;
	case MROCE_NAK_INVALID_REQ:
		fail_wqe_of(qp, rec, MROCE_WC_REM_INV_REQ_ERR);
		break;
	case MROCE_NAK_REMOTE_OP:
		fail_wqe_of(qp, rec, MROCE_WC_REM_OP_ERR);
		break;
	case MROCE_NAK_RNR:
		if (++qp->rnr_count > qp->attr.rnr_retry) {
			fail_wqe_of(qp, rec, MROCE_WC_RNR_RETRY_EXC_ERR);
			break;
		}
		if (rec->state == PKT_INFLIGHT) {
			rec->state = PKT_LOST;
			rec->retx = 0;	/* RNR waits are counted by rnr_retry, not retry_cnt */
			qp->nlost++;
		}
		qp->rnr_until_us = now + qp->attr.rnr_timer_us;
		break;
	case MROCE_NAK_PSN_SEQ:
		/* Go-back-N: everything from the gap on is resent; only the gap counts as a retry. */
		for (__u32 p = psn; psn_before(p, qp->snd_nxt); p++) {
			struct mroce_txpkt *r = PKT(qp, p);

			if (r->state == PKT_INFLIGHT) {
				r->state = PKT_LOST;
				r->gbn = p != psn;
				qp->nlost++;
			}
		}
		break;
	default:
		break;
	}
}

/* ---- receive: entry point ------------------------------------------------ */

void mroce_engine_rx(void *ctx, const void *frame, __u32 len)
{
	struct mroce_dev *dev = ctx;
	struct mroce_pkt pkt;
	struct mroce_hdr h;
	struct mroce_qp *qp;
	struct mroce_flow *f;
	__u64 now = dev->ops->now_us(dev->port);
	__u32 qpn, psn;
	int v, res;

	dev->stats.rx_pkts++;
	dev->stats.rx_bytes += len;
	if (mroce_parse(frame, (const __u8 *)frame + len, dev->udp_port, &pkt) != MROCE_STAT_RX ||
	    !mroce_frame_csum_ok(frame, &pkt)) {
		dev->stats.bad_pkts++;
		return;
	}
	qpn = mroce_be32(pkt.bth->dqpn);
	qp = qpn < MROCE_MAX_QPS ? dev->qps[qpn] : NULL;
	if (!qp || qp->state != MROCE_QPS_RTS || pkt.bth->token != qp->token_be) {
		dev->stats.bad_pkts++;
		return;
	}
	mroce_hdr_decode(&pkt, &h);
	if (h.opcode == MROCE_OP_ACK) {
		handle_ack(qp, &h, now);
		return;
	}
	if (h.opcode == MROCE_OP_NACK) {
		handle_nack(qp, &h, now);
		return;
	}

	f = qp->flow;
	psn = h.psn;
	v = mroce_rxwin_check(f, psn);
	if (v == MROCE_RXWIN_DUP) {
		dev->stats.dup_pkts++;
		qp->ack_now = true;	/* our ACK may have been lost */
		return;
	}
	if (v == MROCE_RXWIN_BEYOND) {
		dev->stats.rx_dropped_window++;
		send_nack(qp, MROCE_NAK_OUT_OF_WINDOW, psn, h.msn);
		return;
	}
	if (psn != f->rx_base) {
		dev->stats.ooo_pkts++;
		if (qp->attr.go_back_n) {
			if (!qp->gbn_nak_sent || qp->gbn_nak_psn != f->rx_base) {
				send_nack(qp, MROCE_NAK_PSN_SEQ, f->rx_base, 0);
				qp->gbn_nak_psn = f->rx_base;
				qp->gbn_nak_sent = true;
			}
			return;
		}
	}
	qp->ecn_pkts++;
	qp->ecn_ce += pkt.ecn == 3;
	dev->stats.ecn_ce_rx += pkt.ecn == 3;
	qp->ts_echo = h.ts;
	qp->echo_path = h.path;

	switch (h.opcode) {
	case MROCE_OP_WRITE:
	case MROCE_OP_WRITE_IMM:
		res = place_write(qp, &h, pkt.payload, psn);
		break;
	case MROCE_OP_SEND:
	case MROCE_OP_SEND_IMM:
		res = place_send(qp, &h, pkt.payload, psn);
		break;
	case MROCE_OP_READ_REQ:
		res = place_read_req(qp, &h);
		break;
	case MROCE_OP_READ_RESP:
		res = place_read_resp(qp, &h, pkt.payload);
		break;
	default:
		res = MROCE_NAK_INVALID_REQ;
		break;
	}
	if (res == NOT_NOW)
		return;
	if (res == RNR) {
		send_nack(qp, MROCE_NAK_RNR, psn, h.msn);
		return;
	}
	if (res > 0) {
		/*
		 * A request refused for good (bad key, range, rights; malformed):
		 * NACK it, and stop this QP as an InfiniBand responder does, so
		 * that requests already in flight behind it do not touch memory.
		 */
		send_nack(qp, (__u8)res, psn, h.msn);
		dev->ops->tx_flush(dev->port);
		mroce_qp_fail(qp, MROCE_WC_WR_FLUSH_ERR);
		return;
	}

	/* Placed (or refused for good): only now does the PSN count as received. */
	mroce_rxwin_mark(f, psn);
	mroce_rxwin_advance(f);
	qp->gbn_nak_sent = false;
	/*
	 * The last packet of a message is acknowledged at once: its sender
	 * waits on it. So is a CE-marked one (as a DCTCP receiver does): each
	 * ACK then carries at most one mark, on the packet whose path slot it
	 * echoes, and the sender can charge marks to paths.
	 */
	if (pkt.ecn == 3) {
		qp->unacked++;
		qp->ack_now = true;	/* stays due if no transmit buffer is free now */
		send_ack(qp);		/* now, before another packet changes the slot it echoes */
	} else if (++qp->unacked >= qp->attr.ack_every || (h.flags & (MROCE_F_ACK_REQ | MROCE_F_LAST)) ||
		   qp->attr.go_back_n) {
		qp->ack_now = true;
	}
	else if (!qp->ack_due_us)
		qp->ack_due_us = now + qp->attr.ack_delay_us;
}

/* Send an ACK that is still owed (before a QP goes away). dev->lock held. */
void mroce_qp_flush_ack(struct mroce_qp *qp)
{
	if (qp->state == MROCE_QPS_RTS && (qp->ack_now || qp->ack_due_us || qp->unacked)) {
		send_ack(qp);
		qp->dev->ops->tx_flush(qp->dev->port);
	}
}

/* ---- one round ----------------------------------------------------------- */

/* Replace a path's entropy value with a fresh one no other slot holds. */
static void path_retire(struct mroce_qp *qp, struct mroce_path *p)
{
	bool used;

	do {
		qp->next_entropy = (__u16)((qp->next_entropy + 1) % MROCE_ENTROPY_SPACE);
		used = false;
		for (__u32 k = 0; k < qp->attr.paths; k++)
			used |= qp->paths[k].entropy == qp->next_entropy;
	} while (used);
	p->entropy = qp->next_entropy;
	p->sent = p->lost = p->samples = p->srtt_us = p->marks = 0;
	qp->dev->stats.paths_retired++;
	qp->st.paths_retired++;
}

/*
 * Path scoreboard: a path slot is retired at once and given a fresh entropy
 * value, so ECMP hashes it onto another route (as Ultra Ethernet rotates
 * entropy and SRD steers around bad paths), when this epoch it
 *  - lost a quarter or more of what it carried (at least 3 packets, as SACK
 *    holes prove): a dead or lossy route;
 *  - or, at the epoch's end, has a smoothed RTT more than twice the best
 *    slot's plus 100 us over at least 4 samples: a congested or slow route;
 *  - or, at the epoch's end, had at least 4 of its packets come back
 *    CE-marked, a marked fraction more than twice the QP's: a route whose
 *    queue builds while the others' do not.
 *    Both relative, so a fabric slow or marking everywhere (incast) retires
 *    nothing, and paths of different but sane delays are all kept.
 * Epochs last a few RTTs; counts start over with each.
 */
static void path_scoreboard(struct mroce_qp *qp, __u64 now)
{
	__u32 epoch = 4 * qp->srtt_us > 200 ? 4 * qp->srtt_us : 200, best = 0, marks = 0, sent = 0;
	bool new_epoch;

	if (qp->attr.paths < 2 || qp->attr.static_paths)
		return;
	new_epoch = now - qp->path_epoch_us >= epoch;
	if (new_epoch)
		for (__u32 i = 0; i < qp->attr.paths; i++) {
			if (qp->paths[i].samples >= 4 && (!best || qp->paths[i].srtt_us < best))
				best = qp->paths[i].srtt_us;
			marks += qp->paths[i].marks;
			sent += qp->paths[i].sent;
		}
	for (__u32 i = 0; i < qp->attr.paths; i++) {
		struct mroce_path *p = &qp->paths[i];

		if (p->lost >= 3 && p->lost * 4 >= p->sent) {
			path_retire(qp, p);
		} else if (new_epoch) {
			if ((best && p->samples >= 4 && p->srtt_us > 2 * best + 100) ||
			    (p->marks >= 4 && (__u64)p->marks * sent > 2ULL * marks * p->sent))
				path_retire(qp, p);
			else
				p->sent = p->lost = p->samples = p->marks = 0;
		}
	}
	if (new_epoch)
		qp->path_epoch_us = now;
}

/* Fill in what mroce_qp_query_stats and the flows map report. dev->lock held. */
void mroce_qp_stats_update(struct mroce_qp *qp)
{
	struct mroce_qp_stats *st = &qp->st;
	struct mroce_flow_tx *tx = &qp->flow->tx;

	st->srtt_us = qp->srtt_us;
	st->min_rtt_us = qp->min_rtt_us;
	st->cwnd_pkts = qp_window(qp);
	st->inflight_pkts = qp->snd_nxt - qp->snd_una;
	st->paths = qp->attr.paths;
	st->worst_path_srtt_us = 0;
	for (__u32 i = 0; i < qp->attr.paths; i++)
		if (qp->paths[i].srtt_us > st->worst_path_srtt_us)
			st->worst_path_srtt_us = qp->paths[i].srtt_us;
	/* Plain stores: tools read these racily, one counter at a time. */
	tx->tx_pkts = st->tx_pkts;
	tx->retx_pkts = st->retx_pkts;
	tx->acked_bytes = st->acked_bytes;
	tx->ecn_ce = st->ecn_ce;
	tx->cc_cuts = (__u32)st->cc_cuts;
	tx->paths_retired = (__u32)st->paths_retired;
	tx->srtt_us = st->srtt_us;
	tx->cwnd_pkts = st->cwnd_pkts;
	tx->paths = st->paths;
	tx->worst_path_srtt_us = st->worst_path_srtt_us;
}

static void qp_timers(struct mroce_qp *qp, __u64 now)
{
	if (qp->state != MROCE_QPS_RTS)
		return;
	path_scoreboard(qp, now);
	/* Tools read the flows map at human speed: once a millisecond is plenty. */
	if (now - qp->stats_at_us >= 1000) {
		mroce_qp_stats_update(qp);
		qp->stats_at_us = now;
	}
	if (qp->ack_now || (qp->ack_due_us && now >= qp->ack_due_us))
		send_ack(qp);
	if (qp->rack_timer_us && now >= qp->rack_timer_us)
		rack_detect(qp, now);
	if (qp->snd_nxt != qp->snd_una && now - qp->last_progress_us >= qp->rto_us &&
	    now >= qp->rnr_until_us) {
		bool oldest = true;

		/*
		 * Nothing acknowledged for an RTO: what is unacknowledged and that
		 * old is resent. Only the oldest counts as a retry of its own;
		 * the rest only follow it. A go-back-N receiver discarded
		 * everything behind the gap, so all of it goes again; a selective
		 * one kept what arrived, and beyond the reach of one SACK bitmap
		 * the sender cannot tell what that was: only that reach is resent,
		 * the next ACK's bitmap shows the rest.
		 */
		qp->dev->stats.rto_events++;
		qp->st.rto_events++;
		if (++qp->timeouts > qp->attr.retry_cnt) {
			fail_wqe_of(qp, PKT(qp, qp->snd_una), MROCE_WC_RETRY_EXC_ERR);
			return;
		}
		/*
		 * Two timeouts in a row: the head's path slot may sit on a dead
		 * route, and for a single-path QP it is the only slot. It gets a
		 * fresh entropy value, as PLB and Ultra Ethernet rotate entropy on
		 * timeouts. A route that is merely slow keeps its ACKs coming and
		 * never gets here.
		 */
		if (qp->timeouts >= 2 && !qp->attr.static_paths) {
			struct mroce_txpkt *head = PKT(qp, qp->snd_una);

			if (head->path < qp->attr.paths && qp->paths[head->path].entropy == head->entropy)
				path_retire(qp, &qp->paths[head->path]);
		}
		for (__u32 psn = qp->snd_una; psn != qp->snd_nxt; psn++) {
			struct mroce_txpkt *rec = PKT(qp, psn);

			if (!qp->attr.go_back_n && psn - qp->snd_una > 64 * MROCE_SACK_WORDS)
				break;
			if (rec->state == PKT_INFLIGHT && now - rec->sent_us >= qp->rto_us) {
				/* not charged to the path: a timeout says nothing about which one */
				rec->state = PKT_LOST;
				rec->gbn = !oldest;
				oldest = false;
				qp->nlost++;
			}
		}
		if (qp->rto_us < 64 * qp->attr.rto_high_us)
			qp->rto_us *= 2;
		qp->last_progress_us = now;
	}
}

int mroce_engine_run(struct mroce_dev *dev, void (*rx)(void *, const void *, __u32))
{
	__u64 now;
	int work;

	work = dev->ops->rx_burst(dev->port, rx, dev, RX_BUDGET);
	now = dev->ops->now_us(dev->port);
	for (__u32 q = 1; q < MROCE_MAX_QPS; q++) {
		struct mroce_qp *qp = dev->qps[q];

		if (!qp)
			continue;
		qp_timers(qp, now);
		work += qp_tx(qp, now);
		if (qp->state == MROCE_QPS_RTS) {
			complete_sq(qp);
			complete_rq(qp);
		}
	}
	dev->ops->tx_flush(dev->port);
	return work;
}

__u64 mroce_engine_next_timer(struct mroce_dev *dev)
{
	__u64 next = UINT64_MAX, now = dev->ops->now_us(dev->port);	/* once, not per QP */

	for (__u32 q = 1; q < MROCE_MAX_QPS; q++) {
		struct mroce_qp *qp = dev->qps[q];
		__u64 t;

		if (!qp || qp->state != MROCE_QPS_RTS)
			continue;
		if (qp->ack_now)
			return 0;
		if (qp->ack_due_us && qp->ack_due_us < next)
			next = qp->ack_due_us;
		if (qp->rack_timer_us && qp->rack_timer_us < next)
			next = qp->rack_timer_us;
		if (qp->rnr_until_us > now) {
			/* receiver not ready: nothing goes out before the RNR timer */
			if (qp->rnr_until_us < next)
				next = qp->rnr_until_us;
			continue;
		}
		if (qp->nlost)
			return 0;
		if (qp->snd_nxt - qp->snd_una < qp_window(qp)) {
			__u32 w, o, l;

			if (next_new(qp, &w, &o, &l))
				return 0;
		}
		if (qp->snd_nxt != qp->snd_una) {
			t = qp->last_progress_us + qp->rto_us;
			if (t < next)
				next = t;
		}
	}
	return next;
}
