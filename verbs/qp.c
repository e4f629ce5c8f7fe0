// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * RC queue pairs: ibv_create_qp(_ex), ibv_modify_qp's state machine over a
 * mroce QP, ibv_query_qp, ibv_destroy_qp. The mroce QP is made at create
 * (its QPN is in the verbs QPN the application exchanges); it connects at
 * RTR, so it receives from then on, while sends wait for RTS (post.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mroce/proto.h>

#include "qpint.h"

#define SEND_OPS_OK	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ)

static struct mrv_context *ctx_of(struct ibv_context *c)
{
	return mrv_of(c, struct mrv_context, vctx.context);
}

static void local_gid(const struct mrv_context *ctx, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &ctx->dev->ipv4, 4);
}

static bool gid_v4mapped(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, pfx, 12);
}

static void ctx_link(struct mrv_context *ctx, struct mrv_qp *qp)
{
	pthread_mutex_lock(&ctx->lock);
	qp->next = ctx->qps;
	ctx->qps = qp;
	ctx->qp_of[((struct mrv_qpi *)qp)->mqpn] = qp;
	pthread_mutex_unlock(&ctx->lock);
}

static void ctx_unlink(struct mrv_context *ctx, struct mrv_qp *qp)
{
	pthread_mutex_lock(&ctx->lock);
	for (struct mrv_qp **p = &ctx->qps; *p; p = &(*p)->next)
		if (*p == qp) {
			*p = qp->next;
			break;
		}
	if (ctx->qp_of[((struct mrv_qpi *)qp)->mqpn] == qp)
		ctx->qp_of[((struct mrv_qpi *)qp)->mqpn] = NULL;
	pthread_mutex_unlock(&ctx->lock);
}

/* The QP now answers to another mroce QPN (a new mroce QP at RESET). */
static void ctx_renumber(struct mrv_context *ctx, struct mrv_qp *qp, uint32_t old)
{
	pthread_mutex_lock(&ctx->lock);
	if (ctx->qp_of[old] == qp)
		ctx->qp_of[old] = NULL;	/* the old QP's completions still queued: dropped */
	ctx->qp_of[((struct mrv_qpi *)qp)->mqpn] = qp;
	pthread_mutex_unlock(&ctx->lock);
}

struct mrv_qp *mrv_qp_by_mroce_qpn(struct mrv_context *ctx, uint32_t qpn)
{
	struct mrv_qp *qp;

	if (qpn >= sizeof(ctx->qp_of) / sizeof(ctx->qp_of[0]))
		return NULL;
	pthread_mutex_lock(&ctx->lock);
	qp = ctx->qp_of[qpn];
	pthread_mutex_unlock(&ctx->lock);
	return qp;
}

/* The mroce QP and the verbs QPN that carries its number. */
static int make_mroce_qp(struct mrv_qpi *q)
{
	int err = mroce_create_qp(q->q.ctx->mdev, &q->mattr, &q->q.qp);

	if (err)
		return err;
	q->mqpn = mroce_qp_num(q->q.qp);
	q->q.qpx.qp_base.qp_num = mrv_qpn(q->q.ctx->queue, q->mqpn);
	return 0;
}

static int check_init_attr(const struct ibv_qp_init_attr_ex *a)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

	if (a->comp_mask & ~known)
		return EOPNOTSUPP;	/* XRC domains, TSO, RSS tables: not mroce's */
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd || !a->send_cq || !a->recv_cq)
		return EINVAL;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags)
		return EOPNOTSUPP;
	if (a->qp_type != IBV_QPT_RC || a->srq)
		return EOPNOTSUPP;	/* mroce has reliable connected QPs only, and no SRQ */
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && (a->send_ops_flags & ~SEND_OPS_OK))
		return EOPNOTSUPP;	/* atomics, memory windows, invalidation, TSO */
	if (a->cap.max_send_wr > MRV_MAX_WR || a->cap.max_recv_wr > MRV_MAX_WR ||
	    a->cap.max_send_sge > MROCE_MAX_SGE || a->cap.max_recv_sge > MROCE_MAX_SGE ||
	    a->cap.max_inline_data > MRV_MAX_INLINE)
		return EINVAL;
	return 0;
}

