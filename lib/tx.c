// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Requester transmit: packetise requests and READ responses, resend what
 * loss detection marked lost, and send ACKs and NACKs.
 *
 * Sender PSN space: requests (WRITE*, SEND*, READ_REQ) and the READ
 * responses this side serves, interleaved. Each in-flight PSN has a record
 * (pkts[]) naming its request and byte offset, so a lost packet is rebuilt
 * from the application's memory, never kept as a copy.
 */
#include <errno.h>
#include <string.h>

#include "cc.h"
#include "eng_int.h"

#define TX_BURST	32

/*
 * The payload of a packet as one piece of memory, if it is: linear memory,
 * or within one SGE whose region still grants it. NULL: in several pieces
 * (the copy takes them), or no longer granted (the copy says so).
 */
static const void *payload_span(const struct mroce_pd *pd, const struct mroce_sge *sg, __u32 n,
				__u32 off, const void *lin, __u32 len)
{
	if (lin)
		return lin;
	for (__u32 i = 0; i < n; i++) {
		if (off >= sg[i].length) {
			off -= sg[i].length;
			continue;
		}
		if (sg[i].length - off < len ||
		    !mroce_mr_grants(pd, sg[i].lkey, false, sg[i].addr, sg[i].length, 0))
			return NULL;
		return (const __u8 *)(unsigned long)sg[i].addr + off;
	}
	return NULL;
}

/*
 * Build and send one packet. The payload comes from an SG list (requests)
 * or linear memory (READ responses) and is copied straight into the frame,
 * or, where it lies in memory the port sends from (its transmit pool), left
 * where it is: the frame's headers go with a reference to it.
 */
int mroce_emit(struct mroce_qp *qp, struct mroce_hdr *h, const struct mroce_sge *sg, __u32 nsge,
	       __u32 sg_off, const void *lin, __u8 path)
{
	struct mroce_dev *dev = qp->dev;
	bool ack = mroce_op_info(h->opcode)->kind == MROCE_OPK_ACK ||
		   mroce_op_info(h->opcode)->kind == MROCE_OPK_NACK;
	__u64 now = dev->ops->now_us(dev->port);
	/*
	 * A slot's plane; an ACK's, the plane the slot it echoes came in on, if
	 * proven, unless mroce_send_ack names one (planes.c).
	 */
	__u8 plane = qp->nplanes < 2 ? 0 : !ack ? qp->paths[path].plane :
		     qp->ack_via ? (__u8)(qp->ack_via - 1) : mroce_plane_ack_way(qp, qp->ret[path].plane, now);
	struct mroce_route rt = plane ? qp->proute[plane] : qp->route;
	__u32 cap;
	void *buf;
	int hdr;

	/*
	 * Data on a plane not proven yet, beyond what it may carry before its
	 * proof: never sent (planes.c; the slot choices pass such slots over).
	 */
	if (!ack && qp->nplanes > 1 && qp->planes[plane].unproven && !qp->planes[plane].credit)
		return -EAGAIN;
	if (dev->ops->select_plane)
		dev->ops->select_plane(dev->port, plane);
	buf = dev->ops->tx_buf(dev->port, &cap);

	if (!buf) {
		dev->tx_refused = true;
		return -EAGAIN;
	}
	/*
	 * Source port: the ephemeral range, at the QP's offset plus the
	 * entropy of the path slot, or for an ACK or NACK of the way back of
	 * the peer's slot it echoes (paths.c).
	 */
	rt.sport = (__u16)(49152 + (qp->route.sport + (ack ? qp->ret[path].entropy :
						       qp->paths[path].entropy)) % MROCE_ENTROPY_SPACE);
	rt.ecn = 2;	/* ECT(0) */
	h->dqpn = qp->rqpn;
	h->token = mroce_be64(qp->token_be);
	if (!ack || !(h->flags & MROCE_F_PLANE_PROBE))
		h->ts = (__u32)now;	/* an ACK's probe carries its nonce there */
	/* ACKs and NACKs carry the peer's slot they echo, and leave on its way back. */
	h->path = path;
	/* Data: every copy sent on a slot takes the slot's next sequence number. */
	h->pseq = ack ? 0 : qp->paths[path].tx_pseq;
	if (!ack && qp->nplanes > 1)
		mroce_plane_probe_mark(qp, h, path, now);
	hdr = mroce_frame_hdrs(buf, cap, &rt, h);
	if (hdr < 0) {
		dev->ops->tx_send(dev->port, buf, 0);	/* give the buffer back */
		return hdr;
	}
	/* (headers of even length: the checksum's words run on into the payload's) */
	if (h->payload_len && dev->ops->tx_can_ref && !dev->ops->csum_offload &&
	    !(((size_t)hdr - mroce_l2l4_len(rt.family)) & 1)) {
		const void *at = payload_span(qp->pd, sg, nsge, sg_off, lin, h->payload_len);

		if (at && dev->ops->tx_can_ref(dev->port, at, h->payload_len)) {
			mroce_frame_finish_ref(buf, (__u32)hdr, at, h->payload_len, rt.family);
			dev->ops->tx_send_ref(dev->port, buf, (__u32)hdr, at, h->payload_len);
			dev->tx_ref_pkts++;
			goto sent;
		}
	}
	if (h->payload_len) {
		if (lin) {
			memcpy((__u8 *)buf + hdr, lin, h->payload_len);
		} else if (mroce_sg_copy(qp->pd, sg, nsge, sg_off, (__u8 *)buf + hdr, h->payload_len,
					 false)) {
			dev->ops->tx_send(dev->port, buf, 0);	/* the local region is gone */
			return -EPERM;
		}
	}
	if (!dev->ops->csum_offload)
		mroce_frame_finish(buf, (__u32)hdr + h->payload_len, rt.family);
	dev->ops->tx_send(dev->port, buf, (__u32)hdr + h->payload_len);
sent:
	dev->stats.tx_pkts++;
	dev->stats.tx_bytes += (__u32)hdr + h->payload_len;
	if (!ack) {
		qp->paths[path].tx_pseq++;
		mroce_plane_sent(qp, plane, now);
	}
	return 0;
}

