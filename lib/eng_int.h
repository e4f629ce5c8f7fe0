/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private interfaces between the transport engine's files (tx, rx, place,
 * ack, loss, cc, paths, comp, engine). Not installed; every function here
 * runs with dev->lock held.
 */
#ifndef MROCE_ENG_INT_H
#define MROCE_ENG_INT_H

#include "engine.h"
#include "opcode.h"

#define PKT(qp, psn)	(&(qp)->pkts[(psn) & (qp)->pkt_mask])

/* What placing a packet came to; a positive value is a MROCE_NAK_* refusal. */
enum mroce_place_result {
	MROCE_PLACED = 0,
	MROCE_NOT_NOW = -1,	/* no resources: do not mark, the sender will retry */
	MROCE_RNR = -2,		/* no receive posted: NACK RNR, do not mark */
	MROCE_STALE = -3,	/* a message delivered already: mark, place nothing */
};

static inline bool mroce_psn_before(__u32 a, __u32 b) { return (__s32)(a - b) < 0; }

/*
 * The time since at, by now; 0 when at is later. A round's clock (now) is
 * read before its receive rings (engine.c), and what a frame moves is
 * stamped when it is read, later: a round that read a busy ring first finds
 * those stamps ahead of its own now. Every age of a stamp is taken here:
 * a bare now - at would wrap to some 2^64 and fire whatever it guards (a
 * grant dropped as stale, a timeout, a plane's silence, an epoch's end).
 */
static inline __u64 mroce_since(__u64 now, __u64 at) { return now > at ? now - at : 0; }

/* A record's copy leaves the network (acknowledged, declared lost): its slot's window frees. */
static inline void mroce_rec_landed(struct mroce_qp *qp, const struct mroce_txpkt *rec)
{
	if (rec->state == PKT_INFLIGHT && qp->paths[rec->path].inflight)
		qp->paths[rec->path].inflight--;
}

/* ... a copy of it went out on its slot. */
static inline void mroce_rec_flying(struct mroce_qp *qp, const struct mroce_txpkt *rec)
{
	qp->paths[rec->path].inflight++;	/* a record's slot is always < attr.paths (tx.c) */
}

/* tx.c: requester transmit, ACK/NACK transmit */
int mroce_emit(struct mroce_qp *qp, struct mroce_hdr *h, const struct mroce_sge *sg, __u32 nsge,
	       __u32 sg_off, const void *lin, __u8 path);
int mroce_qp_tx(struct mroce_qp *qp, __u64 now);
bool mroce_next_new(struct mroce_qp *qp, struct mroce_txpkt *rec, __u64 now);
__u32 mroce_rjob_pkts(const struct mroce_qp *qp, const struct mroce_rjob *j);
void mroce_fail_wqe_of(struct mroce_qp *qp, struct mroce_txpkt *rec, enum mroce_wc_status st);
void mroce_send_ack(struct mroce_qp *qp, __u64 now);
void mroce_send_probe(struct mroce_qp *qp, __u32 psn, struct mroce_txpkt *rec);
void mroce_send_nack(struct mroce_qp *qp, __u8 code, __u32 psn, __u32 msn);
void mroce_send_nack_on(struct mroce_qp *qp, __u8 code, __u32 psn, __u16 stream, __u32 msn);
void mroce_send_rnr(struct mroce_qp *qp, const struct mroce_hdr *refused);
/* ack.c: streams */
__u64 mroce_streams_next_hold(const struct mroce_qp *qp, __u64 now);

/* place.c: responder placement of arriving requests and READ responses */
int mroce_sg_copy(const struct mroce_pd *pd, const struct mroce_sge *sg, __u32 n, __u32 off,
		  void *lin, __u32 len, bool to_sg);
int mroce_place(struct mroce_qp *qp, const struct mroce_hdr *h, const void *payload, __u32 psn);
struct mroce_swqe *mroce_read_of(struct mroce_qp *qp, __u32 id);

/* ack.c: the completer side of ACKs and NACKs */
void mroce_handle_ack(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now);
void mroce_handle_nack(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now);
void mroce_pkt_acked(struct mroce_qp *qp, struct mroce_txpkt *rec, __u32 psn, __u64 now);

