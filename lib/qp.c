// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Queue pairs: creation with defaults filled in, connection to a remote
 * QP, failure and flushing, destruction, and the connection info that the
 * two ends exchange.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "cc.h"
#include "eng_int.h"
#include "engine.h"
#include "internal.h"
#include "opcode.h"

#define DFLT(v, d) ((v) ? (v) : (d))

/*
 * QPN q on every plane's interface, for this process (other processes on
 * them take QPNs from the same flows maps); on an error none is held.
 */
static int qpn_reserve(struct mroce_dev *dev, __u32 q)
{
	for (__u32 i = 0; i < dev->nplanes; i++) {
		int err = dev->plane_dp[i] ? mroce_dp_flow_reserve(dev->plane_dp[i], q) : 0;

		if (err) {
			while (i-- > 0)
				if (dev->plane_dp[i])
					mroce_dp_flow_del(dev->plane_dp[i], q);
			return err;
		}
	}
	return 0;
}

/* Deactivate the QP's flows and give its QPN back on every interface. */
static void qpn_release(struct mroce_qp *qp)
{
	for (__u32 i = 0; i < qp->dev->nplanes; i++) {
		if (qp->dev->plane_dp[i])
			mroce_dp_flow_del(qp->dev->plane_dp[i], qp->qpn);
		qp->pflow[i] = NULL;
	}
	qp->flow = &qp->local_flow;
}

/* Index mask of the smallest power-of-two ring holding depth entries. */
static __u32 ring_mask(__u32 depth)
{
	__u32 size = 1;

	while (size < depth)
		size <<= 1;
	return size - 1;
}

/* The mask a ring growing up to max_mask's starts with. */
static __u32 first_mask(__u32 max_mask)
{
	return max_mask < MROCE_RING_FIRST - 1 ? max_mask : MROCE_RING_FIRST - 1;
}

/* The caller's attributes with the defaults filled in, checked; 0 or -EINVAL. */
static int qp_attr_fill(struct mroce_dev *dev, const struct mroce_qp_attr *attr,
			struct mroce_qp_attr *out)
{
	struct mroce_qp_attr a = {};

	if (!mroce_opts_valid(attr, attr->sz, sizeof(*attr)))
		return -EINVAL;
	memcpy(&a, attr, attr->sz < sizeof(a) ? attr->sz : sizeof(a));
	a.sz = sizeof(a);
	if (!a.send_cq || !a.recv_cq || (a.order != MROCE_ORDERED && a.order != MROCE_UNORDERED))
		return -EINVAL;
	/* A CQ is guarded by its own device's lock: another device's would be raced. */
	if (a.send_cq->dev != dev || a.recv_cq->dev != dev)
		return -EINVAL;
	/* So is a PD; and its regions are all on its own device. */
	if (a.pd && a.pd->dev != dev)
		return -EINVAL;
	a.sq_depth = DFLT(a.sq_depth, 256);
	a.rq_depth = DFLT(a.rq_depth, 256);
	a.paths = DFLT(a.paths, 1);
	a.max_inflight = DFLT(a.max_inflight, 256);
	a.rto_low_us = DFLT(a.rto_low_us, 200);
	a.rto_high_us = DFLT(a.rto_high_us, 1000);
	a.retry_cnt = DFLT(a.retry_cnt, 12);
	a.rnr_retry = DFLT(a.rnr_retry, 7);
	a.rnr_timer_us = DFLT(a.rnr_timer_us, 1000);
	a.ack_every = DFLT(a.ack_every, 16);
	a.ack_delay_us = DFLT(a.ack_delay_us, 50);
	a.reorder_pkts = DFLT(a.reorder_pkts, 64);
	a.max_rd_atomic = DFLT(a.max_rd_atomic, 16);
	a.mtu = DFLT(a.mtu, dev->attr.mtu);
	a.streams = DFLT(a.streams, 1);
	/* receive rings of every stream together: at most 2^18 entries (~30 MiB) */
	if (a.streams > MROCE_MAX_STREAMS || a.rq_depth > 65536 ||
	    (__u64)a.streams * (ring_mask(a.rq_depth) + 1) > (1u << 18))
		return -EINVAL;
	if (a.sq_depth > 65536 || a.rq_depth > 65536 || a.paths > 256 ||
	    a.max_inflight > MROCE_SPAN_MAX || a.rto_low_us > a.rto_high_us ||
	    a.retry_cnt > 255 || a.mtu < 256 || a.mtu > MROCE_FRAME_MAX - sizeof(struct ethhdr) ||
	    a.ack_every > MROCE_RXWIN_PSNS / 2 || (a.udp_sport && a.udp_sport < 49152))
		return -EINVAL;
	*out = a;
	return 0;
}

