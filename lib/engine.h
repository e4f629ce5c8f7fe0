/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Transport engine internals: devices, memory regions, completion queues,
 * queue pairs and the frame I/O port below them. Not installed.
 *
 * Threading: every engine structure of a device is guarded by dev->lock.
 * API calls take it; so does the progress thread (or the application's
 * mroce_dev_progress() in no_thread mode) while it runs the transport.
 *
 * Per-QP state has a fixed size decided at creation (rings below); nothing
 * is allocated per message or per packet.
 */
#ifndef MROCE_ENGINE_H
#define MROCE_ENGINE_H

#include <pthread.h>
#include <stdbool.h>

#include "mroce/mroce.h"
#include "mroce/wire.h"

#define MROCE_PKT_RING		1024	/* in-flight packet records, >= the receive window */
#define MROCE_MSG_SLOTS		1024	/* receive messages tracked at once */
#define MROCE_MAX_MRS		4096
#define MROCE_READ_JOBS		64	/* READ responses being sent at once, per QP */
#define MROCE_FAULT_HOLD	8	/* frames a reorder fault can hold back */
#define MROCE_FRAME_MAX		4096
#define MROCE_CC_PRIV_SIZE	64	/* bytes of per-QP congestion control state */

_Static_assert(MROCE_PKT_RING >= MROCE_RXWIN_PSNS, "records for a full window");
_Static_assert((MROCE_PKT_RING & (MROCE_PKT_RING - 1)) == 0, "ring is a mask");
_Static_assert((MROCE_MSG_SLOTS & (MROCE_MSG_SLOTS - 1)) == 0, "ring is a mask");

/* Frame I/O below the transport: an AF_XDP socket, or a simulated wire in tests. */
struct mroce_port_ops {
	/* A buffer to build one frame in (cap set to its size), or NULL if none now. */
	void	*(*tx_buf)(void *port, __u32 *cap);
	/* Send a frame built in a buffer from tx_buf(). */
	void	(*tx_send)(void *port, void *buf, __u32 len);
	/* Push queued frames out (doorbell / wakeup). */
	void	(*tx_flush)(void *port);
	/* Hand up to budget received frames to cb; returns how many. */
	int	(*rx_burst)(void *port, void (*cb)(void *ctx, const void *frame, __u32 len),
			    void *ctx, int budget);
	/* Wait up to timeout_us for frames to arrive or wake_fd to become readable. */
	void	(*wait)(void *port, int timeout_us, int wake_fd);
	__u64	(*now_us)(void *port);
	void	(*close)(void *port);
	/* Optional: fill the port's own counters (the xsk_* fields). */
	void	(*stats)(void *port, struct mroce_dev_stats *stats);
};

#define MROCE_MAX_PATHS		256
#define MROCE_ENTROPY_SPACE	16384	/* source ports base .. base + this - 1 */
#define MROCE_ACK_PATHS		4	/* ACKs spread over at least this many source ports */

/* Path scoreboard entry: one entropy value (UDP source port offset) a QP sprays over. */
struct mroce_path {
	__u16	entropy;	/* added to the QP's base source port */
	__u16	rsvd;
	__u32	sent;		/* transmissions this epoch */
	__u32	lost;		/* of those, declared lost */
	__u32	srtt_us;	/* smoothed RTT of first transmissions on this entropy value */
	__u32	samples;	/* RTT samples this epoch */
	__u32	marks;		/* CE marks echoed for it this epoch */
};

struct mroce_mr {
	struct mroce_dev	*dev;
	__u8			*addr;
	__u64			length;
	unsigned int		access;
	__u32			lkey;
	__u32			rkey;
	bool			used;
};

struct mroce_cq {
	struct mroce_dev	*dev;
	struct mroce_wc		*ring;
	__u32			size;		/* power of two */
	__u32			head, tail;	/* consumer, producer */
	int			efd;		/* eventfd: readable while not empty */
	bool			signaled;	/* efd holds a count: a syscall per
						 * empty-to-not-empty change, not per entry */
	bool			quiet;		/* mroce_cq_set_notify(cq, false) */
	bool			overflow;
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
	__u8		opcode;		/* MROCE_OP_* */
	__u8		status;		/* enum mroce_wc_status once done */
	__u8		done;		/* transport finished with it */
	__u8		flags;		/* MROCE_SEND_* */
	__u8		reported;	/* completion queued */
	__u8		rd_seen;	/* READ: a response arrived */
	__u32		num_sge;
	struct mroce_sge sge[MROCE_MAX_SGE];
};