/*
 * A READ job whose region no longer grants what it asked (deregistered,
 * rights gone) is cancelled: the requester is told with a NACK, nothing
 * new is sent, and what is in flight is answered without payload, so the
 * requester's PSN sequence has no hole.
 */
static void rjob_cancel(struct mroce_qp *qp, struct mroce_rjob *j)
{
	j->cancelled = true;
	mroce_send_nack(qp, MROCE_NAK_REMOTE_ACCESS, j->req_psn, j->msn);
	if (j->acked == j->emitted && j->used) {
		j->used = false;
		qp->rjobs_live--;
	}
}

/* Header of a READ response packet, from its job; the payload's address, or NULL. */
static const void *rjob_hdr(struct mroce_qp *qp, const struct mroce_txpkt *rec, struct mroce_hdr *h)
{
	struct mroce_rjob *j = &qp->rjobs[rec->wqe];
	__u32 off = j->base + rec->offset;
	__u64 src = j->raddr + rec->offset;

	h->opcode = MROCE_OP_READ_RESP;
	h->msn = j->msn;
	h->msg_len = j->msg_len;
	h->offset = off;
	h->payload_len = rec->len;
	h->flags = (off == 0 ? MROCE_F_FIRST : 0) | (off + rec->len == j->msg_len ? MROCE_F_LAST : 0);
	if (!rec->len)
		return NULL;
	if (!j->cancelled && !mroce_mr_grants(qp->pd, j->rkey, true, src, rec->len,
					      MROCE_ACCESS_REMOTE_READ))
		rjob_cancel(qp, j);
	if (j->cancelled) {
		h->payload_len = 0;
		h->flags &= (__u16)~MROCE_F_LAST;
		return NULL;
	}
	return (const void *)(unsigned long)src;
}

/* Header of a request packet, from its send queue entry. */
static const struct mroce_swqe *swqe_hdr(struct mroce_qp *qp, const struct mroce_txpkt *rec,
					 struct mroce_hdr *h)
{
	const struct mroce_swqe *w = SWQE(qp, rec->wqe);

	h->opcode = w->opcode;
	h->msn = w->msn;
	if (mroce_op_info(w->opcode)->consumes_recv) {
		h->stream = w->stream;
		h->epoch = w->epoch;
	}
	h->raddr = w->raddr;
	h->rkey = w->rkey;
	h->imm = w->imm;
	h->msg_len = w->len;
	if (!mroce_op_info(w->opcode)->has_payload) {	/* READ request: asks for rd_len bytes */
		h->offset = 0;
		h->rd_len = w->len;
		return NULL;
	}
	h->offset = rec->offset;
	h->payload_len = rec->len;
	h->flags = (rec->offset == 0 ? MROCE_F_FIRST : 0) |
		   (rec->offset + rec->len == w->len ? MROCE_F_LAST : 0);
	if (h->flags & MROCE_F_LAST && w->flags & MROCE_SEND_SOLICITED)
		h->flags |= MROCE_F_SOLICITED;
	return w;
}

