/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libmroce verbs: RDMA-style memory registration, completion queues, queue
 * pairs and work requests over the MetaRoCE transport. Shaped after
 * ibverbs (ibv_post_send / ibv_poll_cq, wr_id, opcodes, status codes).
 * Normally included through <mroce/mroce.h>; also compiles alone.
 */
#ifndef MROCE_VERBS_H
#define MROCE_VERBS_H

/* MROCE_API and the shared enums; mroce.h includes this file at its end. */
#include "mroce.h"

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mroce_dev;	/* an interface + receive queue: UMEM, AF_XDP socket, transport */
struct mroce_pd;	/* a protection domain: QPs reach only regions of their own */
struct mroce_mr;	/* a registered memory region */
struct mroce_dm;	/* device memory: a buffer the XDP datapath can write */
struct mroce_cq;	/* a completion queue */
struct mroce_qp;	/* a reliable connected queue pair */

/* ---- test-only fault injection ------------------------------------------ */

/*
 * Drop, duplicate, reorder or corrupt a fraction (parts per million) of the
 * frames a device sends or receives, from a seed so runs repeat. For tests:
 * it is off unless a struct is passed, and it costs nothing when off.
 */
struct mroce_faults {
	__u32	seed;
	__u32	tx_drop_ppm, tx_dup_ppm, tx_reorder_ppm, tx_corrupt_ppm;
	__u32	rx_drop_ppm, rx_dup_ppm, rx_reorder_ppm, rx_corrupt_ppm;
};

/* ---- device ------------------------------------------------------------- */

struct mroce_dev_opts {
	size_t			sz;
	/*
	 * The receive queues the device serves (docs/datapath.md, "Receive
	 * queues and processes"): queues N, the first free run of N from
	 * `queue` on; MROCE_QUEUES_ALL, every queue from `queue` on; queues 0
	 * and a queue: exactly that one; both 0 (the default): the first free
	 * queue on veth, on a NIC with one queue or with more than
	 * MROCE_MAX_QUEUES, every queue on another NIC (whose RSS spreads a
	 * peer's packets over all of them). A device serving queue q first
	 * receives on UDP port udp_port + q (mroce_dev_udp_port()): a NIC's
	 * flow rules can steer it. A queue another device serves is never
	 * shared (its socket would read the other's frames):
	 * -MROCE_ERR_QUEUES_BUSY when no run is free, -ENXIO past the queues.
	 */
	__u32			queue;
	bool			force_copy;	/* skip the zero-copy attempt */
	bool			no_thread;	/* caller drives mroce_dev_progress() */
	enum mroce_xdp_mode	xdp_mode;	/* when the datapath must be attached */
	__u16			udp_port;	/* 0: MROCE_DEFAULT_PORT */
	__u32			umem_frames;	/* power of two, 64..8192; 0: 2048 frames of 4 KiB */
	const struct mroce_faults *test_faults;	/* NULL: no fault injection */
	/* grant no rates to senders (they rely on their own congestion control alone) */
	bool			no_rate_grants;
	/*
	 * Planes beyond ifname's (protocol.md, "Planes"): each interface its
	 * own XDP attach and AF_XDP socket on the same queue, one device over
	 * all of them; connections spread their paths over every plane. At
	 * most MROCE_MAX_PLANES - 1; all of one address family, each with an
	 * address of its own.
	 */
	const char *const	*planes;
	__u32			n_planes;
	/*
	 * A transmit pool of this many bytes in the UMEM (rounded up to 64 KiB,
	 * at most MROCE_UMEM_POOL_MAX; single-plane devices): memory from
	 * mroce_alloc_umem(), whose sends leave without the library's copy.
	 */
	__u64			umem_pool_bytes;
	__u32			queues;
	size_t			:0;
};
#define MROCE_QUEUES_ALL	(~0u)
#define MROCE_MAX_PLANES	8
#define MROCE_UMEM_POOL_MAX	(16ull << 30)

/*
 * Open ifname: attach the XDP datapath if it is not attached yet, create
 * the UMEM and an AF_XDP socket on the queue (zero-copy if the driver
 * allows, copy mode otherwise), and start the transport.
 */