struct ibv_qp *mrv_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a)
{
	return mrv_create_qp_tuned(context, a, NULL);
}

struct ibv_qp *mrv_create_qp_tuned(struct ibv_context *context, struct ibv_qp_init_attr_ex *a,
				   const struct mroce_qp_attr *tune)
{
	struct mrv_context *ctx;
	struct mrv_qpi *q;
	int err;

	if (!context || !a) {
		errno = EINVAL;
		return NULL;
	}
	ctx = ctx_of(context);
	err = check_init_attr(a);
	if (err) {
		errno = err;
		return NULL;
	}
	if (a->pd->context != context || a->send_cq->context != context ||
	    a->recv_cq->context != context) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	err = -mrv_fabric_key(q->key);
	if (!err)
		err = -mrv_dev_get(ctx);
	if (err)
		goto fail;
	q->q.ctx = ctx;
	q->pd = mrv_of(a->pd, struct mrv_pd, ibpd);
	q->mattr = (struct mroce_qp_attr){
		.sz = sizeof(q->mattr),
		.send_cq = ((struct mrv_cq *)a->send_cq)->cq,
		.recv_cq = ((struct mrv_cq *)a->recv_cq)->cq,
		.sq_depth = a->cap.max_send_wr ? a->cap.max_send_wr : 1,
		.rq_depth = a->cap.max_recv_wr ? a->cap.max_recv_wr : 1,
		.pd = q->pd->pd,
	};
	if (tune) {	/* mrocedv_create_qp(): what Verbs has no words for */
		q->mattr.paths = tune->paths;
		q->mattr.max_inflight = tune->max_inflight;
		q->mattr.cc_ecn = tune->cc_ecn;
		q->mattr.cc_delay = tune->cc_delay;
		q->mattr.no_cc = tune->no_cc;
		q->mattr.udp_sport = tune->udp_sport;
		q->mattr.static_paths = tune->static_paths;
	}
	q->sig_cap = q->mattr.sq_depth;
	for (q->sig_mask = 1; q->sig_mask < q->sig_cap; q->sig_mask <<= 1)
		;
	q->sig_mask--;
	q->sig = calloc(q->sig_mask + 1, 1);
	if (!q->sig) {
		err = ENOMEM;
		goto fail;
	}
	/*
	 * Room in the send CQ for what the application sized it for and for
	 * every send WR of its QPs completing unsignaled and waiting there to
	 * be hidden: a QP that could overflow it is refused now (the
	 * application may give it a larger CQ), rather than completions lost.
	 */
	struct mrv_cq *scq = (struct mrv_cq *)a->send_cq;

	pthread_mutex_lock(&ctx->lock);
	if ((uint64_t)scq->ibcq.cqe + scq->sq_room + q->mattr.sq_depth > scq->mroce_cqe)
		err = ENOMEM;
	else
		scq->sq_room += q->mattr.sq_depth;
	pthread_mutex_unlock(&ctx->lock);
	if (err)
		goto fail;
	err = -make_mroce_qp(q);
	if (err) {
		pthread_mutex_lock(&ctx->lock);
		scq->sq_room -= q->mattr.sq_depth;
		pthread_mutex_unlock(&ctx->lock);
		goto fail;
	}
	pthread_mutex_init(&q->post_lock, NULL);

	struct ibv_qp *qp = &q->q.qpx.qp_base;

	qp->context = context;
	qp->qp_context = a->qp_context;
	qp->pd = a->pd;
	qp->send_cq = a->send_cq;
	qp->recv_cq = a->recv_cq;
	qp->srq = NULL;
	qp->handle = q->mqpn;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = IBV_QPT_RC;
	qp->events_completed = 0;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	q->state = IBV_QPS_RESET;
	q->q.sq_sig_all = a->sq_sig_all;
	/* what the QP has: at least what was asked for */
	a->cap.max_send_wr = q->mattr.sq_depth;
	a->cap.max_recv_wr = q->mattr.rq_depth;
	a->cap.max_send_sge = MROCE_MAX_SGE;
	a->cap.max_recv_sge = MROCE_MAX_SGE;
	a->cap.max_inline_data = MRV_MAX_INLINE;
	q->q.cap = a->cap;
	mrv_wr_init(q);
	ctx_link(ctx, &q->q);
	return qp;
fail:
	free(q->sig);
	free(q);
	errno = err;
	return NULL;
}

