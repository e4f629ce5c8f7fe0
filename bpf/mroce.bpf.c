// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce XDP datapath: classify MetaRoCE packets, drop what is malformed,
 * spoofed, duplicate or out of window, steer the rest to AF_XDP sockets,
 * and pass every other frame to the kernel untouched.
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

static __always_inline __u16 mroce_port(void)
{
	__u32 zero = 0;
	struct mroce_cfg *cfg = bpf_map_lookup_elem(&mroce_cfg, &zero);

	return cfg && cfg->udp_port ? cfg->udp_port : MROCE_DEFAULT_PORT;
}

SEC("xdp")
int mroce_xdp(struct xdp_md *ctx)
{
	const void *data = (const void *)(long)ctx->data;
	const void *data_end = (const void *)(long)ctx->data_end;
	struct mroce_pkt pkt;
	struct mroce_flow *flow;
	__u32 qpn, queue, stat = MROCE_STAT_RX;
	int verdict;

	verdict = mroce_parse(data, data_end, mroce_port(), &pkt);
	if (verdict == MROCE_STAT_PASS) {
		count(MROCE_STAT_PASS, 1);
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