MROCE_API int mroce_dev_open(const char *ifname, const struct mroce_dev_opts *opts,
			     struct mroce_dev **dev);
MROCE_API void mroce_dev_close(struct mroce_dev *dev);

struct mroce_dev_attr {
	char	ifname[16];
	__u32	ifindex;
	__u32	queue;
	__u32	mtu;		/* IP MTU of the interface */
	__u8	mac[6];
	bool	zero_copy;	/* false: AF_XDP copy mode */
	bool	need_wakeup;
	bool	thread;		/* a progress thread runs the transport */
	__u8	planes;		/* interfaces the device sends and receives on (ifname's first) */
	/* receive queues served: queue .. queue + queues - 1 (at most MROCE_MAX_QUEUES) */
	__u8	queues;
};
MROCE_API int mroce_dev_query(struct mroce_dev *dev, struct mroce_dev_attr *attr);
/* The UDP port the device receives on (its peers send to): the datapath's base + attr.queue. */
MROCE_API int mroce_dev_udp_port(struct mroce_dev *dev);

/* Run the transport once: receive, handle timers, send. In no_thread mode
 * the application calls this; timeout_ms > 0 waits that long for work. */
MROCE_API int mroce_dev_progress(struct mroce_dev *dev, int timeout_ms);

/* Transport counters of a device, all QPs together. */
struct mroce_dev_stats {
	__u64	tx_pkts, tx_bytes, rx_pkts, rx_bytes;
	__u64	retx_pkts;		/* packets sent again */
	__u64	rto_events;		/* retransmission timer expiries */
	__u64	ooo_pkts;		/* arrived with a PSN beyond the next expected */
	__u64	dup_pkts;		/* arrived although already placed */
	__u64	acks_tx, acks_rx, nacks_tx, nacks_rx;
	__u64	bad_pkts;		/* failed validation or checksum in user space */
	__u64	rx_dropped_window;	/* beyond the receive window */
	__u64	faults;			/* frames hit by test fault injection */
	__u64	ecn_ce_rx;		/* data packets that arrived CE-marked */
	__u64	cc_cuts;		/* congestion window reductions (ECN or delay) */
	__u64	paths_retired;		/* paths replaced by a fresh entropy value */
	/* The AF_XDP socket's own counters (XDP_STATISTICS), read from the kernel on each call. */
	__u64	xsk_rx_dropped;		/* received frames dropped: no fill buffer, RX ring full, too long */
	__u64	xsk_rx_invalid_descs;	/* fill ring entries the kernel rejected */
	__u64	xsk_tx_invalid_descs;	/* TX ring entries the kernel rejected */
	__u64	xsk_rx_ring_full;	/* of rx_dropped: the RX ring was full */
	__u64	xsk_rx_fill_ring_empty;	/* times a frame met an empty fill ring */
	__u64	xsk_tx_ring_empty;	/* transmit wakeups that found the TX ring empty */
	__u64	rd_busy;		/* READ requests refused for now: every job slot busy */
	__u64	xdp_placed;		/* data packets whose payload XDP placed in device memory */
};
MROCE_API int mroce_dev_stats(struct mroce_dev *dev, struct mroce_dev_stats *stats);
/*
 * For tools outside the owning processes (`mroce status`): zero stats, then
 * sum the xsk_* counters of every AF_XDP socket that processes in the
 * caller's network namespace hold (needs CAP_SYS_PTRACE: pidfd_getfd).
 * Returns the number of sockets found, or a negative errno:
 * -MROCE_ERR_CAP_SYS_PTRACE when a process could not be read for want of
 * CAP_SYS_PTRACE or CAP_DAC_READ_SEARCH (the counters are then zero, never
 * a partial sum).
 */
MROCE_API int mroce_xsk_scan_stats(struct mroce_dev_stats *stats);

/* ---- memory regions ------------------------------------------------------ */

enum mroce_access {
	MROCE_ACCESS_LOCAL_WRITE	= 1,
	MROCE_ACCESS_REMOTE_WRITE	= 2,
	MROCE_ACCESS_REMOTE_READ	= 4,
};

