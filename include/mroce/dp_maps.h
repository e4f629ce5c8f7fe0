/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Layout of the XDP datapath's BPF maps, shared by bpf/mroce.bpf.c and the
 * user-space library. docs/datapath.md explains ownership and the race rules.
 */
#ifndef MROCE_DP_MAPS_H
#define MROCE_DP_MAPS_H

#include <linux/types.h>
#include "proto.h"
#include "stats.h"

/* Map names as the kernel reports them (at most 15 characters). */
#define MROCE_MAP_FLOWS		"mroce_flows"
#define MROCE_MAP_STATS		"mroce_stats"
#define MROCE_MAP_CFG		"mroce_cfg"
#define MROCE_MAP_XSKS		"mroce_xsks"
#define MROCE_MAP_RETX_TS	"mroce_retx_ts"	/* written by the XDP program only */
#define MROCE_MAP_DM		"mroce_dm"	/* device memory: the pool XDP places into */
#define MROCE_MAP_DMR		"mroce_dmr"	/* regions registered on device memory */
#define MROCE_MAP_DM_OWN	"mroce_dm_own"	/* which process owns each pool chunk */
#define MROCE_MAP_QUEUES	"mroce_queues"	/* which device serves each receive queue */
#define MROCE_PROG_NAME		"mroce_xdp"
/* .rodata switch, set before loading: XDP places device-memory WRITEs (docs/datapath.md) */
#define MROCE_VAR_PLACE		"mroce_xdp_meta_ok"

/* Flows are indexed by local queue pair number; QPN 0 is never valid. */
#define MROCE_MAX_QPS		1024
#define MROCE_MAX_QUEUES	64	/* AF_XDP sockets, one per receive queue */

/*
 * Receive window: a ring of 64-bit words; PSN p lives in bit (p & 63) of
 * word (p >> 6) % MROCE_RXWIN_WORDS. One word is kept as slack so the word
 * holding PSNs that are about to enter the window is never one that still
 * holds PSNs inside it, which is what lets user space recycle words without
 * a lock (see mroce_rxwin_advance() and docs/datapath.md).
 */
#define MROCE_RXWIN_WORDS	16
#define MROCE_RXWIN_PSNS	((MROCE_RXWIN_WORDS - 1) * 64)	/* 960 */
_Static_assert((MROCE_RXWIN_WORDS & (MROCE_RXWIN_WORDS - 1)) == 0,
	       "ring index is a mask");
_Static_assert(MROCE_SACK_WORDS * 64 >= MROCE_RXWIN_PSNS - 1,
	       "an ACK's SACK covers the whole receive window beyond cum_psn");

enum mroce_flow_state {
	MROCE_FLOW_FREE		= 0,	/* no QP: packets count as unknown QP */
	MROCE_FLOW_ACTIVE	= 1,	/* accept packets with the right token */
	MROCE_FLOW_RESERVED	= 2,	/* a process holds the QPN, not connected: as FREE to XDP */
};

/* flow.flags */
#define MROCE_FLOW_GO_BACK_N	0x1	/* RoCEv2-style: only rx_base is accepted */

/*
 * Value of the flows map (BPF_F_MMAPABLE array, index = local QPN).
 * Writers: user space only: the process holding the flow (owner_pid, taken
 * by compare-and-swap) moves its state; the thread that owns the QP's
 * receive side, its window. Reader: the XDP program. 224 bytes per QP.
 */
