/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libmroce public API.
 *
 * Conventions (after libbpf): every symbol starts with mroce_; handles are
 * opaque; functions return 0 (or a count) on success and a negative errno or
 * MROCE_ERR_* code on failure, and never print or exit; option structs carry
 * their own size so they can grow without breaking the ABI (declare them with
 * MROCE_OPTS()).
 */
#ifndef MROCE_MROCE_H
#define MROCE_MROCE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MROCE_API __attribute__((visibility("default")))

#define MROCE_VERSION_STRING "0.1.0"

/*
 * Declare an options struct with its size set and the named fields. In C++
 * (C++20 designated initializers) name the fields in the struct's order.
 */
#define MROCE_OPTS(TYPE, NAME, ...) \
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

/* Error codes beyond errno (returned negated, like -errno), clear of
 * libbpf's (4000-4099) and libxdp's (5000-) that libmroce passes through. */
enum mroce_errno {
	__MROCE_ERR_START	= 4100,
	MROCE_ERR_NOT_ATTACHED	= 4100,	/* no mroce datapath on the interface */
	MROCE_ERR_FOREIGN_PROG	= 4101,	/* another XDP program is attached */
	MROCE_ERR_BAD_OBJ	= 4102,	/* object lacks mroce's program or maps */
	MROCE_ERR_ATTACHED	= 4103,	/* mroce is already attached */
	MROCE_ERR_VERSION	= 4104,	/* the peer speaks another wire protocol version */
	MROCE_ERR_STREAMS	= 4105,	/* the peer's QP has another number of streams */
	MROCE_ERR_PEER_ADDR	= 4106,	/* the peer's QP info names another host's address */
	/* Refused for want of one capability (libmroce(7), CAPABILITIES, lists each
	 * operation's): the code names the first one missing. */
	MROCE_ERR_CAP_NET_ADMIN	= 4107,	/* XDP attach/detach */
	MROCE_ERR_CAP_BPF	= 4108,	/* loading the XDP program */
	MROCE_ERR_CAP_PERFMON	= 4109,	/* the program's verifier checks */
	MROCE_ERR_CAP_SYS_ADMIN	= 4110,	/* the attached program and maps by id */
	MROCE_ERR_CAP_NET_RAW	= 4111,	/* the AF_XDP socket */
	MROCE_ERR_MEMLOCK	= 4112,	/* UMEM past RLIMIT_MEMLOCK without CAP_IPC_LOCK */
	MROCE_ERR_CAP_SYS_PTRACE = 4113, /* others' AF_XDP sockets: + CAP_DAC_READ_SEARCH */
	MROCE_ERR_QUEUES_BUSY	= 4114,	/* the receive queues asked for are other devices' */
	__MROCE_ERR_END
};

/* Describe err (negative or positive) in buf; returns 0, or -EINVAL if unknown. */
MROCE_API int mroce_strerror(int err, char *buf, size_t size);

/* ---- diagnostics ---------------------------------------------------------- */

enum mroce_print_level {
	MROCE_WARN,
	MROCE_INFO,
	MROCE_DEBUG,
};

typedef int (*mroce_print_fn_t)(enum mroce_print_level level, const char *fmt, va_list ap);

/*
 * Where the library's diagnostics go, libbpf's and libxdp's included (they
 * are routed here while libmroce loads or attaches its program). NULL, the
 * default, discards them: the library itself never writes to stdout or
 * stderr. Returns the previous function. This is the library's one piece
 * of process-wide mutable state, as libbpf_set_print() is libbpf's.
 */
MROCE_API mroce_print_fn_t mroce_set_print(mroce_print_fn_t fn);

/* ---- XDP datapath control ---------------------------------------------- */

enum mroce_xdp_mode {
	MROCE_XDP_NATIVE	= 0,	/* driver mode (default) */
	MROCE_XDP_SKB		= 1,	/* generic mode, works on any device */
};

struct mroce_attach_opts {
	size_t			sz;		/* sizeof(struct mroce_attach_opts) */
	enum mroce_xdp_mode	mode;
	__u16			udp_port;	/* 0: MROCE_DEFAULT_PORT */
	const char		*obj_path;	/* NULL: the object built into libmroce */
	bool			pin;		/* also pin maps in /sys/fs/bpf/mroce/IFNAME/ */
	/* Device memory pool (mroce_alloc_dm), rounded up to 4 MiB chunks, at most
	 * 64 GiB; 0: 256 MiB. The kernel allocates all of it at attach. */
	__u64			dm_bytes;
	size_t			:0;
};

/* Attach the datapath to ifname. Fails with MROCE_ERR_ATTACHED or
 * MROCE_ERR_FOREIGN_PROG rather than replace a program. */
MROCE_API int mroce_dp_attach(const char *ifname, const struct mroce_attach_opts *opts);

/* Detach mroce from ifname (and remove its pins); never touches another program. */
MROCE_API int mroce_dp_detach(const char *ifname);

/* An attached datapath's program and maps, whoever attached it: found by
 * ids (CAP_SYS_ADMIN), or else through the pins of `mroce attach --pin`
 * when they are the attached program's (libmroce(7), CAPABILITIES). */
struct mroce_dp;

MROCE_API int mroce_dp_open(const char *ifname, struct mroce_dp **dp);
MROCE_API void mroce_dp_close(struct mroce_dp *dp);

struct mroce_dp_info {
	__u32			ifindex;
	__u32			prog_id;
	enum mroce_xdp_mode	mode;
	__u16			udp_port;
	/*
	 * 1: XDP places WRITE payloads into device memory; 0: user space does
	 * (a kernel refusing bpf_xdp_adjust_meta to XDP, or an object loaded
	 * without the switch set; docs/datapath.md).
	 */
	__u8			xdp_places;
	/*
	 * MetaRoCE's UDP ports: udp_port .. udp_port + udp_ports - 1, one per
	 * receive queue (at most MROCE_MAX_QUEUES); a device serving queue q
	 * first receives on udp_port + q.
	 */
	__u8			udp_ports;
	__u32			flows;		/* active flows */
	char			ifname[16];
	char			pin_dir[64];	/* "" when not pinned */
};

MROCE_API int mroce_dp_info(const struct mroce_dp *dp, struct mroce_dp_info *info);

/* Sum of the per-CPU counters; out has MROCE_STAT_MAX entries. */
MROCE_API int mroce_dp_stats(const struct mroce_dp *dp, __u64 out[MROCE_STAT_MAX]);
MROCE_API const char *mroce_stat_name(int stat);	/* "duplicate" */
MROCE_API const char *mroce_stat_desc(int stat);

MROCE_API int mroce_dp_set_port(struct mroce_dp *dp, __u16 udp_port);

/* Steer packets of receive queue `queue` to AF_XDP socket fd (or stop). */
MROCE_API int mroce_dp_xsk_set(struct mroce_dp *dp, __u32 queue, int xsk_fd);
MROCE_API int mroce_dp_xsk_clear(struct mroce_dp *dp, __u32 queue);
/*
 * The device serving receive queue `queue` (struct mroce_queue in
 * dp_maps.h): its id and its process (in the pid namespace of the process
 * that opened it; 0, 0: none).
 */
MROCE_API int mroce_dp_queue_get(const struct mroce_dp *dp, __u32 queue, __u32 *dev_id,
				 __u32 *owner_pid);

#ifdef __cplusplus
}
#endif

/* ---- verbs: memory regions, queues, work requests, connections ---------- */
#include "verbs.h"

/* ---- collectives over a communicator of N ranks (link -lmroce-coll) ----- */
#include "coll.h"

#endif /* MROCE_MROCE_H */
