/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Queue pairs and their queue entries, in-flight records and receive
 * messages, as the engine sees them. Not installed.
 *
 * Per-QP state has a fixed size decided at creation (rings below); nothing
 * is allocated per message or per packet.
 */
#ifndef MROCE_QP_H
#define MROCE_QP_H

#include <stdbool.h>

#include "mroce/mroce.h"
#include "mroce/wire.h"

struct mroce_dev;
struct mroce_pd;
struct mroce_cq;
struct mroce_cc_ops;

#define MROCE_PKT_RING		1024	/* in-flight packet records at most, >= the receive window */
/* Places a later packet on the same path may overtake before a packet counts lost (loss.c). */
#define MROCE_PATH_DUPTHRESH	3
#define MROCE_READ_JOBS		64	/* READ responses being sent at once, per QP */
#define MROCE_READ_ADVERTISED	(MROCE_READ_JOBS / 2)	/* what a responder offers a requester */
#define MROCE_CC_PRIV_SIZE	64	/* bytes of per-QP congestion control state */
#define MROCE_CC_LOSS_RUN	2	/* lost packets in a row that are congestion (paths.c) */

_Static_assert(MROCE_PKT_RING >= MROCE_RXWIN_PSNS, "records for a full window");
_Static_assert((MROCE_PKT_RING & (MROCE_PKT_RING - 1)) == 0, "ring is a mask");

#define MROCE_MAX_PATHS		256
#define MROCE_LAST_EARLY	8	/* messages completed out of order tracked per QP (rx.c) */
#define MROCE_HOLE_REPORTS	8	/* a lasting hole's repeated ACKs, with nothing placed (tx.c) */
#define MROCE_ENTROPY_SPACE	16384	/* source ports base .. base + this - 1 */

/* Path scoreboard entry: one entropy value (UDP source port offset) a QP sprays over. */
struct mroce_path {
	__u16	entropy;	/* added to the QP's base source port */
	__u8	plane;		/* the plane it is on now (planes.c) */
	__u8	home;		/* ... and the one it goes back to when that plane is up */
	__u32	sent;		/* first transmissions lately (halved each epoch) */
	__u32	lost;		/* of those, declared lost (mroce_path_loss) */
	__u32	srtt_us;	/* smoothed RTT of first transmissions on this entropy value */
	__u32	min_rtt_us;	/* and the lowest of them: the route's delay with no queue */
	__u32	samples;	/* RTT samples this epoch */
	__u32	epoch_min_us;	/* ... the lowest of them (0: none) */
	__u32	samples_prev;	/* ... and in the epoch before */
	__u32	marks;		/* CE marks echoed for it this epoch */
	__u32	echoes;		/* ACKs that echoed it this echo round: its way back works */
	__u32	acked;		/* first transmissions acknowledged this echo round */
	/*
	 * The path's own sequence: transmissions on this slot so far (each
	 * record keeps its copy's, txpkt.pseq), and of the first transmissions
	 * on the current entropy value known delivered, the newest one's
	 * (valid once del_valid). A path does not reorder: what was sent on it
	 * MROCE_PATH_DUPTHRESH before that and is not delivered is lost (loss.c).
	 */
	__u16	tx_pseq;
	__u16	del_pseq;
	bool	del_valid;
	__u64	del_sent_us;	/* when that newest delivered one was sent */
	/* the newest hole in the peer's per-path SACK already acted on (psack.c) */
	__u16	hole_pseq;
	bool	hole_valid;
	/*
	 * The path's state (MRC's, per entropy value; paths.c): GOOD; SKIP
	 * until skip_until_us, after a CE mark (its window trimmed for an RTT,
	 * the next packets go to clear paths); ASSUMED_BAD (bad), after a loss
	 * with nothing sent later on it delivered: it takes only a probe
	 * packet per RTT until one gets through; DENIED: retired, a fresh
	 * entropy value (mroce_path_retire).
	 */
	bool	bad;
	__u64	skip_until_us;
	/*
	 * Its own window (MetaRoCE's per-path windows): copies on the slot not
	 * yet acknowledged or declared lost, and how many it may have, in
	 * 1/256 packets, 0 for the connection's whole window. A CE mark on it
	 * halves what it has in flight, once per RTT;
	 * each of its packets acknowledged grows it by one packet per window,
	 * back to the connection's. A full slot takes no new packet.
	 */
	__u32	inflight;
	__u32	pwnd_x256;
	__u64	trim_at_us;
	__u64	probe_at_us;	/* ASSUMED_BAD: when the next probe may go */
	__u64	bad_sent_us;	/* ... and the lost packet's send time: only later ones clear it */
	__u64	heard_us;	/* when a copy on its current entropy value was last acknowledged */
	__u64	lost_sent_us;	/* when the newest first transmission counted in lost was sent */
};