/*
 * Protection domains, as in ibverbs: a QP reaches (remotely or through its
 * own SGEs) only the regions of its PD; a key of another PD is refused like
 * an unknown one. Every device has a default PD, which mroce_reg_mr() and
 * QPs created without attr.pd use. mroce_dealloc_pd(): -EBUSY while a
 * region or QP is in it.
 */
MROCE_API int mroce_alloc_pd(struct mroce_dev *dev, struct mroce_pd **pd);
MROCE_API int mroce_dealloc_pd(struct mroce_pd *pd);
MROCE_API int mroce_reg_mr_pd(struct mroce_pd *pd, void *addr, size_t length,
			      unsigned int access, struct mroce_mr **mr);
/* A region in the device's default PD. */
MROCE_API int mroce_reg_mr(struct mroce_dev *dev, void *addr, size_t length,
			   unsigned int access, struct mroce_mr **mr);
MROCE_API int mroce_dereg_mr(struct mroce_mr *mr);
MROCE_API __u32 mroce_mr_lkey(const struct mroce_mr *mr);
MROCE_API __u32 mroce_mr_rkey(const struct mroce_mr *mr);

/*
 * Device memory, in the spirit of ibv_alloc_dm(): a buffer in the XDP
 * datapath's pool (256 MiB per interface by default, in 4 MiB chunks, shared
 * by the processes on it), zeroed, mapped at mroce_dm_addr(). Register it
 * (all of it or any part) like other memory; for a region on it that grants
 * remote write, the XDP program places arriving WRITE payloads straight into
 * it, after the same checks the library makes, and the library only
 * acknowledges and completes them: one copy less per byte. -EOPNOTSUPP on a
 * device without an XDP datapath, -ENOSPC when the pool has no run of free
 * chunks that long. mroce_free_dm(): -EBUSY while a region is registered on
 * it. What is left at mroce_dev_close() goes with the device.
 */
MROCE_API int mroce_alloc_dm(struct mroce_dev *dev, size_t length, struct mroce_dm **dm);
/*
 * Memory in the device's UMEM (its transmit pool, mroce_dev_opts.umem_pool_bytes),
 * zeroed, whole 64 KiB chunks: register it as any memory. A packet whose
 * payload lies in it is sent from there, its headers in a frame of their own
 * (AF_XDP multi-buffer): a zero-copy driver reads it where it is; in copy mode
 * the kernel copies it instead of the library. The library still reads it
 * once, for the UDP checksum. Freed with the device, or by mroce_free_umem()
 * (nothing checks for regions on it: deregister them first).
 * 0; -EINVAL (no device, address or length); -EOPNOTSUPP (no pool: none asked
 * for, or a device over several planes); -ENOMEM (not that much free).
 */
MROCE_API int mroce_alloc_umem(struct mroce_dev *dev, size_t length, void **addr);
/* 0, or -EINVAL if addr is not an allocation of mroce_alloc_umem() on dev. */
MROCE_API int mroce_free_umem(struct mroce_dev *dev, void *addr);
MROCE_API int mroce_free_dm(struct mroce_dm *dm);
MROCE_API void *mroce_dm_addr(const struct mroce_dm *dm);
MROCE_API size_t mroce_dm_length(const struct mroce_dm *dm);

/* ---- completion queues --------------------------------------------------- */

enum mroce_wc_status {
	MROCE_WC_SUCCESS		= 0,
	MROCE_WC_LOC_LEN_ERR		= 1,
	MROCE_WC_LOC_PROT_ERR		= 2,
	MROCE_WC_REM_ACCESS_ERR		= 3,
	MROCE_WC_REM_INV_REQ_ERR	= 4,
	MROCE_WC_RNR_RETRY_EXC_ERR	= 5,
	MROCE_WC_RETRY_EXC_ERR		= 6,
	MROCE_WC_WR_FLUSH_ERR		= 7,
	MROCE_WC_REM_OP_ERR		= 8,
};
MROCE_API const char *mroce_wc_status_str(enum mroce_wc_status status);

enum mroce_wc_opcode {
	MROCE_WC_SEND,
	MROCE_WC_RDMA_WRITE,
	MROCE_WC_RDMA_READ,
	MROCE_WC_RECV,
	MROCE_WC_RECV_RDMA_WITH_IMM,
};

#define MROCE_WC_WITH_IMM	0x1