/* Rebuild the packet of a PSN from its record and send it. */
static int send_psn(struct mroce_qp *qp, __u32 psn, struct mroce_txpkt *rec, bool resend)
{
	struct mroce_hdr h = { .psn = psn };
	const struct mroce_sge *sg = NULL;
	const void *lin = NULL;
	__u32 nsge = 0;
	int err;

	if (rec->kind == PKT_RESP) {
		lin = rjob_hdr(qp, rec, &h);
	} else if (rec->kind == PKT_VOID) {
		h.opcode = MROCE_OP_VOID;
		h.flags = MROCE_F_ACK_REQ;
		qp->st.voids++;
	} else {
		const struct mroce_swqe *w = swqe_hdr(qp, rec, &h);

		if (w) {
			sg = w->sge;
			nsge = w->num_sge;
		}
	}
	if (resend)
		h.flags |= MROCE_F_RETX;
	else if (mroce_window_fills(qp))
		h.flags |= MROCE_F_ACK_REQ;
	err = mroce_emit(qp, &h, sg, nsge, rec->offset, lin, rec->path);
	if (err == -EPERM)
		mroce_fail_wqe_of(qp, rec, MROCE_WC_LOC_PROT_ERR);
	if (err)
		return err;
	qp->st.tx_pkts++;
	qp->st.retx_pkts += resend;
	return 0;
}

/*
 * Resend a delivered PSN whose acknowledgement went missing, without its
 * payload (the receiver has it, and its request may be completed and
 * recycled already): a duplicate that makes the receiver acknowledge
 * again. Its record stays as it is.
 */
void mroce_send_probe(struct mroce_qp *qp, __u32 psn, struct mroce_txpkt *rec)
{
	struct mroce_hdr h = { .psn = psn };

	if (rec->kind == PKT_RESP) {
		const struct mroce_rjob *j = &qp->rjobs[rec->wqe];

		h.opcode = MROCE_OP_READ_RESP;
		h.msn = j->msn;
		h.msg_len = j->msg_len;
		h.offset = j->base + rec->offset;
	} else if (rec->kind == PKT_REQ) {
		swqe_hdr(qp, rec, &h);
	} else {
		h.opcode = MROCE_OP_VOID;
	}
	h.payload_len = 0;
	h.flags = (h.offset == 0 ? MROCE_F_FIRST : 0) | (h.offset == h.msg_len ? MROCE_F_LAST : 0) |
		  MROCE_F_RETX | MROCE_F_ACK_REQ;
	if (h.opcode == MROCE_OP_READ_REQ || h.opcode == MROCE_OP_VOID)
		h.flags = MROCE_F_RETX | MROCE_F_ACK_REQ;
	if (!mroce_emit(qp, &h, NULL, 0, 0, NULL, rec->path))
		qp->dev->stats.retx_pkts++;
}

/* Packets a READ response needs (a zero-length one still sends one). */
__u32 mroce_rjob_pkts(const struct mroce_qp *qp, const struct mroce_rjob *j)
{
	/* 64-bit: a length near 4 GiB (the peer's rreqeth.length) must not wrap to none */
	return j->len ? (__u32)(((__u64)j->len + qp->payload_max - 1) / qp->payload_max) : 1;
}

/* The READ job to packetise next: the oldest with packets not yet sent. */
static struct mroce_rjob *next_rjob(struct mroce_qp *qp)
{
	struct mroce_rjob *best = NULL;

	for (__u32 i = 0; qp->rjobs_live && i < MROCE_READ_JOBS; i++) {
		struct mroce_rjob *j = &qp->rjobs[i];

		if (!j->used || j->cancelled || j->emitted == mroce_rjob_pkts(qp, j))
			continue;
		if (!best || (__s32)(j->seq - best->seq) < 0)
			best = j;
	}
	return best;
}

/*
 * May the send queue entry at seq start now? A fenced one waits until every
 * earlier one has completed; a READ waits while rd_limit READs are
 * outstanding (the excess is held here, never dropped by the responder).
 */
static bool swqe_may_start(struct mroce_qp *qp, __u32 seq, const struct mroce_swqe *w)
{
	if (w->emitted)
		return true;
	if ((w->flags & MROCE_SEND_FENCE) && seq != qp->sq_head)
		return false;
	return !mroce_op_info(w->opcode)->awaits_resp || qp->rd_outstanding < qp->rd_limit;
}

