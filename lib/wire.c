// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Encoding and decoding of MetaRoCE headers and whole frames. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "mroce/mroce.h"
#include "mroce/wire.h"
#include "internal.h"
#include "engine.h"

size_t mroce_l2l4_len(int family)
{
	size_t l3 = family == AF_INET6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);

	return sizeof(struct ethhdr) + l3 + sizeof(struct udphdr);
}

static void put16(void *p, __u16 v) { v = mroce_be16(v); memcpy(p, &v, 2); }
static void put32(void *p, __u32 v) { v = mroce_be32(v); memcpy(p, &v, 4); }
static void put64(void *p, __u64 v) { v = mroce_be64(v); memcpy(p, &v, 8); }
static __u16 get16(const void *p) { __u16 v; memcpy(&v, p, 2); return mroce_be16(v); }
static __u32 get32(const void *p) { __u32 v; memcpy(&v, p, 4); return mroce_be32(v); }
static __u64 get64(const void *p) { __u64 v; memcpy(&v, p, 8); return mroce_be64(v); }

#define PUT(p, type, field, v) \
	_Generic(((type *)0)->field, \
		 __u8: (void)(((__u8 *)(p))[__builtin_offsetof(type, field)] = (v)), \
		 __be16: put16((char *)(p) + __builtin_offsetof(type, field), (v)), \
		 __be32: put32((char *)(p) + __builtin_offsetof(type, field), (v)), \
		 __be64: put64((char *)(p) + __builtin_offsetof(type, field), (v)))
#define GET(p, type, field) \
	_Generic(((type *)0)->field, \
		 __u8: ((const __u8 *)(p))[__builtin_offsetof(type, field)], \
		 __be16: get16((const char *)(p) + __builtin_offsetof(type, field)), \
		 __be32: get32((const char *)(p) + __builtin_offsetof(type, field)), \
		 __be64: get64((const char *)(p) + __builtin_offsetof(type, field)))

int mroce_hdr_encode(void *buf, size_t size, const struct mroce_hdr *h)
{
	int layout = mroce_op_layout(h->opcode);
	char *p = buf;
	size_t len;

	if (!buf || !h || layout < 0)
		return -EINVAL;
	if (h->payload_len > 0xffff || (!(layout & MROCE_EXT_PAYLOAD) && h->payload_len))
		return -EINVAL;
	len = sizeof(struct mroce_bth) + mroce_ext_len(layout);
	if (len > size)
		return -ENOSPC;
	memset(p, 0, len);

	PUT(p, struct mroce_bth, ver, MROCE_VERSION);
	PUT(p, struct mroce_bth, opcode, h->opcode);
	PUT(p, struct mroce_bth, flags, h->flags);
	PUT(p, struct mroce_bth, dqpn, h->dqpn);
	PUT(p, struct mroce_bth, psn, h->psn);
	PUT(p, struct mroce_bth, msn, h->msn);
	PUT(p, struct mroce_bth, token, h->token);
	PUT(p, struct mroce_bth, ts, h->ts);
	PUT(p, struct mroce_bth, payload_len, h->payload_len);
	PUT(p, struct mroce_bth, path, h->path);
	PUT(p, struct mroce_bth, pseq, h->pseq);
	p += sizeof(struct mroce_bth);

	if (layout & MROCE_EXT_RETH) {
		PUT(p, struct mroce_reth, raddr, h->raddr);
		PUT(p, struct mroce_reth, rkey, h->rkey);
		p += sizeof(struct mroce_reth);
	}
	if (layout & MROCE_EXT_DETH) {
		PUT(p, struct mroce_deth, msg_len, h->msg_len);
		PUT(p, struct mroce_deth, offset, h->offset);
		PUT(p, struct mroce_deth, stream, h->stream);
		PUT(p, struct mroce_deth, epoch, h->epoch);
		p += sizeof(struct mroce_deth);
	}
	if (layout & MROCE_EXT_IMM) {
		PUT(p, struct mroce_immeth, imm, h->imm);
		p += sizeof(struct mroce_immeth);
	}
	if (layout & MROCE_EXT_RREQ) {
		PUT(p, struct mroce_rreqeth, length, h->rd_len);
		p += sizeof(struct mroce_rreqeth);
	}
	if (layout & MROCE_EXT_AETH) {
		PUT(p, struct mroce_aeth, cum_psn, h->cum_psn);
		PUT(p, struct mroce_aeth, ts_echo, h->ts_echo);
		for (int i = 0; i < MROCE_SACK_WORDS; i++)
			put64(p + __builtin_offsetof(struct mroce_aeth, sack) + 8 * i, h->sack[i]);
		PUT(p, struct mroce_aeth, ecn_ce, h->ecn_ce);
		PUT(p, struct mroce_aeth, ecn_pkts, h->ecn_pkts);
		PUT(p, struct mroce_aeth, msn, h->ack_msn);
		PUT(p, struct mroce_aeth, rwnd, h->rwnd);
		PUT(p, struct mroce_aeth, rate, h->rate_kbps);
		PUT(p, struct mroce_aeth, pflags, h->pflags);
		PUT(p, struct mroce_aeth, ppath, h->ppath);
		PUT(p, struct mroce_aeth, ppsn_next, h->ppsn_next);
		for (int i = 0; i < MROCE_PSACK_WORDS; i++)
			put64(p + __builtin_offsetof(struct mroce_aeth, psack) + 8 * i, h->psack[i]);
		p += sizeof(struct mroce_aeth);
	}
	if (layout & MROCE_EXT_NAK) {
		PUT(p, struct mroce_naketh, psn, h->nak_psn);
		PUT(p, struct mroce_naketh, msn, h->nak_msn);
		PUT(p, struct mroce_naketh, code, h->nak_code);
		PUT(p, struct mroce_naketh, flags, h->nak_flags);
		PUT(p, struct mroce_naketh, ts_echo, h->nak_ts);
		PUT(p, struct mroce_naketh, stream, h->nak_stream);
		PUT(p, struct mroce_naketh, epoch, h->nak_epoch);
		p += sizeof(struct mroce_naketh);
	}
	return (int)len;
}