struct mroce_flow {
	__u32	state;		/* enum mroce_flow_state */
	__u32	flags;		/* MROCE_FLOW_* */
	__be64	token;		/* expected bth.token, kept in wire order */
	__u32	rx_base;	/* every PSN before this one has been placed */
	__u32	peer_qpn;	/* remote QPN, for tools */
	__u32	owner_pid;	/* the flow's lock: the process holding it, 0 if free (a dead
				 * one's is taken over; docs/datapath.md, "Maps") */
	__u32	dev_id;		/* its device: XDP hands it only to that device's queues (0: none) */
	__u64	pd_cookie;	/* the QP's protection domain (struct mroce_dmr.pd_cookie) */
	__u64	rx_bits[MROCE_RXWIN_WORDS];	/* set: PSN placed */
	/*
	 * The sending side's counters, published by the owning library for
	 * tools (mroce flows / status); XDP never reads them.
	 */
	struct mroce_flow_tx {
		__u64	tx_pkts, retx_pkts, acked_bytes, ecn_ce;
		__u32	cc_cuts, paths_retired;
		__u32	srtt_us, cwnd_pkts;
		__u32	paths, worst_path_srtt_us;
	} tx;
};
_Static_assert(sizeof(struct mroce_flow_tx) == 56, "flow tx layout");
_Static_assert(sizeof(struct mroce_flow) == 40 + 8 * MROCE_RXWIN_WORDS + 56, "flow layout");

/*
 * Device memory (docs/datapath.md, "Placement in XDP"): a pool of chunks in
 * an mmapable array map (value = one chunk), which applications map with
 * mroce_alloc_dm() and register like any memory. For a region on it the
 * library publishes a struct mroce_dmr (index = rkey's table index), and
 * the XDP program copies a WRITE's payload straight into the pool, after
 * the same checks the library makes (token, window, key, PD, rights, the
 * whole message inside the region, UDP checksum), then cuts the frame to
 * its headers and hands it up with a struct mroce_xdp_meta saying so.
 * A payload that would cross a chunk's end goes up whole and user space
 * places it, as it places everything on ordinary memory.
 */
#define MROCE_DM_CHUNK_SHIFT	22
#define MROCE_DM_CHUNK		(1u << MROCE_DM_CHUNK_SHIFT)	/* 4 MiB, the largest array value */
#define MROCE_DM_CHUNKS		64	/* default pool: 256 MiB per interface (attach opts: dm_bytes) */
#define MROCE_DM_PLACE_MAX	4096	/* largest payload XDP places */
#define MROCE_DMR_MAX		4096	/* = the library's region table (MROCE_MAX_MRS) */

enum mroce_dmr_state {
	MROCE_DMR_FREE		= 0,
	MROCE_DMR_CLAIMED	= 1,	/* a process is filling it in: XDP ignores it */
	MROCE_DMR_ACTIVE	= 2,
};

/* mroce_dmr.access: the same bit as MROCE_ACCESS_REMOTE_WRITE (mroce.h). */
#define MROCE_DMR_REMOTE_WRITE	0x2

/* Value of the dmr map (mmapable array). Writer: the owning library; reader: XDP. */
struct mroce_dmr {
	__u32	state;		/* enum mroce_dmr_state */
	__u32	rkey;		/* the whole key: the index alone is not enough */
	__u64	pd_cookie;	/* must equal the flow's: a region is reached by its PD's QPs only */
	__u64	iova;		/* the region's address in its owner's process (what raddr names) */
	__u64	length;
	__u64	dm_off;		/* byte offset of iova in the pool */
	__u32	access;		/* MROCE_DMR_* */
	__u32	owner_pid;
};
_Static_assert(sizeof(struct mroce_dmr) == 48, "dmr layout");

/*
 * Placed in front of every frame XDP redirects (XDP metadata, copied into
 * the UMEM by AF_XDP in copy and zero-copy mode alike): placed_len > 0 says
 * the payload, that many bytes, is in device memory already and the frame
 * ends where it began. The wire cannot write it; user space clears it after
 * each frame, so a stale one is never read as fresh.
 */
#define MROCE_XDP_META_MAGIC	0x6d524d31	/* "mRM1" */
struct mroce_xdp_meta {
	__u32	magic;
	__u32	placed_len;
};

/*
 * Value of the config map (array, one entry), written by the loader and
 * refreshed by the library whenever it opens the datapath. The addresses are
 * this host's on the interface: a MetaRoCE frame to another MAC or another
 * IP is transit traffic and goes to the kernel untouched (not_local). Each
 * check is off while its part is empty (all-zero MAC, no address of that
 * family), which is what an `ip link` attach without mroce gets.
 */