/*
 * A stream refused by the peer (ack.c, mroce_stream_restart) sends nothing
 * until its RNR timer ends, then one packet, the probe, until the peer takes
 * one of its packets.
 */
static bool stream_held(const struct mroce_qp *qp, const struct mroce_swqe *w, __u64 now)
{
	const struct mroce_stream *st = &qp->streams[w->stream];

	return now < st->hold_until_us || (st->probing && st->probe_sent);
}

/* The next request's bytes to packetise, if one may go now. */
static bool next_req(struct mroce_qp *qp, struct mroce_txpkt *rec, __u64 now)
{
	for (__u32 seq = qp->sq_next; seq != qp->sq_tail; seq++) {
		struct mroce_swqe *w = SWQE(qp, seq);

		if (w->done || w->emitted == w->npkts) {
			if (seq == qp->sq_next)
				qp->sq_next++;
			continue;
		}
		if (stream_held(qp, w, now))
			continue;	/* its stream waits; the others go on */
		if (!swqe_may_start(qp, seq, w))
			return false;
		rec->kind = PKT_REQ;
		rec->wqe = seq;
		rec->offset = w->sent;
		rec->len = (__u16)(!mroce_op_info(w->opcode)->has_payload ? 0 :
				   w->len - w->sent < qp->payload_max ? w->len - w->sent : qp->payload_max);
		return true;
	}
	return false;
}

/*
 * Next bytes to packetise, as a record (kind, wqe, offset, len): READ
 * responses and our own requests take turns, a packet each, while both
 * wait (tx_account_new keeps the turn). Responses always first starved the
 * requests of a QP whose peer kept its READs coming: with both ends
 * READing each other, each end's queue of responses never emptied, and its
 * own READs went out only once the peer stopped.
 */
bool mroce_next_new(struct mroce_qp *qp, struct mroce_txpkt *rec, __u64 now)
{
	struct mroce_rjob *j = next_rjob(qp);

	if (j && qp->req_turn && next_req(qp, rec, now))
		return true;
	if (j) {
		rec->kind = PKT_RESP;
		rec->wqe = (__u32)(j - qp->rjobs);
		rec->offset = j->sent;
		rec->len = (__u16)(j->len - j->sent < qp->payload_max ? j->len - j->sent : qp->payload_max);
		return true;
	}
	return next_req(qp, rec, now);
}

/*
 * A request failed with st: it carries the error if it is still
 * outstanding; the QP fails, the rest is flushed. A record of a request
 * already completed (or of a READ response) names nothing to charge: the
 * oldest unfinished request then gets the error (qp.c).
 */
void mroce_fail_wqe_of(struct mroce_qp *qp, struct mroce_txpkt *rec, enum mroce_wc_status st)
{
	if (rec && rec->kind == PKT_REQ && !mroce_psn_before(rec->wqe, qp->sq_head) &&
	    mroce_psn_before(rec->wqe, qp->sq_tail) && !SWQE(qp, rec->wqe)->done) {
		struct mroce_swqe *w = SWQE(qp, rec->wqe);

		w->done = 1;
		w->status = (__u8)st;
	}
	mroce_qp_fail(qp, st);
}

/*
 * The window head lost again after a resend: copies go out on the next
 * MROCE_HEAD_COPIES slots too (one packet each), so that one dead route,
 * under however many of the QP's slots, cannot hold the whole window back
 * while the scoreboard finds it. The record keeps the first copy's slot.
 */
static __u32 tx_head_copies(struct mroce_qp *qp, __u32 psn, struct mroce_txpkt *rec)
{
	__u8 first = rec->path;
	__u32 planes = 0;

	for (__u32 k = 1; k <= MROCE_HEAD_COPIES && k < qp->attr.paths; k++) {
		rec->path = mroce_copy_path(qp, first, k);
		if (send_psn(qp, psn, rec, true))
			break;
		planes |= 1u << qp->paths[rec->path].plane;
		qp->dev->stats.retx_pkts++;
	}
	rec->path = first;
	return planes;
}

/*
 * Over planes, the one packet lost that is all the QP has out: nothing
 * sent after it will show its copy lost, and whatever killed the first
 * copy (a plane that died, with the ACK that told of it) may take the
 * resend too, which only its own timer then judges, an RTT and the
 * reordering allowance later. Its first resend has a copy on another
 * plane: a flow whose last ACK died with plane 0 resent its one missing
 * packet into that plane, the slot that had delivered last being there,
 * and waited 52 us for the next (docs/scale.md). Over one plane the
 * head's 3 copies for it cost more than they saved: 1% loss on every
 * frame took 453 us against 437, a spine down under kept connections
 * 698 against 650.
 */