/* loss.c: loss detection (RACK, head timer) and the retransmission timer */
__u32 mroce_rto_base(const struct mroce_qp *qp, __u32 inflight);
void mroce_stall_note(__u32 *stall, __u64 *at, __u32 seen, __u64 now);
void mroce_peer_stall(struct mroce_qp *qp, __u32 seen, __u64 now);
__u32 mroce_stall_allow(const struct mroce_qp *qp);
__u64 mroce_rto_due(const struct mroce_qp *qp);
__u32 mroce_backoff(const struct mroce_qp *qp, __u32 base, __u32 expiries);
__u64 mroce_head_due(const struct mroce_qp *qp, const struct mroce_txpkt *rec);
/* When the tail loss probe is due (loss.c); 0: none. */
__u64 mroce_tlp_due(const struct mroce_qp *qp);
/* loss.c: a copy in flight declared lost on the peer's news (RACK, per-path SACK, an answer). */
void mroce_declare_lost(struct mroce_qp *qp, struct mroce_txpkt *rec, __u32 psn);
/* Asks (loss.c): one went, with bth.ts ts; an ACK came that may answer it. */
void mroce_ask_sent(struct mroce_qp *qp, __u32 ts, __u64 now);
void mroce_ask_heard(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now);
void mroce_rack_detect(struct mroce_qp *qp, __u64 now);
void mroce_qp_timers(struct mroce_qp *qp, __u64 now);
__u64 mroce_read_due(const struct mroce_qp *qp);

/* paths.c: the path scoreboard */
/* The slot of the next new packet (choose), taken once it is sent (took); both at once (pick). */
__u8 mroce_path_choose(const struct mroce_qp *qp, __u64 now, bool *skipped);
void mroce_path_took(struct mroce_qp *qp, __u8 slot, bool skipped, __u64 now);
void mroce_path_refused(struct mroce_qp *qp, __u8 slot);
void mroce_plane_clocked(struct mroce_qp *qp, __u8 plane, __u64 now);
__u8 mroce_pick_path(struct mroce_qp *qp, __u64 now);
void mroce_path_suspect(struct mroce_qp *qp, const struct mroce_txpkt *rec, __u32 thresh, __u64 now);
void mroce_path_marked(struct mroce_qp *qp, __u8 slot, __u64 now);
void mroce_path_trim(struct mroce_qp *qp, struct mroce_path *p, __u64 now);
void mroce_path_acked(struct mroce_qp *qp, struct mroce_path *p);
__u8 mroce_resend_path(const struct mroce_qp *qp, __u8 was, __u64 now);
__u8 mroce_copy_path(const struct mroce_qp *qp, __u8 first, __u32 k);
int mroce_plane_copy_path(const struct mroce_qp *qp, __u8 first, __u64 now);
__u8 mroce_echo_slot(const struct mroce_qp *qp);
void mroce_echo_sent(struct mroce_qp *qp, __u8 slot);
void mroce_ret_heard(struct mroce_qp *qp, __u8 slot, __u16 sport);

/* planes.c: the planes' states, slots moved off dead planes and back */
void mroce_planes_connect(struct mroce_qp *qp, __u8 n, __u64 now);
void mroce_plane_heard(struct mroce_qp *qp, __u8 plane, __u64 sent_us, __u64 now);
void mroce_planes_timer(struct mroce_qp *qp, __u64 now);
bool mroce_planes_echo(struct mroce_qp *qp, __u32 ts_echo, __u64 now);
__u64 mroce_planes_due(const struct mroce_qp *qp);
__u8 mroce_plane_ack_way(const struct mroce_qp *qp, __u8 plane, __u64 now);
bool mroce_plane_answer_there(struct mroce_qp *qp, __u8 plane, __u64 now, __u32 *nonce);
void mroce_plane_answer_sent(struct mroce_qp *qp, __u8 plane, __u32 nonce, __u64 now);
bool mroce_plane_ack_probe(struct mroce_qp *qp, __u8 plane, __u64 now, __u32 *nonce);
void mroce_plane_ack_probe_sent(struct mroce_qp *qp, __u8 plane, __u32 nonce, __u64 now);
void mroce_plane_resend_in(struct mroce_qp *qp, __u8 plane);
void mroce_planes_stalled(struct mroce_qp *qp, __u64 now);
bool mroce_planes_held(const struct mroce_qp *qp);
__u32 mroce_planes_shunned(const struct mroce_qp *qp, __u64 now);
bool mroce_planes_may_send(const struct mroce_qp *qp);
bool mroce_planes_stall_probes(const struct mroce_qp *qp);
int mroce_planes_probe_slot(const struct mroce_qp *qp);