#define MROCE_CFG_ADDRS		4	/* per family; more: that family is not checked */

struct mroce_cfg {
	__u16	udp_port;	/* host order; 0 means MROCE_DEFAULT_PORT */
	/*
	 * MetaRoCE's UDP destination ports are udp_port .. udp_port + n_ports - 1
	 * (0 counts as 1): one per receive queue, the device serving queue q
	 * (its first) on udp_port + q, so a NIC's flow rules can steer each
	 * device's traffic to its queues (docs/datapath.md, "Queues").
	 */
	__u16	n_ports;
	__u8	mac[6];		/* the interface's; all zero: not checked */
	__u8	n_ip4;		/* valid entries of ip4[]; 0: IPv4 destination not checked */
	__u8	n_ip6;		/* valid entries of ip6[] (never link-local); 0: not checked */
	__be32	ip4[MROCE_CFG_ADDRS];
	__u8	ip6[MROCE_CFG_ADDRS][16];
};
_Static_assert(sizeof(struct mroce_cfg) == 12 + 20 * MROCE_CFG_ADDRS, "cfg layout");

/*
 * Value of the queues map (mmapable array, index = receive queue): the
 * device whose AF_XDP socket serves the queue. A device serves queues of
 * its own, never shares one: a socket on a queue reads every frame that
 * arrives there. XDP hands a flow's frames only to a queue whose dev_id is
 * the flow's (drop: wrong_queue), so no process receives another's
 * traffic, even when the NIC steers it to the wrong queue. Writer: the
 * device that bound the queue's socket (the kernel lets one socket bind a
 * queue, which makes the bind the lock); reader: XDP and tools.
 */
struct mroce_queue {
	__u32	dev_id;		/* 0: no device */
	__u32	owner_pid;
	__u32	flags;		/* MROCE_QUEUE_* */
	__u32	rsvd;
};
_Static_assert(sizeof(struct mroce_queue) == 16, "queue layout");
/*
 * The device's first queue: UDP port base + this queue's index is the
 * device's. A frame to base + q for a queue without it is not MetaRoCE
 * (another protocol's port: Ultra Ethernet's is 4793) and passes.
 */
#define MROCE_QUEUE_PORT	0x1

/*
 * What the XDP program keeps per flow for itself (the mroce_retx_ts map,
 * struct mroce_flow_xdp; the library never writes it).
 *
 * Go-back-N keeps only the next PSN, as a RoCEv2 NIC does. The flow's
 * rx_base is user space's next PSN and lags behind XDP by the frames in the
 * socket's ring: a burst P, P+1, ... meets rx_base == P throughout. So XDP
 * keeps its own next PSN (next_psn: one past the last it passed up) and
 * takes a PSN that is either; rx_base resynchronises it when a frame XDP
 * passed up was lost before user space (a full ring). XDP only filters:
 * user space checks the order again against rx_base.
 *
 * Frames XDP would drop, passed up anyway for user space to answer:
 * - A resent duplicate (dup_retx): the sender lost our ACK. One per flow
 *   per MROCE_ANSWER_GAP_NS goes up; one ACK covers every placed PSN, so
 *   more copies add nothing but load (dup_retx_limit).
 * - On a go-back-N flow, a PSN past the next one (gap_report): a packet was
 *   lost and user space must NACK the gap, or the sender waits for its
 *   retransmission timer. The first packet past each new gap goes up at
 *   once; while the same gap lasts, one per interval, in case the NACK or
 *   the resent packet was lost too (out_of_order: the rest).
 * 1 ms is the library's default high RTO: losing that ACK or NACK too costs
 * at most one more interval. Two CPUs racing on these fields cost at most
 * an extra answer or a dropped packet (resent), never a wrong byte.
 */
#define MROCE_ANSWER_GAP_NS	1000000ULL