static void qp_free(struct mroce_qp *qp)
{
	for (__u32 i = 0; qp->streams && i < qp->attr.streams; i++)
		free(qp->streams[i].rq);
	free(qp->streams);
	free(qp->sq);
	free(qp->paths);
	free(qp->pkts);
	free(qp->rxpaths);
	free(qp);
}

size_t mroce_qp_heap_bytes(const struct mroce_qp *qp)
{
	size_t n = malloc_usable_size((void *)qp) + malloc_usable_size(qp->streams) +
		   malloc_usable_size(qp->sq) + malloc_usable_size(qp->paths) +
		   malloc_usable_size(qp->pkts) + malloc_usable_size(qp->rxpaths);

	for (__u32 i = 0; qp->streams && i < qp->attr.streams; i++)
		n += malloc_usable_size(qp->streams[i].rq);
	return n;
}

/* Every stream with its own receive ring. */
static int qp_alloc_streams(struct mroce_qp *qp, __u32 n)
{
	qp->streams = calloc(n, sizeof(*qp->streams));
	if (!qp->streams)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++) {
		qp->streams[i].rq_mask = first_mask(qp->rq_max_mask);
		qp->streams[i].rq = calloc(qp->streams[i].rq_mask + 1, sizeof(*qp->streams[i].rq));
		if (!qp->streams[i].rq)
			return -ENOMEM;
	}
	return 0;
}

/* A free QPN for qp, and qp in the device's table; dev->lock held. -ENOSPC if none. */
static int qp_take_qpn(struct mroce_dev *dev, struct mroce_qp *qp)
{
	/* Start the search at a random QPN so numbers are not reused right away. */
	for (__u32 n = 0, q = (__u32)mroce_dev_random64(dev) % (MROCE_MAX_QPS - 1) + 1;
	     n < MROCE_MAX_QPS - 1; n++, q = q % (MROCE_MAX_QPS - 1) + 1) {
		if (dev->qps[q])
			continue;
		if (qpn_reserve(dev, q))
			continue;	/* another live process on this interface holds it */
		qp->qpn = q;
		dev->qps[q] = qp;
		dev->qp_due[q] = dev->qp_timer[q] = 0;
		dev->qp_live[q / 64] |= 1ull << (q % 64);
		qp->pd->users++;
		return 0;
	}
	return -ENOSPC;
}

