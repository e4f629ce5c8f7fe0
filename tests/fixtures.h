/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Canonical test frames, shared by the unit tests and the BPF program tests
 * (selftests/), so both tiers agree on what "a valid WRITE" looks like.
 */
#ifndef MROCE_TEST_FIXTURES_H
#define MROCE_TEST_FIXTURES_H

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/icmp.h>
#include <net/if_arp.h>
#include <linux/tcp.h>

#include "mroce/mroce.h"
#include "mroce/wire.h"

typedef struct arphdr fx_arphdr_t __attribute__((aligned(1)));
typedef struct icmphdr fx_icmphdr_t __attribute__((aligned(1)));
typedef struct tcphdr fx_tcphdr_t __attribute__((aligned(1)));

#define FX_QPN		7
#define FX_PEER_QPN	9
#define FX_TOKEN	0x0123456789abcdefULL
#define FX_PSN		1000
#define FX_PAYLOAD	64
#define FX_FRAME_MAX	2048

struct fx_frame {
	__u8	buf[FX_FRAME_MAX];
	int	len;
	int	family;
};

static const __u8 fx_opcodes[] = {
	MROCE_OP_WRITE, MROCE_OP_WRITE_IMM, MROCE_OP_SEND, MROCE_OP_SEND_IMM,
	MROCE_OP_READ_REQ, MROCE_OP_READ_RESP, MROCE_OP_VOID, MROCE_OP_ACK, MROCE_OP_NACK,
};
#define FX_NOPCODES (sizeof(fx_opcodes) / sizeof(fx_opcodes[0]))

/* Test addresses: 198.18.0.0/15 and its IPv6 twin 2001:2::/48 (RFC 5180). */
static inline void fx_route(struct mroce_route *rt, int family)
{
	static const __u8 a[6] = { 0x02, 0, 0, 0, 0, 0x0a }, b[6] = { 0x02, 0, 0, 0, 0, 0x0b };

	memset(rt, 0, sizeof(*rt));
	memcpy(rt->src_mac, a, 6);
	memcpy(rt->dst_mac, b, 6);
	rt->family = family;
	if (family == AF_INET) {
		inet_pton(AF_INET, "198.18.0.1", &rt->src.v4);
		inet_pton(AF_INET, "198.18.0.2", &rt->dst.v4);
	} else {
		inet_pton(AF_INET6, "2001:2::1", &rt->src.v6);
		inet_pton(AF_INET6, "2001:2::2", &rt->dst.v6);
	}
	rt->sport = 49152;
	rt->ecn = 2;
}

/* A valid header for opcode: the middle packet of a 3-packet message where that applies. */
static inline void fx_hdr(struct mroce_hdr *h, __u8 opcode, __u32 psn)
{
	int layout = mroce_op_layout(opcode);

	memset(h, 0, sizeof(*h));
	h->opcode = opcode;
	h->dqpn = FX_QPN;
	h->psn = psn;
	h->msn = 3;
	h->token = FX_TOKEN;
	h->ts = 123456;
	h->path = 1;
	if (layout & MROCE_EXT_RETH) {
		h->raddr = 0x7f0000001000ULL;
		h->rkey = 0xdeadbeef;
	}
	if (layout & MROCE_EXT_PAYLOAD) {
		h->payload_len = FX_PAYLOAD;
		h->msg_len = 3 * FX_PAYLOAD;
		h->offset = FX_PAYLOAD;
	}
	if (layout & MROCE_EXT_IMM)
		h->imm = 0xcafef00d;
	if (layout & MROCE_EXT_RREQ) {
		h->msg_len = 1 << 20;
		h->offset = 4096;
		h->rd_len = 8192;
		h->flags = 0;
	}
	if (layout & MROCE_EXT_AETH) {
		h->cum_psn = psn;
		h->ts_echo = 42;
		h->sack[0] = 0x5;
		h->sack[1] = 1ULL << 63;
		h->ecn_ce = 2;
		h->ecn_pkts = 16;
		h->ack_msn = 2;
		h->rwnd = MROCE_RXWIN_PSNS;
	}
	if (layout & MROCE_EXT_NAK) {
		h->nak_psn = psn;
		h->nak_msn = 3;
		h->nak_code = MROCE_NAK_REMOTE_ACCESS;
	}
}

