/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fabric emulator's switch: hosts on ports, K parallel paths between
 * them. A unicast IP packet takes path hash(addresses, protocol, ports) % K
 * (ECMP), waits in that path's queue towards its egress port, is serialised
 * at the path's rate, travels for the path's delay and leaves. Everything
 * else (ARP, neighbour discovery, broadcast, unknown destinations) is
 * flooded at once, untouched by the paths. A frame whose egress port is its
 * ingress port goes back out of it (hairpin, a reflective relay), through
 * the paths like any other.
 *
 * Each host link has nqueues receive queues, and the switch transmits a
 * frame toward a host on the queue that host's NIC would receive it on:
 * a steering rule for its UDP destination port if one matches (a range of
 * queues, hashed within), else RSS (Toeplitz hash of addresses and TCP/UDP
 * ports through a 128-entry indirection table); anything not IP, and
 * everything flooded, on queue 0.
 *
 * No I/O here: the caller feeds frames in with fab_ingress() and gets due
 * frames out through the tx callback of fab_egress(), so the queueing rules
 * can be unit-tested without a network.
 */
#ifndef MROCE_FABRIC_SWITCH_H
#define MROCE_FABRIC_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define FAB_MAX_PORTS	16
#define FAB_MAX_PATHS	16
#define FAB_MAX_FRAME	4096
#define FAB_MACS	256
#define FAB_MAX_QUEUES	16	/* receive/transmit queues per host link */
#define FAB_MAX_RULES	64	/* steering rules per port */
#define FAB_RSS_TABLE	128	/* indirection table entries, as NICs' default */

struct fab_path_cfg {
	__u64	rate_bps;	/* serialisation rate; 0: unlimited */
	__u32	delay_us;	/* one-way propagation delay */
	__u32	buffer;		/* bytes a queue may hold waiting to be serialised */
	__u32	loss_ppm;	/* random loss, parts per million */
	__u32	dup_ppm;	/* random duplication, parts per million */
	__u32	ecn_bytes;	/* mark CE on ECT packets above this backlog; 0: never */
	bool	up;
};

/* X(name, description): per-path counters, in the order `stats` prints them. */
#define FAB_PATH_STATS(X)						\
	X(fwd_pkts,    "packets delivered to their egress port")	\
	X(fwd_bytes,   "bytes delivered")				\
	X(drop_loss,   "dropped by the random loss rate")		\
	X(drop_buffer, "tail-dropped: queue over the buffer size")	\
	X(drop_down,   "dropped: path down")				\
	X(ecn_marked,  "CE marks set on ECN-capable packets")		\
	X(duplicated,  "extra copies made by the duplication rate")	\
	X(queue_peak,  "largest backlog seen, bytes")

struct fab_path_stats {
#define X(n, d) __u64 n;
	FAB_PATH_STATS(X)
#undef X
};

struct fab_port_stats {
	__u64	rx_pkts;	/* frames the port received from its host */
	__u64	flooded;	/* copies sent out by flooding (ARP, broadcast, unknown) */
	__u64	tx_pkts;	/* frames handed to the port's transmit ring */
	__u64	tx_drop;	/* frames the port could not transmit */
	__u64	tx_busy;	/* times a due frame found the transmit ring full (it waited) */
	__u64	tx_queue[FAB_MAX_QUEUES];	/* frames sent to the host, per its receive queue */
	__u64	rx_queue[FAB_MAX_QUEUES];	/* frames from the host, per its transmit queue */
};

/* UDP destination port dport -> queues first..first+n-1, hashed within. */
struct fab_steer {
	__u16	dport;
	__u8	first, n;
};

struct fab_queue {
	__u32	head, tail;	/* slot indexes, FAB_NIL when empty */
	__u32	count;
	__u64	busy_until_ns;	/* when the link finishes serialising what it holds */
};

/*
 * tx sends a frame to the host on `port`, to arrive on its receive queue
 * `queue`; returns 0, or -EAGAIN when that ring is full (the frame stays queued).
 */