int mroce_create_qp(struct mroce_dev *dev, const struct mroce_qp_attr *attr, struct mroce_qp **qpp)
{
	struct mroce_qp_attr a;
	struct mroce_qp *qp;
	int err;

	if (!dev || !attr || !qpp)
		return -EINVAL;
	err = qp_attr_fill(dev, attr, &a);
	if (err)
		return err;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	/* Rings of a power of two: sequences wrap at 2^32 without aliasing (depth still bounds use). */
	/* with streams, room for a held stream's requests moved to the tail (comp.c) */
	qp->sq_max_mask = ring_mask(a.streams > 1 ? 2 * a.sq_depth : a.sq_depth);
	qp->rq_max_mask = ring_mask(a.rq_depth);
	qp->sq_mask = first_mask(qp->sq_max_mask);	/* they grow as posts need (ring.c) */
	qp->attr = a;
	qp->sq = calloc(qp->sq_mask + 1, sizeof(*qp->sq));
	qp->pkt_mask = first_mask(MROCE_PKT_RING - 1);
	qp->pkts = calloc(qp->pkt_mask + 1, sizeof(*qp->pkts));
	qp->paths = calloc(a.paths, sizeof(*qp->paths));
	if (!qp->sq || !qp->pkts || !qp->paths || qp_alloc_streams(qp, a.streams)) {
		qp_free(qp);
		return -ENOMEM;
	}
	qp->dev = dev;
	qp->pd = a.pd ? a.pd : &dev->pd0;
	qp->send_cq = a.send_cq;
	qp->recv_cq = a.recv_cq;
	qp->state = MROCE_QPS_INIT;
	qp->secret = mroce_dev_random64(dev);
	qp->snd_una = qp->snd_nxt = (__u32)mroce_dev_random64(dev);
	qp->rto_us = a.rto_high_us;	/* nothing measured yet */
	mroce_cc_init(qp);
	/* The way back for the peer's slot i starts on our slot i's port (paths.c). */
	for (__u32 i = 0; i < MROCE_MAX_PATHS; i++)
		qp->ret[i].entropy = (__u16)i;
	for (__u32 i = 0; i < a.paths; i++)
		qp->paths[i].entropy = (__u16)i;
	qp->next_entropy = (__u16)(a.paths - 1);
	pthread_mutex_lock(&dev->lock);
	err = qp_take_qpn(dev, qp);
	/* the stalls the device's other QPs' peers showed, till its own say (loss.c) */
	qp->stall_us = dev->peer_stall_us;
	qp->stall_at_us = dev->peer_stall_at_us;
	pthread_mutex_unlock(&dev->lock);
	if (err) {
		qp_free(qp);
		return err;
	}
	qp->flow = &qp->local_flow;
	*qpp = qp;
	return 0;
}

enum mroce_qp_state mroce_qp_state(const struct mroce_qp *qp)
{
	return qp ? qp->state : MROCE_QPS_ERR;
}

__u32 mroce_qp_num(const struct mroce_qp *qp)
{
	return qp ? qp->qpn : 0;
}

/*
 * The send queue's completions when the QP fails, in posting order as
 * verbs has them: requests finished successfully before the first failing
 * one keep their success; the failing one (the first that finished with an
 * error, or else the first unfinished, which gets `why`) reports its
 * status; everything after it is flushed, even if its bytes already landed
 * (placement in any order cannot take them back: docs/transport.md). A
 * request that failed with its stream alone (stream_err, ack.c stream_fail)
 * is not the QP's failure: it reports its own status.
 */
static void flush_sq(struct mroce_qp *qp, enum mroce_wc_status why)
{
	struct mroce_wc wc = { .qp_num = qp->qpn };
	__u32 fail = qp->sq_tail;
	bool before = true;

	for (__u32 i = qp->sq_head; i != qp->sq_tail; i++) {
		const struct mroce_swqe *w = SWQE(qp, i);

		if (w->done && w->status && !w->stream_err) {
			fail = i;
			break;
		}
		if (fail == qp->sq_tail && !w->done && !w->reported)
			fail = i;	/* unless a later one carries an error of its own */
	}
	for (; qp->sq_head != qp->sq_tail; qp->sq_head++) {
		struct mroce_swqe *w = SWQE(qp, qp->sq_head);
		bool ok = w->done && (!w->status || w->stream_err);

		if (w->stream_err)
			wc.status = (enum mroce_wc_status)w->status;
		else if (qp->sq_head == fail)
			wc.status = w->done ? (enum mroce_wc_status)w->status : why;
		else
			wc.status = before && ok ? MROCE_WC_SUCCESS : MROCE_WC_WR_FLUSH_ERR;
		before &= ok || w->reported;
		if (w->reported)
			continue;
		wc.wr_id = w->wr_id;
		wc.opcode = mroce_send_wc_opcode(w->opcode);
		wc.byte_len = wc.status == MROCE_WC_SUCCESS ? w->len : 0;
		mroce_cq_push(qp->send_cq, &wc);
		w->reported = 1;
	}
	qp->sq_next = qp->sq_tail;
	qp->sq_moved = 0;	/* the empty entries moved past went with the rest */
	qp->sq_reported = 0;
}

