/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Malformed and unusual frames with the verdict each must get, shared by the
 * parser unit tests and the BPF program tests.
 */
#ifndef MROCE_TEST_MALFORMED_H
#define MROCE_TEST_MALFORMED_H

#include "fixtures.h"

static inline void set_be16(void *p, __u16 v) { v = htons(v); memcpy(p, &v, 2); }
static inline void set_be32(void *p, __u32 v) { v = htonl(v); memcpy(p, &v, 4); }

static inline mroce_iphdr_t *ip4(struct fx_frame *f)
{
	return (mroce_iphdr_t *)(f->buf + sizeof(struct ethhdr));
}

static inline mroce_udphdr_t *fx_udp(struct fx_frame *f)
{
	return (mroce_udphdr_t *)(f->buf + fx_l4_off(f));
}

/* Change a length in the UDP payload and keep IP/UDP lengths consistent with it. */
static inline void resize(struct fx_frame *f, int delta)
{
	f->len += delta;
	set_be16(&fx_udp(f)->len, (__u16)(ntohs(fx_udp(f)->len) + delta));
	if (f->family == AF_INET)
		set_be16(&ip4(f)->tot_len, (__u16)(ntohs(ip4(f)->tot_len) + delta));
	else
		set_be16(&((mroce_ipv6hdr_t *)ip4(f))->payload_len,
			 (__u16)(ntohs(((mroce_ipv6hdr_t *)ip4(f))->payload_len) + delta));
}

struct fx_malformed {
	const char	*name;
	__u8		opcode;
	int		family;
	void		(*mutate)(struct fx_frame *f);
	int		want;
};

