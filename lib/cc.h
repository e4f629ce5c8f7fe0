/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Congestion control behind an ops table, as the kernel's
 * tcp_congestion_ops: chosen per QP at creation, with its state in the QP's
 * fixed private area (qp->cc_priv). The window is qp->cwnd_x256, in 1/256
 * packets; window() turns it into the packets the QP may have in flight.
 */
#ifndef MROCE_CC_H
#define MROCE_CC_H

#include <stdint.h>

#include "engine.h"

struct mroce_cc_ops {
	const char	*name;
	__u32		priv_size;	/* bytes of qp->cc_priv it uses */
	void		(*init)(struct mroce_qp *qp);
	/* An ACK that acknowledged something new, with its RTT sample. */
	void		(*on_ack)(struct mroce_qp *qp, const struct mroce_hdr *ack, __u32 rtt_us,
				  __u64 now);
	/* Loss detection declared packets lost (NULL: no reaction). */
	void		(*on_loss)(struct mroce_qp *qp, __u64 now);
	/* The retransmission timer fired (NULL: no reaction). */
	void		(*on_rto)(struct mroce_qp *qp, __u64 now);
	/* A path slot got a fresh entropy value, so a route of unknown delay (NULL: nothing). */
	void		(*on_path_retired)(struct mroce_qp *qp);
	/* Packets the QP may have in flight now. */
	__u32		(*window)(const struct mroce_qp *qp);
};

extern const struct mroce_cc_ops mroce_cc_none, mroce_cc_dctcp, mroce_cc_swift,
				 mroce_cc_dctcp_swift, mroce_cc_default;

/*
 * The algorithm of a QP whose attributes name none (neither cc_ecn, cc_delay
 * nor no_cc): MetaRoCE's sender ECN AIMD; with the receiver's rate grants
 * (rate.c, on unless the device turns them off) as MetaRoCE runs both.
 */
#define MROCE_CC_DEFAULT	mroce_cc_default

/* Pick the QP's algorithm from its attributes and initialise it. */
void mroce_cc_init(struct mroce_qp *qp);
void mroce_cc_planes_start(struct mroce_qp *qp, __u32 planes);

static inline void *mroce_cc_priv(struct mroce_qp *qp) { return qp->cc_priv; }

static inline void mroce_cc_on_ack(struct mroce_qp *qp, const struct mroce_hdr *ack, __u32 rtt_us,
				   __u64 now)
{
	if (qp->cc->on_ack)
		qp->cc->on_ack(qp, ack, rtt_us, now);
}

static inline void mroce_cc_on_loss(struct mroce_qp *qp, __u64 now)
{
	if (qp->cc->on_loss)
		qp->cc->on_loss(qp, now);
}

static inline void mroce_cc_on_rto(struct mroce_qp *qp, __u64 now)
{
	if (qp->cc->on_rto)
		qp->cc->on_rto(qp, now);
}

static inline void mroce_cc_on_path_retired(struct mroce_qp *qp)
{
	if (qp->cc->on_path_retired)
		qp->cc->on_path_retired(qp);
}

/*
 * The receiver's rate grant (rate.c) as a window: what the granted rate
 * delivers in the QP's smoothed RTT, rounded up, at least 2 packets; 0: no
 * grant. (The receiver grants less while a queue stands, so it drains.)
 */
static inline __u32 mroce_grant_window(const struct mroce_qp *qp)
{
	__u32 hint = qp->st.rate_hint_kbps, rtt = qp->srtt_us;
	__u64 bytes;

	if (!hint || !rtt || !qp->payload_max)
		return 0;
	bytes = (__u64)hint * rtt / 8000;	/* kbit/s x us = bits / 1000 */
	bytes = (bytes + qp->payload_max - 1) / qp->payload_max;
	return bytes < 2 ? 2 : bytes > UINT32_MAX ? UINT32_MAX : (__u32)bytes;
}

/* Packets the QP may have in flight: its congestion control's window, within the grant. */
static inline __u32 mroce_cc_window(const struct mroce_qp *qp)
{
	__u32 w = qp->cc->window(qp), g = mroce_grant_window(qp);

	return g && g < w ? g : w;
}

/* PSNs a QP may have beyond snd_una: the largest window the peer's receive window takes. */
#define MROCE_SPAN_MAX	(MROCE_RXWIN_PSNS - 64)

/*
 * A new packet may go out: fewer than the window are in flight, counted as
 * RFC 6675's pipe (sent and neither known delivered nor declared lost, so a
 * hole being repaired does not stall the window behind it), and its PSN is
 * within the span the receiver's window takes. Once the head of the window
 * has been lost again after being resent, through a queue (the path it was
 * resent on has one: mroce_path_queued), resends are not getting through
 * a full queue, with no congestion control to say so: the window counts
 * from the head again, as if every PSN since were in flight, so that new
 * packets wait and the resends get the route. Random loss builds no queue
 * and never closes the window so, nor does a failed route: a slot assumed
 * bad, or retired since the head went on it (paths.c).
 */
