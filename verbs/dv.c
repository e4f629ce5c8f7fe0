// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mrocedv (include/mroce/mrocedv.h): what Verbs has no words for, in the
 * spirit of mlx5dv. A device's planes, chosen at open; a QP's paths and
 * congestion control, chosen at creation; the peer's planes, told before
 * RTR; a QP's transport counters.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mroce/mrocedv.h>

#include "mrv.h"
#include "qpint.h"

_Static_assert(MROCEDV_MAX_PLANES == MROCE_MAX_PLANES, "mrocedv.h repeats MROCE_MAX_PLANES");

/* A struct from the application with a size field: at least as long as its first version. */
#define SZ_OK(p, type, last) \
	((p)->sz >= offsetof(type, last) + sizeof((p)->last) && (p)->sz <= 4096)

MRV_EXPORT bool mrocedv_is_supported(struct ibv_device *device)
{
	/* every device this library lists is mroce's; the name says so to the reader */
	return device && !strncmp(device->name, "mroce_", 6);
}

MRV_EXPORT struct ibv_context *mrocedv_open_device(struct ibv_device *device,
						    const struct mrocedv_context_attr *attr)
{
	struct ibv_context *ibctx;
	struct mrv_context *ctx;

	if (!mrocedv_is_supported(device)) {
		errno = device ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	if (attr && (!SZ_OK(attr, struct mrocedv_context_attr, n_planes) ||
		     attr->n_planes > MROCE_MAX_PLANES - 1 || (attr->n_planes && !attr->planes))) {
		errno = EINVAL;
		return NULL;
	}
	for (uint32_t i = 0; attr && i < attr->n_planes; i++) {
		if (!attr->planes[i] || !attr->planes[i][0] ||
		    strlen(attr->planes[i]) >= IF_NAMESIZE) {
			errno = EINVAL;
			return NULL;
		}
	}
	ibctx = ibv_open_device(device);
	if (!ibctx)
		return NULL;
	ctx = mrv_ctx(ibctx);
	for (uint32_t i = 0; attr && i < attr->n_planes; i++)
		strcpy(ctx->planes[i], attr->planes[i]);
	ctx->n_planes = attr ? attr->n_planes : 0;
	return ibctx;
}

/* ::ffff:a.b.c.d of an interface's IPv4 address: 0 or a positive errno. */
static int if_gid(const char *ifname, union ibv_gid *gid)
{
	struct ifreq ifr = {};
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	strncpy(ifr.ifr_name, ifname, IF_NAMESIZE - 1);
	if (ioctl(fd, SIOCGIFADDR, &ifr) < 0 || ifr.ifr_addr.sa_family != AF_INET) {
		err = EADDRNOTAVAIL;	/* a plane needs an IPv4 address of its own */
	} else {
		memset(gid, 0, sizeof(*gid));
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr, 4);
	}
	close(fd);
	return err;
}

MRV_EXPORT int mrocedv_query_planes(struct ibv_context *context, union ibv_gid *gids, uint32_t *n)
{
	struct mrv_context *ctx;
	uint32_t want;
	int err;

	if (!context || !gids || !n)
		return EINVAL;
	ctx = mrv_ctx(context);
	want = 1 + ctx->n_planes;
	if (*n < want)
		return ENOSPC;
	err = if_gid(ctx->dev->ifname, &gids[0]);
	for (uint32_t i = 0; !err && i < ctx->n_planes; i++)
		err = if_gid(ctx->planes[i], &gids[1 + i]);
	if (!err)
		*n = want;
	return err;
}

MRV_EXPORT struct ibv_qp *mrocedv_create_qp(struct ibv_context *context,
					    struct ibv_qp_init_attr_ex *attr,
					    const struct mrocedv_qp_init_attr *mattr)
{
	struct mroce_qp_attr tune = { .sz = sizeof(tune) };

	if (!context || !attr || !mattr || !SZ_OK(mattr, struct mrocedv_qp_init_attr, unordered) ||
	    mattr->paths > 256 /* MROCE_MAX_PATHS, lib/qp.h */ || mattr->cc > MROCEDV_CC_NONE ||
	    (mattr->udp_sport && mattr->udp_sport < 49152)) {
		errno = EINVAL;
		return NULL;
	}
	if (mattr->unordered) {
		/* the send queue's unsignaled accounting counts completions in posting order */
		errno = EOPNOTSUPP;
		return NULL;
	}
	tune.paths = mattr->paths;
	tune.max_inflight = mattr->max_inflight;
	tune.cc_ecn = mattr->cc == MROCEDV_CC_ECN;
	tune.cc_delay = mattr->cc == MROCEDV_CC_DELAY;
	tune.no_cc = mattr->cc == MROCEDV_CC_NONE;
	tune.udp_sport = mattr->udp_sport;
	tune.static_paths = mattr->static_paths;
	return mrv_create_qp_tuned(context, attr, &tune);
}

MRV_EXPORT int mrocedv_set_remote_planes(struct ibv_qp *qp, const union ibv_gid *gids, uint32_t n)
{
	struct mrv_qpi *q;

	if (!qp || !gids || !n || n > MROCE_MAX_PLANES)
		return EINVAL;
	q = mrv_qpi(qp);
	if (q->state != IBV_QPS_RESET && q->state != IBV_QPS_INIT)
		return EINVAL;	/* the connection is made at RTR */
	for (uint32_t i = 0; i < n; i++) {
		static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

		if (memcmp(gids[i].raw, v4mapped, sizeof(v4mapped)))
			return EINVAL;	/* IPv4 planes only, as the device's own GID */
	}
	/* gids[0] is the peer's own interface: ah_attr's dgid names it at RTR */
	q->rplanes = (uint8_t)(n > 1 ? n : 0);
	memset(q->rplane_addr, 0, sizeof(q->rplane_addr));
	for (uint32_t i = 1; i < n; i++)
		memcpy(&q->rplane_addr[i - 1], gids[i].raw, 16);
	return 0;
}

MRV_EXPORT int mrocedv_query_qp_stats(struct ibv_qp *qp, struct mrocedv_qp_stats *stats)
{
	struct mroce_qp_stats st = { .sz = sizeof(st) };
	struct mrocedv_qp_stats out = { .sz = sizeof(out) };
	struct mrv_qpi *q;
	int err;

	if (!qp || !stats || !SZ_OK(stats, struct mrocedv_qp_stats, plane_downs))
		return EINVAL;
	q = mrv_qpi(qp);
	err = q->q.qp ? mroce_qp_query_stats(q->q.qp, &st) : -EINVAL;
	if (err)
		return mrv_errno(err);
	out.tx_pkts = st.tx_pkts;
	out.retx_pkts = st.retx_pkts;
	out.acked_bytes = st.acked_bytes;
	out.rto_events = st.rto_events;
	out.srtt_us = st.srtt_us;
	out.paths = st.paths;
	out.plane_downs = st.plane_downs;
	memcpy(stats, &out, stats->sz < sizeof(out) ? stats->sz : sizeof(out));
	stats->sz = stats->sz < sizeof(out) ? stats->sz : sizeof(out);
	return 0;
}
