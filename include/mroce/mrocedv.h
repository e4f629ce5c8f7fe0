/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mrocedv: mroce's extensions to the Verbs API, in the spirit of mlx5dv.
 * An unmodified Verbs application runs on mroce's libibverbs.so.1 with the
 * library's defaults (docs/verbs.md); one that includes this header and
 * links that library (-libverbs from mroce's directory) can also tune what
 * Verbs has no words for: the paths a QP sprays over, its congestion
 * control, and the planes a device and a connection use.
 *
 * Every call returns 0 or a positive errno, as ibverbs' own do, except the
 * ones returning a pointer (NULL with errno set). On a device that is not
 * mroce's, they fail with EOPNOTSUPP.
 */
#ifndef MROCE_MROCEDV_H
#define MROCE_MROCEDV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MROCEDV_API __attribute__((visibility("default")))

#define MROCEDV_MAX_PLANES	8	/* MROCE_MAX_PLANES */

/* True if device is one of mroce's (its QPs take the calls below). */
MROCEDV_API bool mrocedv_is_supported(struct ibv_device *device);

/*
 * A context whose mroce device sends and receives over more planes than
 * its own interface: planes[0..n_planes) are further interfaces' names,
 * each with an IPv4 address of its own (docs/protocol.md, "Planes"). Like
 * mlx5dv_open_device(): the device opens the datapath on all of them at
 * its first PD or CQ. Contexts of one interface in a process share one
 * mroce device: a second context naming other planes fails (EBUSY).
 */
struct mrocedv_context_attr {
	size_t			sz;		/* sizeof(struct mrocedv_context_attr) */
	const char *const	*planes;
	uint32_t		n_planes;	/* at most MROCEDV_MAX_PLANES - 1 */
};
MROCEDV_API struct ibv_context *mrocedv_open_device(struct ibv_device *device,
					 const struct mrocedv_context_attr *attr);

/* The GIDs of the context's planes, its own interface's first: what a peer
 * passes to mrocedv_set_remote_planes(). *n: room in gids, then how many. */
MROCEDV_API int mrocedv_query_planes(struct ibv_context *context, union ibv_gid *gids, uint32_t *n);

enum mrocedv_cc {
	MROCEDV_CC_DEFAULT	= 0,	/* the library's (ECN's algorithm) */
	MROCEDV_CC_ECN		= 1,	/* DCTCP-like: cut by the CE-marked fraction */
	MROCEDV_CC_DELAY	= 2,	/* Swift-like: back off while the RTT exceeds a target */
	MROCEDV_CC_NONE		= 3,	/* the window stays at max_inflight */
};

/*
 * What ibv_create_qp_ex() leaves at the library's defaults; a zero field
 * keeps its default (docs/verbs.md lists them).
 */
struct mrocedv_qp_init_attr {
	size_t		sz;		/* sizeof(struct mrocedv_qp_init_attr) */
	uint32_t	paths;		/* UDP source ports to spray over, 1..256 */
	uint32_t	max_inflight;	/* packets in flight at most (BDP) */
	enum mrocedv_cc	cc;
	uint16_t	udp_sport;	/* path 0's UDP source port, 49152..65535 */
	bool		static_paths;	/* never move a path to a fresh port (RoCEv2-like routes) */
	bool		unordered;	/* complete each message once whole: not yet (EOPNOTSUPP) */
};
MROCEDV_API struct ibv_qp *mrocedv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				 const struct mrocedv_qp_init_attr *mattr);

/* The peer's plane GIDs (its mrocedv_query_planes()), set before RTR: the
 * connection then uses every plane both ends have. */
MROCEDV_API int mrocedv_set_remote_planes(struct ibv_qp *qp, const union ibv_gid *gids, uint32_t n);

/* A QP's transport counters (lost and resent packets, RTT, paths, planes). */
struct mrocedv_qp_stats {
	size_t		sz;		/* sizeof(struct mrocedv_qp_stats) */
	uint64_t	tx_pkts;	/* data packets sent, first copies and resends */
	uint64_t	retx_pkts;	/* of those, resends */
	uint64_t	acked_bytes;	/* payload the peer acknowledged */
	uint64_t	rto_events;	/* retransmission timer expiries */
	uint32_t	srtt_us;	/* smoothed RTT over all paths */
	uint32_t	paths;		/* path slots sprayed over */
	uint64_t	plane_downs;	/* planes given up (their paths moved to the others) */
};
MROCEDV_API int mrocedv_query_qp_stats(struct ibv_qp *qp, struct mrocedv_qp_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* MROCE_MROCEDV_H */