void mroce_hdr_decode(const struct mroce_pkt *pkt, struct mroce_hdr *h)
{
	const void *b = pkt->bth;

	memset(h, 0, sizeof(*h));
	h->opcode = GET(b, struct mroce_bth, opcode);
	h->flags = GET(b, struct mroce_bth, flags);
	h->dqpn = GET(b, struct mroce_bth, dqpn);
	h->psn = GET(b, struct mroce_bth, psn);
	h->msn = GET(b, struct mroce_bth, msn);
	h->token = GET(b, struct mroce_bth, token);
	h->ts = GET(b, struct mroce_bth, ts);
	h->payload_len = GET(b, struct mroce_bth, payload_len);
	h->path = GET(b, struct mroce_bth, path);
	h->pseq = GET(b, struct mroce_bth, pseq);
	if (pkt->reth) {
		h->raddr = GET(pkt->reth, struct mroce_reth, raddr);
		h->rkey = GET(pkt->reth, struct mroce_reth, rkey);
	}
	if (pkt->deth) {
		h->msg_len = GET(pkt->deth, struct mroce_deth, msg_len);
		h->offset = GET(pkt->deth, struct mroce_deth, offset);
		h->stream = GET(pkt->deth, struct mroce_deth, stream);
		h->epoch = GET(pkt->deth, struct mroce_deth, epoch);
	}
	if (pkt->imm)
		h->imm = GET(pkt->imm, struct mroce_immeth, imm);
	if (pkt->rreq)
		h->rd_len = GET(pkt->rreq, struct mroce_rreqeth, length);
	if (pkt->aeth) {
		const char *a = (const char *)pkt->aeth;

		h->cum_psn = GET(a, struct mroce_aeth, cum_psn);
		h->ts_echo = GET(a, struct mroce_aeth, ts_echo);
		for (int i = 0; i < MROCE_SACK_WORDS; i++)
			h->sack[i] = get64(a + __builtin_offsetof(struct mroce_aeth, sack) + 8 * i);
		h->ecn_ce = GET(a, struct mroce_aeth, ecn_ce);
		h->ecn_pkts = GET(a, struct mroce_aeth, ecn_pkts);
		h->ack_msn = GET(a, struct mroce_aeth, msn);
		h->rwnd = GET(a, struct mroce_aeth, rwnd);
		h->rate_kbps = GET(a, struct mroce_aeth, rate);
		h->pflags = GET(a, struct mroce_aeth, pflags);
		h->ppath = GET(a, struct mroce_aeth, ppath);
		h->ppsn_next = GET(a, struct mroce_aeth, ppsn_next);
		for (int i = 0; i < MROCE_PSACK_WORDS; i++)
			h->psack[i] = get64(a + __builtin_offsetof(struct mroce_aeth, psack) + 8 * i);
	}
	if (pkt->nak) {
		h->nak_psn = GET(pkt->nak, struct mroce_naketh, psn);
		h->nak_msn = GET(pkt->nak, struct mroce_naketh, msn);
		h->nak_code = GET(pkt->nak, struct mroce_naketh, code);
		h->nak_flags = GET(pkt->nak, struct mroce_naketh, flags);
		h->nak_ts = GET(pkt->nak, struct mroce_naketh, ts_echo);
		h->nak_stream = GET(pkt->nak, struct mroce_naketh, stream);
		h->nak_epoch = GET(pkt->nak, struct mroce_naketh, epoch);
	}
}

