// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Somebody else's XDP program: mroce must refuse to replace or remove it. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int foreign_xdp(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