static bool tail_alone(const struct mroce_qp *qp)
{
	if (qp->nplanes < 2 || qp->nlost != 1)
		return false;
	for (__u32 s = 0; s < qp->attr.paths; s++)
		if (qp->paths[s].inflight)
			return false;
	return true;
}

/* That copy, on the slot mroce_plane_copy_path names (paths.c). */
static __u32 tx_plane_copy(struct mroce_qp *qp, __u32 psn, struct mroce_txpkt *rec, __u64 now)
{
	int slot = mroce_plane_copy_path(qp, rec->path, now);
	__u8 first = rec->path;
	__u32 planes = 0;

	if (slot < 0)
		return 0;
	rec->path = (__u8)slot;
	if (!send_psn(qp, psn, rec, true)) {
		planes = 1u << qp->paths[slot].plane;
		qp->dev->stats.retx_pkts++;
	}
	rec->path = first;
	return planes;
}

/* Resend what loss detection marked lost; they hold the window back. -1: stop this round. */
static int tx_resend(struct mroce_qp *qp, __u64 now, int *sent)
{
	bool held = qp->nlost && mroce_planes_held(qp);
	int slot;

	for (__u32 psn = qp->snd_una; qp->nlost && psn != qp->snd_nxt && *sent < TX_BURST; psn++) {
		struct mroce_txpkt *rec = PKT(qp, psn);
		__u32 copies = 0;	/* the planes its copies went on */
		__u8 was;

		if (rec->state != PKT_LOST)
			continue;
		if (!rec->gbn && rec->timer_lost && rec->tmo >= qp->attr.retry_cnt) {
			mroce_fail_wqe_of(qp, rec, MROCE_WC_RETRY_EXC_ERR);
			return -1;
		}
		/* Resend on another path, one that works lately (paths.c). */
		was = rec->path;
		if (held && (slot = mroce_planes_probe_slot(qp)) < 0)
			return -1;	/* no plane up, and no probe to carry it now */
		if (!held && mroce_planes_stall_probes(qp)) {
			/*
			 * A stalled QP's resend as a down plane's probe: a copy
			 * goes the usual way too (the record's). Either may be
			 * the dead one: a flow whose last ACK died with plane 0
			 * sent its tail probe there as the plane's probe, alone,
			 * 62 us before the next; the plane its QP had taken for
			 * dead may be the live one (docs/scale.md).
			 */
			rec->path = (__u8)(qp->stall_slot - 1);
			if (send_psn(qp, psn, rec, true)) {
				rec->path = was;
				return -1;
			}
			copies |= 1u << qp->paths[rec->path].plane;
			qp->dev->stats.retx_pkts++;
			qp->stall_slot = 0;
		}
		rec->path = held ? (__u8)slot : mroce_resend_path(qp, was, now);
		if (send_psn(qp, psn, rec, true)) {
			rec->path = was;	/* still lost, tried next round: the choice is made again */
			return -1;
		}
		qp->stall_slot = 0;	/* one resend per timer */
		if (psn == qp->snd_una && rec->retx && !rec->gbn && !held)
			copies |= tx_head_copies(qp, psn, rec);	/* held: other slots are on planes down */
		else if (!rec->retx && !rec->gbn && !held && tail_alone(qp))
			copies |= tx_plane_copy(qp, psn, rec, now);
		/*
		 * Its ACK is credited to the record's slot and plane
		 * (mroce_pkt_acked): with a copy on another plane, the copy may
		 * be what arrived. A stalled QP's copies, one on the plane that
		 * had died and one on the live one, made the dead plane heard
		 * and the live one silent: the live one went down, and the QP
		 * sent into the dead one for 14 ms (docs/scale.md).
		 */
		rec->cross = (copies & ~(1u << qp->paths[rec->path].plane)) != 0;
		rec->entropy = qp->paths[rec->path].entropy;
		rec->pseq = (__u16)(qp->paths[rec->path].tx_pseq - 1);	/* mroce_emit's */
		if (!rec->gbn)
			rec->retx++;
		rec->tmo += rec->timer_lost;
		rec->timer_lost = 0;
		rec->gbn = 0;
		rec->state = PKT_INFLIGHT;
		mroce_rec_flying(qp, rec);
		rec->sent_us = now;
		rec->tx_seq = qp->tx_seq++;
		qp->last_tx_us = now;
		qp->nlost--;
		if (psn == qp->snd_una && rec->retx &&
		    (!qp->rack_timer_us || mroce_head_due(qp, rec) < qp->rack_timer_us))
			qp->rack_timer_us = mroce_head_due(qp, rec);
		qp->dev->stats.retx_pkts++;
		(*sent)++;
	}
	return 0;
}

