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

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <netinet/in.h>

#include "proto.h"
#include "dp_maps.h"
#include "parse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MROCE_API __attribute__((visibility("default")))

#define MROCE_VERSION_STRING "0.1.0"

/* Declare an options struct with its size set and the named fields. */
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
	__MROCE_ERR_END
};

/* Describe err (negative or positive) in buf; returns 0, or -EINVAL if unknown. */
MROCE_API int mroce_strerror(int err, char *buf, size_t size);

/* ---- wire format ------------------------------------------------------- */

/* Host-order view of the transport headers of one packet. */
struct mroce_hdr {
	__u8	opcode;
	__u8	path;
	__u16	flags;
	__u32	dqpn;
	__u32	psn;
	__u32	msn;
	__u64	token;
	__u32	ts;
	__u32	payload_len;
	/* RETH */
	__u64	raddr;
	__u32	rkey;
	/* DETH / IMM / RREQ */
	__u32	msg_len;
	__u32	offset;
	__u32	imm;
	__u32	rd_len;
	/* AETH */
	__u32	cum_psn;
	__u32	ts_echo;
	__u64	sack[MROCE_SACK_WORDS];
	__u16	ecn_ce;
	__u16	ecn_pkts;
	__u32	ack_msn;
	__u32	rwnd;
	/* NAK */
	__u32	nak_psn;
	__u32	nak_msn;
	__u8	nak_code;
};

/* Where a frame goes: Ethernet, IPv4 or IPv6, UDP. */
struct mroce_route {
	__u8	src_mac[6];
	__u8	dst_mac[6];
	int	family;		/* AF_INET or AF_INET6 */
	union {
		struct in_addr	v4;
		struct in6_addr	v6;
	} src, dst;
	__u16	sport;		/* path entropy */
	__u16	dport;		/* 0: MROCE_DEFAULT_PORT */
	__u8	ttl;		/* 0: 64 */
	__u8	ecn;		/* IP ECN bits to send (ECT(0) = 2) */
};

/* Bytes of Ethernet + IP + UDP headers for a family (no VLAN). */
MROCE_API size_t mroce_l2l4_len(int family);

/*
 * Write BTH and extension headers for h into buf. h->payload_len is taken
 * as is. Returns the header length, or -EINVAL (unknown opcode) / -ENOSPC.
 */
MROCE_API int mroce_hdr_encode(void *buf, size_t size, const struct mroce_hdr *h);

/* Fill h from a packet that mroce_parse() accepted. */
MROCE_API void mroce_hdr_decode(const struct mroce_pkt *pkt, struct mroce_hdr *h);

/*
 * Build a whole frame (headers, payload, IP and UDP checksums) into buf.
 * Returns the frame length, or -EINVAL / -ENOSPC / -EMSGSIZE.
 */
MROCE_API int mroce_frame_build(void *buf, size_t size, const struct mroce_route *rt,
				const struct mroce_hdr *h, const void *payload);

/* ---- receive window (user space is the only writer) -------------------- */

/* Empty the window and start it at psn. */
MROCE_API void mroce_rxwin_reset(struct mroce_flow *f, __u32 psn);

/*
 * Record that psn's payload has been placed. Returns the verdict the PSN had
 * before (MROCE_RXWIN_NEW when it was marked now); the window does not move.
 */
MROCE_API int mroce_rxwin_mark(struct mroce_flow *f, __u32 psn);

/* Slide rx_base over every placed PSN; returns the new base. */
MROCE_API __u32 mroce_rxwin_advance(struct mroce_flow *f);

/* PSNs marked placed inside the window (for tools). */
MROCE_API unsigned int mroce_rxwin_count(const struct mroce_flow *f);

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
	size_t			:0;
};

/* Attach the datapath to ifname. Fails with MROCE_ERR_ATTACHED or
 * MROCE_ERR_FOREIGN_PROG rather than replace a program. */
MROCE_API int mroce_dp_attach(const char *ifname, const struct mroce_attach_opts *opts);

/* Detach mroce from ifname (and remove its pins); never touches another program. */
MROCE_API int mroce_dp_detach(const char *ifname);

/* An attached datapath's program and maps, whoever attached it. */
struct mroce_dp;

MROCE_API int mroce_dp_open(const char *ifname, struct mroce_dp **dp);
MROCE_API void mroce_dp_close(struct mroce_dp *dp);

struct mroce_dp_info {
	__u32			ifindex;
	__u32			prog_id;
	enum mroce_xdp_mode	mode;
	__u16			udp_port;
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

struct mroce_flow_cfg {
	size_t	sz;
	__u64	token;		/* per-connection secret, host order */
	__u32	rx_psn;		/* first PSN expected */
	__u32	peer_qpn;
	__u32	flags;		/* MROCE_FLOW_* */
	size_t	:0;
};

/* Activate local QP qpn (1 .. MROCE_MAX_QPS-1). -EEXIST if active already. */
MROCE_API int mroce_dp_flow_add(struct mroce_dp *dp, __u32 qpn, const struct mroce_flow_cfg *cfg);
MROCE_API int mroce_dp_flow_del(struct mroce_dp *dp, __u32 qpn);

/*
 * The flow's entry in the shared (mmap'ed) map, for the thread that owns the
 * QP's receive side and updates its window. NULL with errno for a bad qpn.
 */
MROCE_API struct mroce_flow *mroce_dp_flow(struct mroce_dp *dp, __u32 qpn);

/* Steer packets of receive queue `queue` to AF_XDP socket fd (or stop). */
MROCE_API int mroce_dp_xsk_set(struct mroce_dp *dp, __u32 queue, int xsk_fd);
MROCE_API int mroce_dp_xsk_clear(struct mroce_dp *dp, __u32 queue);

/* ---- verbs: memory regions, queues, work requests, connections ---------- */
#include "verbs.h"

/* ---- collectives over a communicator of N ranks ------------------------ */
#include "coll.h"

#ifdef __cplusplus
}
#endif

#endif /* MROCE_MROCE_H */
