/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Frame parser and validator shared by the XDP program and user space, so
 * the rules the datapath enforces are the rules the unit tests exercise.
 * Every read is bounds-checked against data_end in a shape the BPF verifier
 * accepts; keep it that way (constant-size reads, explicit checks).
 *
 * Rules and their order are documented in docs/protocol.md ("Validation").
 */
#ifndef MROCE_PARSE_H
#define MROCE_PARSE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/in.h>
#include "proto.h"
#include "dp_maps.h"

#ifndef IP_MF
#define IP_MF		0x2000
#define IP_OFFSET	0x1fff
#endif

struct mroce_vlan_hdr {
	__be16	tci;
	__be16	encap_proto;
};

/*
 * In user space a frame sits wherever its buffer puts it (IP usually 14 bytes
 * into an aligned buffer), so header views must not promise alignment. The
 * BPF program keeps the natural types: the kernel validates its accesses and
 * byte-wise loads would only cost instructions.
 */
#ifdef __bpf__
typedef struct ethhdr		mroce_ethhdr_t;
typedef struct iphdr		mroce_iphdr_t;
typedef struct ipv6hdr		mroce_ipv6hdr_t;
typedef struct udphdr		mroce_udphdr_t;
typedef struct mroce_vlan_hdr	mroce_vlanhdr_t;
#else
typedef struct ethhdr		mroce_ethhdr_t __attribute__((aligned(1)));
typedef struct iphdr		mroce_iphdr_t __attribute__((aligned(1)));
typedef struct ipv6hdr		mroce_ipv6hdr_t __attribute__((aligned(1)));
typedef struct udphdr		mroce_udphdr_t __attribute__((aligned(1)));
typedef struct mroce_vlan_hdr	mroce_vlanhdr_t __attribute__((aligned(1)));
#endif

struct mroce_pkt {
	const struct mroce_bth		*bth;
	const struct mroce_reth		*reth;	/* NULL when the opcode has none */
	const struct mroce_deth		*deth;
	const struct mroce_immeth	*imm;
	const struct mroce_rreqeth	*rreq;
	const struct mroce_aeth		*aeth;
	const struct mroce_naketh	*nak;
	const void			*payload;
	__u32				payload_len;
	__u32				frame_len;	/* Ethernet header to UDP end */
	int				layout;		/* mroce_op_layout() */
	__u16				l3_off;
	__u16				l4_off;
	__u8				ip_ver;		/* 4 or 6 */
	__u8				ecn;		/* IP ECN bits of the packet */
	__u16				dport;		/* UDP destination port (set unless PASS) */
};

/*
 * Parse a frame of frame_len bytes whose first bytes, [data, data_end), can
 * be read: all of it in user space; in XDP, the linear part of a
 * multi-buffer frame (jumbo frames), which must hold every header. Returns
 * MROCE_STAT_PASS for frames that are not MetaRoCE (or cannot be identified
 * as such), MROCE_STAT_RX for a well-formed MetaRoCE packet (pkt filled in),
 * or the counter of the rule it broke. Flow, token and window checks come
 * after, with the flow at hand. pkt->payload may lie past data_end.
 * MetaRoCE's UDP destination ports: port .. port + n_ports - 1 (n_ports 0
 * counts as 1; struct mroce_cfg); beyond port itself, XDP takes one only
 * while a device receives on it (struct mroce_queue), and sets pkt->dport
 * for it to check that first.
 */
/* Whether UDP destination port dport is one of MetaRoCE's: port .. port + n_ports - 1, no wrap. */
static __always_inline int mroce_port_ours(__u32 dport, __u32 port, __u32 n_ports)
{
	return dport >= port && dport - port < (n_ports ? n_ports : 1);
}

static __always_inline int mroce_parse_ports(const void *data, const void *data_end,
					     __u32 frame_len, __u16 port, __u16 n_ports,
					     struct mroce_pkt *pkt)
{
	const mroce_ethhdr_t *eth = data;
	const mroce_udphdr_t *udp;
	const void *cur, *end;
	__u32 udp_len, ext, l4_room;
	__u16 proto;
	int i, layout;