/* Account a first transmission to the request or READ job it belongs to. */
static void tx_account_new(struct mroce_qp *qp, const struct mroce_txpkt *rec, __u64 now)
{
	qp->req_turn = rec->kind == PKT_RESP;
	if (rec->kind == PKT_RESP) {
		struct mroce_rjob *j = &qp->rjobs[rec->wqe];

		j->sent += rec->len;
		j->emitted++;
	} else {
		struct mroce_swqe *w = SWQE(qp, rec->wqe);

		if (!w->emitted) {
			w->first_psn = qp->snd_nxt - 1;
			if (mroce_op_info(w->opcode)->awaits_resp && !qp->rd_outstanding++) {
				qp->rd_progress_us = now;	/* the response timer starts */
				qp->rd_timeouts = 0;
			}
		}
		struct mroce_stream *st = &qp->streams[w->stream];

		w->sent += rec->len;
		if (++w->emitted == w->npkts)
			w->last_psn = qp->snd_nxt - 1;
		if (st->probing && !st->probe_sent) {
			st->probe_sent = true;	/* the stream waits for this one's verdict */
			st->probe_psn = qp->snd_nxt - 1;
		}
	}
}

/* Send new packets while the window allows. */
static void tx_new(struct mroce_qp *qp, __u64 now, int *sent)
{
	bool held = mroce_planes_held(qp);
	int slot;

	if (qp->snd_nxt == qp->snd_una)
		mroce_grant_resume(qp, now);	/* a grant from before a quiet spell is stale */
	while (*sent < TX_BURST && mroce_window_open(qp)) {
		struct mroce_txpkt next = { .state = PKT_INFLIGHT, .sent_us = now, .tx_seq = qp->tx_seq };
		struct mroce_txpkt *rec;
		bool skipped;

		if (!mroce_next_new(qp, &next, now))
			break;
		/*
		 * Out of memory, the window stays at the records there are:
		 * what is in flight goes on, and this is tried again later.
		 */
		if (mroce_ring_reserve((void **)&qp->pkts, &qp->pkt_mask, MROCE_PKT_RING - 1,
				       sizeof(*qp->pkts), qp->snd_una, qp->snd_nxt,
				       qp->snd_nxt - qp->snd_una + 1))
			break;
		if (!held) {
			next.path = mroce_path_choose(qp, now, &skipped);
		} else if ((slot = mroce_planes_probe_slot(qp)) >= 0) {
			next.path = (__u8)slot;	/* no plane up: only a probe goes (planes.c) */
			skipped = false;
		} else {
			break;
		}
		rec = PKT(qp, qp->snd_nxt);
		*rec = next;
		if (send_psn(qp, qp->snd_nxt, rec, false)) {
			rec->state = PKT_FREE;
			mroce_path_refused(qp, rec->path);
			break;
		}
		mroce_path_took(qp, rec->path, skipped, now);
		qp->paths[rec->path].sent++;
		mroce_rec_flying(qp, rec);
		rec->entropy = qp->paths[rec->path].entropy;
		rec->pseq = (__u16)(qp->paths[rec->path].tx_pseq - 1);	/* mroce_emit's */
		if (qp->snd_nxt == qp->snd_una)
			qp->last_progress_us = now;	/* the timer starts with the first packet */
		qp->last_tx_us = now;
		qp->snd_nxt++;
		qp->tx_seq++;
		tx_account_new(qp, rec, now);
		(*sent)++;
	}
}

int mroce_qp_tx(struct mroce_qp *qp, __u64 now)
{
	int sent = 0;

	if (qp->state != MROCE_QPS_RTS)
		return 0;
	if (tx_resend(qp, now, &sent))
		return sent;
	tx_new(qp, now, &sent);
	return sent;
}

/* A copy of an ACK on the plane named, not its way back's: true if it went. */
static bool ack_copy(struct mroce_qp *qp, struct mroce_hdr *h, __u8 slot, __u8 plane)
{
	int err;

	qp->ack_via = (__u8)(plane + 1);
	err = mroce_emit(qp, h, NULL, 0, 0, NULL, slot);
	qp->ack_via = 0;
	if (!err)
		qp->dev->stats.acks_tx++;
	return !err;
}