struct mroce_wc {
	__u64			wr_id;
	enum mroce_wc_status	status;
	enum mroce_wc_opcode	opcode;
	__u32			byte_len;
	__u32			imm_data;	/* host order, valid with MROCE_WC_WITH_IMM */
	__u32			wc_flags;
	__u32			qp_num;
};

/* A CQ of at least cqe entries. */
MROCE_API int mroce_create_cq(struct mroce_dev *dev, __u32 cqe, struct mroce_cq **cq);
MROCE_API int mroce_destroy_cq(struct mroce_cq *cq);
/* Up to n completions into wc; returns how many (0 if none). */
MROCE_API int mroce_poll_cq(struct mroce_cq *cq, int n, struct mroce_wc *wc);
/* Readable (poll/epoll) while completions wait; mroce_poll_cq() rearms it. */
MROCE_API int mroce_cq_fd(const struct mroce_cq *cq);
/* Notification through mroce_cq_fd() is on by default. A caller that only
 * busy-polls turns it off and saves two system calls per completion. */
MROCE_API int mroce_cq_set_notify(struct mroce_cq *cq, bool on);

/* ---- queue pairs --------------------------------------------------------- */

enum mroce_order {
	MROCE_ORDERED	= 0,	/* completions in posting order, like InfiniBand RC */
	MROCE_UNORDERED	= 1,	/* each message completes once whole, like UET RUD */
};

struct mroce_qp_attr {
	size_t		sz;
	struct mroce_cq	*send_cq;
	struct mroce_cq	*recv_cq;
	__u32		sq_depth;	/* 0: 256 */
	__u32		rq_depth;	/* 0: 256 */
	enum mroce_order order;
	bool		go_back_n;	/* RoCEv2-like: discard out of order, resend from the gap */
	__u32		paths;		/* UDP source ports to spray over; 0: 1 */
	__u32		max_inflight;	/* packets in flight cap (BDP); 0: 256 */
	__u32		rto_low_us;	/* 0: 200 (used while few packets are in flight) */
	__u32		rto_high_us;	/* 0: 1000 */
	__u32		retry_cnt;	/* timeouts one packet may see before failing; 0: 12 */
	__u32		rnr_retry;	/* receiver-not-ready retries; 0: 7, which (as in
					 * ibverbs) means unlimited */
	__u32		rnr_timer_us;	/* 0: 1000 */
	__u32		ack_every;	/* ACK after this many packets; 0: 16 */
	__u32		ack_delay_us;	/* ... or this long after the first unacked one; 0: 50 */
	__u32		reorder_pkts;	/* transmissions after a hole that, with the RTT elapsed,
					 * declare it lost even if sent long before; 0: 64 */
	__u32		mtu;		/* 0: the interface's */
	bool		cc_ecn;		/* DCTCP-like: cut the window by the CE-marked fraction */
	bool		cc_delay;	/* Swift-like: back off while the RTT exceeds a target */
	__u32		target_delay_us;/* cc_delay's target; 0: 3 x the lowest RTT seen, >= 50 us */
	__u16		udp_sport;	/* UDP source port of path 0, 49152..65535 (path k starts at
					 * +k, wrapping in that range; a retired path moves on),
					 * like ibv_modify_qp_udp_sport; 0: chosen from the QPN */
	bool		static_paths;	/* never give a path slot a fresh entropy value: ECMP
					 * routes stay fixed, as in RoCEv2 (for comparisons);
					 * a dead route then fails the QP */
	__u32		max_rd_atomic;	/* READs outstanding at once as requester (ibverbs' name);
					 * also bounded by what the responder advertises; 0: 16 */
	struct mroce_pd	*pd;		/* regions it may reach; NULL: the device's default PD
					 * (a PD of another device: -EINVAL) */
	__u32		streams;	/* ordered streams of receive-consuming messages, each
					 * with its own receive queue of rq_depth (both ends
					 * alike); 0: 1, at most MROCE_MAX_STREAMS */
	bool		no_cc;		/* no congestion control: the window stays at
					 * max_inflight (receiver grants still hold it).
					 * Without it, and with neither cc_ecn nor cc_delay,
					 * the QP runs the default: cc_ecn's algorithm */
	size_t		:0;
};