static void flush_rq(struct mroce_qp *qp)
{
	struct mroce_wc wc = { .qp_num = qp->qpn, .status = MROCE_WC_WR_FLUSH_ERR,
			       .opcode = MROCE_WC_RECV };

	for (__u32 i = 0; i < qp->attr.streams; i++) {
		struct mroce_stream *st = &qp->streams[i];

		for (; st->rq_head != st->rq_tail; st->rq_head++) {
			struct mroce_rwqe *r = RWQE(st, st->rq_head);

			if (r->reported)
				continue;
			wc.wr_id = r->wr_id;
			mroce_cq_push(qp->recv_cq, &wc);
			r->reported = 1;
		}
	}
}

static void flush_all(struct mroce_qp *qp, enum mroce_wc_status why)
{
	flush_sq(qp, why);
	flush_rq(qp);
}

/* Move to the error state: the failing request gets `why`, the rest are flushed. dev->lock held. */
void mroce_qp_fail(struct mroce_qp *qp, enum mroce_wc_status why)
{
	if (qp->state == MROCE_QPS_ERR)
		return;
	/*
	 * Receives whose messages are placed complete first, successfully: an
	 * ACK sent earlier in this round may already cover them, and their
	 * senders then report success.
	 */
	mroce_complete_rq(qp);
	qp->state = MROCE_QPS_ERR;
	mroce_qp_due_now(qp);
	flush_all(qp, why);
	for (__u32 i = 0; i < MROCE_READ_JOBS; i++)
		qp->rjobs[i].used = false;
	qp->rjobs_live = 0;
	qpn_release(qp);	/* an error is final: the QPN is no longer this QP's */
}

int mroce_destroy_qp(struct mroce_qp *qp)
{
	struct mroce_dev *dev;

	if (!qp)
		return -EINVAL;
	dev = qp->dev;
	pthread_mutex_lock(&dev->lock);
	mroce_qp_flush_ack(qp);	/* the peer waits for it */
	if (qp->state != MROCE_QPS_ERR)
		mroce_qp_fail(qp, MROCE_WC_WR_FLUSH_ERR);
	flush_all(qp, MROCE_WC_WR_FLUSH_ERR);
	dev->qps[qp->qpn] = NULL;
	dev->qp_live[qp->qpn / 64] &= ~(1ull << (qp->qpn % 64));
	dev->qp_poked[qp->qpn / 64] &= ~(1ull << (qp->qpn % 64));
	qp->pd->users--;
	pthread_mutex_unlock(&dev->lock);
	qp_free(qp);
	return 0;
}

int mroce_qp_local_info(struct mroce_qp *qp, const struct in6_addr *addr, int family,
			struct mroce_qp_info *info)
{
	if (!qp || !info || (family != AF_INET && family != AF_INET6))
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->qpn = qp->qpn;
	info->psn = qp->snd_nxt;
	info->secret = qp->secret;
	memcpy(info->mac, qp->dev->local.src_mac, 6);
	info->udp_port = qp->dev->udp_port;
	info->family = family;
	if (addr)
		info->addr = *addr;
	info->mtu = qp->attr.mtu;
	info->max_rd = MROCE_READ_ADVERTISED;
	info->streams = (__u16)qp->attr.streams;
	/* the device's other planes: their interfaces' own MACs and addresses */
	if (qp->dev->nplanes > 1) {
		info->planes = qp->dev->nplanes;
		for (__u32 i = 1; i < qp->dev->nplanes; i++) {
			const struct mroce_route *l = &qp->dev->plane_local[i];

			memcpy(info->plane_mac[i - 1], l->src_mac, 6);
			if (l->family == AF_INET) {
				info->plane_addr[i - 1].s6_addr[10] = 0xff;
				info->plane_addr[i - 1].s6_addr[11] = 0xff;
				memcpy(&info->plane_addr[i - 1].s6_addr[12], &l->src.v4, 4);
			} else {
				info->plane_addr[i - 1] = l->src.v6;
			}
		}
	}
	return 0;
}

_Static_assert(sizeof(struct mroce_qp_info) == 208, "mroce_qp_info's size is ABI");