/* Build h as a frame; payload bytes are a counter pattern. Returns 0 or -errno. */
static inline int fx_build_hdr(struct fx_frame *f, int family, const struct mroce_hdr *h)
{
	struct mroce_route rt;
	__u8 payload[FX_FRAME_MAX];

	for (__u32 i = 0; i < h->payload_len && i < sizeof(payload); i++)
		payload[i] = (__u8)(h->psn * 7 + i);
	fx_route(&rt, family);
	memset(f, 0, sizeof(*f));
	f->family = family;
	f->len = mroce_frame_build(f->buf, sizeof(f->buf), &rt, h, payload);
	return f->len < 0 ? f->len : 0;
}

static inline int fx_build(struct fx_frame *f, int family, __u8 opcode, __u32 psn)
{
	struct mroce_hdr h;

	fx_hdr(&h, opcode, psn);
	return fx_build_hdr(f, family, &h);
}

/* Offsets into a frame built by fx_build (no VLAN). */
static inline int fx_l4_off(const struct fx_frame *f)
{
	return (int)(sizeof(struct ethhdr) +
		     (f->family == AF_INET ? sizeof(struct iphdr) : sizeof(struct ipv6hdr)));
}

static inline struct mroce_bth *fx_bth(struct fx_frame *f)
{
	return (struct mroce_bth *)(f->buf + fx_l4_off(f) + sizeof(struct udphdr));
}

static inline void *fx_ext(struct fx_frame *f)
{
	return fx_bth(f) + 1;
}

/* Non-MetaRoCE frames that must reach the kernel untouched. */
enum fx_other { FX_ARP, FX_ICMP, FX_TCP, FX_UDP_OTHER, FX_OTHER_MAX };

static inline void fx_other(struct fx_frame *f, enum fx_other kind)
{
	struct mroce_hdr h;
	mroce_iphdr_t *ip;

	fx_build(f, AF_INET, MROCE_OP_WRITE, FX_PSN);
	ip = (mroce_iphdr_t *)(f->buf + sizeof(struct ethhdr));
	switch (kind) {
	case FX_ARP: {
		fx_arphdr_t *arp = (fx_arphdr_t *)(f->buf + sizeof(struct ethhdr));

		((mroce_ethhdr_t *)f->buf)->h_proto = htons(ETH_P_ARP);
		memset(arp, 0, 28);
		arp->ar_hrd = htons(ARPHRD_ETHER);
		arp->ar_pro = htons(ETH_P_IP);
		arp->ar_hln = 6;
		arp->ar_pln = 4;
		arp->ar_op = htons(ARPOP_REQUEST);
		f->len = (int)sizeof(struct ethhdr) + 28;
		break;
	}
	case FX_ICMP: {
		fx_icmphdr_t *icmp = (fx_icmphdr_t *)(ip + 1);

		ip->protocol = IPPROTO_ICMP;
		ip->tot_len = htons(sizeof(*ip) + sizeof(*icmp) + 56);
		memset(icmp, 0, sizeof(*icmp) + 56);
		icmp->type = ICMP_ECHO;
		f->len = (int)(sizeof(struct ethhdr) + sizeof(*ip) + sizeof(*icmp) + 56);
		break;
	}
	case FX_TCP: {
		fx_tcphdr_t *tcp = (fx_tcphdr_t *)(ip + 1);

		ip->protocol = IPPROTO_TCP;
		ip->tot_len = htons(sizeof(*ip) + sizeof(*tcp));
		memset(tcp, 0, sizeof(*tcp));
		tcp->source = htons(40000);
		tcp->dest = htons(MROCE_DEFAULT_PORT);	/* same port number, other protocol */
		tcp->doff = 5;
		tcp->syn = 1;
		f->len = (int)(sizeof(struct ethhdr) + sizeof(*ip) + sizeof(*tcp));
		break;
	}
	case FX_UDP_OTHER:
		fx_hdr(&h, MROCE_OP_WRITE, FX_PSN);
		fx_build_hdr(f, AF_INET, &h);
		((mroce_udphdr_t *)(f->buf + fx_l4_off(f)))->dest = htons(4791);	/* RoCEv2 */
		break;
	default:
		break;
	}
}

#endif /* MROCE_TEST_FIXTURES_H */
