// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce XDP datapath: classify MetaRoCE packets, drop what is malformed,
 * spoofed, duplicate or out of window, steer the rest to AF_XDP sockets,
 * and pass every other frame (and MetaRoCE for other hosts) to the kernel
 * untouched.
 *
 * This program only reads the flows map; user space owns every write to it
 * (docs/datapath.md explains why that keeps the bitmap race-free).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "mroce/proto.h"
#include "mroce/dp_maps.h"
#include "mroce/parse.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MROCE_MAX_QPS);
	__type(key, __u32);
	__type(value, struct mroce_flow);
} mroce_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MROCE_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} mroce_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mroce_cfg);
} mroce_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MROCE_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} mroce_xsks SEC(".maps");

/* Per local QPN: bpf_ktime_get_ns() when a resent duplicate last went up. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MROCE_MAX_QPS);
	__type(key, __u32);
	__type(value, __u64);
} mroce_retx_ts SEC(".maps");

static __always_inline void count(__u32 stat, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&mroce_stats, &stat);

	if (c)
		*c += n;	/* per-CPU: no other writer */
}

static __always_inline int drop(__u32 stat)
{
	count(stat, 1);
	return XDP_DROP;
}

static __always_inline __u16 mroce_port(const struct mroce_cfg *cfg)
{
	return cfg && cfg->udp_port ? cfg->udp_port : MROCE_DEFAULT_PORT;
}

static __always_inline int mac_eq(const __u8 *a, const __u8 *b)
{
	return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) |
		 (a[3] ^ b[3]) | (a[4] ^ b[4]) | (a[5] ^ b[5]));
}

static __always_inline int ip4_local(const struct mroce_cfg *cfg, __be32 daddr)
{
	__u32 n = cfg->n_ip4;

#ifdef __clang__
#pragma unroll
#endif
	for (__u32 i = 0; i < MROCE_CFG_ADDRS; i++)
		if (i < n && cfg->ip4[i] == daddr)
			return 1;
	return n == 0;
}

static __always_inline int ip6_local(const struct mroce_cfg *cfg, const __u32 *daddr)
{
	__u32 n = cfg->n_ip6;

#ifdef __clang__
#pragma unroll
#endif
	for (__u32 i = 0; i < MROCE_CFG_ADDRS; i++) {
		const __u32 *a = (const __u32 *)cfg->ip6[i];

		if (i < n && !((a[0] ^ daddr[0]) | (a[1] ^ daddr[1]) |
			       (a[2] ^ daddr[2]) | (a[3] ^ daddr[3])))
			return 1;
	}
	return n == 0;
}

/*
 * Whether a frame to the MetaRoCE port is addressed to this host, by the
 * addresses user space configured; a part left empty is not checked. Frames
 * for others are a bridge's or a router's transit traffic: not ours to judge,
 * however malformed. The parser has seen both headers whole (it returned a
 * verdict other than pass); the bounds are checked again for the verifier.
 */
static __always_inline int for_this_host(const struct mroce_cfg *cfg, const void *data,
					 const void *data_end, __u16 l3_off)
{
	static const __u8 no_mac[6];
	const struct ethhdr *eth = data;
	const struct iphdr *ip;
	const struct ipv6hdr *ip6;
	__u64 off = l3_off;

	/* One full-width register, so clang cannot check a copy and add another. */
	asm volatile("" : "+r"(off));
	if (!cfg || (const void *)(eth + 1) > data_end || off > ETH_HLEN + 8)
		return 1;
	if (!mac_eq(cfg->mac, no_mac) && !mac_eq(eth->h_dest, cfg->mac))
		return 0;
	ip = data + off;
	if ((const void *)(ip + 1) > data_end)
		return 1;
	if (ip->version == 4)
		return ip4_local(cfg, ip->daddr);
	ip6 = data + off;
	if ((const void *)(ip6 + 1) > data_end)
		return 1;
	return ip6_local(cfg, ip6->daddr.in6_u.u6_addr32);
}