void mroce_plane_probe_mark(struct mroce_qp *qp, struct mroce_hdr *h, __u8 path, __u64 now);

/*
 * What a plane not proven yet may carry before its nonce comes back: an
 * initial window (MROCE_CC_INIT_PKTS, what a new connection sends in its
 * first round trip anyway). Bounded so: a peer naming a victim's address
 * for a plane gets at most this many data packets sent there per
 * connection, and none more until a probe of its own proves it.
 */
#define MROCE_PLANE_UNPROVEN_PKTS	MROCE_CC_INIT_PKTS

/* Plane pl is up and proven: its address echoed a nonce of ours (planes.c). */
static inline bool mroce_plane_proven(const struct mroce_qp *qp, __u8 pl)
{
	return !qp->planes[pl].down && !qp->planes[pl].unproven;
}

/*
 * Data may go on plane pl: it is up, and proven or within what an unproven
 * plane may carry before its proof (planes.c). A down plane carries its
 * probe alone, which the callers arrange.
 */
static inline bool mroce_plane_open(const struct mroce_qp *qp, __u8 pl)
{
	return !qp->planes[pl].down && (!qp->planes[pl].unproven || qp->planes[pl].credit);
}

/* Data sent on a plane: it owes an acknowledgement from now on (planes.c). */
static inline void mroce_plane_sent(struct mroce_qp *qp, __u8 plane, __u64 now)
{
	if (!qp->planes[plane].wait_since_us)
		qp->planes[plane].wait_since_us = now;
}
void mroce_path_retire(struct mroce_qp *qp, struct mroce_path *p);
void mroce_path_scoreboard(struct mroce_qp *qp, __u64 now);
__u64 mroce_path_epoch_due(const struct mroce_qp *qp);
void mroce_path_loss(struct mroce_qp *qp, const struct mroce_txpkt *rec);
void mroce_path_copy_lost(struct mroce_qp *qp, const struct mroce_txpkt *rec);

/*
 * How much later than a packet another one on the same path must have been
 * sent, and delivered, before the first counts lost: a quarter of the
 * path's base RTT (its lowest; the QP's while it has none), what a route's
 * jitter may reorder. Not of its smoothed RTT: a queue delays every packet
 * alike and reorders none, and a FIFO's losses should not wait for it. So
 * a path's losses are known for what it sent before del_sent_us minus this.
 */
static inline __u32 mroce_path_reo_us(const struct mroce_qp *qp, const struct mroce_path *p)
{
	__u32 base = p->min_rtt_us ? p->min_rtt_us : p->srtt_us ? p->srtt_us : qp->srtt_us;

	return base / 4 + 2 > qp->reo_seen_us ? base / 4 + 2 : qp->reo_seen_us;
}
void mroce_path_head_lost(struct mroce_qp *qp, const struct mroce_txpkt *rec);

/*
 * How long past an RTT a packet may still arrive behind later ones on
 * other paths before it counts lost (RACK's reordering window, and what
 * the tail probe and the head timer wait beyond their RTTs). Where it is
 * known how far apart the paths' base delays are (spread_us, 0 while
 * unknown: spraying over them reorders that much) and that is at most
 * MROCE_REO_MAX_US (what a software path's scheduling adds): four measured
 * RTT deviations (rttdev_us) and what is left of RFC 6298's first guess
 * of half the RTT (rttvar_us - rttdev_us) once, plus that spread or, if
 * more, a quarter of the base RTT (RFC 8985's window, min_RTT/4), the two
 * at most MROCE_REO_MAX_US. Otherwise, or with no RTT yet, four deviations
 * and MROCE_REO_MAX_US: a path may be any amount slower than those heard
 * from, and over paths 10..100 us apart the deviation is what spraying
 * over them reorders. Scaled so: at datacenter RTTs of a few microseconds
 * a fixed 20 us was several RTTs of waiting on every lost packet, and four
 * times the first guess was two more on every new connection that lost
 * one (docs/scale.md).
 */