void mroce_qp_info_pack(const struct mroce_qp_info *in, __u8 out[MROCE_QP_INFO_WIRE_LEN])
{
	__u32 v32;
	__u64 v64;
	__u16 v16;

	memset(out, 0, MROCE_QP_INFO_WIRE_LEN);
	out[0] = 'M';
	out[1] = MROCE_VERSION;
	out[2] = in->family == AF_INET6 ? 6 : 4;
	out[3] = MROCE_MAX_PLANES;	/* the layout's room: planes 1..7 below */
	v32 = mroce_be32(in->qpn); memcpy(out + 4, &v32, 4);
	v32 = mroce_be32(in->psn); memcpy(out + 8, &v32, 4);
	v64 = mroce_be64(in->secret); memcpy(out + 12, &v64, 8);
	memcpy(out + 20, in->mac, 6);
	v16 = mroce_be16(in->udp_port); memcpy(out + 26, &v16, 2);
	memcpy(out + 28, &in->addr, 16);
	v32 = mroce_be32(in->mtu); memcpy(out + 44, &v32, 4);
	v16 = mroce_be16(in->max_rd); memcpy(out + 48, &v16, 2);
	v16 = mroce_be16(in->streams); memcpy(out + 50, &v16, 2);
	out[52] = in->planes;
	memcpy(out + 53, in->plane_mac, sizeof(in->plane_mac));	/* 53..94 */
	out[MROCE_QP_INFO_CM_BYTE] = MROCE_CM_REVISION;			/* 95 */
	memcpy(out + 96, in->plane_addr, sizeof(in->plane_addr));	/* 96..207 */
}

int mroce_qp_info_unpack(const __u8 in[MROCE_QP_INFO_WIRE_LEN], struct mroce_qp_info *info)
{
	__u32 v32;
	__u64 v64;
	__u16 v16;

	if (in[0] != 'M' || (in[2] != 4 && in[2] != 6))
		return -EINVAL;
	if (in[1] != MROCE_VERSION || in[3] != MROCE_MAX_PLANES)
		return -MROCE_ERR_VERSION;	/* a well-formed info of another version or layout */
	memset(info, 0, sizeof(*info));
	info->family = in[2] == 6 ? AF_INET6 : AF_INET;
	memcpy(&v32, in + 4, 4); info->qpn = mroce_be32(v32);
	memcpy(&v32, in + 8, 4); info->psn = mroce_be32(v32);
	memcpy(&v64, in + 12, 8); info->secret = mroce_be64(v64);
	memcpy(info->mac, in + 20, 6);
	memcpy(&v16, in + 26, 2); info->udp_port = mroce_be16(v16);
	memcpy(&info->addr, in + 28, 16);
	memcpy(&v32, in + 44, 4); info->mtu = mroce_be32(v32);
	memcpy(&v16, in + 48, 2); info->max_rd = mroce_be16(v16);
	memcpy(&v16, in + 50, 2); info->streams = mroce_be16(v16);
	info->planes = in[52];
	memcpy(info->plane_mac, in + 53, sizeof(info->plane_mac));
	memcpy(info->plane_addr, in + 96, sizeof(info->plane_addr));
	if (!info->qpn || info->qpn >= MROCE_MAX_QPS || info->mtu < 256 ||
	    info->planes > MROCE_MAX_PLANES)
		return -EINVAL;
	return 0;
}

/* Plane i's route: our address on it, the peer's there (info), the next hop. */
static void plane_route(struct mroce_qp *qp, __u32 i, const struct mroce_qp_info *r,
			const __u8 *mac)
{
	struct mroce_route *rt = &qp->proute[i];

	*rt = qp->route;
	memcpy(rt->src_mac, qp->dev->plane_local[i].src_mac, 6);
	rt->src = qp->dev->plane_local[i].src;
	memcpy(rt->dst_mac, mac, 6);
	if (r->family == AF_INET)
		memcpy(&rt->dst.v4, &r->plane_addr[i - 1].s6_addr[12], 4);
	else
		rt->dst.v6 = r->plane_addr[i - 1];
}