MROCE_API int mroce_create_qp(struct mroce_dev *dev, const struct mroce_qp_attr *attr,
			      struct mroce_qp **qp);
/* Flushes what is outstanding; no completion is lost. */
MROCE_API int mroce_destroy_qp(struct mroce_qp *qp);

enum mroce_qp_state {
	MROCE_QPS_INIT	= 0,	/* created, not connected: receives may be posted */
	MROCE_QPS_RTS	= 1,	/* connected */
	MROCE_QPS_ERR	= 2,	/* failed; everything outstanding was flushed */
};
MROCE_API enum mroce_qp_state mroce_qp_state(const struct mroce_qp *qp);

/*
 * Move the QP to the error state (like ibv_modify_qp to IBV_QPS_ERR): every
 * outstanding send and receive completes with MROCE_WC_WR_FLUSH_ERR and
 * later posts fail with -EIO. Calling it again does nothing. 0 or -EINVAL.
 */
MROCE_API int mroce_qp_set_error(struct mroce_qp *qp);

/* A QP's transport counters; also published to the flows map for `mroce flows`. */
struct mroce_qp_stats {
	size_t	sz;
	__u64	tx_pkts;		/* data packets sent, first copies and resends */
	__u64	retx_pkts;		/* of those, resends */
	__u64	acked_bytes;		/* payload the peer acknowledged: goodput */
	__u64	rto_events;		/* retransmission timer expiries */
	__u64	ecn_ce;			/* CE marks the peer echoed */
	__u64	cc_cuts;		/* congestion window reductions */
	__u64	paths_retired;		/* path slots given a fresh entropy value */
	__u32	srtt_us;		/* smoothed RTT over all paths */
	__u32	min_rtt_us;
	__u32	cwnd_pkts;		/* congestion window (max_inflight without CC) */
	__u32	inflight_pkts;
	__u32	paths;			/* path slots sprayed over */
	__u32	worst_path_srtt_us;	/* slowest path slot's smoothed RTT */
	__u64	returns_moved;		/* ways back (ACK ports) moved after the peer moved a path */
	__u64	psack_lost;		/* packets the peer's per-path SACKs proved lost */
	__u64	paths_suspected;	/* paths assumed bad: a loss and nothing later on them delivered */
	__u64	paths_skipped;		/* new packets steered off a path trimmed by a CE mark */
	__u32	rate_hint_kbps;		/* the peer's latest rate grant to us (0: none) */
	__u32	rate_grant_kbps;	/* our latest grant to the peer (0: none) */
	__u64	stream_restarts;	/* messages refused by the peer (RNR) and started again */
	__u64	voids;			/* PSNs given up for them (VOIDs sent) */
	__u64	path_window_cuts;	/* path windows halved (a CE mark on the path) */
	__u64	plane_downs;		/* planes given up (their paths moved to the others) */
	__u64	plane_rejoins;		/* ... and taken back after a probe got through */
	__u64	tail_probes;		/* tails resent as a probe, no timeout (RACK-TLP) */
	__u64	spurious_losses;	/* losses declared that the peer's per-path SACK later
					 * showed delivered: reordering, not loss */
	__u32	reorder_window_us;	/* how late a copy may arrive behind later ones, as
					 * learned from those (0: its routes never reordered) */
	__u64	asks;			/* timers that asked the peer what arrived instead of
					 * resending (a busy host's silence is seldom a loss) */
	__u64	ask_losses;		/* packets the answers to those showed lost */
};
MROCE_API int mroce_qp_query_stats(struct mroce_qp *qp, struct mroce_qp_stats *stats);
MROCE_API __u32 mroce_qp_num(const struct mroce_qp *qp);