/*
 * Copies of the ACK just sent on slot's way back, on other planes
 * (planes.c): where it echoes a probe that came in on another plane than
 * the one it took, there too (no ACK need cross a plane that may have
 * failed to prove another); and where the latest data, or a resend or an
 * ask, came in on a plane not proven here, there as our own probe, when one
 * is due. A copy that
 * found no buffer (a busy sender's ring is often full) is owed: the ACK
 * goes again next round, with it (COPY_ECHO, COPY_PROBE: which).
 */
#define COPY_ECHO	1
#define COPY_PROBE	2

static int ack_plane_copies(struct mroce_qp *qp, const struct mroce_hdr *sent, __u8 slot,
			    __u8 echo, __u64 now)
{
	int owed = 0;
	__u8 in = qp->rx_newest_plane, way = mroce_plane_ack_way(qp, qp->ret[slot].plane, now);
	struct mroce_hdr c = *sent;
	__u32 nonce, answer_nonce = 0;
	bool answered = false;

	if (echo < qp->nplanes && echo != way && mroce_plane_answer_there(qp, echo, now, &answer_nonce)) {
		if (answer_nonce) {
			c.flags |= MROCE_F_PLANE_PROBE;	/* our own probe of it too */
			c.ts = answer_nonce;
		}
		answered = ack_copy(qp, &c, slot, echo);
		if (answered)
			mroce_plane_answer_sent(qp, echo, answer_nonce, now);
		else
			owed |= COPY_ECHO;
	}
	for (__u8 pl = 0; pl < qp->nplanes; pl++) {
		/* the newest data's plane, or one a resend or an ask came in on (planes.c) */
		if (pl == way || (pl != in && !qp->planes[pl].resent_in))
			continue;
		if (answered && pl == echo && answer_nonce)
			continue;	/* the answer just sent there probed it already */
		if (!mroce_plane_ack_probe(qp, pl, now, &nonce))
			continue;
		c = *sent;
		c.flags |= MROCE_F_PLANE_PROBE;
		c.ts = nonce;
		if (ack_copy(qp, &c, slot, pl))
			mroce_plane_ack_probe_sent(qp, pl, nonce, now);
		else
			owed |= COPY_PROBE;
	}
	return owed;
}

/*
 * The echoed time is the newest packet's plus how long it waited here for
 * this ACK (a delayed ACK's, or the rest of an ACK's worth of packets'):
 * the sender's RTT sample is then the network's, not our ACK policy's
 * (QUIC's ack_delay, carried in the echo itself). Both are durations on
 * the sender's clock and ours, which tick alike.
 */