/*
 * A route a slot was moved off lately (mroce_path_retire): its copies still
 * queued there arrive late, not lost, while it keeps delivering (loss.c,
 * path_delivering). When a copy on it was last acknowledged, and the send
 * time of the newest first transmission on it delivered.
 */
/*
 * A loss declared on a copy's own route, remembered until the peer's
 * per-path SACK shows whether it arrived after all (reorder.c).
 */
struct mroce_suspect {
	__u64	sent_us;
	__u32	psn;
	__u16	pseq;		/* its place in the slot's sequence */
	__u16	entropy;
	__u8	path;
	bool	charged;	/* counted in the slot's losses (a first transmission) */
	bool	valid;
};
#define MROCE_SUSPECTS	32

struct mroce_left_route {
	__u16	entropy;
	__u8	path;
	bool	valid;
	__u64	heard_us;
	__u64	del_sent_us;
};
#define MROCE_LEFT_ROUTES	8	/* remembered, the oldest forgotten first */

/*
 * What arrived on one of the peer's path slots (the per-path SACK, psack.c):
 * one past the newest pseq, and bit i: pseq next - 1 - i arrived.
 */
struct mroce_rxpath {
	__u16	next;
	bool	valid;
	__u8	stale;		/* arrivals in a row too far behind next to record (psack.c) */
	__u64	bits[MROCE_PSACK_WORDS];
};

/*
 * A queue has built on the path's route: its RTT is over twice its lowest,
 * by samples of this scoreboard epoch or the one before. Its losses are
 * then congestion (a full queue drops, whatever the ports), not a failing
 * route (moving the slot would only churn), nor random loss (resending
 * into the queue at full rate would only overflow it more). A path that
 * gave no sample for two epochs says nothing of a queue: its last RTT may
 * be a dead route's, frozen, and a dead route must stay retirable.
 */
static inline bool mroce_path_queued(const struct mroce_path *p)
{
	return p->min_rtt_us && (p->samples || p->samples_prev) && p->srtt_us > 2 * p->min_rtt_us + 20;
}

/*
 * The way back for the peer's path slot i: ACKs and NACKs that echo slot i
 * leave on this entropy value, moved to a fresh one when the peer moves its
 * slot i (paths.c, mroce_ret_heard).
 */
struct mroce_ret {
	__u16	entropy;
	__u16	peer_sport;	/* UDP source port the peer's slot i last came from (0: none yet) */
	__u8	plane;		/* ... and the plane it came in on: its ACKs go back on it */
};

/*
 * A plane as one QP sees it (planes.c): up while what it sends on it is
 * acknowledged; down, its slots on the others, while probes find it dead.
 */