/*
 * Whether a resent duplicate may go up to be acknowledged again: one per
 * flow per MROCE_DUP_RETX_GAP_NS. Two CPUs may both let one through in the
 * same interval; that costs an ACK, where a lock would cost every packet.
 */
static __always_inline int retx_due(__u32 qpn)
{
	__u64 *last = bpf_map_lookup_elem(&mroce_retx_ts, &qpn);
	__u64 now = bpf_ktime_get_ns();

	if (!last)
		return 1;
	if (now - *last < MROCE_DUP_RETX_GAP_NS)
		return 0;
	*last = now;
	return 1;
}

SEC("xdp")
int mroce_xdp(struct xdp_md *ctx)
{
	const void *data = (const void *)(long)ctx->data;
	const void *data_end = (const void *)(long)ctx->data_end;
	const struct mroce_cfg *cfg;
	struct mroce_pkt pkt;
	struct mroce_flow *flow;
	__u32 qpn, queue, zero = 0, stat = MROCE_STAT_RX;
	int verdict;

	cfg = bpf_map_lookup_elem(&mroce_cfg, &zero);
	verdict = mroce_parse(data, data_end, mroce_port(cfg), &pkt);
	if (verdict == MROCE_STAT_PASS) {
		count(MROCE_STAT_PASS, 1);
		return XDP_PASS;
	}
	if (!for_this_host(cfg, data, data_end, pkt.l3_off)) {
		count(MROCE_STAT_NOT_LOCAL, 1);
		return XDP_PASS;
	}
	if (verdict != MROCE_STAT_RX)
		return drop(verdict);

	qpn = mroce_be32(pkt.bth->dqpn);
	flow = qpn ? bpf_map_lookup_elem(&mroce_flows, &qpn) : NULL;
	if (!flow || MROCE_READ_ONCE(flow->state) != MROCE_FLOW_ACTIVE)
		return drop(MROCE_STAT_UNKNOWN_QP);
	if (pkt.bth->token != MROCE_READ_ONCE(flow->token))
		return drop(MROCE_STAT_BAD_TOKEN);

	if (pkt.layout & MROCE_EXT_SEQ) {
		__u32 psn = mroce_be32(pkt.bth->psn);

		switch (mroce_rxwin_check(flow, psn)) {
		case MROCE_RXWIN_DUP:
			/*
			 * A resent copy of a placed packet means our ACK was lost:
			 * let it through so user space acknowledges again. Plain
			 * duplicates (the network's) die here.
			 */
			if (!(pkt.bth->flags & mroce_be16(MROCE_F_RETX)))
				return drop(MROCE_STAT_DUPLICATE);
			/* One ACK answers them all; a flood of copies needs no more. */
			if (!retx_due(qpn))
				return drop(MROCE_STAT_DUP_RETX_LIMIT);
			stat = MROCE_STAT_DUP_RETX;
			break;
		case MROCE_RXWIN_BEYOND:
			return drop(MROCE_STAT_OUT_OF_WINDOW);
		}
		if (stat == MROCE_STAT_RX && (flow->flags & MROCE_FLOW_GO_BACK_N) &&
		    psn != MROCE_READ_ONCE(flow->rx_base))
			return drop(MROCE_STAT_OUT_OF_ORDER);
	}

	queue = ctx->rx_queue_index;
	if (!bpf_map_lookup_elem(&mroce_xsks, &queue))
		return drop(MROCE_STAT_NO_XSK);
	verdict = bpf_redirect_map(&mroce_xsks, queue, XDP_DROP);
	if (verdict == XDP_REDIRECT) {
		count(stat, 1);
		if (stat == MROCE_STAT_RX)
			count(MROCE_STAT_RX_BYTES, data_end - data);
	} else {
		count(MROCE_STAT_NO_XSK, 1);
	}
	return verdict;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
