/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libmroce internals shared between lib/ files; not installed. */
#ifndef MROCE_INTERNAL_H
#define MROCE_INTERNAL_H

#include <stdbool.h>
#include <linux/types.h>

#include "opts.h"

/* Ensure a bpffs is mounted at /sys/fs/bpf (inside `ip netns exec` it is not). */
int mroce_bpffs_ensure(void);

/* What an operation needs (lib/caps.c): -EPERM/-EACCES (or -ENOBUFS from a
 * UMEM past the locked-memory limit) becomes -MROCE_ERR_CAP_* naming the
 * first capability of need the process lacks; other errors pass. */
#define MROCE_NEED_NET_ADMIN	(1u << 0)
#define MROCE_NEED_BPF		(1u << 1)
#define MROCE_NEED_PERFMON	(1u << 2)
#define MROCE_NEED_SYS_ADMIN	(1u << 3)
#define MROCE_NEED_NET_RAW	(1u << 4)
#define MROCE_NEED_MEMLOCK	(1u << 5)
#define MROCE_NEED_LOAD		(MROCE_NEED_NET_ADMIN | MROCE_NEED_BPF | MROCE_NEED_PERFMON)
int mroce_cap_err(int err, unsigned int need);
bool mroce_has_cap(int cap);	/* in the effective set (CAP_* of linux/capability.h) */

struct mroce_dp;
struct mroce_attach_opts;
/* mroce_dp_attach(), then the datapath opened from the object it loaded
 * (no lookup by id, so no CAP_SYS_ADMIN). */
int mroce_dp_attach_open(const char *ifname, const struct mroce_attach_opts *opts,
			 struct mroce_dp **dpp);

/* ifname's MAC address (if it is Ethernet) and, if mtu is not NULL, its MTU; 0 or -errno. */
int mroce_if_hw(const char *ifname, __u8 mac[6], __u32 *mtu);
/*
 * Record that device dev_id serves receive queue `queue` (0: none), for XDP
 * to hand a flow's frames only to its own device's queues (struct
 * mroce_queue in dp_maps.h; flags MROCE_QUEUE_PORT on the device's first
 * queue: UDP port base + queue is its). Only the device that bound the
 * queue's socket writes it.
 */
int mroce_dp_queue_set(struct mroce_dp *dp, __u32 queue, __u32 dev_id, __u32 flags);
/* ifname's receive queues in use (ethtool's channels, else sysfs; at least 1). */
__u32 mroce_if_rx_queues(const char *ifname);
/* Whether ifname's driver is named driver ("veth"). */
bool mroce_if_driver_is(const char *ifname, const char *driver);

struct mroce_dp;
struct mroce_dmr;

/* The datapath's device memory, for dm.c and mr.c (datapath.c owns the maps). */
struct mroce_dp_dm {
	int			fd;	/* the pool map: mmap a chunk range at chunk * MROCE_DM_CHUNK */
	__u32			chunks;
	__u32			*own;	/* chunks entries: owner pid, 0 when free */
	struct mroce_dmr	*dmr;	/* MROCE_DMR_MAX entries */
};
int mroce_dp_dm(struct mroce_dp *dp, struct mroce_dp_dm *out);
int mroce_dp_flow_unset(struct mroce_dp *dp, __u32 qpn);
bool mroce_pid_dead(__u32 pid);

/*
 * Whether this kernel lets an XDP program (frags: one loaded "xdp.frags")
 * call the helpers placement in XDP needs, bpf_xdp_adjust_meta first:
 * 1 yes, 0 no (refused, or the probe could not be loaded at all).
 */
int mroce_xdp_place_probe(bool frags);

/* Route libbpf's and libxdp's messages to mroce_set_print()'s hook (print.c). */
void mroce_print_install(void);

#endif /* MROCE_INTERNAL_H */