/*
 * One's-complement sum of a buffer as big-endian 16-bit words (RFC 1071),
 * to be folded later. Computed on native 32-bit loads: the one's-complement
 * sum commutes with byte swapping, so swapping the folded native sum gives
 * the big-endian one (RFC 1071, section 2(B)).
 */
static __u32 csum_add(__u32 sum, const void *data, size_t len)
{
	const __u8 *p = data;
	__u64 acc = 0, s[4] = { 0, 0, 0, 0 };
	__u32 w32;
	__u16 w16 = 0;

	/*
	 * The payload is most of a frame: 32 bytes a step into four independent
	 * sums of 32-bit halves, so the adds do not wait on each other (one
	 * accumulator allows about one add per cycle). Each sum grows by less
	 * than 2^33 a step: no overflow below 2^31 steps.
	 */
	for (; len >= 32; len -= 32, p += 32) {
		for (int i = 0; i < 4; i++) {
			__u64 w;

			memcpy(&w, p + 8 * i, 8);
			s[i] += (w & 0xffffffffu) + (w >> 32);
		}
	}
	for (int i = 0; i < 4; i++) {
		while (s[i] >> 32)
			s[i] = (s[i] & 0xffffffffu) + (s[i] >> 32);
		acc += s[i];
	}
	for (; len >= 4; len -= 4, p += 4) {
		memcpy(&w32, p, 4);
		acc += w32;
	}
	if (len >= 2) {
		memcpy(&w16, p, 2);
		acc += w16;
		p += 2;
		len -= 2;
	}
	if (len) {
		w16 = 0;
		memcpy(&w16, p, 1);	/* the odd byte is the high byte of a zero-padded word */
		acc += w16;
	}
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return sum + mroce_be16((__u16)acc);
}

static __u16 csum_fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

int mroce_frame_hdrs(void *buf, size_t size, const struct mroce_route *rt, const struct mroce_hdr *h)
{
	size_t l2l4, hdr_len, udp_len;
	mroce_ethhdr_t *eth = buf;
	mroce_udphdr_t *udp;
	int n;

	if (!buf || !rt || !h)
		return -EINVAL;
	if (rt->family != AF_INET && rt->family != AF_INET6)
		return -EINVAL;
	l2l4 = mroce_l2l4_len(rt->family);
	if (size < l2l4)
		return -ENOSPC;
	n = mroce_hdr_encode((char *)buf + l2l4, size - l2l4, h);
	if (n < 0)
		return n;
	hdr_len = (size_t)n;
	udp_len = sizeof(*udp) + hdr_len + h->payload_len;
	if (udp_len > 0xffff - sizeof(struct ipv6hdr))
		return -EMSGSIZE;
	if (l2l4 + hdr_len + h->payload_len > size)
		return -ENOSPC;

	memcpy(eth->h_dest, rt->dst_mac, ETH_ALEN);
	memcpy(eth->h_source, rt->src_mac, ETH_ALEN);
	if (rt->family == AF_INET) {
		mroce_iphdr_t *ip = (void *)(eth + 1);

		eth->h_proto = mroce_be16(ETH_P_IP);
		memset(ip, 0, sizeof(*ip));
		ip->version = 4;
		ip->ihl = 5;
		ip->tos = rt->ecn & 3;
		ip->tot_len = mroce_be16((__u16)(sizeof(*ip) + udp_len));
		ip->frag_off = mroce_be16(0x4000);	/* DF: MetaRoCE never fragments */
		ip->ttl = rt->ttl ? rt->ttl : 64;
		ip->protocol = IPPROTO_UDP;
		ip->saddr = rt->src.v4.s_addr;
		ip->daddr = rt->dst.v4.s_addr;
		ip->check = mroce_be16(csum_fold(csum_add(0, ip, sizeof(*ip))));
		udp = (void *)(ip + 1);
	} else {
		mroce_ipv6hdr_t *ip6 = (void *)(eth + 1);

		eth->h_proto = mroce_be16(ETH_P_IPV6);
		memset(ip6, 0, sizeof(*ip6));
		ip6->version = 6;
		ip6->flow_lbl[0] = (__u8)((rt->ecn & 3) << 4);
		ip6->payload_len = mroce_be16((__u16)udp_len);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = rt->ttl ? rt->ttl : 64;
		ip6->saddr = rt->src.v6;
		ip6->daddr = rt->dst.v6;
		udp = (void *)(ip6 + 1);
	}
	udp->source = mroce_be16(rt->sport);
	udp->dest = mroce_be16(rt->dport ? rt->dport : MROCE_DEFAULT_PORT);
	udp->len = mroce_be16((__u16)udp_len);
	udp->check = 0;
	return (int)(l2l4 + hdr_len);
}