/* Value of the mroce_retx_ts map (array, per local QPN). Writer: the XDP program only. */
struct mroce_flow_xdp {
	__u64	dup_ns;		/* bpf_ktime_get_ns() when a resent duplicate last went up */
	__u64	gap_ns;		/* ... when a go-back-N gap was last reported */
	__u32	gap_psn;	/* ... and the PSN it was missing */
	__u32	next_psn;	/* go-back-N: one past the last PSN passed up */
};
_Static_assert(sizeof(struct mroce_flow_xdp) == 24, "flow_xdp layout");

/*
 * Per-CPU counters (stats map, one entry, value struct mroce_dp_counters):
 * stats.h. Counter s is 64-bit word s of the value.
 */
_Static_assert(sizeof(struct mroce_dp_counters) == 8 * MROCE_STAT_MAX, "one word per counter");

enum mroce_rxwin_verdict {
	MROCE_RXWIN_NEW		= 0,	/* inside the window, not placed yet */
	MROCE_RXWIN_DUP		= 1,	/* placed already (or older than the window) */
	MROCE_RXWIN_BEYOND	= 2,	/* too far ahead */
};

#ifndef MROCE_READ_ONCE
#define MROCE_READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#endif

static __always_inline __u32 mroce_rxwin_word(__u32 psn)
{
	return (psn >> 6) & (MROCE_RXWIN_WORDS - 1);
}

/*
 * Classify a PSN against a flow's window. PSNs compare in serial number
 * arithmetic, so the window slides across 2^32 without a special case.
 * Safe against a concurrent writer: a bit is only ever set after its PSN was
 * placed, so a stale read can make us accept a duplicate (user space drops
 * it) but never drop a packet that is still needed.
 */
static __always_inline int mroce_rxwin_check(const struct mroce_flow *f, __u32 psn)
{
	__u32 base = MROCE_READ_ONCE(f->rx_base);
	__u32 dist = psn - base;
	__u64 word;

	if ((__s32)dist < 0)
		return MROCE_RXWIN_DUP;
	if (dist >= MROCE_RXWIN_PSNS)
		return MROCE_RXWIN_BEYOND;
	word = MROCE_READ_ONCE(f->rx_bits[mroce_rxwin_word(psn)]);
	return (word >> (psn & 63)) & 1 ? MROCE_RXWIN_DUP : MROCE_RXWIN_NEW;
}

/*
 * Whether a resent duplicate goes up to be acknowledged again (struct
 * mroce_flow_xdp): one per flow per MROCE_ANSWER_GAP_NS. now: ns.
 */
static __always_inline int mroce_dup_answer_due(struct mroce_flow_xdp *fx, __u64 now)
{
	if (now - fx->dup_ns < MROCE_ANSWER_GAP_NS)
		return 0;
	fx->dup_ns = now;
	return 1;
}

enum mroce_gbn_verdict {
	MROCE_GBN_TAKE		= 0,	/* the next PSN (user space's or XDP's) */
	MROCE_GBN_REPORT	= 1,	/* past a gap: goes up, not placed, to be NACKed */
	MROCE_GBN_DROP		= 2,	/* past a gap reported less than an interval ago */
};

/*
 * A new PSN on a go-back-N flow whose user space expects base (its
 * rx_base), against what XDP passed up before (struct mroce_flow_xdp).
 * now: ns.
 */
static __always_inline int mroce_gbn_check(struct mroce_flow_xdp *fx, __u32 psn, __u32 base,
					   __u64 now)
{
	__u32 gap = fx->next_psn;

	if (psn == base || psn == gap) {
		fx->next_psn = psn + 1;
		return MROCE_GBN_TAKE;
	}
	/* the missing PSN: XDP's next, or user space's if that is further on */
	if ((__s32)(base - gap) > 0)
		gap = base;
	if (fx->gap_psn == gap && now - fx->gap_ns < MROCE_ANSWER_GAP_NS)
		return MROCE_GBN_DROP;
	fx->gap_psn = gap;
	fx->gap_ns = now;
	return MROCE_GBN_REPORT;
}

#endif /* MROCE_DP_MAPS_H */