MRV_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {};
	struct ibv_qp *qp;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(&ex, attr, sizeof(*attr));	/* ibv_qp_init_attr is ibv_qp_init_attr_ex's head */
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = mrv_create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

MRV_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return qp ? &mrv_qpi(qp)->q.qpx : NULL;
}

MRV_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct mrv_qpi *q;

	if (!qp)
		return EINVAL;
	q = mrv_qpi(qp);
	ctx_unlink(q->q.ctx, &q->q);
	pthread_mutex_lock(&q->q.ctx->lock);
	((struct mrv_cq *)qp->send_cq)->sq_room -= q->mattr.sq_depth;
	pthread_mutex_unlock(&q->q.ctx->lock);
	if (q->q.qp)
		mroce_destroy_qp(q->q.qp);
	if (q->inl_mr)
		mroce_dereg_mr(q->inl_mr);
	free(q->inl);
	free(q->sig);
	free(q->stage);
	pthread_mutex_destroy(&q->post_lock);
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	free(q);
	return 0;
}

/* The attributes a transition must carry (ibv_modify_qp(3), RC), or -1 if it is not one. */
static int required_mask(enum ibv_qp_state cur, enum ibv_qp_state next)
{
	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
		return 0;
	switch (cur) {
	case IBV_QPS_RESET:
		return next == IBV_QPS_INIT ?
		       IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS : -1;
	case IBV_QPS_INIT:
		if (next == IBV_QPS_INIT)
			return 0;
		return next == IBV_QPS_RTR ?
		       IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : -1;
	case IBV_QPS_RTR:
		return next == IBV_QPS_RTS ?
		       IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT |
		       IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT : -1;
	case IBV_QPS_RTS:
		return next == IBV_QPS_RTS ? 0 : -1;
	default:
		return -1;	/* SQD, SQE: mroce has no such states */
	}
}

/* The mroce MTU: the interface's, lowered when the path MTU asked is below what the port offers. */
static uint32_t conn_mtu(const struct mrv_qpi *q, enum ibv_mtu path_mtu)
{
	uint32_t ifmtu = q->q.ctx->dev->mtu, want = 128u << path_mtu;
	uint32_t port = 128u << mrv_mtu_of(ifmtu);	/* what the port reports */

	if (want >= port || want + MRV_HDR_ROOM >= ifmtu)
		return ifmtu;
	return want + (uint32_t)MRV_HDR_ROOM;
}