struct mroce_plane {
	__u64	heard_us;	/* a copy sent on it last acknowledged */
	__u64	del_sent_us;	/* ... the newest of them sent */
	__u64	wait_since_us;	/* the first data sent on it since then (0: none) */
	__u64	probe_at_us;	/* down: when the next probe starts */
	__u32	probe_gap_us;	/* down: between probes, doubling to MROCE_PLANE_PROBE_MAX_US */
	bool	down;
	bool	unproven;	/* up, its address not proven yet: carries at most credit packets more */
	__u16	credit;
	bool	stamp;		/* its next data packet carries the nonce (the first plane's first, for its echo's RTT) */
	bool	trial;		/* down: a probe is out, on slot trial_slot (one packet's window) */
	__u8	trial_slot;
	__u16	trial_pseq;	/* ... the slot's sequence of its packet */
	bool	trial_armed;	/* ... whose nonce, echoed, proves the plane (till the next probe) */
	bool	probe_on_stall;	/* down: probed at the QP's next stall, whenever probe_at_us is (planes.c) */
	bool	nonced;		/* a probe has been sent: */
	__u32	nonce;		/* ... the latest one's bth.ts */
	__u64	nonce_at_us;	/* ... when it started */
	__u64	echo_of_us;	/* the latest probe echoed: when it started (0: none) */
	__u32	echo_rtt_us;	/* ... and how long its echo took */
	/* an ACK sent as a probe (a receiver's: no data to carry one; planes.c) */
	bool	ack_nonced;
	__u32	ack_nonce;
	__u64	ack_nonce_at_us;
	__u64	ack_probe_at_us;	/* the next one not before */
	__u32	ack_probe_gap_us;	/* ... doubling like probe_gap_us (0: the first not sent) */
	__u64	answer_at_us;	/* not proven here: the next probe's answer sent on it not before */
	bool	resent_in;	/* not proven here: a resend came in on it since our last ACK probe there */
	__u64	drops_seen;	/* the datapath's drops on the planes' interfaces, at its last verdict (plane_busy) */
	__u8	busy_waits;	/* silences taken for a busy host since it was last heard from */
	__u64	busy_until_us;	/* ... the latest: no verdict before */
	/* what it delivers (paths.c, mroce_plane_clocked): packets acknowledged ... */
	__u32	rate_acks;	/* ... since rate_at_us */
	__u64	rate_at_us;
	__u32	rate_ppms;	/* ... per millisecond, smoothed (0: not measured yet) */
	bool	refused;	/* its transmit ring refused a packet, and none has gone there since */
};

/* Send queue entry. */
struct mroce_swqe {
	__u64		wr_id;
	__u64		raddr;
	__u32		rkey;
	__u32		imm;
	__u32		len;
	__u32		sent;		/* bytes packetised so far */
	__u32		npkts;		/* packets it needs (>= 1) */
	__u32		acked;		/* packets acknowledged */
	__u32		msn;		/* RQ sequence (SEND*, WRITE_IMM) or SQ sequence (READ) */
	__u32		rd_got;		/* READ: response bytes placed */
	__u32		emitted;	/* packets sent for the first time */
	__u32		first_psn;	/* PSN of its first packet (a READ's request) */
	__u32		last_psn;	/* PSN of its last packet, once all are sent */
	__u8		opcode;		/* MROCE_OP_* */
	__u8		status;		/* enum mroce_wc_status once done */
	__u8		done;		/* transport finished with it */
	__u8		flags;		/* MROCE_SEND_* */
	__u8		reported;	/* completion queued */
	__u8		moved;		/* moved to the tail: an empty entry (comp.c) */
	__u8		rd_seen;	/* READ: a response arrived */
	__u8		rnr_waits;	/* RNR waits this request was NACKed in */
	__u8		stream_err;	/* its status is its stream's failure, not the QP's (ack.c) */
	__u16		stream;		/* its ordered stream (mroce_post_send_on) */
	__u16		epoch;		/* its attempt, sent as deth.epoch (restarts: ack.c) */
	__u32		num_sge;
	struct mroce_sge sge[MROCE_MAX_SGE];
};

/* A message being received (SEND, SEND_IMM, WRITE_IMM), in the receive it takes. */
enum { MSG_FREE, MSG_ACTIVE, MSG_WHOLE };
struct mroce_msgslot {
	__u32	got;
	__u32	len;
	__u32	max_psn;
	__u32	imm;
	__u16	epoch;		/* the attempt its bytes are from (deth.epoch) */
	__u8	opcode;
	__u8	state;
	__u8	status;		/* receiver-side error (e.g. local length) */
};

struct mroce_rwqe {
	__u64		wr_id;
	__u32		len;
	__u8		reported;	/* completion queued (unordered mode, errors) */
	__u32		num_sge;
	struct mroce_sge sge[MROCE_MAX_SGE];
	struct mroce_msgslot msg;	/* the message taking it, once one arrives */
};

/*
 * One ordered stream of receive-consuming messages (protocol.md, "Streams").
 * All streams share the QP's PSN space, paths, windows and congestion
 * control; each has only its own receive queue and these counters. A stream
 * refused for want of a receive is restarted alone: its refused messages give
 * up their PSNs (VOID) and go again later with new ones, in the next epoch,
 * while the other streams go on.
 */