struct mroce_rwqe {
	__u64		wr_id;
	__u32		len;
	__u8		reported;	/* completion queued (unordered mode, errors) */
	__u32		num_sge;
	struct mroce_sge sge[MROCE_MAX_SGE];
};

/* A READ response the responder is sending (shares the responder's PSN space). */
struct mroce_rjob {
	const __u8	*src;		/* inside a registered region, checked */
	__u32		msn;		/* requester's READ id */
	__u32		msg_len;	/* whole READ length */
	__u32		base;		/* offset of src[0] within the READ */
	__u32		len;		/* bytes of this job */
	__u32		sent;		/* bytes packetised */
	__u32		emitted;	/* packets sent for the first time */
	__u32		acked;
	bool		used;
};

/* What each in-flight PSN carries, so it can be rebuilt for retransmission. */
enum { PKT_FREE, PKT_INFLIGHT, PKT_SACKED, PKT_LOST };
#define PKT_RJOB	0x80000000u	/* wqe field names a READ job, not an SQ entry */
struct mroce_txpkt {
	__u64	sent_us;
	__u32	tx_seq;		/* order of this transmission among all of the QP's */
	__u32	wqe;		/* SQ sequence number, or PKT_RJOB | job index */
	__u32	offset;		/* within the message */
	__u16	len;
	__u8	state;
	__u8	retx;	/* times resent for its own sake (timer, SACK hole, NACK) */
	__u8	path;
	__u8	gbn;	/* queued again only because go-back-N resends everything after a gap */
	__u16	entropy;	/* the path's entropy value when sent (losses charge only that) */
};

/* A message being received (SEND, SEND_IMM, WRITE_IMM). */
enum { MSG_FREE, MSG_ACTIVE, MSG_WHOLE };
struct mroce_msgslot {
	__u32	msn;
	__u32	got;
	__u32	len;
	__u32	max_psn;
	__u32	imm;
	__u8	opcode;
	__u8	state;
	__u8	status;		/* receiver-side error (e.g. local length) */
};

struct mroce_qp {
	struct mroce_dev	*dev;
	struct mroce_cq		*send_cq, *recv_cq;
	struct mroce_qp_attr	attr;		/* with defaults filled in */
	__u32			qpn;
	enum mroce_qp_state	state;
	__u64			secret;		/* our half of the token */
	__be64			token_be;	/* both halves, wire order */

	/* remote end */
	struct mroce_route	route;		/* addresses, entropy base in sport */
	__u32			rqpn;
	__u32			payload_max;	/* bytes of payload per packet */

	/* send side */
	struct mroce_swqe	*sq;
	__u32			sq_head;	/* oldest not completed */
	__u32			sq_next;	/* next to packetise */
	__u32			sq_tail;	/* next free */
	__u32			sq_msn;		/* RQ-consuming messages posted so far */
	struct mroce_txpkt	pkts[MROCE_PKT_RING];
	__u32			snd_una;	/* oldest unacknowledged PSN */
	__u32			snd_nxt;	/* next new PSN */
	__u32			high_sacked;	/* newest PSN known received (valid if have_sack) */
	bool			have_sack;
	__u32			tx_seq;		/* transmissions so far */
	__u32			rack_seq;	/* newest transmission known delivered (RACK) */
	__u64			rack_sent_us;	/* and when it was sent */
	__u64			rack_timer_us;	/* next time a hole may turn into a loss (0: none) */
	__u32			nlost;		/* records in PKT_LOST */
	__u64			last_progress_us;
	__u32			rto_us;		/* current, with backoff */
	__u32			timeouts;	/* RTO expiries since the last progress */
	__u32			srtt_us;
	__u32			rttvar_us;	/* mean deviation of RTT samples */
	__u32			min_rtt_us;	/* lowest RTT sample: the path's base delay */
	/* congestion control (lib/cc.h); window in 1/256 packets */
	const struct mroce_cc_ops *cc;
	__u32			cwnd_x256;
	__u64			cc_priv[MROCE_CC_PRIV_SIZE / 8];	/* the algorithm's state */
	__u32			rnr_count;
	__u64			rnr_until_us;	/* receiver not ready: hold until */
	struct mroce_rjob	rjobs[MROCE_READ_JOBS];
	__u32			rjob_next;	/* job being packetised, round robin */
	__u32			next_path;
	__u32			ack_path;	/* ACK/NACK slot, round robin */
	__u8			good_path;	/* slot that last delivered a first transmission */
	__u8			echo_path;	/* receiving: path slot of the newest data packet */
	struct mroce_path	paths[MROCE_MAX_PATHS];
	__u16			next_entropy;	/* next fresh entropy value */
	__u64			path_epoch_us;
	struct mroce_qp_stats	st;		/* what mroce_qp_query_stats reports */
	__u64			stats_at_us;	/* last published to the flows map */