/* UDP checksum of a frame whose headers came from mroce_frame_hdrs(). */
void mroce_frame_finish(void *buf, __u32 len, int family)
{
	size_t l2l4 = mroce_l2l4_len(family);
	mroce_udphdr_t *udp = (void *)((char *)buf + l2l4 - sizeof(*udp));
	__u32 udp_len = len - (__u32)(l2l4 - sizeof(*udp)), sum;
	const char *l3 = (const char *)buf + sizeof(struct ethhdr);

	if (family == AF_INET)
		sum = csum_add(0, l3 + 12, 8);		/* saddr, daddr */
	else
		sum = csum_add(0, l3 + 8, 32);
	sum += IPPROTO_UDP + udp_len;
	udp->check = 0;
	sum = csum_add(sum, udp, udp_len);
	udp->check = mroce_be16(csum_fold(sum));
	if (!udp->check)
		udp->check = 0xffff;	/* 0 means "no checksum" */
}

/*
 * Headers and payload apart. The UDP part of the headers (UDP header plus
 * ours) is of even length, being whole 4-byte words, so the payload's words
 * line up as if it followed them.
 */
void mroce_frame_finish_ref(void *buf, __u32 hdr_len, const void *payload, __u32 len, int family)
{
	size_t l2l4 = mroce_l2l4_len(family);
	mroce_udphdr_t *udp = (void *)((char *)buf + l2l4 - sizeof(*udp));
	__u32 udp_hdrs = hdr_len - (__u32)(l2l4 - sizeof(*udp)), sum;
	const char *l3 = (const char *)buf + sizeof(struct ethhdr);

	if (family == AF_INET)
		sum = csum_add(0, l3 + 12, 8);
	else
		sum = csum_add(0, l3 + 8, 32);
	sum += IPPROTO_UDP + udp_hdrs + len;
	udp->check = 0;
	sum = csum_add(sum, udp, udp_hdrs);
	sum = csum_add(sum, payload, len);
	udp->check = mroce_be16(csum_fold(sum));
	if (!udp->check)
		udp->check = 0xffff;
}

bool mroce_frame_csum_ok(const void *frame, const struct mroce_pkt *pkt)
{
	const __u8 *f = frame;
	const mroce_udphdr_t *udp = (const void *)(f + pkt->l4_off);
	__u32 udp_len = pkt->frame_len - pkt->l4_off, sum;

	if (!udp->check)
		return pkt->ip_ver == 4;	/* IPv4 may omit it; IPv6 may not */
	if (pkt->ip_ver == 4)
		sum = csum_add(0, f + pkt->l3_off + 12, 8);
	else
		sum = csum_add(0, f + pkt->l3_off + 8, 32);
	sum += IPPROTO_UDP + udp_len;
	sum = csum_add(sum, udp, udp_len);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

int mroce_frame_build(void *buf, size_t size, const struct mroce_route *rt,
		      const struct mroce_hdr *h, const void *payload)
{
	int hdr;

	if (!h || (h->payload_len && !payload))
		return -EINVAL;
	hdr = mroce_frame_hdrs(buf, size, rt, h);
	if (hdr < 0)
		return hdr;
	memcpy((char *)buf + hdr, payload, h->payload_len);
	mroce_frame_finish(buf, (__u32)hdr + h->payload_len, rt->family);
	return hdr + (int)h->payload_len;
}