#define MROCE_REO_MAX_US	20
static inline __u32 mroce_reo_allow(__u32 base_us, __u32 rttvar_us, __u32 rttdev_us,
				    __u32 spread_us)
{
	__u32 q = base_us / 4 + 2;

	if (!base_us || !spread_us || spread_us > MROCE_REO_MAX_US)
		return 4 * rttvar_us + MROCE_REO_MAX_US;
	if (spread_us > q)
		q = spread_us;
	if (rttdev_us > rttvar_us)
		rttdev_us = rttvar_us;
	return 4 * rttdev_us + (rttvar_us - rttdev_us) + (q < MROCE_REO_MAX_US ? q : MROCE_REO_MAX_US);
}
/* The QP's base RTT for that: its lowest sample, its smoothed RTT while it has none. */
static inline __u32 mroce_qp_base_rtt(const struct mroce_qp *qp)
{
	return qp->min_rtt_us ? qp->min_rtt_us : qp->srtt_us;
}
/*
 * The spread of the QP's paths' base RTTs, for its reordering allowance:
 * its own once every slot has a base RTT; till then its device's latest
 * (its paths cross the same fabric, as the RTT hint assumes), which a QP
 * whose flow puts one packet on each slot would otherwise never have.
 */
static inline __u32 mroce_qp_spread(const struct mroce_qp *qp)
{
	return qp->path_spread_us ? qp->path_spread_us : qp->dev->spread_hint_us;
}
/* The QP's own allowance, from its measurements (RACK and the head timer). */
static inline __u32 mroce_qp_reo_allow(const struct mroce_qp *qp)
{
	__u32 a = mroce_reo_allow(mroce_qp_base_rtt(qp), qp->rttvar_us, qp->rttdev_us,
				  mroce_qp_spread(qp));

	return a > qp->reo_seen_us ? a : qp->reo_seen_us;	/* or what its routes showed */
}
struct mroce_left_route *mroce_left_route(struct mroce_qp *qp, __u8 path, __u16 entropy);
#define MROCE_HEAD_COPIES	3	/* a head lost twice goes out on this many more slots (tx.c) */

/* reorder.c: the reordering window, learned from losses proven spurious */
void mroce_reo_declared(struct mroce_qp *qp, const struct mroce_txpkt *rec, __u32 psn);
void mroce_reo_overtaken(struct mroce_qp *qp, const struct mroce_path *p,
			 const struct mroce_txpkt *rec);
void mroce_reo_acked(struct mroce_qp *qp, const struct mroce_txpkt *rec, __u32 psn, __u64 now);
void mroce_reo_check(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now);

/* An ACK's per-path SACK: place i behind the newest arrival on its slot arrived. */
static inline bool mroce_psack_has(const struct mroce_hdr *h, __u32 i)
{
	return h->psack[i / 64] >> (i % 64) & 1;
}

/* psack.c: per-path selective ACKs */
struct mroce_rxpath;
void mroce_psack_mark(struct mroce_rxpath *r, __u16 pseq);
struct mroce_rxpath *mroce_rxpath_of(struct mroce_qp *qp, __u8 slot);
void mroce_psack_fill(const struct mroce_qp *qp, __u8 slot, struct mroce_hdr *h);
__u32 mroce_psack_holes(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now);

/* rate.c: receiver-driven rate grants */
void mroce_grant_rx(struct mroce_qp *qp, const struct mroce_hdr *h, __u32 bytes, bool ce, __u64 now);
__u32 mroce_grant_of(const struct mroce_qp *qp);
void mroce_grant_heard(struct mroce_qp *qp, const struct mroce_hdr *ack);
bool mroce_grant_counts(const struct mroce_qp *qp, __u64 queue_us, __u64 now);
__u32 mroce_grant_epoch_us(const struct mroce_dev *dev);
void mroce_grant_resume(struct mroce_qp *qp, __u64 now);

/* comp.c: completions */
void mroce_complete_sq(struct mroce_qp *qp);
void mroce_complete_rq(struct mroce_qp *qp);
void mroce_report_recv(struct mroce_qp *qp, struct mroce_rwqe *r);
void mroce_read_maybe_done(struct mroce_qp *qp, struct mroce_swqe *w);

#endif /* MROCE_ENG_INT_H */
