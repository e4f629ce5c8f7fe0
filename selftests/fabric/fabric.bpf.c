// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fabric emulator's ingress: every frame that reaches a switch port goes
 * to that port's AF_XDP socket, where the switch process queues it on a path.
 * Nothing is passed to the switch namespace's own stack: it has no addresses
 * and must not answer anything, like a real switch's data plane.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define MAX_PORTS 64

/* ifindex -> port slot, written by the switch process before it attaches. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} fabric_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} fabric_xsks SEC(".maps");

SEC("xdp")
int fabric_ingress(struct xdp_md *ctx)
{
	__u32 ifindex = ctx->ingress_ifindex;
	__u32 *slot = bpf_map_lookup_elem(&fabric_ports, &ifindex);

	if (!slot)
		return XDP_DROP;
	/* No socket yet (starting or stopping): a switch without power drops. */
	return bpf_redirect_map(&fabric_xsks, *slot, XDP_DROP);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
