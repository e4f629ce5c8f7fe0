// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce XDP datapath: classify MetaRoCE packets, drop what is malformed,
 * spoofed, duplicate or out of window, steer the rest to AF_XDP sockets,
 * and pass every other frame (and MetaRoCE for other hosts) to the kernel
 * untouched.
 *
 * A WRITE into a region registered on device memory (the mroce_dm pool) is
 * placed here: the payload is copied into the pool and the frame goes up cut
 * to its headers, flagged in its XDP metadata, so user space runs the same
 * window, ACK and completion logic as for a payload it copies itself. Only
 * when the loader set mroce_xdp_meta_ok (below): some kernels refuse
 * bpf_xdp_adjust_meta to XDP programs, and there every frame goes up whole
 * and user space places it.
 *
 * This program only reads the flows, dmr, dm_own and queues maps; user space owns every
 * write to them (docs/datapath.md explains why that keeps the bitmap
 * race-free).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <xdp/xdp_helpers.h>

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

/* One entry of named counters (stats.h), so bpftool and BTF show their names. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mroce_dp_counters);
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

/* Per local QPN: what XDP keeps for itself (dp_maps.h, struct mroce_flow_xdp). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MROCE_MAX_QPS);
	__type(key, __u32);
	__type(value, struct mroce_flow_xdp);
} mroce_retx_ts SEC(".maps");

/* Device memory: chunks the applications mmap (dp_maps.h); the loader may resize it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MROCE_DM_CHUNKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MROCE_DM_CHUNK);
} mroce_dm SEC(".maps");

/* Regions on device memory, index = rkey's table index. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MROCE_DMR_MAX);
	__type(key, __u32);
	__type(value, struct mroce_dmr);
} mroce_dmr SEC(".maps");

/* Owner (pid) of each pool chunk: XDP places only into a region's owner's chunks. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MROCE_DM_CHUNKS);
	__type(key, __u32);
	__type(value, __u32);
} mroce_dm_own SEC(".maps");

/* The device serving each receive queue (dp_maps.h, struct mroce_queue). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MROCE_MAX_QUEUES);
	__type(key, __u32);
	__type(value, struct mroce_queue);
} mroce_queues SEC(".maps");

/* Counter stat (enum mroce_stat) is word stat of the value (dp_maps.h). */
static __always_inline void count(__u32 stat, __u64 n)
{
	__u32 zero = 0;
	struct mroce_dp_counters *c = bpf_map_lookup_elem(&mroce_stats, &zero);

	if (c && stat < MROCE_STAT_MAX)
		((__u64 *)c)[stat] += n;	/* per-CPU: no other writer */
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

/* Add the 32-bit words of [p, p + 4 * n) to sum, if they are in the frame (else return -1). */
#define CSUM_WORDS(n)								\
	do {									\
		asm volatile("" : "+r"(p));	/* no rewritten bound on data_end */ \
		if ((const void *)(p + 4 * (n)) > data_end)			\
			return -1;						\
		for (int w_ = 0; w_ < (n); w_++)				\
			sum += ((const __u32 *)p)[w_];				\
		p += 4 * (n);							\
	} while (0)

/* The IP version of a frame the parser accepted (4 or 6). */
static __always_inline __u32 ip_ver_of(const void *data, const void *data_end, __u32 l3_off)
{
	__u64 off = l3_off;
	const __u8 *v;

	asm volatile("" : "+r"(off));
	if (off > ETH_HLEN + 8)
		return 0;
	v = data + off;
	if ((const void *)(v + 1) > data_end)
		return 0;
	return *v >> 4;
}

/*
 * Whether the UDP checksum of a placement candidate holds (1), or not (0);
 * -1 if the frame cannot be summed here (user space will judge it). The
 * sum is of words in memory order, and so is every constant added to it;
 * a correct checksum folds to 0xffff either way.
 * A global function: the verifier checks it once, not once per path of
 * the program that leads to it.
 */
__attribute__((noinline)) int mroce_udp_csum_ok(struct xdp_md *ctx, __u32 l3_off, __u32 l4_off,
						__u32 ip_ver)
{
	const void *data = (const void *)(long)ctx->data;
	const void *data_end = (const void *)(long)ctx->data_end;
	const struct udphdr *udp;
	const __u8 *p;
	__u64 sum = 0, l4 = l4_off, l3 = l3_off;
	__u32 udp_len, left;

	asm volatile("" : "+r"(l4));
	asm volatile("" : "+r"(l3));
	if (l4 > ETH_HLEN + 8 + 40 || l3 > ETH_HLEN + 8)
		return -1;
	udp = data + l4;
	if ((const void *)(udp + 1) > data_end)
		return -1;
	if (!udp->check)
		return ip_ver == 4;	/* IPv4 may omit it; IPv6 may not */
	udp_len = mroce_be16(udp->len);
	if (udp_len > MROCE_DM_PLACE_MAX + 256)
		return -1;
	if (ip_ver == 4) {
		p = data + l3 + 12;	/* saddr, daddr */
		CSUM_WORDS(2);
	} else {
		p = data + l3 + 8;
		CSUM_WORDS(8);
	}
	sum += mroce_be16(IPPROTO_UDP) + mroce_be16((__u16)udp_len);
	p = (const __u8 *)udp;
	left = udp_len;
	/*
	 * 32-bit words added into 64 bits (no carry to handle: the sum stays
	 * below 2^44), 64 bytes per bounds check. Plain BPF is several times
	 * faster here than bpf_csum_diff(), which copies its input first.
	 */
	for (int i = 0; i < (MROCE_DM_PLACE_MAX + 256) / 64; i++) {
		if (left < 64)
			break;
		CSUM_WORDS(16);
		left -= 64;
	}
	if (left & 32)
		CSUM_WORDS(8);
	if (left & 16)
		CSUM_WORDS(4);
	if (left & 8)
		CSUM_WORDS(2);
	if (left & 4)
		CSUM_WORDS(1);
	if (left & 2) {
		if ((const void *)(p + 2) > data_end)
			return -1;
		sum += *(const __u16 *)p;
		p += 2;
	}
	if (left & 1) {
		if ((const void *)(p + 1) > data_end)
			return -1;
		sum += *p;	/* memory order: the odd byte, then a zero */
	}
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/*
 * Where in device memory a new WRITE's payload goes, after the checks the
 * library's placement makes (lib/place.c, lib/mr.c): the key names an
 * active region of the flow's protection domain that grants remote write
 * and holds the whole message. NULL: not for XDP (user space places or
 * refuses it, and answers for it, exactly as it does for any memory).
 * The parser has seen the headers whole; bounds are checked again for the
 * verifier.
 */
static __always_inline __u8 *dm_target(const struct mroce_flow *flow, const struct mroce_bth *bth,
					const void *data_end)
{
	/* The RETH follows the BTH, the DETH the RETH (proto.h). */
	const struct mroce_reth *reth = (const void *)(bth + 1);
	const struct mroce_deth *deth = (const void *)(reth + 1);
	const struct mroce_dmr *r;
	__u64 raddr, iova, len, msg_len, rel, pool_off, o;
	__u32 rkey, idx, chunk, plen;
	__u64 cookie = MROCE_READ_ONCE(flow->pd_cookie);
	const __u32 *owner;
	__u8 *base;

	if ((const void *)(deth + 1) > data_end || !cookie)
		return NULL;
	plen = mroce_be16(bth->payload_len);
	if (plen == 0 || plen > MROCE_DM_PLACE_MAX)
		return NULL;
	rkey = mroce_be32(reth->rkey);
	idx = rkey & (MROCE_DMR_MAX - 1);
	r = bpf_map_lookup_elem(&mroce_dmr, &idx);
	if (!r || MROCE_READ_ONCE(r->state) != MROCE_DMR_ACTIVE || r->rkey != rkey ||
	    r->pd_cookie != cookie || !(r->access & MROCE_DMR_REMOTE_WRITE))
		return NULL;
	raddr = mroce_be64(reth->raddr);
	msg_len = mroce_be32(deth->msg_len);
	iova = r->iova;
	len = r->length;
	/* [raddr, raddr + msg_len) inside [iova, iova + len), without overflow */
	if (raddr < iova || raddr - iova > len || msg_len > len - (raddr - iova))
		return NULL;
	/* the parser saw offset + payload <= msg_len */
	rel = raddr - iova + mroce_be32(deth->offset);
	pool_off = r->dm_off + rel;
	if (pool_off < r->dm_off)
		return NULL;
	o = pool_off & (MROCE_DM_CHUNK - 1);
	/* A payload crossing into the next chunk is user space's to place. */
	if (o > MROCE_DM_CHUNK - MROCE_DM_PLACE_MAX)
		return NULL;
	if (pool_off >> MROCE_DM_CHUNK_SHIFT > 0xffffffffULL)
		return NULL;	/* the lookup refuses a chunk past the pool's end */
	chunk = (__u32)(pool_off >> MROCE_DM_CHUNK_SHIFT);
	/* Only into a chunk the region's own process holds (not one freed since). */
	owner = bpf_map_lookup_elem(&mroce_dm_own, &chunk);
	if (!owner || MROCE_READ_ONCE(*owner) != r->owner_pid)
		return NULL;
	base = bpf_map_lookup_elem(&mroce_dm, &chunk);
	return base ? base + o : NULL;
}

/*
 * Set by the loader (libmroce probes the kernel) before the object is loaded:
 * 1 when the kernel lets XDP programs call bpf_xdp_adjust_meta. It is frozen
 * read-only data, so with 0 (the default: `ip link ... obj mroce.bpf.o`
 * loads anywhere) the verifier drops the placement code and the call with it.
 */
const volatile __u32 mroce_xdp_meta_ok = 0;

#define PLACE_NO_META	(-1)	/* no metadata could be written: nothing placed */
#define PLACE_BAD_CSUM	(-2)	/* drop it: the UDP checksum is wrong */

/*
 * Put a struct mroce_xdp_meta in front of a frame going up to its socket
 * and, if try_place and the frame is a WRITE into device memory (above),
 * place its payload there first and cut the frame to its headers.
 * Returns the bytes placed (0: none), or PLACE_*. A global function, so
 * the verifier checks it once rather than once per path that leads here
 * (and on its own: the mroce_xdp_meta_ok test must be in here). Without
 * mroce_xdp_meta_ok, nothing: no metadata, no checksum test, the frame up
 * whole for user space to check and place.
 */
__attribute__((noinline)) int mroce_xdp_place(struct xdp_md *ctx, __u32 qpn, __u32 l3_off,
					      __u32 l4_off, __u32 try_place)
{
	const void *data = (const void *)(long)ctx->data;
	const void *data_end = (const void *)(long)ctx->data_end;
	const struct mroce_bth *bth;
	const struct mroce_flow *flow;
	struct mroce_xdp_meta *m;
	__u64 n = 0, off = l4_off;
	__u32 payload_off = 0;
	__u8 *dst = NULL;
	int layout;

	if (!mroce_xdp_meta_ok)
		return 0;
	asm volatile("" : "+r"(off));
	if (try_place && qpn && off <= ETH_HLEN + 8 + 40) {
		bth = data + off + sizeof(struct udphdr);
		if ((const void *)(bth + 1) > data_end)
			return PLACE_NO_META;
		layout = mroce_op_layout(bth->opcode);
		flow = bpf_map_lookup_elem(&mroce_flows, &qpn);
		if (flow && layout >= 0 && (layout & MROCE_EXT_RETH) && (layout & MROCE_EXT_PAYLOAD))
			dst = dm_target(flow, bth, data_end);
		if (dst) {
			int ok = mroce_udp_csum_ok(ctx, l3_off, l4_off, ip_ver_of(data, data_end, l3_off));

			if (ok == 0)
				return PLACE_BAD_CSUM;
			if (ok < 0)
				dst = NULL;
			n = mroce_be16(bth->payload_len);
			payload_off = (__u32)off + sizeof(struct udphdr) + sizeof(*bth) +
				      mroce_ext_len(layout);
		}
	}
	/* From here on the frame's pointers are stale: only ctx is used. */
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return PLACE_NO_META;
	/* One register, checked and then used, so clang cannot pass another copy. */
	asm volatile("" : "+r"(n));
	if (dst && n >= 1 && n <= MROCE_DM_PLACE_MAX) {
		if (bpf_xdp_load_bytes(ctx, payload_off, dst, (__u32)n) ||
		    bpf_xdp_adjust_tail(ctx, -(int)n))
			n = 0;	/* the frame is whole: user space places it */
	} else {
		n = 0;
	}
	data = (void *)(long)ctx->data;
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > data)
		return PLACE_NO_META;
	m->magic = MROCE_XDP_META_MAGIC;
	m->placed_len = (__u32)n;
	return (int)n;
}

/*
 * For libxdp's multi-program dispatcher (docs/datapath.md, "Attaching"): the
 * run priority and chain call actions, read from this object's BTF. Frames
 * mroce passes (not MetaRoCE, or for another host) go on to the next program;
 * what it drops or redirects to its sockets ends here. 50 is libxdp's default
 * priority, said out loud: mroce neither filters for others nor needs to see
 * frames first.
 */
struct {
	__uint(priority, XDP_DEFAULT_RUN_PRIO);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(mroce_xdp);

/*
 * Multi-buffer aware ("xdp.frags"), so jumbo frames reach it: the headers
 * are always in the linear part, the lengths count the whole frame.
 */
SEC("xdp.frags")
int mroce_xdp(struct xdp_md *ctx)
{
	const void *data = (const void *)(long)ctx->data;
	const void *data_end = (const void *)(long)ctx->data_end;
	const struct mroce_cfg *cfg;
	struct mroce_pkt pkt;
	struct mroce_flow *flow;
	struct mroce_queue *owner;
	__u32 qpn, queue, zero = 0, stat = MROCE_STAT_RX;
	__u64 stat_bytes, frame_len;
	int verdict, placed;

	cfg = bpf_map_lookup_elem(&mroce_cfg, &zero);
	frame_len = bpf_xdp_get_buff_len(ctx);
	verdict = mroce_parse_ports(data, data_end, (__u32)frame_len, mroce_port(cfg),
				    cfg ? cfg->n_ports : 1, &pkt);
	/*
	 * Beyond the base, a port is MetaRoCE's only while a device receives on
	 * it: its first queue's, with a socket (a dead process's entry stays in
	 * the queues map, its socket left the XSKMAP with it).
	 */
	if (verdict != MROCE_STAT_PASS && pkt.dport != mroce_port(cfg)) {
		__u32 k = (__u32)pkt.dport - mroce_port(cfg);

		owner = bpf_map_lookup_elem(&mroce_queues, &k);
		if (!owner || !MROCE_READ_ONCE(owner->dev_id) ||
		    !(MROCE_READ_ONCE(owner->flags) & MROCE_QUEUE_PORT) ||
		    !bpf_map_lookup_elem(&mroce_xsks, &k))
			verdict = MROCE_STAT_PASS;
	}
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
	/*
	 * Only to a queue the flow's own device serves: a frame the NIC put on
	 * another process's queue would reach that process's socket (dp_maps.h,
	 * struct mroce_queue). Before anything below keeps state for the flow.
	 */
	queue = ctx->rx_queue_index;
	owner = bpf_map_lookup_elem(&mroce_queues, &queue);
	if (!owner || MROCE_READ_ONCE(owner->dev_id) != MROCE_READ_ONCE(flow->dev_id))
		return drop(MROCE_STAT_WRONG_QUEUE);

	if (pkt.layout & MROCE_EXT_SEQ) {
		__u32 psn = mroce_be32(pkt.bth->psn);
		struct mroce_flow_xdp *fx;	/* looked up only where it is needed */

		switch (mroce_rxwin_check(flow, psn)) {
		case MROCE_RXWIN_DUP:
			/*
			 * A resent copy of a placed packet means our ACK was lost:
			 * let it through so user space acknowledges again; so is a
			 * plane's probe, whose nonce is echoed even if a resend got
			 * here first. Plain duplicates (the network's) die here.
			 */
			if (!(pkt.bth->flags & MROCE_F_DUP_ANSWER))
				return drop(MROCE_STAT_DUPLICATE);
			/* One ACK answers them all; a flood of copies needs no more. */
			fx = bpf_map_lookup_elem(&mroce_retx_ts, &qpn);
			if (fx && !mroce_dup_answer_due(fx, bpf_ktime_get_ns()))
				return drop(MROCE_STAT_DUP_RETX_LIMIT);
			stat = MROCE_STAT_DUP_RETX;
			break;
		case MROCE_RXWIN_BEYOND:
			return drop(MROCE_STAT_OUT_OF_WINDOW);
		}
		/* go-back-N: the next PSN, or one to report a gap (dp_maps.h) */
		if (stat == MROCE_STAT_RX && (flow->flags & MROCE_FLOW_GO_BACK_N)) {
			int g;

			fx = bpf_map_lookup_elem(&mroce_retx_ts, &qpn);
			g = fx ? mroce_gbn_check(fx, psn, MROCE_READ_ONCE(flow->rx_base),
						     bpf_ktime_get_ns()) :
				     psn == MROCE_READ_ONCE(flow->rx_base) ? MROCE_GBN_TAKE :
									     MROCE_GBN_DROP;

			if (g == MROCE_GBN_DROP)
				return drop(MROCE_STAT_OUT_OF_ORDER);
			if (g == MROCE_GBN_REPORT)
				stat = MROCE_STAT_GAP_REPORT;
		}
	}

	if (!bpf_map_lookup_elem(&mroce_xsks, &queue))
		return drop(MROCE_STAT_NO_XSK);

	stat_bytes = frame_len;
	/* Only a new PSN is placed: a duplicate's bytes are in memory already. */
	placed = mroce_xdp_place(ctx, qpn, pkt.l3_off, pkt.l4_off, stat == MROCE_STAT_RX);
	if (placed == PLACE_BAD_CSUM)
		return drop(MROCE_STAT_BAD_CSUM);
	verdict = bpf_redirect_map(&mroce_xsks, queue, XDP_DROP);
	if (verdict == XDP_REDIRECT) {
		count(stat, 1);
		if (stat == MROCE_STAT_RX)
			count(MROCE_STAT_RX_BYTES, stat_bytes);
		if (placed > 0) {
			count(MROCE_STAT_PLACED, 1);
			count(MROCE_STAT_PLACED_BYTES, placed);
		}
	} else {
		count(MROCE_STAT_NO_XSK, 1);
	}
	return verdict;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