/* What two QPs exchange to connect (like ibv_modify_qp to RTR/RTS). */
struct mroce_qp_info {
	__u32		qpn;
	__u32		psn;		/* first PSN this QP will send */
	__u64		secret;		/* half of the connection token */
	__u8		mac[6];		/* the QP's interface */
	__u16		udp_port;
	int		family;		/* AF_INET or AF_INET6 */
	struct in6_addr	addr;		/* IPv4 as ::ffff:a.b.c.d */
	__u32		mtu;
	__u16		max_rd;		/* READs this QP serves at once as responder (0: unknown) */
	__u16		streams;	/* its ordered streams (attr.streams; 0: unknown) */
	/* Planes beyond the first (mac and addr): their interfaces' MACs and addresses. */
	__u8		planes;		/* 0 or 1: one plane */
	__u8		plane_mac[MROCE_MAX_PLANES - 1][6];
	struct in6_addr	plane_addr[MROCE_MAX_PLANES - 1];
};
/*
 * Byte 3 of the packed info is the planes its layout has room for
 * (MROCE_MAX_PLANES): 0 in the 120-byte layout of earlier version 2
 * libraries, which had room for 4. Either refuses the other's as another
 * version's (protocol.md, "Versions").
 */
#define MROCE_QP_INFO_WIRE_LEN	208
/*
 * Byte 95 of the packed info is the connection manager's handshake revision:
 * MROCE_CM_REVISION, under which a listener acknowledges the client's
 * confirmation once it holds the QP and a client returns only on that; 0 from
 * earlier libraries, whose clients returned on their confirmation. The CM
 * refuses another revision as another version's (protocol.md, "Connection
 * setup"); mroce_qp_info_unpack() and other channels ignore it.
 */
#define MROCE_QP_INFO_CM_BYTE	95
#define MROCE_CM_REVISION	1
MROCE_API int mroce_qp_local_info(struct mroce_qp *qp, const struct in6_addr *local_addr,
				  int family, struct mroce_qp_info *info);
/* Serialise for exchange over any channel, and back (-EINVAL if malformed,
 * -MROCE_ERR_VERSION if it is another wire protocol version's). */
MROCE_API void mroce_qp_info_pack(const struct mroce_qp_info *info, __u8 out[MROCE_QP_INFO_WIRE_LEN]);
MROCE_API int mroce_qp_info_unpack(const __u8 in[MROCE_QP_INFO_WIRE_LEN], struct mroce_qp_info *info);

/* Connect to the remote QP. next_hop_mac NULL: resolve through the kernel's
 * route and neighbour tables. */
MROCE_API int mroce_qp_connect(struct mroce_qp *qp, const struct mroce_qp_info *remote,
			       const __u8 *next_hop_mac);

/* ---- work requests ------------------------------------------------------- */

#define MROCE_MAX_SGE	4

struct mroce_sge {
	__u64	addr;
	__u32	length;
	__u32	lkey;
};

enum mroce_wr_opcode {
	MROCE_WR_RDMA_WRITE,
	MROCE_WR_RDMA_WRITE_WITH_IMM,
	MROCE_WR_SEND,
	MROCE_WR_SEND_WITH_IMM,
	MROCE_WR_RDMA_READ,
};

#define MROCE_SEND_SOLICITED	0x1
/*
 * Start this request only once every earlier one of the QP has completed
 * (IBV_SEND_FENCE, but for every opcode): with placement in any order, a
 * request behind one that fails may otherwise have written memory already.
 */
#define MROCE_SEND_FENCE	0x2

struct mroce_send_wr {
	__u64			wr_id;
	enum mroce_wr_opcode	opcode;
	const struct mroce_sge	*sg_list;
	int			num_sge;
	__u32			imm_data;	/* host order */
	unsigned int		send_flags;
	__u64			remote_addr;	/* RDMA ops */
	__u32			rkey;
};

struct mroce_recv_wr {
	__u64			wr_id;
	const struct mroce_sge	*sg_list;
	int			num_sge;
};

/* Queue one request. -EAGAIN when the queue is full (never blocks): sq_depth
 * requests outstanding, that is, posted and not yet reported (with several
 * streams the queue also holds up to sq_depth more entries already reported
 * behind an older one), -EINVAL for a malformed request, -ENOTCONN before
 * connect, -EIO in error state (of the QP, or of the stream for
 * mroce_post_send_on()), -ENOMEM if the queue, which grows as it fills up to
 * its depth, could not. */
MROCE_API int mroce_post_send(struct mroce_qp *qp, const struct mroce_send_wr *wr);
MROCE_API int mroce_post_recv(struct mroce_qp *qp, const struct mroce_recv_wr *wr);