struct mroce_stream {
	/* receiving: the receives posted on it (rq_mask + 1 entries, ring.c) */
	struct mroce_rwqe	*rq;
	__u32			rq_mask;
	__u32			rq_head;	/* oldest posted, = next message to complete */
	__u32			rq_tail;
	/* sending */
	__u32			ssn;		/* messages posted on it so far */
	__u16			epoch;		/* restarts so far: a restarted message's new epoch */
	bool			probing;	/* restarted: one packet until one is taken */
	bool			probe_sent;	/* ... and it is out, at probe_psn */
	__u32			probe_psn;
	__u64			hold_until_us;	/* refused: nothing of it goes out before */
	bool			failed;		/* its send half failed (RNR retries exceeded, ack.c) */
};

/*
 * A READ response the responder is sending (shares the responder's PSN
 * space). It names the region by key and address, not by pointer: every
 * packet looks the region up again, so a region deregistered meanwhile is
 * never read (the job is cancelled, see tx.c).
 */
struct mroce_rjob {
	__u64		raddr;		/* address of the READ's byte `base` */
	__u32		rkey;
	__u32		req_psn;	/* PSN of the request, for a NACK */
	__u32		msn;		/* requester's READ id */
	__u32		msg_len;	/* whole READ length */
	__u32		base;		/* offset of src[0] within the READ */
	__u32		len;		/* bytes of this job */
	__u32		sent;		/* bytes packetised */
	__u32		emitted;	/* packets sent for the first time */
	__u32		acked;
	__u32		seq;		/* order of arrival: jobs are served oldest first */
	bool		used;
	bool		cancelled;	/* region gone: only what is in flight is still answered */
};

/* What each in-flight PSN carries, so it can be rebuilt for retransmission. */
enum { PKT_FREE, PKT_INFLIGHT, PKT_SACKED, PKT_LOST };
/*
 * What a record's wqe field names: its own field, so every 32-bit SQ
 * sequence is a request. PKT_VOID names nothing: its request was refused
 * and restarted, the PSN is sent again only to be given up (MROCE_OP_VOID).
 */
enum { PKT_REQ, PKT_RESP, PKT_VOID };
struct mroce_txpkt {
	__u64	sent_us;
	__u32	tx_seq;		/* order of this transmission among all of the QP's */
	__u32	wqe;		/* PKT_REQ: SQ sequence number; PKT_RESP: READ job index */
	__u32	offset;		/* within the message */
	__u16	len;
	__u8	kind;		/* PKT_REQ or PKT_RESP */
	__u8	state;
	__u8	retx;	/* times resent for its own sake (timer, SACK hole, NACK) */
	/*
	 * Of those, resends after a timer (RTO, head timer) declared the copy
	 * before lost: what retry_cnt bounds (<= 255, so no wrap). A loss RACK
	 * finds was revealed by a later packet's delivery, so the peer and a
	 * route to it work: under congestion a packet may lose any number of
	 * races to a full queue and the QP lives.
	 */
	__u8	tmo;
	__u8	path;
	__u8	timer_lost:1;	/* the current PKT_LOST was a timer's verdict */
	__u8	gbn:1;	/* queued again only because go-back-N resends everything after a gap */
	__u8	cross:1;	/* its latest resend had copies on other planes: an ACK cannot tell which plane delivered */
	__u16	entropy;	/* the path's entropy value when sent (losses charge only that) */
	__u16	pseq;		/* the path's sequence of this copy (mroce_path.tx_pseq) */
};

_Static_assert(sizeof(struct mroce_txpkt) == 32, "a ring of 1024 per QP: keep it small");

struct mroce_qp {
	struct mroce_dev	*dev;
	struct mroce_pd		*pd;		/* the only regions it reaches */
	struct mroce_cq		*send_cq, *recv_cq;
	struct mroce_qp_attr	attr;		/* with defaults filled in */
	__u32			qpn;
	enum mroce_qp_state	state;
	__u64			secret;		/* our half of the token */
	__be64			token_be;	/* both halves, wire order */