static inline bool mroce_window_room(const struct mroce_qp *qp, __u32 more)
{
	const struct mroce_txpkt *head = &qp->pkts[qp->snd_una & qp->pkt_mask];
	__u32 span = qp->snd_nxt - qp->snd_una + more, cw = mroce_cc_window(qp);

	if (span >= MROCE_SPAN_MAX)
		return false;
	if (span && (head->retx >= 2 || (head->retx && head->state == PKT_LOST)) &&
	    head->path < qp->attr.paths && mroce_path_queued(&qp->paths[head->path]) &&
	    !qp->paths[head->path].bad && qp->paths[head->path].entropy == head->entropy)
		return span < cw;
	return span - qp->nsacked - qp->nlost < cw;
}

static inline bool mroce_window_open(const struct mroce_qp *qp)
{
	return mroce_window_room(qp, 0);
}

/*
 * The next new packet is the last the window lets out, and the window is
 * no more than the packets a receiver gathers into one ACK (ack_every,
 * ours taken for the peer's: both come from the same defaults). Nothing
 * will follow it until an ACK comes, so it asks for one at once (ACK_REQ):
 * the receiver would otherwise hold it for its delayed-ACK time (50 us by
 * default), and a sender held to a few packets (a receiver's rate grant
 * at an incast, a congestion window cut) stalled that long every round
 * trip, as TCP's small windows did behind delayed ACKs. A larger window
 * keeps enough in flight for the receiver's count to send the ACK, and a
 * round trip of 2 delayed-ACK times or more (a software path's, or one
 * behind a standing queue) loses at most a third of it to the wait: there
 * the ACKs are left to the receiver, as before (the emulated fabric's
 * incast, where grants hold senders to 11-16 packets).
 */
static inline bool mroce_window_fills(const struct mroce_qp *qp)
{
	return qp->srtt_us < 2 * qp->attr.ack_delay_us && mroce_cc_window(qp) <= qp->attr.ack_every &&
	       !mroce_window_room(qp, 1);
}

/* Helpers the window-based algorithms share (cc.c). */
struct mroce_cc_epoch {
	__u64	epoch_us;	/* start of the current epoch (about one RTT) */
	__u64	loss_cut_us;	/* last cut for loss (or timeout): one per window sent */
	__u32	ssthresh_x256;	/* below it the window doubles per RTT (slow start) */
	__u32	rtt_max;	/* the epoch's largest RTT sample */
};
/* The window a QP starts with, in packets (at most max_inflight): slow start doubles it. */
#define MROCE_CC_INIT_PKTS	16
__u32 mroce_cc_epoch_len(const struct mroce_qp *qp);
bool mroce_cc_epoch_over(const struct mroce_qp *qp, struct mroce_cc_epoch *e, __u32 rtt_us,
			 __u64 now);
void mroce_cc_epoch_end(struct mroce_qp *qp, struct mroce_cc_epoch *e, __u32 cw, bool cut,
			__u64 now);
__u32 mroce_cc_clamp_window(const struct mroce_qp *qp);
void mroce_cc_init_window(struct mroce_qp *qp);
void mroce_cc_init_none(struct mroce_qp *qp);
void mroce_cc_init_slow_start(struct mroce_qp *qp);
void mroce_cc_loss_cut(struct mroce_qp *qp, struct mroce_cc_epoch *e, __u64 now);
void mroce_cc_rto_floor(struct mroce_qp *qp, struct mroce_cc_epoch *e, __u64 now);

/* The per-algorithm cuts, for the combined one (cc_ecn.c, cc_delay.c). */
struct mroce_cc_dctcp_state {
	__u32			alpha_x1024;	/* moving CE fraction */
	__u32			ce, pkts;	/* echoed marks since the epoch began */
};
struct mroce_cc_swift_state {
	__u32			rtt_max;	/* largest RTT sample this epoch */
	__u32			base_us;	/* base delay: the windowed minimum RTT */
	__u32			win_min;	/* lowest RTT sample of the current window */
	__u64			win_us;		/* start of the current window */
};
void mroce_cc_dctcp_sample(struct mroce_cc_dctcp_state *s, const struct mroce_hdr *ack);
bool mroce_cc_dctcp_cut(struct mroce_cc_dctcp_state *s, __u32 *cw);
void mroce_cc_swift_sample(const struct mroce_qp *qp, struct mroce_cc_swift_state *s,
			   __u32 rtt_us, __u64 now);
void mroce_cc_swift_reset(struct mroce_cc_swift_state *s);
bool mroce_cc_swift_cut(const struct mroce_qp *qp, struct mroce_cc_swift_state *s, __u32 *cw,
			bool may_grow);

#endif /* MROCE_CC_H */
