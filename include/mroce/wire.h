/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libmroce's low-level interface: building and decoding MetaRoCE frames,
 * receive windows and the datapath's flow entries. For the engine, the CLI,
 * tests and tools that speak the protocol themselves; applications need
 * only <mroce/mroce.h>. Unlike mroce.h this pulls in the wire format shared
 * with the BPF program (proto.h, dp_maps.h, parse.h) and, through parse.h,
 * kernel network headers.
 */
#ifndef MROCE_WIRE_H
#define MROCE_WIRE_H

#include <netinet/in.h>

#include "mroce.h"
#include "proto.h"
#include "dp_maps.h"
#include "parse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- wire format ------------------------------------------------------- */

/* Host-order view of the transport headers of one packet. */
struct mroce_hdr {
	__u8	opcode;
	__u8	path;
	__u16	flags;
	__u32	dqpn;
	__u32	psn;
	__u32	msn;
	__u64	token;
	__u32	ts;
	__u32	payload_len;
	__u16	pseq;		/* data: the path slot's sequence (mroce_emit fills it) */
	/* RETH */
	__u64	raddr;
	__u32	rkey;
	/* DETH / IMM / RREQ */
	__u32	msg_len;
	__u32	offset;
	__u16	stream;		/* receive-consuming messages: deth.stream, .epoch */
	__u16	epoch;
	__u32	imm;
	__u32	rd_len;
	/* AETH */
	__u32	cum_psn;
	__u32	ts_echo;
	__u64	sack[MROCE_SACK_WORDS];
	__u16	ecn_ce;
	__u16	ecn_pkts;
	__u32	ack_msn;
	__u32	rwnd;
	__u32	rate_kbps;	/* receiver's grant, 0: none */
	__u8	pflags;		/* MROCE_PF_* */
	__u8	ppath;
	__u16	ppsn_next;
	__u64	psack[MROCE_PSACK_WORDS];
	/* NAK */
	__u32	nak_psn;
	__u32	nak_msn;
	__u8	nak_code;
	__u8	nak_flags;	/* MROCE_NAKF_* */
	__u32	nak_ts;		/* bth.ts of the refused packet */
	__u16	nak_stream;	/* RNR: naketh.stream, .epoch */
	__u16	nak_epoch;
};

/* Where a frame goes: Ethernet, IPv4 or IPv6, UDP. */
struct mroce_route {
	__u8	src_mac[6];
	__u8	dst_mac[6];
	int	family;		/* AF_INET or AF_INET6 */
	union {
		struct in_addr	v4;
		struct in6_addr	v6;
	} src, dst;
	__u16	sport;		/* path entropy */
	__u16	dport;		/* 0: MROCE_DEFAULT_PORT */
	__u8	ttl;		/* 0: 64 */
	__u8	ecn;		/* IP ECN bits to send (ECT(0) = 2) */
};

/* Bytes of Ethernet + IP + UDP headers for a family (no VLAN). */
MROCE_API size_t mroce_l2l4_len(int family);

/*
 * Write BTH and extension headers for h into buf. h->payload_len is taken
 * as is. Returns the header length, or -EINVAL (unknown opcode) / -ENOSPC.
 */
MROCE_API int mroce_hdr_encode(void *buf, size_t size, const struct mroce_hdr *h);

/* Fill h from a packet that mroce_parse() accepted. */
MROCE_API void mroce_hdr_decode(const struct mroce_pkt *pkt, struct mroce_hdr *h);

/*
 * Build a whole frame (headers, payload, IP and UDP checksums) into buf.
 * Returns the frame length, or -EINVAL / -ENOSPC / -EMSGSIZE.
 */
MROCE_API int mroce_frame_build(void *buf, size_t size, const struct mroce_route *rt,
				const struct mroce_hdr *h, const void *payload);

/* ---- receive window (user space is the only writer) -------------------- */

/* Empty the window and start it at psn. */
MROCE_API void mroce_rxwin_reset(struct mroce_flow *f, __u32 psn);

/*
 * Record that psn's payload has been placed. Returns the verdict the PSN had
 * before (MROCE_RXWIN_NEW when it was marked now); the window does not move.
 */
MROCE_API int mroce_rxwin_mark(struct mroce_flow *f, __u32 psn);

/* Slide rx_base over every placed PSN; returns the new base. */
MROCE_API __u32 mroce_rxwin_advance(struct mroce_flow *f);

/*
 * The SACK bitmap of an ACK at the window's current base (returned): bit i
 * of word w set if PSN base + 1 + 64 * w + i is placed. Covers the whole
 * window beyond the base, nothing past it.
 */
MROCE_API __u32 mroce_rxwin_sack(const struct mroce_flow *f, __u64 sack[MROCE_SACK_WORDS]);

/* PSNs marked placed inside the window (for tools). */
MROCE_API unsigned int mroce_rxwin_count(const struct mroce_flow *f);

/* ---- flow entries of the XDP datapath (the engine and the CLI) ---------- */

struct mroce_flow_cfg {
	size_t	sz;
	__u64	token;		/* per-connection secret, host order */
	__u32	rx_psn;		/* first PSN expected */
	__u32	peer_qpn;
	__u32	flags;		/* MROCE_FLOW_* */
	__u64	pd_cookie;	/* the QP's protection domain, for placement in XDP */
	/* its device (mroce_dp_queue_set): XDP delivers it only on that device's queues */
	__u32	dev_id;
	size_t	:0;
};

/*
 * Local QPN qpn (1 .. MROCE_MAX_QPS-1; else -EINVAL) of an interface,
 * whose flows map the processes on it share. Reserve takes it for this
 * process, free or a dead process's: -EEXIST if a live one (this one
 * included) holds it. Add activates it, reserved by this process, free, or
 * a dead process's not active: -EEXIST if active already or a live
 * process's. Del deactivates and frees it, this process's or a dead one's:
 * -ENOENT if free, -EBUSY if a live process holds it.
 */
MROCE_API int mroce_dp_flow_reserve(struct mroce_dp *dp, __u32 qpn);
MROCE_API int mroce_dp_flow_add(struct mroce_dp *dp, __u32 qpn, const struct mroce_flow_cfg *cfg);
MROCE_API int mroce_dp_flow_del(struct mroce_dp *dp, __u32 qpn);

/*
 * The flow's entry in the shared (mmap'ed) map, for the thread that owns the
 * QP's receive side and updates its window. NULL with errno for a bad qpn.
 */
MROCE_API struct mroce_flow *mroce_dp_flow(struct mroce_dp *dp, __u32 qpn);

#ifdef __cplusplus
}
#endif

#endif /* MROCE_WIRE_H */