	/* remote end */
	struct mroce_route	route;		/* addresses, entropy base in sport */
	/* Planes both ends have (planes.c): each one's addresses; proute[0] is route. */
	__u8			nplanes;
	struct mroce_route	proute[MROCE_MAX_PLANES];
	struct mroce_plane	planes[MROCE_MAX_PLANES];
	/* ACK echoes that were neither a time of ours nor a nonce: a peer
	 * guessing nonces; past MROCE_PLANE_GUESSES no echo proves a plane */
	__u32			echo_guesses;
	__u32			rqpn;
	__u32			payload_max;	/* bytes of payload per packet */

	/* send side */
	struct mroce_swqe	*sq;		/* sq_mask + 1 entries, grown on use (ring.c) ... */
	__u32			sq_mask;
	__u32			sq_max_mask;	/* ... up to a power of two >= attr.sq_depth */
	__u32			sq_head;	/* oldest not completed */
	__u32			sq_next;	/* next to packetise */
	__u32			sq_tail;	/* next free */
	__u32			sq_moved;	/* entries in [sq_head, sq_tail) moved on, empty */
	__u32			sq_reported;	/* ... reported, waiting for the head to pass
						 * (no longer outstanding: post.c) */
	struct mroce_stream	*streams;	/* attr.streams of them, both directions */
	struct mroce_txpkt	*pkts;		/* pkt_mask + 1 records, grown as the window opens (ring.c) */
	__u32			pkt_mask;
	__u32			snd_una;	/* oldest unacknowledged PSN */
	__u32			snd_nxt;	/* next new PSN */
	__u32			high_sacked;	/* newest PSN known received (valid if have_sack) */
	bool			have_sack;
	__u32			tx_seq;		/* transmissions so far */
	__u32			rack_seq;	/* newest transmission known delivered (RACK) */
	__u64			rack_sent_us;	/* and when it was sent */
	__u64			rack_timer_us;	/* next time a hole may turn into a loss (0: none) */
	__u32			nlost;		/* records in PKT_LOST */
	__u32			nsacked;	/* records in PKT_SACKED (delivered, beyond snd_una) */
	__u64			last_progress_us;
	__u64			last_tx_us;	/* the newest transmission, first copy or resend */
	__u8			tlp_out;	/* tail probes sent since the last progress (loss.c) */
	/* Asking before resending (loss.c "Asks"): */
	bool			peer_asks;	/* the peer's latest ACK said it answers asks */
	bool			ask_due;	/* an ask is owed: the next ACK carries it */
	bool			ask_live;	/* an ask went out, not answered yet */
	__u32			ask_ts;		/* its bth.ts: an ACK echoing this or later answers it */
	__u64			ask_sent_us;	/* when it went */
	__u32			ask_nxt;	/* snd_nxt then: what it asks about is before */
	__u64			loss_seen_us;	/* the newest loss the peer's news showed (0: none) */
	__u32			rto_us;		/* current, with backoff */
	__u32			rto_floor_us;	/* raised by timeouts proven spurious (ack.c) */
	__u32			stall_us;	/* the peer's stalls its RTT samples showed (ack.c) */
	__u32			hs_rtt_us;	/* the connection manager's exchange (cm.c; 0: none) */
	__u64			stall_at_us;
	__u32			timeouts;	/* RTO expiries since the last progress */
	__u32			srtt_us;
	__u32			rttvar_us;	/* mean deviation of RTT samples */
	/*
	 * The same as measured, from 0 at the first sample where rttvar_us
	 * starts from RFC 6298's guess of half the RTT: rttvar_us - rttdev_us
	 * is what is left of that guess (mroce_reo_allow).
	 */
	__u32			rttdev_us;
	__u32			min_rtt_us;	/* lowest RTT sample: the path's base delay */
	/* congestion control (lib/cc.h); window in 1/256 packets */
	const struct mroce_cc_ops *cc;
	__u32			cwnd_x256;
	/*
	 * The send time of the newest packet declared lost on a path showing a
	 * queue (mroce_path_queued): congestion loss, which cuts the window
	 * once per window sent (cc.c); random loss builds no queue and does not.
	 */
	__u64			cc_loss_sent_us;
	__u32			cc_loss_seq, cc_loss_run;	/* the last lost tx_seq, and its run */
	__u64			cc_priv[MROCE_CC_PRIV_SIZE / 8];	/* the algorithm's state */
	__u64			rnr_until_us;	/* the first held stream's hold ends (0: none held) */
	struct mroce_rjob	rjobs[MROCE_READ_JOBS];
	__u32			rjob_seq;	/* READ jobs accepted so far */
	__u32			rjobs_live;	/* of rjobs[], those used: none, nothing to scan */
	/* READs of ours: at most rd_limit outstanding; a progress timer for their responses */
	__u32			rd_limit;
	__u32			rd_outstanding;	/* READ requests sent whose READ is not done */
	__u64			rd_progress_us;	/* last response byte placed (or first request sent) */
	__u32			rd_timeouts;	/* response timer expiries without progress */
	/* a responder's error, reported once every PSN before it is placed (ordered mode) */
	bool			rsp_err;
	bool			rsp_err_recv;	/* the refused request takes a receive */
	__u8			rsp_err_code;	/* MROCE_NAK_* */
	__u32			rsp_err_psn, rsp_err_msn;
	__u16			rsp_err_stream;	/* the refused message's, as it came (it may
						 * name a stream this QP lacks: see rsp_err_recv) */
	__u32			next_path;
	__u8			good_path;	/* slot that last delivered a first transmission */
	bool			good_known;	/* ... once one has (till then good_path means nothing) */
	__u16			good_entropy;	/* on this entropy value (retired since: no longer good) */
	__u64			good_sent_us;	/* when that first transmission was sent (paths.c) */
	__u32			path_spread_us;	/* paths' base RTTs, highest - lowest + 1; 0: unknown */
	/* The newest time an earlier ACK echoed, and (while one is handled) before it (ack.c). */
	__u32			echo_newest, echo_before;
	__u8			echo_path;	/* receiving: path slot of the newest data packet */
	bool			echo_mark;	/* the next ACK echoes echo_path: it carries a CE mark */
	__u32			echo_next;	/* the slot after the one the last ACK echoed */
	__u32			ret_slots;	/* the peer's path slots heard of: 1 + the highest */
	struct mroce_ret	ret[MROCE_MAX_PATHS];
	struct mroce_path	*paths;		/* attr.paths of them: the QP's own slots */
	struct mroce_left_route	left[MROCE_LEFT_ROUTES];
	__u32			left_next;	/* the entry the next retirement takes */
	__u16			next_entropy;	/* next fresh entropy value */
	__u64			path_epoch_us;
	__u64			path_epoch_pkts;	/* first transmissions when the epoch began */
	struct mroce_qp_stats	st;		/* what mroce_qp_query_stats reports */
	/* How much its routes reorder, learned from spurious losses (reorder.c). */
	struct mroce_suspect	suspects[MROCE_SUSPECTS];
	__u32			suspect_next;
	__u32			nsuspects;	/* of those, valid: none, nothing to scan */
	__u32			reo_seen_us;	/* the learned window: 0 till a loss proved spurious */
	__u32			reo_real;	/* remembered losses proven real since */
	__u64			stats_at_us;	/* last published to the flows map */