	if ((const void *)(eth + 1) > data_end)
		return MROCE_STAT_PASS;
	proto = eth->h_proto;
	cur = eth + 1;
#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < 2; i++) {
		const mroce_vlanhdr_t *vh = cur;

		if (proto != mroce_be16(ETH_P_8021Q) && proto != mroce_be16(ETH_P_8021AD))
			break;
		if ((const void *)(vh + 1) > data_end)
			return MROCE_STAT_PASS;
		proto = vh->encap_proto;
		cur = vh + 1;
	}
	pkt->l3_off = (__u16)(cur - data);

	if (proto == mroce_be16(ETH_P_IP)) {
		const mroce_iphdr_t *ip = cur;
		__u32 ihl, tot;

		if ((const void *)(ip + 1) > data_end)
			return MROCE_STAT_PASS;
		if (ip->version != 4 || ip->ihl < 5 || ip->protocol != IPPROTO_UDP)
			return MROCE_STAT_PASS;
		/* Later fragments carry no UDP header: nothing to classify. */
		if (ip->frag_off & mroce_be16(IP_OFFSET))
			return MROCE_STAT_PASS;
		ihl = ip->ihl * 4;
		udp = (const void *)ip + ihl;
		if ((const void *)(udp + 1) > data_end)
			return MROCE_STAT_PASS;
		if (!mroce_port_ours(mroce_be16(udp->dest), port, n_ports))
			return MROCE_STAT_PASS;
		pkt->dport = mroce_be16(udp->dest);
		if (ip->frag_off & mroce_be16(IP_MF))
			return MROCE_STAT_FRAGMENT;
		tot = mroce_be16(ip->tot_len);
		if (tot < ihl + sizeof(*udp))
			return MROCE_STAT_BAD_LENGTH;
		if (pkt->l3_off + tot > frame_len)
			return MROCE_STAT_TRUNCATED;
		l4_room = tot - ihl;
		pkt->ip_ver = 4;
		pkt->ecn = ip->tos & 3;
	} else if (proto == mroce_be16(ETH_P_IPV6)) {
		const mroce_ipv6hdr_t *ip6 = cur;
		__u32 plen;

		if ((const void *)(ip6 + 1) > data_end)
			return MROCE_STAT_PASS;
		/* Extension headers are not used by MetaRoCE; leave them to the kernel. */
		if (ip6->version != 6 || ip6->nexthdr != IPPROTO_UDP)
			return MROCE_STAT_PASS;
		udp = (const void *)(ip6 + 1);
		if ((const void *)(udp + 1) > data_end)
			return MROCE_STAT_PASS;
		if (!mroce_port_ours(mroce_be16(udp->dest), port, n_ports))
			return MROCE_STAT_PASS;
		pkt->dport = mroce_be16(udp->dest);
		plen = mroce_be16(ip6->payload_len);
		if (plen < sizeof(*udp))
			return MROCE_STAT_BAD_LENGTH;
		if (pkt->l3_off + sizeof(*ip6) + plen > frame_len)
			return MROCE_STAT_TRUNCATED;
		l4_room = plen;
		pkt->ip_ver = 6;
		pkt->ecn = (ip6->flow_lbl[0] >> 4) & 3;
	} else {
		return MROCE_STAT_PASS;
	}

	pkt->l4_off = (__u16)((const void *)udp - data);
	udp_len = mroce_be16(udp->len);
	if (udp_len != l4_room)
		return MROCE_STAT_BAD_LENGTH;
	end = (const void *)udp + udp_len;
	pkt->frame_len = (__u32)(end - data);

	/* From here on every header must lie inside the UDP datagram. */
	pkt->bth = (const void *)(udp + 1);
	if ((const void *)(pkt->bth + 1) > end || (const void *)(pkt->bth + 1) > data_end)
		return MROCE_STAT_BAD_LENGTH;
	if (pkt->bth->ver != MROCE_VERSION)
		return MROCE_STAT_BAD_VERSION;
	layout = mroce_op_layout(pkt->bth->opcode);
	if (layout < 0)
		return MROCE_STAT_BAD_OPCODE;
	pkt->layout = layout;

	ext = mroce_ext_len(layout);
	cur = pkt->bth + 1;
	if (cur + ext > end || cur + ext > data_end)
		return MROCE_STAT_BAD_LENGTH;
	pkt->payload_len = mroce_be16(pkt->bth->payload_len);
	if (udp_len != sizeof(*udp) + sizeof(struct mroce_bth) + ext + pkt->payload_len)
		return MROCE_STAT_BAD_LENGTH;
	if (!(layout & MROCE_EXT_PAYLOAD) && pkt->payload_len)
		return MROCE_STAT_BAD_LENGTH;

	pkt->reth = 0;
	pkt->deth = 0;
	pkt->imm = 0;
	pkt->rreq = 0;
	pkt->aeth = 0;
	pkt->nak = 0;
	if (layout & MROCE_EXT_RETH) {
		pkt->reth = cur;
		cur += sizeof(struct mroce_reth);
	}
	if (layout & MROCE_EXT_DETH) {
		pkt->deth = cur;
		cur += sizeof(struct mroce_deth);
	}
	if (layout & MROCE_EXT_IMM) {
		pkt->imm = cur;
		cur += sizeof(struct mroce_immeth);
	}
	if (layout & MROCE_EXT_RREQ) {
		pkt->rreq = cur;
		cur += sizeof(struct mroce_rreqeth);
	}
	if (layout & MROCE_EXT_AETH) {
		pkt->aeth = cur;
		cur += sizeof(struct mroce_aeth);
	}
	if (layout & MROCE_EXT_NAK) {
		pkt->nak = cur;
		cur += sizeof(struct mroce_naketh);
	}
	pkt->payload = cur;

	if (pkt->deth) {
		const struct mroce_deth *d = pkt->deth;
		__u32 msg_len, off, span;
		__u8 flags = pkt->bth->flags;

		if ((const void *)(d + 1) > data_end)
			return MROCE_STAT_BAD_LENGTH;
		msg_len = mroce_be32(d->msg_len);
		off = mroce_be32(d->offset);
		span = pkt->payload_len;
		if (pkt->rreq) {
			if ((const void *)(pkt->rreq + 1) > data_end)
				return MROCE_STAT_BAD_LENGTH;
			span = mroce_be32(pkt->rreq->length);
		}
		/* off + span <= msg_len, written so it cannot overflow */
		if (span > msg_len || off > msg_len - span)
			return MROCE_STAT_BAD_LENGTH;
		if (pkt->rreq)
			return MROCE_STAT_RX;
		if (!!(flags & MROCE_F_FIRST) != (off == 0))
			return MROCE_STAT_BAD_FLAGS;
		if (!!(flags & MROCE_F_LAST) != (off + span == msg_len))
			return MROCE_STAT_BAD_FLAGS;
	}
	return MROCE_STAT_RX;
}

/* MetaRoCE on one UDP port only: a device's (the library), or a test's. */
static __always_inline int mroce_parse_mb(const void *data, const void *data_end, __u32 frame_len,
					  __u16 port, struct mroce_pkt *pkt)
{
	return mroce_parse_ports(data, data_end, frame_len, port, 1, pkt);
}

/* A frame that is all readable: [data, data_end). */
static __always_inline int mroce_parse(const void *data, const void *data_end,
				       __u16 port, struct mroce_pkt *pkt)
{
	return mroce_parse_mb(data, data_end, (__u32)((const __u8 *)data_end - (const __u8 *)data),
			      port, pkt);
}

#endif /* MROCE_PARSE_H */