/* INIT -> RTR: connect the mroce QP to the peer the attributes name (token.c derives the rest). */
static int to_rtr(struct mrv_qpi *q, const struct ibv_qp_attr *attr)
{
	const struct ibv_ah_attr *ah = &attr->ah_attr;
	struct mroce_qp_info me, r = {};
	union ibv_gid lgid;
	uint32_t lqpn = q->q.qpx.qp_base.qp_num;
	int err;

	if (!ah->is_global || !gid_v4mapped(&ah->grh.dgid) || ah->grh.sgid_index != 0 ||
	    (ah->port_num && ah->port_num != 1))
		return EINVAL;
	if (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096)
		return EINVAL;
	/* the low bits are a mroce QPN (1 .. MROCE_MAX_QPS - 1), the rest its queue */
	if (!mrv_qpn_local(attr->dest_qp_num) ||
	    attr->dest_qp_num >> 24)
		return EINVAL;
	if (mroce_qp_state(q->q.qp) != MROCE_QPS_INIT)
		return EINVAL;
	local_gid(q->q.ctx, &lgid);
	err = mroce_qp_local_info(q->q.qp, NULL, AF_INET, &me);
	if (err)
		return -err;
	r.qpn = mrv_qpn_local(attr->dest_qp_num);
	r.psn = mrv_start_psn(q->key, &ah->grh.dgid, attr->dest_qp_num, &lgid, lqpn);
	/* mroce's token is both secrets XORed: choose the peer's half so that it is the derived one */
	r.secret = mrv_conn_token(q->key, &lgid, lqpn, &ah->grh.dgid, attr->dest_qp_num) ^ me.secret;
	r.udp_port = (uint16_t)(MROCE_DEFAULT_PORT + mrv_qpn_queue(attr->dest_qp_num));
	r.family = AF_INET;
	memcpy(&r.addr, ah->grh.dgid.raw, 16);
	r.mtu = conn_mtu(q, attr->path_mtu);
	r.max_rd = MRV_READ_OFFER;
	/* the peer's further planes, when the application told them (mrocedv_set_remote_planes) */
	r.planes = q->rplanes;
	memcpy(r.plane_addr, q->rplane_addr, sizeof(r.plane_addr));
	/*
	 * Our own first PSN now, not at RTS: a QP left in RTR (perftest's
	 * servers) still answers READs, from its own PSN space. Before the
	 * connect, while nothing can have been sent: once connected, a READ
	 * arriving at once would be answered from the PSN mroce drew.
	 */
	err = mroce_qp_set_start(q->q.qp, mrv_start_psn(q->key, &lgid, lqpn, &ah->grh.dgid,
							attr->dest_qp_num));
	if (!err)
		err = mroce_qp_connect(q->q.qp, &r, NULL);
	if (err)
		return mrv_errno(err);
	q->mtu_bytes = r.mtu;
	q->ah = *ah;
	q->q.dgid = ah->grh.dgid;
	q->q.dest_qpn = attr->dest_qp_num;
	q->q.rq_psn = attr->rq_psn & 0xffffff;
	q->q.path_mtu = attr->path_mtu;
	q->q.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	q->q.min_rnr_timer = attr->min_rnr_timer;
	return 0;
}

/* RTR -> RTS: the READ limit (the first PSN was set at RTR). */
static int to_rts(struct mrv_qpi *q, const struct ibv_qp_attr *attr)
{
	mroce_qp_set_rd_limit(q->q.qp, attr->max_rd_atomic ? attr->max_rd_atomic : 1);
	q->q.sq_psn = attr->sq_psn & 0xffffff;
	q->q.max_rd_atomic = attr->max_rd_atomic;
	return 0;
}

/* Back to RESET: a fresh mroce QP (a failed one's QPN is gone), so a new verbs QPN too. */
static int to_reset(struct mrv_qpi *q)
{
	struct mroce_qp *old = q->q.qp;
	uint32_t old_qpn = q->mqpn;
	int err;

	if (mroce_qp_state(old) == MROCE_QPS_INIT && q->state != IBV_QPS_ERR)
		return 0;	/* never connected: as good as new */
	pthread_mutex_lock(&q->post_lock);
	err = make_mroce_qp(q);
	if (!err) {
		ctx_renumber(q->q.ctx, &q->q, old_qpn);
		mroce_destroy_qp(old);
		__atomic_store_n(&q->sig_head, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&q->sig_tail, 0, __ATOMIC_RELEASE);
	} else {
		q->q.qp = old;
	}
	pthread_mutex_unlock(&q->post_lock);
	return err ? -err : 0;
}