	/* receive side */
	struct mroce_flow	*flow;		/* receive window (the BPF map's entry) */
	struct mroce_flow	local_flow;	/* used when there is no BPF map (tests) */
	/* The same flow in the other planes' maps, kept in step with it (rx.c); NULL: none. */
	struct mroce_flow	*pflow[MROCE_MAX_PLANES];
	__u32			rq_max_mask;	/* each stream's receive ring grows up to >= attr.rq_depth */
	__u32			unacked;	/* packets since our last ACK */
	/* Messages whose last packet came before the rest: those last PSNs (rx.c acks the packet
	 * completing each at once); more at once than this wait for the delayed ACK. */
	__u32			last_early[MROCE_LAST_EARLY];
	__u8			nlast_early;
	/* a hole behind one reported again since the last packet placed (tx.c; MROCE_HOLE_REPORTS) */
	__u8			hole_reports;
	__u64			ack_due_us;	/* 0: no ACK pending */
	__u32			ts_echo;
	__u64			ts_echo_at;	/* when that packet arrived: ACKs add the wait (tx.c) */
	/*
	 * A plane's probe arrived (on the plane of the index): an ACK echoes
	 * its nonce, not ts_echo, one ACK per plane (rx.c, tx.c).
	 */
	bool			probe_echo[MROCE_MAX_PLANES];
	__u32			probe_nonce[MROCE_MAX_PLANES];
	__u64			probe_nonce_at[MROCE_MAX_PLANES];
	__u8			ack_via;	/* the next ACK's plane + 1, for tx.c (0: its way back's) */
	/* the slot the next resend takes, + 1 (0: the usual choice): a timer found the QP stalled */
	__u8			stall_slot;
	__u64			rx_plane_at[MROCE_MAX_PLANES];	/* data last came in on each */
	__u8			rx_newest_plane;	/* ... and on which the latest did */
	__u16			ecn_ce, ecn_pkts;
	/* per-path SACKs of the peer's slots, as many as the highest heard needs (psack.c) */
	struct mroce_rxpath	*rxpaths;
	__u32			rxpaths_n;
	__u64			grant_last_us;	/* receiving: its last data packet (rate.c) */
	__u64			grant_bytes;	/* ... its data bytes in the grant's epoch ... */
	__u32			grant_epoch;	/* ... of this number */
	/*
	 * One-way delays of its data packets (rate.c), the clocks' offset
	 * included, modulo 2^32 (bth.ts is the peer's word): the baseline is
	 * the lowest of this window and the last, not of all time.
	 */
	__u32			owd_base;	/* lowest of the two windows: no queue */
	__u32			owd_win_min;	/* lowest of the current window */
	__u64			owd_win_us;	/* when the current window began */
	__u8			owd_odd;	/* implausible ones in a row */
	bool			owd_valid, owd_win_valid;
	__u32			gbn_nak_psn;	/* go-back-N: gap already reported ... */
	__u64			gbn_nak_us;	/* ... when (port clock) */
	struct mroce_flow_xdp	xdp_emu;	/* for ports without XDP: what it would keep (testhook.c) */
	bool			gbn_nak_sent;
	bool			ack_now;
	bool			req_turn;	/* the last new packet was a READ response: a request's turn */
	bool			ack_again;	/* a resend's ACK goes on two ways back (rx.c) */
};