/* Our flow in every plane's map (reserved at creation); on an error the QP is as before. */
static int qp_flows_add(struct mroce_qp *qp, const struct mroce_flow_cfg *fc, __u8 np)
{
	for (__u32 i = 0; i < np; i++) {
		int err = mroce_dp_flow_add(qp->dev->plane_dp[i], qp->qpn, fc);

		if (err) {
			/* back to reserved: the QPN stays the QP's */
			while (i-- > 0)
				mroce_dp_flow_unset(qp->dev->plane_dp[i], qp->qpn);
			return err;
		}
	}
	for (__u32 i = 1; i < np; i++)
		qp->pflow[i] = mroce_dp_flow(qp->dev->plane_dp[i], qp->qpn);
	return 0;
}

int mroce_qp_connect_locked(struct mroce_qp *qp, const struct mroce_qp_info *r, const __u8 *mac,
			    const __u8 (*pmac)[6], __u8 np)
{
	struct mroce_dev *dev = qp->dev;
	__u32 hdr_room;

	if (qp->state != MROCE_QPS_INIT)
		return qp->state == MROCE_QPS_RTS ? -EISCONN : -EIO;
	if (!r->qpn || r->qpn >= MROCE_MAX_QPS || (r->family != AF_INET && r->family != AF_INET6))
		return -EINVAL;
	if (r->family != dev->local.family)
		return -EAFNOSUPPORT;
	/* both ends number their streams alike: a message on another's would be refused */
	if (r->streams && r->streams != qp->attr.streams)
		return -MROCE_ERR_STREAMS;
	qp->rqpn = r->qpn;
	qp->token_be = mroce_be64(qp->secret ^ r->secret);
	qp->route = dev->local;
	memcpy(qp->route.dst_mac, mac, 6);
	if (r->family == AF_INET)
		memcpy(&qp->route.dst.v4, &r->addr.s6_addr[12], 4);
	else
		qp->route.dst.v6 = r->addr;
	qp->route.dport = r->udp_port ? r->udp_port : MROCE_DEFAULT_PORT;
	/* Entropy base: spread QPs over the ephemeral range; each path adds its entropy. */
	qp->route.sport = qp->attr.udp_sport ? (__u16)(qp->attr.udp_sport - 49152) :
			  mroce_entropy_base(qp->dev, qp->qpn);	/* offset; see emit() */
	if (r->mtu < qp->attr.mtu)
		qp->attr.mtu = r->mtu;
	hdr_room = (r->family == AF_INET ? sizeof(struct iphdr) : sizeof(struct ipv6hdr)) +
		   sizeof(struct udphdr) + sizeof(struct mroce_bth) + sizeof(struct mroce_reth) +
		   sizeof(struct mroce_deth) + sizeof(struct mroce_immeth);
	if (qp->attr.mtu <= hdr_room + 64)
		return -EINVAL;
	qp->payload_max = qp->attr.mtu - hdr_room;
	/* READs in flight: ours, and no more than the responder takes (an info without it: 1). */
	qp->rd_limit = r->max_rd ? r->max_rd : 1;
	if (qp->attr.max_rd_atomic < qp->rd_limit)
		qp->rd_limit = qp->attr.max_rd_atomic;

	if (np > dev->nplanes)
		np = dev->nplanes;
	if (np < 2 || qp->attr.go_back_n)
		np = 1;	/* go-back-N wants one ordered route */
	qp->proute[0] = qp->route;
	for (__u32 i = 1; i < np; i++)
		plane_route(qp, i, r, pmac[i - 1]);
	if (dev->dp) {
		MROCE_OPTS(mroce_flow_cfg, fc, .token = qp->secret ^ r->secret, .rx_psn = r->psn,
			   .peer_qpn = r->qpn, .flags = qp->attr.go_back_n ? MROCE_FLOW_GO_BACK_N : 0,
			   .pd_cookie = qp->pd->cookie, .dev_id = dev->dev_id);
		int err = qp_flows_add(qp, &fc, np);

		if (err)
			return err;
		qp->flow = mroce_dp_flow(dev->dp, qp->qpn);
	} else {
		memset(&qp->local_flow, 0, sizeof(qp->local_flow));
		qp->local_flow.token = qp->token_be;
		qp->local_flow.peer_qpn = r->qpn;
		qp->local_flow.flags = qp->attr.go_back_n ? MROCE_FLOW_GO_BACK_N : 0;
		mroce_rxwin_reset(&qp->local_flow, r->psn);
		qp->local_flow.state = MROCE_FLOW_ACTIVE;
		qp->flow = &qp->local_flow;
	}
	qp->last_progress_us = dev->ops->now_us(dev->port);
	mroce_planes_connect(qp, np, qp->last_progress_us);
	qp->state = MROCE_QPS_RTS;
	mroce_qp_due_now(qp);
	return 0;
}