void mroce_send_ack(struct mroce_qp *qp, __u64 now)
{
	const struct mroce_flow *f = qp->flow;
	struct mroce_hdr h = { .opcode = MROCE_OP_ACK, .psn = qp->snd_nxt };
	__u8 slot = mroce_echo_slot(qp), echo = 0;
	/* a hole in the SACK, where there is more than one way back to take turns on */
	bool hole = false, report;
	int owed = 0;

	h.cum_psn = mroce_rxwin_sack(f, h.sack);
	for (int w = 0; qp->ret_slots > 1 && w < MROCE_SACK_WORDS; w++)
		hole |= h.sack[w] != 0;
	report = hole && !qp->ack_now;	/* a delayed ACK's timer sends it, and it shows a hole */
	h.ts_echo = qp->ts_echo ? qp->ts_echo + (__u32)mroce_since(now, qp->ts_echo_at) : 0;
	while (echo < MROCE_MAX_PLANES && !qp->probe_echo[echo])
		echo++;
	/*
	 * A plane's probe came in: its nonce instead, held as long. The probe
	 * was stamped when read, the round's clock (now) before the rings were:
	 * a round that read a busy ring first finds it stamped later than now.
	 * The hold is 0 then, never negative (mroce_since): the nonce less a
	 * little is no echo of it, and the probe, acknowledged without it, fails.
	 */
	if (echo < MROCE_MAX_PLANES)
		h.ts_echo = qp->probe_nonce[echo] + (__u32)mroce_since(now, qp->probe_nonce_at[echo]);
	h.ecn_ce = qp->ecn_ce;
	h.ecn_pkts = qp->ecn_pkts;
	if (qp->ecn_ce)
		h.flags |= MROCE_F_ECN_ECHO;
	h.ack_msn = qp->streams[0].rq_head;	/* stream 0's; senders do not use it */
	h.rwnd = MROCE_RXWIN_PSNS;
	h.rate_kbps = qp->st.rate_grant_kbps = mroce_grant_of(qp);
	mroce_psack_fill(qp, slot, &h);	/* the slot whose way back it takes */
	h.pflags |= MROCE_PF_ASKS;	/* we answer asks (rx.c) */
	if (qp->ask_due)
		h.flags |= MROCE_F_ACK_REQ;	/* ours: loss.c "Asks" */
	if (mroce_emit(qp, &h, NULL, 0, 0, NULL, slot))
		return;	/* no TX buffer: the ACK (and the ask) stays due */
	if (qp->ask_due)
		mroce_ask_sent(qp, h.ts, now);
	mroce_echo_sent(qp, slot);
	qp->dev->stats.acks_tx++;
	if (qp->nplanes > 1)
		owed = ack_plane_copies(qp, &h, slot, echo, now);
	qp->unacked = 0;
	if (report && qp->hole_reports < MROCE_HOLE_REPORTS)
		qp->hole_reports++;
	/*
	 * A message's last packet came ahead of a hole: if the hole is still
	 * there a delayed ACK's time from now, another goes (on two ways back,
	 * when there are two). At most MROCE_HOLE_REPORTS times with nothing
	 * placed in between: a peer that is gone is not called for ever.
	 */
	qp->ack_due_us = hole && qp->nlast_early && qp->hole_reports < MROCE_HOLE_REPORTS ?
			 now + qp->attr.ack_delay_us : 0;
	qp->ack_now = false;
	qp->ecn_ce = qp->ecn_pkts = 0;
	if (echo < MROCE_MAX_PLANES)
		qp->probe_echo[echo] = owed & COPY_ECHO;
	if (owed) {
		qp->ack_now = true;	/* a copy found no buffer: all of it again next round */
		return;
	}
	if (echo < MROCE_MAX_PLANES) {
		while (++echo < MROCE_MAX_PLANES)
			if (qp->probe_echo[echo]) {
				qp->ack_now = true;	/* still due if no buffer is free now */
				mroce_send_ack(qp, now);	/* another plane's probe: an ACK of its own */
				return;
			}
	}
	/*
	 * The same state on the next way back: for a resend or duplicate (rx.c),
	 * or a delayed ACK with a hole, sent after the packets before it went
	 * quiet: its sender may be waiting out a probe, and a way back may be
	 * a failed route's (docs/transport.md). With one way back, a hole is
	 * congestion's loss, and the sender's own timers find it: a repeated
	 * ACK there only made a single-path 256-host all-to-all 30% slower.
	 */
	if (qp->ack_again || report) {
		qp->ack_again = false;
		qp->ack_now = true;	/* still due if no buffer is free now */
		mroce_send_ack(qp, now);
	}
}

/* Refuse a receive-consuming packet for want of a receive on its stream. */
void mroce_send_rnr(struct mroce_qp *qp, const struct mroce_hdr *refused)
{
	struct mroce_hdr h = { .opcode = MROCE_OP_NACK, .psn = qp->snd_nxt, .nak_code = MROCE_NAK_RNR,
			       .nak_psn = refused->psn, .nak_msn = refused->msn,
			       .nak_ts = qp->ts_echo, .nak_stream = refused->stream,
			       .nak_epoch = refused->epoch,
			       .nak_flags = refused->psn == qp->flow->rx_base ? MROCE_NAKF_CUM : 0 };

	if (!mroce_emit(qp, &h, NULL, 0, 0, NULL, qp->echo_path))
		qp->dev->stats.nacks_tx++;
}

void mroce_send_nack(struct mroce_qp *qp, __u8 code, __u32 psn, __u32 msn)
{
	mroce_send_nack_on(qp, code, psn, 0, msn);
}

/* A NACK naming message msn of a stream (a receive-consuming request's error). */
void mroce_send_nack_on(struct mroce_qp *qp, __u8 code, __u32 psn, __u16 stream, __u32 msn)
{
	/* Every PSN before the base is placed: a NACK at the base is also a cumulative ACK. */
	struct mroce_hdr h = { .opcode = MROCE_OP_NACK, .psn = qp->snd_nxt, .nak_code = code,
			       .nak_psn = psn, .nak_msn = msn, .nak_ts = qp->ts_echo,
			       .nak_stream = stream,
			       .nak_flags = psn == qp->flow->rx_base ? MROCE_NAKF_CUM : 0 };

	/* on the way back of the slot the refused packet came on */
	if (!mroce_emit(qp, &h, NULL, 0, 0, NULL, qp->echo_path))
		qp->dev->stats.nacks_tx++;
}