MRV_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct mrv_qpi *q;
	enum ibv_qp_state cur, next;
	int req, err = 0;

	if (!qp || !attr)
		return EINVAL;
	q = mrv_qpi(qp);
	pthread_mutex_lock(&qp->mutex);
	cur = q->state;
	if (cur != IBV_QPS_RESET && cur != IBV_QPS_ERR && mroce_qp_state(q->q.qp) == MROCE_QPS_ERR)
		cur = q->state = IBV_QPS_ERR;	/* the transport failed it meanwhile */
	next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur)
		err = EINVAL;
	req = required_mask(cur, next);
	if (!err && (req < 0 || (mask & req) != req))
		err = EINVAL;
	if (!err && (mask & IBV_QP_PORT) && attr->port_num != 1)
		err = EINVAL;
	if (!err && (mask & IBV_QP_PKEY_INDEX) && attr->pkey_index != 0)
		err = EINVAL;
	if (!err && (mask & IBV_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
		err = EINVAL;
	if (err)
		goto out;
	if (next == IBV_QPS_ERR) {
		if (mroce_qp_state(q->q.qp) != MROCE_QPS_ERR)
			mroce_qp_set_error(q->q.qp);
	} else if (next == IBV_QPS_RESET) {
		err = to_reset(q);
	} else if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
		err = to_rtr(q, attr);
	} else if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS) {
		err = to_rts(q, attr);
	}
	if (err)
		goto out;
	/* the attributes that only are remembered (query_qp); mroce keeps its own timers */
	if (mask & IBV_QP_ACCESS_FLAGS)
		q->q.access = attr->qp_access_flags;
	if (mask & IBV_QP_PORT)
		q->port_num = attr->port_num;
	if (mask & IBV_QP_PKEY_INDEX)
		q->pkey_index = attr->pkey_index;
	if (mask & IBV_QP_TIMEOUT)
		q->q.timeout = attr->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		q->q.retry_cnt = attr->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		q->q.rnr_retry = attr->rnr_retry;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && next != IBV_QPS_RTR)
		q->q.min_rnr_timer = attr->min_rnr_timer;
	q->state = next;
	qp->state = next;
out:
	pthread_mutex_unlock(&qp->mutex);
	return err;
}

MRV_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			    struct ibv_qp_init_attr *init)
{
	struct mrv_qpi *q;

	(void)mask;	/* everything is cheap: fill it all */
	if (!qp || !attr || !init)
		return EINVAL;
	q = mrv_qpi(qp);
	pthread_mutex_lock(&qp->mutex);
	if (q->state != IBV_QPS_RESET && q->state != IBV_QPS_ERR &&
	    mroce_qp_state(q->q.qp) == MROCE_QPS_ERR)
		q->state = qp->state = IBV_QPS_ERR;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = attr->cur_qp_state = q->state;
	attr->path_mtu = q->q.path_mtu;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->qkey = 0;
	attr->rq_psn = q->q.rq_psn;
	attr->sq_psn = q->q.sq_psn;
	attr->dest_qp_num = q->q.dest_qpn;
	attr->qp_access_flags = q->q.access;
	attr->cap = q->q.cap;
	attr->ah_attr = q->ah;
	attr->pkey_index = q->pkey_index;
	attr->max_rd_atomic = q->q.max_rd_atomic;
	attr->max_dest_rd_atomic = q->q.max_dest_rd_atomic;
	attr->min_rnr_timer = q->q.min_rnr_timer;
	attr->port_num = q->port_num;
	attr->timeout = q->q.timeout;
	attr->retry_cnt = q->q.retry_cnt;
	attr->rnr_retry = q->q.rnr_retry;
	memset(init, 0, sizeof(*init));
	init->qp_context = qp->qp_context;
	init->send_cq = qp->send_cq;
	init->recv_cq = qp->recv_cq;
	init->cap = q->q.cap;
	init->qp_type = IBV_QPT_RC;
	init->sq_sig_all = q->q.sq_sig_all;
	pthread_mutex_unlock(&qp->mutex);
	return 0;
}

/* mroce places a message's packets in any order: no in-order guarantee to offer. */
MRV_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0;
}