/*
 * Streams (MetaRoCE's many ordered streams in one connection): a QP created
 * with attr.streams = n carries n independent ordered streams of
 * receive-consuming messages (SEND, SEND_IMM, WRITE_IMM) over one set of
 * paths, windows and congestion control. A message posted on stream s takes
 * the next receive posted on stream s at the peer; receives complete in
 * order within a stream, and so do sends (across streams, as they finish).
 * A stream whose receiver posts nothing (RNR) waits alone: the others go on.
 * Every request posted on a stream, WRITE and READ too, waits while it is
 * held. Past rnr_retry RNR waits (never with 7, the default) the stream
 * fails alone: the refused request completes with MROCE_WC_RNR_RETRY_EXC_ERR,
 * the stream's later requests not yet started with MROCE_WC_WR_FLUSH_ERR,
 * and mroce_post_send_on() on that stream returns -EIO for the rest of the
 * QP's life (open a new QP to use it again); the other streams, its receives
 * and the QP go on. A QP with one stream fails whole, as in ibverbs.
 * mroce_post_send() and mroce_post_recv() post on stream 0.
 * -EINVAL for a stream >= attr.streams.
 */
#define MROCE_MAX_STREAMS	1024
MROCE_API int mroce_post_send_on(struct mroce_qp *qp, __u32 stream,
				 const struct mroce_send_wr *wr);
MROCE_API int mroce_post_recv_on(struct mroce_qp *qp, __u32 stream,
				 const struct mroce_recv_wr *wr);

/* ---- connection manager (TCP side channel) ------------------------------ */

struct mroce_listener;

/* Listen on addr:port (IPv4 or IPv6 literal) for connection requests. */
MROCE_API int mroce_listen(struct mroce_dev *dev, const char *addr, __u16 port,
			   struct mroce_listener **l);
MROCE_API void mroce_listener_close(struct mroce_listener *l);
/* Readable while a connection or a handshake waits for mroce_accept(): poll it beside
 * the CQ's fd. */
MROCE_API int mroce_listener_fd(const struct mroce_listener *l);
/*
 * Accept one connection: create a QP with attr and connect it to the TCP
 * peer's own address (an info naming another address is refused,
 * MROCE_ERR_PEER_ADDR). Up to
 * MROCE_CM_PENDING handshakes advance together while this runs, each closed
 * MROCE_CM_HANDSHAKE_MS after it arrived; a failed one is counted in the
 * stats below, not returned. -ETIMEDOUT if none completed within timeout_ms.
 */
#define MROCE_CM_PENDING	16
#define MROCE_CM_HANDSHAKE_MS	2000
MROCE_API int mroce_accept(struct mroce_listener *l, const struct mroce_qp_attr *attr,
			   int timeout_ms, struct mroce_qp **qp);

struct mroce_listener_stats {
	size_t	sz;
	__u64	accepted;	/* handshakes completed */
	__u64	failed;		/* handshakes closed unfinished, of which: */
	__u64	refused_addr;	/*   the info named an address other than the TCP peer's */
	__u64	malformed;	/*   bad magic or field; too long; wrong confirmation */
	__u64	timed_out;	/*   not finished MROCE_CM_HANDSHAKE_MS after arrival */
	__u64	closed;		/*   the peer closed or reset mid-handshake */
	__u64	evicted;	/*   dropped for a newer one beyond MROCE_CM_PENDING: the least far, oldest */
	int	last_err;	/* negative errno of the latest failure, 0 if none */
	__u32	pending;	/* handshakes in progress now */
	__u64	bad_version;	/*   (failed) the peer speaks another wire version (MROCE_ERR_VERSION) */
};
MROCE_API int mroce_listener_stats(const struct mroce_listener *l, struct mroce_listener_stats *st);
/*
 * Connect to a listener: 0 only once the server has taken its QP (its final
 * ack); a handshake the server dropped before is -ECONNRESET, never success.
 */
MROCE_API int mroce_connect(struct mroce_dev *dev, const char *addr, __u16 port,
			    const struct mroce_qp_attr *attr, int timeout_ms, struct mroce_qp **qp);

#ifdef __cplusplus
}
#endif

#endif /* MROCE_VERBS_H */