typedef int (*fab_tx_fn)(void *ctx, __u32 port, __u32 queue, const void *frame, __u32 len);

struct fab_switch {
	__u32			nports, npaths, nqueues;
	struct fab_path_cfg	cfg[FAB_MAX_PATHS];
	struct fab_path_stats	st[FAB_MAX_PATHS];
	struct fab_port_stats	port[FAB_MAX_PORTS];
	int			pin[FAB_MAX_PORTS];	/* path forced for traffic to a port, -1: hash */
	struct fab_steer	steer[FAB_MAX_PORTS][FAB_MAX_RULES];
	__u32			nsteer[FAB_MAX_PORTS];
	struct fab_queue	q[FAB_MAX_PATHS][FAB_MAX_PORTS];
	struct {
		__u8	mac[6];
		__u8	port;
		bool	used;
	}			macs[FAB_MACS];		/* learnt from source addresses */
	struct fab_slot		*slots;		/* queued frames */
	__u8			*data;		/* FAB_MAX_FRAME bytes per slot */
	__u32			nslots, free_head, nfree;
	__u64			nomem;		/* frames dropped: every slot in use */
	__u64			rng;
	fab_tx_fn		tx;
	void			*tx_ctx;
};

/* nqueues: receive queues of every host link, 1..FAB_MAX_QUEUES. */
int fab_switch_init(struct fab_switch *sw, __u32 nports, __u32 npaths, __u32 nqueues, __u32 nslots,
		    __u64 seed, fab_tx_fn tx, void *tx_ctx);
void fab_switch_free(struct fab_switch *sw);

/* The ECMP choice for a flow: addresses in network order (4 or 16 bytes). */
__u32 fab_hash(const void *src, const void *dst, __u32 addr_len, __u8 proto, __u16 sport,
	       __u16 dport);

/*
 * The RSS hash a NIC computes: Toeplitz with the well-known default key
 * over source address, destination address and, for TCP/UDP (l4), source
 * and destination port. Addresses in network order (4 or 16 bytes).
 */
__u32 fab_rss_hash(const void *src, const void *dst, __u32 addr_len, bool l4, __u16 sport,
		   __u16 dport);

/*
 * The receive queue of host `port` a packet of this flow lands on. proto
 * 256: not IP (queue 0); ports only count for TCP and UDP (unfragmented).
 */
__u32 fab_queue_of(const struct fab_switch *sw, __u32 port, const void *src, const void *dst,
		   __u32 addr_len, __u32 proto, __u16 sport, __u16 dport);
/* The same for a whole frame. */
__u32 fab_frame_queue(const struct fab_switch *sw, __u32 port, const __u8 *frame, __u32 len);

/*
 * Steering (ethtool -N flow-type udp4/udp6 dst-port P, with an RSS context
 * of n queues from `first`): 0, -EINVAL for a bad port or queue range,
 * -ENOSPC with FAB_MAX_RULES rules. A rule for the same UDP port is replaced.
 */
int fab_steer_add(struct fab_switch *sw, __u32 port, __u32 dport, __u32 first, __u32 n);
int fab_steer_del(struct fab_switch *sw, __u32 port, __u32 dport);	/* 0 or -ENOENT */
void fab_steer_clear(struct fab_switch *sw, __u32 port);
/* On every port, UDP port base + q to queue q alone, for every queue q. */
int fab_steer_base(struct fab_switch *sw, __u32 base);

/* A frame received on `port`'s transmit queue `queue` at time now (CLOCK_MONOTONIC ns). */
void fab_ingress(struct fab_switch *sw, __u32 port, __u32 queue, const __u8 *frame, __u32 len,
		 __u64 now);

/* Transmit what is due; returns when the next frame falls due (~0ULL: none queued). */
__u64 fab_egress(struct fab_switch *sw, __u64 now);

/*
 * One control command (see fabric.md), reply written to out. Returns 0, 1
 * when the command asks the switch to stop, or -EINVAL (reply says why).
 */
int fab_command(struct fab_switch *sw, const char *line, __u64 now, char *out, size_t outlen);

#endif
