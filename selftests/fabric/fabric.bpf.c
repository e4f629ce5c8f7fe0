// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fabric emulator's ingress: every frame that reaches a switch port goes
 * to that port's AF_XDP socket for the receive queue it arrived on (a
 * socket per queue: a redirect reaches only a socket bound to the frame's
 * own device and queue), where the switch process queues it on a path.
 * Nothing is passed to the switch namespace's own stack: it has no addresses
 * and must not answer anything, like a real switch's data plane.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "port_map.h"

/* ifindex -> port slot, written by the switch process before it attaches. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XPORT_MAX_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} fabric_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XPORT_MAX_SLOTS * XPORT_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} fabric_xsks SEC(".maps");

SEC("xdp")
int fabric_ingress(struct xdp_md *ctx)
{
	__u32 ifindex = ctx->ingress_ifindex, q = ctx->rx_queue_index;
	__u32 *slot = bpf_map_lookup_elem(&fabric_ports, &ifindex);

	if (!slot || *slot >= XPORT_MAX_SLOTS || q >= XPORT_MAX_QUEUES)
		return XDP_DROP;
	/* No socket yet (starting or stopping), or a queue nobody serves: a switch without power drops. */
	return bpf_redirect_map(&fabric_xsks, *slot * XPORT_MAX_QUEUES + q, XDP_DROP);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