	/* receive side */
	struct mroce_flow	*flow;		/* receive window (the BPF map's entry) */
	struct mroce_flow	local_flow;	/* used when there is no BPF map (tests) */
	struct mroce_rwqe	*rq;
	__u32			rq_head;	/* oldest posted, = next msn to complete */
	__u32			rq_tail;
	struct mroce_msgslot	msgs[MROCE_MSG_SLOTS];
	__u32			unacked;	/* packets since our last ACK */
	__u64			ack_due_us;	/* 0: no ACK pending */
	__u32			ts_echo;
	__u16			ecn_ce, ecn_pkts;
	__u32			gbn_nak_psn;	/* go-back-N: gap already reported */
	bool			gbn_nak_sent;
	bool			ack_now;
};

struct mroce_fault_state {
	struct mroce_faults	cfg;
	__u64			rng;
	__u8			(*held)[MROCE_FRAME_MAX];
	__u32			held_len[MROCE_FAULT_HOLD];
	__u64			held_at[MROCE_FAULT_HOLD];
	__u32			nheld;
};

struct mroce_dev {
	pthread_mutex_t		lock;
	const struct mroce_port_ops *ops;
	void			*port;
	struct mroce_dp		*dp;		/* NULL without an XDP datapath (tests) */
	struct mroce_dev_attr	attr;
	struct mroce_route	local;		/* our MAC, IP, UDP port */
	__u16			udp_port;
	struct mroce_qp		*qps[MROCE_MAX_QPS];
	struct mroce_mr		mrs[MROCE_MAX_MRS];
	struct mroce_dev_stats	stats;
	struct mroce_fault_state *txf, *rxf;
	__u8			scratch[MROCE_FRAME_MAX];
	pthread_t		thread;
	bool			thread_running;
	volatile bool		stop;
	int			wake_fd;	/* eventfd: new work for a sleeping progress thread */
	bool			sleeping;	/* the progress thread is (about to be) waiting */
};

/* Create a device over any port (the AF_XDP one, or a simulated wire). */
int mroce_dev_create(const struct mroce_port_ops *ops, void *port, struct mroce_dp *dp,
		     const struct mroce_route *local, const struct mroce_dev_opts *opts,
		     struct mroce_dev **devp);
/* The body of one progress round; dev->lock held. Returns work done. */
int mroce_engine_run(struct mroce_dev *dev, void (*rx)(void *dev, const void *frame, __u32 len));
/* Earliest timer of any QP, in absolute microseconds (UINT64_MAX: none). */
__u64 mroce_engine_next_timer(struct mroce_dev *dev);
void mroce_engine_rx(void *dev, const void *frame, __u32 len);

/* Fault-injected transmit (or plain, when faults are off). */
void mroce_dev_xmit(struct mroce_dev *dev, void *buf, __u32 len);

void mroce_cq_push(struct mroce_cq *cq, const struct mroce_wc *wc);

/* New work was posted: wake the progress thread if it sleeps. dev->lock held. */
void mroce_dev_kick(struct mroce_dev *dev);
void mroce_qp_fail(struct mroce_qp *qp, enum mroce_wc_status why);
void mroce_qp_flush_ack(struct mroce_qp *qp);
void mroce_qp_stats_update(struct mroce_qp *qp);
struct mroce_mr *mroce_mr_by_rkey(struct mroce_dev *dev, __u32 rkey);
struct mroce_mr *mroce_mr_by_lkey(struct mroce_dev *dev, __u32 lkey);
__u64 mroce_random64(void);
int mroce_qp_connect_locked(struct mroce_qp *qp, const struct mroce_qp_info *remote,
			    const __u8 *mac);
/* Next-hop MAC for a remote QP from the kernel's route and neighbour tables. */
int mroce_resolve_mac(struct mroce_dev *dev, const struct mroce_qp_info *remote, __u8 mac[6]);

/* Frame building in place: headers first, payload written by the caller at
 * buf + returned length, then the checksum. */
int mroce_frame_hdrs(void *buf, size_t size, const struct mroce_route *rt, const struct mroce_hdr *h);
void mroce_frame_finish(void *buf, __u32 len, int family);

/* UDP checksum over a frame mroce_parse() accepted: true when it verifies. */
bool mroce_frame_csum_ok(const void *frame, const struct mroce_pkt *pkt);

#endif /* MROCE_ENGINE_H */