int mroce_qp_connect(struct mroce_qp *qp, const struct mroce_qp_info *remote, const __u8 *mac)
{
	__u8 resolved[6], pmac[MROCE_MAX_PLANES - 1][6];
	__u8 np = 1;
	int err;

	if (!qp || !remote)
		return -EINVAL;
	if (!mac) {
		err = mroce_resolve_mac(qp->dev, remote, resolved);
		if (err)
			return err;
		mac = resolved;
	}
	/*
	 * The planes both ends have, as far as the next hop on each resolves
	 * through that plane's interface; a plane that does not is not used
	 * (nor any after it), the connection runs on the others.
	 */
	while (np < remote->planes && np < qp->dev->nplanes &&
	       !mroce_resolve_mac_on(qp->dev, remote->family, &remote->plane_addr[np - 1],
				     qp->dev->plane_ifindex[np], pmac[np - 1]))
		np++;
	pthread_mutex_lock(&qp->dev->lock);
	err = mroce_qp_connect_locked(qp, remote, mac, (const __u8 (*)[6])pmac, np);
	pthread_mutex_unlock(&qp->dev->lock);
	return err;
}

/*
 * For mroce's libibverbs (verbs/), which derives a QP's first PSN from both
 * ends rather than taking mroce_qp_local_info's, at RTR, before the
 * connect: start the send PSN space at psn.
 * Only while nothing has been sent (no request, no READ response): the peer's
 * receive window starts where this puts snd_nxt. 0, -EINVAL, -EBUSY.
 */
int mroce_qp_set_start(struct mroce_qp *qp, __u32 psn)
{
	int err = 0;

	if (!qp)
		return -EINVAL;
	pthread_mutex_lock(&qp->dev->lock);
	if (qp->state == MROCE_QPS_ERR)
		err = -EIO;
	else if (qp->tx_seq || qp->snd_nxt != qp->snd_una || qp->sq_head != qp->sq_tail)
		err = -EBUSY;
	else
		qp->snd_una = qp->snd_nxt = psn;
	pthread_mutex_unlock(&qp->dev->lock);
	return err;
}

/* READs of ours outstanding at once (ibv's max_rd_atomic, known at RTS), >= 1. */
int mroce_qp_set_rd_limit(struct mroce_qp *qp, __u32 n)
{
	if (!qp || !n)
		return -EINVAL;
	pthread_mutex_lock(&qp->dev->lock);
	if (n < qp->rd_limit || qp->state == MROCE_QPS_INIT)
		qp->rd_limit = n;	/* at connect rd_limit became the responder's offer: only lower it */
	if (n < qp->attr.max_rd_atomic)
		qp->attr.max_rd_atomic = n;
	pthread_mutex_unlock(&qp->dev->lock);
	return 0;
}

void mroce_qp_handshake_rtt(struct mroce_qp *qp, __u64 took_us)
{
	pthread_mutex_lock(&qp->dev->lock);
	qp->hs_rtt_us = took_us < UINT32_MAX ? (__u32)took_us : UINT32_MAX;
	pthread_mutex_unlock(&qp->dev->lock);
}

int mroce_qp_query_stats(struct mroce_qp *qp, struct mroce_qp_stats *stats)
{
	size_t sz;

	if (!qp || !stats || stats->sz < sizeof(stats->sz))
		return -EINVAL;
	sz = stats->sz < sizeof(*stats) ? stats->sz : sizeof(*stats);
	pthread_mutex_lock(&qp->dev->lock);
	if (qp->state == MROCE_QPS_RTS)
		mroce_qp_stats_update(qp);
	memcpy((char *)stats + sizeof(stats->sz), (char *)&qp->st + sizeof(stats->sz),
	       sz - sizeof(stats->sz));
	pthread_mutex_unlock(&qp->dev->lock);
	return 0;
}