/* Rings are powers of two, so free-running 32-bit sequences index them across the wrap. */
#define SWQE(qp, seq)	(&(qp)->sq[(seq) & (qp)->sq_mask])
#define RWQE(st, seq)	(&(st)->rq[(seq) & (st)->rq_mask])

/*
 * Make room in a ring of esz-byte entries for need live ones, [head, head +
 * need): 0, -ENOSPC if max_mask's ring cannot hold them, or -ENOMEM. Called
 * per post and per new packet: a ring with room already returns here, only
 * growing calls out (ring.c).
 */
#define MROCE_RING_FIRST	16	/* entries a ring starts with */
int mroce_ring_grow(void **ring, __u32 *mask, __u32 max_mask, size_t esz, __u32 head,
		    __u32 tail, __u32 need);

static inline int mroce_ring_reserve(void **ring, __u32 *mask, __u32 max_mask, size_t esz,
				     __u32 head, __u32 tail, __u32 need)
{
	if ((__u64)need <= (__u64)*mask + 1)
		return 0;
	return mroce_ring_grow(ring, mask, max_mask, esz, head, tail, need);
}

/* dev->lock held. */
void mroce_qp_fail(struct mroce_qp *qp, enum mroce_wc_status why);
void mroce_qp_flush_ack(struct mroce_qp *qp);
void mroce_qp_stats_update(struct mroce_qp *qp);
/* The heap the QP holds now, its grown rings and records included (the blocks qp_free frees). */
size_t mroce_qp_heap_bytes(const struct mroce_qp *qp);
/*
 * Connect; pmac[i - 1] is the next hop on plane i, for the first np planes
 * both ends have (np 0 or 1: one plane).
 */
/* The connection manager's exchange for qp took this long, the peer's application in it (loss.c). */
void mroce_qp_handshake_rtt(struct mroce_qp *qp, __u64 took_us);
int mroce_qp_connect_locked(struct mroce_qp *qp, const struct mroce_qp_info *remote,
			    const __u8 *mac, const __u8 (*pmac)[6], __u8 np);

/* For verbs/ only (not exported from libmroce.so): the first send PSN, set
 * after connect and before anything was sent; the READ limit (lib/qp.c). */
int mroce_qp_set_start(struct mroce_qp *qp, __u32 psn);
int mroce_qp_set_rd_limit(struct mroce_qp *qp, __u32 n);

#endif /* MROCE_QP_H */