static inline void m_version(struct fx_frame *f) { fx_bth(f)->ver = 1; }
static inline void m_version0(struct fx_frame *f) { fx_bth(f)->ver = 0; }
static inline void m_opcode0(struct fx_frame *f) { fx_bth(f)->opcode = 0; }
static inline void m_opcode_atomic(struct fx_frame *f) { fx_bth(f)->opcode = 0x20; }
static inline void m_opcode_ff(struct fx_frame *f) { fx_bth(f)->opcode = 0xff; }
static inline void m_plen_up(struct fx_frame *f) { set_be16(&fx_bth(f)->payload_len, FX_PAYLOAD + 1); }
static inline void m_plen_down(struct fx_frame *f) { set_be16(&fx_bth(f)->payload_len, FX_PAYLOAD - 1); }
static inline void m_udp_len_short(struct fx_frame *f) { set_be16(&fx_udp(f)->len, (__u16)(ntohs(fx_udp(f)->len) - 1)); }
static inline void m_udp_len_long(struct fx_frame *f) { set_be16(&fx_udp(f)->len, (__u16)(ntohs(fx_udp(f)->len) + 1)); }
static inline void m_ip_len_long(struct fx_frame *f) { set_be16(&ip4(f)->tot_len, (__u16)(ntohs(ip4(f)->tot_len) + 1)); }
static inline void m_ip_len_tiny(struct fx_frame *f) { set_be16(&ip4(f)->tot_len, 20 + 4); }
static inline void m_ip6_len_long(struct fx_frame *f)
{
	mroce_ipv6hdr_t *ip6 = (mroce_ipv6hdr_t *)ip4(f);

	set_be16(&ip6->payload_len, (__u16)(ntohs(ip6->payload_len) + 1));
}
static inline void m_ip6_len_tiny(struct fx_frame *f) { set_be16(&((mroce_ipv6hdr_t *)ip4(f))->payload_len, 4); }
static inline void m_no_bth(struct fx_frame *f) { resize(f, -(f->len - fx_l4_off(f) - 8 - 16)); }
/* BTH plus half a RETH, lengths consistent otherwise. */
static inline void m_no_ext(struct fx_frame *f)
{
	resize(f, -(int)(sizeof(struct mroce_reth) + sizeof(struct mroce_deth) + FX_PAYLOAD - 8));
	set_be16(&fx_bth(f)->payload_len, 0);
}
static inline void m_ack_payload(struct fx_frame *f) { resize(f, 4); set_be16(&fx_bth(f)->payload_len, 4); }
static inline void m_off_beyond(struct fx_frame *f)
{
	struct mroce_deth *d = (struct mroce_deth *)((char *)fx_ext(f) + sizeof(struct mroce_reth));

	set_be32(&d->offset, 3 * FX_PAYLOAD - FX_PAYLOAD + 1);
}
static inline void m_off_wrap(struct fx_frame *f)
{
	struct mroce_deth *d = fx_ext(f);	/* SEND: DETH first */

	set_be32(&d->offset, 0xffffffc0u);
}
static inline void m_msg_short(struct fx_frame *f)
{
	struct mroce_deth *d = fx_ext(f);

	set_be32(&d->msg_len, FX_PAYLOAD - 1);
	set_be32(&d->offset, 0);
}
static inline void m_read_len(struct fx_frame *f)
{
	char *p = (char *)fx_ext(f) + sizeof(struct mroce_reth);

	set_be32(p + sizeof(struct mroce_deth), (1 << 20) - 4096 + 1);
}
static inline void m_first_wrong(struct fx_frame *f) { fx_bth(f)->flags = MROCE_F_FIRST; }
static inline void m_last_wrong(struct fx_frame *f) { fx_bth(f)->flags = MROCE_F_LAST; }
static inline void m_first_missing(struct fx_frame *f)
{
	struct mroce_deth *d = fx_ext(f);

	set_be32(&d->offset, 0);
}
static inline void m_frag_first(struct fx_frame *f) { ip4(f)->frag_off = htons(0x2000); }
static inline void m_frag_later(struct fx_frame *f) { ip4(f)->frag_off = htons(0x0010); }
static inline void m_port(struct fx_frame *f) { fx_udp(f)->dest = htons(MROCE_DEFAULT_PORT + 1); }
static inline void m_ip6_ext(struct fx_frame *f) { ((mroce_ipv6hdr_t *)ip4(f))->nexthdr = 0; /* hop-by-hop */ }
static inline void m_ip_version(struct fx_frame *f) { ip4(f)->version = 5; }
static inline void m_ihl_short(struct fx_frame *f) { ip4(f)->ihl = 4; }
/* Valid variants. */
static inline void m_padding(struct fx_frame *f) { f->len += 18; }	/* Ethernet padding after IP */
static inline void m_unknown_flag(struct fx_frame *f) { fx_bth(f)->flags = 0x80; }
static inline void m_ip_options(struct fx_frame *f)
{
	int l4 = fx_l4_off(f);

	memmove(f->buf + l4 + 4, f->buf + l4, (size_t)(f->len - l4));
	memset(f->buf + l4, 1, 4);	/* four NOP options */
	f->len += 4;
	ip4(f)->ihl = 6;
	set_be16(&ip4(f)->tot_len, (__u16)(ntohs(ip4(f)->tot_len) + 4));
}
static inline void vlan_tags(struct fx_frame *f, int n)
{
	memmove(f->buf + 12 + 4 * n, f->buf + 12, (size_t)(f->len - 12));
	for (int i = 0; i < n; i++) {
		set_be16(f->buf + 12 + 4 * i, i == 0 && n > 1 ? ETH_P_8021AD : ETH_P_8021Q);
		set_be16(f->buf + 14 + 4 * i, (__u16)(100 + i));
	}
	f->len += 4 * n;
}
static inline void m_vlan1(struct fx_frame *f) { vlan_tags(f, 1); }
static inline void m_vlan2(struct fx_frame *f) { vlan_tags(f, 2); }
static inline void m_vlan3(struct fx_frame *f) { vlan_tags(f, 3); }

static const struct fx_malformed fx_malformed[] = {
	{ "version 1",		MROCE_OP_WRITE,	AF_INET,  m_version,	  MROCE_STAT_BAD_VERSION },
	{ "version 0",		MROCE_OP_ACK,	AF_INET6, m_version0,	  MROCE_STAT_BAD_VERSION },
	{ "opcode 0",		MROCE_OP_WRITE,	AF_INET,  m_opcode0,	  MROCE_STAT_BAD_OPCODE },
	{ "opcode atomic",	MROCE_OP_WRITE,	AF_INET6, m_opcode_atomic, MROCE_STAT_BAD_OPCODE },
	{ "opcode 0xff",	MROCE_OP_SEND,	AF_INET,  m_opcode_ff,	  MROCE_STAT_BAD_OPCODE },
	{ "payload_len +1",	MROCE_OP_WRITE,	AF_INET,  m_plen_up,	  MROCE_STAT_BAD_LENGTH },
	{ "payload_len -1",	MROCE_OP_SEND,	AF_INET6, m_plen_down,	  MROCE_STAT_BAD_LENGTH },
	{ "udp len < ip",	MROCE_OP_WRITE,	AF_INET,  m_udp_len_short, MROCE_STAT_BAD_LENGTH },
	{ "udp len > ip",	MROCE_OP_WRITE,	AF_INET6, m_udp_len_long, MROCE_STAT_BAD_LENGTH },
	{ "ip len > frame",	MROCE_OP_WRITE,	AF_INET,  m_ip_len_long,  MROCE_STAT_TRUNCATED },
	{ "ip len < udp hdr",	MROCE_OP_WRITE,	AF_INET,  m_ip_len_tiny,  MROCE_STAT_BAD_LENGTH },
	{ "ip6 len > frame",	MROCE_OP_ACK,	AF_INET6, m_ip6_len_long, MROCE_STAT_TRUNCATED },
	{ "ip6 len < udp hdr",	MROCE_OP_ACK,	AF_INET6, m_ip6_len_tiny, MROCE_STAT_BAD_LENGTH },
	{ "no room for bth",	MROCE_OP_WRITE,	AF_INET,  m_no_bth,	  MROCE_STAT_BAD_LENGTH },
	{ "no room for reth",	MROCE_OP_WRITE,	AF_INET6, m_no_ext,	  MROCE_STAT_BAD_LENGTH },
	{ "ack with payload",	MROCE_OP_ACK,	AF_INET,  m_ack_payload,  MROCE_STAT_BAD_LENGTH },
	{ "nack with payload",	MROCE_OP_NACK,	AF_INET6, m_ack_payload,  MROCE_STAT_BAD_LENGTH },
	{ "read req payload",	MROCE_OP_READ_REQ, AF_INET, m_ack_payload, MROCE_STAT_BAD_LENGTH },
	{ "offset past end",	MROCE_OP_WRITE,	AF_INET,  m_off_beyond,	  MROCE_STAT_BAD_LENGTH },
	{ "offset wraps",	MROCE_OP_SEND,	AF_INET,  m_off_wrap,	  MROCE_STAT_BAD_LENGTH },
	{ "msg shorter than pkt", MROCE_OP_READ_RESP, AF_INET6, m_msg_short, MROCE_STAT_BAD_LENGTH },
	{ "read past end",	MROCE_OP_READ_REQ, AF_INET6, m_read_len,  MROCE_STAT_BAD_LENGTH },
	{ "first flag, offset>0", MROCE_OP_SEND, AF_INET, m_first_wrong,  MROCE_STAT_BAD_FLAGS },
	{ "last flag, not last", MROCE_OP_SEND_IMM, AF_INET6, m_last_wrong, MROCE_STAT_BAD_FLAGS },
	{ "offset 0, no first",	MROCE_OP_SEND,	AF_INET,  m_first_missing, MROCE_STAT_BAD_FLAGS },
	{ "first fragment",	MROCE_OP_WRITE,	AF_INET,  m_frag_first,	  MROCE_STAT_FRAGMENT },
	{ "later fragment",	MROCE_OP_WRITE,	AF_INET,  m_frag_later,	  MROCE_STAT_PASS },
	{ "other port",		MROCE_OP_WRITE,	AF_INET6, m_port,	  MROCE_STAT_PASS },
	{ "ipv6 ext header",	MROCE_OP_WRITE,	AF_INET6, m_ip6_ext,	  MROCE_STAT_PASS },
	{ "ip version 5",	MROCE_OP_WRITE,	AF_INET,  m_ip_version,	  MROCE_STAT_PASS },
	{ "ihl 4",		MROCE_OP_WRITE,	AF_INET,  m_ihl_short,	  MROCE_STAT_PASS },
	{ "ethernet padding",	MROCE_OP_ACK,	AF_INET,  m_padding,	  MROCE_STAT_RX },
	{ "unknown flag bit",	MROCE_OP_WRITE,	AF_INET,  m_unknown_flag, MROCE_STAT_RX },
	{ "ip options",		MROCE_OP_WRITE_IMM, AF_INET, m_ip_options, MROCE_STAT_RX },
	{ "vlan",		MROCE_OP_READ_RESP, AF_INET, m_vlan1,	  MROCE_STAT_RX },
	{ "qinq",		MROCE_OP_SEND,	AF_INET6, m_vlan2,	  MROCE_STAT_RX },
	{ "three vlan tags",	MROCE_OP_SEND,	AF_INET,  m_vlan3,	  MROCE_STAT_PASS },
};

#define FX_NMALFORMED (sizeof(fx_malformed) / sizeof(fx_malformed[0]))

#endif /* MROCE_TEST_MALFORMED_H */
