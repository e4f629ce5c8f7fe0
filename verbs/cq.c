// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Completion queues: a mroce CQ each, polled through context->ops.poll_cq
 * (ibv_poll_cq is an inline of verbs.h) or through the ibv_cq_ex
 * start_poll/next_poll/read_* pointers (ibv_create_cq_ex, which perftest
 * uses). The first CQ, like the first PD, opens the mroce device.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mrv.h"

#define cq_of(ibcq)	mrv_of(ibcq, struct mrv_cq, ibcq)
#define cqx_of(cqx_)	mrv_of(cqx_, struct mrv_cq, cqx)

/* the ibv_cq_ex completion fields mroce can fill (the rest are UD, timestamps, tags) */
#define MRV_CQ_WC_FLAGS	(IBV_WC_STANDARD_FLAGS)

static int cq_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr);
static int cq_next_poll(struct ibv_cq_ex *cqx);
static void cq_end_poll(struct ibv_cq_ex *cqx);
static void cq_set_readers(struct mrv_cq *cq);

static struct mrv_cq *cq_make(struct ibv_context *context, uint32_t cqe, void *cq_context,
			      struct ibv_comp_channel *channel, uint32_t comp_vector, int *errp)
{
	struct mrv_context *ctx;
	struct mrv_cq *cq;
	int err;

	if (!context || !cqe || cqe > MRV_MAX_CQE ||
	    comp_vector >= (uint32_t)context->num_comp_vectors ||
	    (channel && channel->context != context)) {
		*errp = EINVAL;
		return NULL;
	}
	ctx = mrv_ctx(context);
	err = mrv_dev_get(ctx);
	if (err) {
		*errp = -err;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		*errp = ENOMEM;
		return NULL;
	}
	/*
	 * The mroce CQ also holds the successes of unsignaled sends until a
	 * poll drops them (mrv_qp_wc_hidden), up to a QP's send queue each: an
	 * application sizes cqe for its signaled completions only. Room for 4x
	 * and at least 16384 (32 bytes each, pages touched only as the ring
	 * goes round); mroce_cqe says how much, for the QP code to check.
	 */
	cq->mroce_cqe = cqe > MRV_MAX_CQE / 4 ? MRV_MAX_CQE : cqe * 4;
	if (cq->mroce_cqe < 16384)
		cq->mroce_cqe = 16384;
	err = mroce_create_cq(ctx->mdev, cq->mroce_cqe, &cq->cq);
	if (err) {
		free(cq);
		*errp = mrv_errno(err);
		return NULL;
	}
	cq->ctx = ctx;
	cq->ibcq.context = context;
	cq->ibcq.cq_context = cq_context;
	cq->ibcq.cqe = (int)cqe;
	pthread_mutex_init(&cq->ibcq.mutex, NULL);
	pthread_cond_init(&cq->ibcq.cond, NULL);
	if (channel) {
		cq->channel = mrv_of(channel, struct mrv_channel, ch);
		cq->ibcq.channel = channel;
		err = mrv_channel_add(cq);
		if (err) {
			mroce_destroy_cq(cq->cq);
			pthread_cond_destroy(&cq->ibcq.cond);
			pthread_mutex_destroy(&cq->ibcq.mutex);
			free(cq);
			*errp = err;
			return NULL;
		}
	}
	/* without a channel nobody waits on the fd: spare the eventfd's two syscalls */
	mroce_cq_set_notify(cq->cq, channel != NULL);
	return cq;
}

MRV_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
					struct ibv_comp_channel *channel, int comp_vector)
{
	struct mrv_cq *cq;
	int err;

	if (cqe < 1 || comp_vector < 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_make(context, (uint32_t)cqe, cq_context, channel, (uint32_t)comp_vector, &err);
	if (!cq) {
		errno = err;
		return NULL;
	}
	cq_set_readers(cq);
	return &cq->ibcq;
}

struct ibv_cq_ex *mrv_create_cq_ex_op(struct ibv_context *context,
				      struct ibv_cq_init_attr_ex *attr)
{
	struct mrv_cq *cq;
	int err;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)MRV_CQ_WC_FLAGS) {
		errno = EOPNOTSUPP;	/* timestamps, VLAN, flow tags, tag matching */
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		errno = EOPNOTSUPP;	/* parent domains */
		return NULL;
	}
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EINVAL;
		return NULL;
	}
	/* single-threaded use and overrun checks are hints mroce can ignore */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
				       IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_make(context, attr->cqe, attr->cq_context, attr->channel, attr->comp_vector, &err);
	if (!cq) {
		errno = err;
		return NULL;
	}
	cq_set_readers(cq);
	return &cq->cqx;
}

/* A QP of the context sends or receives through it (ctx->qps, the QP code's list). */
static bool cq_in_use(struct mrv_cq *cq)
{
	struct mrv_context *ctx = cq->ctx;
	bool busy = false;

	pthread_mutex_lock(&ctx->lock);
	for (struct mrv_qp *qp = ctx->qps; qp && !busy; qp = qp->next)
		busy = qp->qpx.qp_base.send_cq == &cq->ibcq || qp->qpx.qp_base.recv_cq == &cq->ibcq;
	pthread_mutex_unlock(&ctx->lock);
	return busy;
}

/* EBUSY while a QP uses it; first waits for every handed-out event's ack (as libibverbs). */
MRV_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct mrv_cq *cq;
	int err;

	if (!ibcq)
		return EINVAL;
	cq = cq_of(ibcq);
	if (cq_in_use(cq))
		return EBUSY;
	pthread_mutex_lock(&ibcq->mutex);
	/* ... and the CQ_ERR event, if one was queued (libibverbs waits for both) */
	while (ibcq->comp_events_completed != cq->comp_events_reported ||
	       ibcq->async_events_completed != (uint32_t)__atomic_load_n(&cq->overflowed,
									  __ATOMIC_ACQUIRE))
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	if (cq->channel) {
		mrv_channel_del(cq);
		cq->armed = false;
	}
	err = mroce_destroy_cq(cq->cq);
	if (err) {
		/* libmroce still sees a QP on it (checked above, so only if one came
		 * meanwhile): back on its channel, disarmed (the application re-arms) */
		if (cq->channel && mrv_channel_add(cq) == 0)
			cq->armed = false;
		pthread_mutex_unlock(&ibcq->mutex);
		return mrv_errno(err);
	}
	pthread_mutex_unlock(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	pthread_mutex_destroy(&ibcq->mutex);
	free(cq);
	return 0;
}

/* Overflowed (mroce_poll_cq: -EOVERFLOW): say so once, as a device's CQ error event. */
static void cq_failed(struct mrv_cq *cq)
{
	if (!__atomic_exchange_n(&cq->overflowed, true, __ATOMIC_ACQ_REL))
		mrv_async_event_cq(cq->ctx, &cq->ibcq, IBV_EVENT_CQ_ERR);
}

/*
 * A completion the application sees: not one of a QP destroyed since (its
 * verbs QP is gone), not the success of an unsignaled send. Every
 * completion of a live QP goes through mrv_qp_wc_hidden(), which counts the
 * QP's send queue down by it.
 */

static bool wc_visible(struct mrv_cq *cq, const struct mroce_wc *wc, struct mrv_qp **qpp)
{
	struct mrv_qp *qp = mrv_qp_by_mroce_qpn(cq->ctx, wc->qp_num);

	*qpp = qp;
	return qp && !mrv_qp_wc_hidden(qp, wc);
}

int mrv_poll_cq_op(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct mrv_cq *cq = cq_of(ibcq);
	struct mroce_wc buf[32];
	int total = 0;

	if (num_entries < 0 || (num_entries && !wc))
		return -EINVAL;
	while (total < num_entries) {
		int want = num_entries - total < 32 ? num_entries - total : 32;
		int got = mroce_poll_cq(cq->cq, want, buf);

		if (got < 0) {	/* overflowed: completions were lost, the CQ is in error */
			cq_failed(cq);
			return total ? total : -mrv_errno(got);
		}
		for (int i = 0; i < got; i++) {
			struct mrv_qp *qp;

			if (wc_visible(cq, &buf[i], &qp))
				mrv_wc_fill(cq, &buf[i], &wc[total++]);
		}
		if (got < want)
			break;
	}
	return total;
}

/*
 * solicited_only is taken as any completion: mroce's completions do not
 * say whether the message was solicited, and an extra event is harmless
 * (applications poll the CQ after each), a missing one would hang them.
 */
int mrv_req_notify_cq_op(struct ibv_cq *ibcq, int solicited_only)
{
	struct mrv_cq *cq = cq_of(ibcq);
	int err;

	(void)solicited_only;
	if (!cq->channel)
		return 0;	/* nothing to notify: as a device without an event queue */
	pthread_mutex_lock(&ibcq->mutex);
	err = mrv_channel_arm(cq);
	pthread_mutex_unlock(&ibcq->mutex);
	return err;
}

/* mroce cannot grow a ring the engine pushes into; a size it already has is fine. */
MRV_EXPORT int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	if (!ibcq || cqe < 1)
		return EINVAL;
	if (cqe <= ibcq->cqe)
		return 0;
	return EOPNOTSUPP;
}

/* ---- ibv_cq_ex: start_poll / next_poll / end_poll and the readers --------- */

static int cq_next(struct mrv_cq *cq)
{
	for (;;) {
		int got = mroce_poll_cq(cq->cq, 1, &cq->cur);

		if (got < 0) {
			cq_failed(cq);
			return mrv_errno(got);
		}
		if (got == 0)
			return ENOENT;
		if (wc_visible(cq, &cq->cur, &cq->cur_qp))
			break;
	}
	cq->cqx.status = mrv_wc_status(cq->cur.status);
	cq->cqx.wr_id = cq->cur.wr_id;
	return 0;
}

static int cq_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	if (attr && attr->comp_mask)
		return EINVAL;
	return cq_next(cqx_of(cqx));
}

static int cq_next_poll(struct ibv_cq_ex *cqx)
{
	return cq_next(cqx_of(cqx));
}

static void cq_end_poll(struct ibv_cq_ex *cqx)
{
	(void)cqx;	/* each completion was taken off the ring as it was read */
}

static enum ibv_wc_opcode rd_opcode(struct ibv_cq_ex *cqx)
{
	return mrv_wc_opcode(cqx_of(cqx)->cur.opcode);
}

static uint32_t rd_zero32(struct ibv_cq_ex *cqx)
{
	(void)cqx;
	return 0;
}

static uint8_t rd_zero8(struct ibv_cq_ex *cqx)
{
	(void)cqx;
	return 0;
}

static uint32_t rd_byte_len(struct ibv_cq_ex *cqx)
{
	return cqx_of(cqx)->cur.byte_len;
}

static __be32 rd_imm_data(struct ibv_cq_ex *cqx)
{
	return htobe32(cqx_of(cqx)->cur.imm_data);
}

static uint32_t rd_qp_num(struct ibv_cq_ex *cqx)
{
	struct mrv_cq *cq = cqx_of(cqx);

	return mrv_qpn(cq->ctx->queue, cq->cur.qp_num);
}

static unsigned int rd_wc_flags(struct ibv_cq_ex *cqx)
{
	return (cqx_of(cqx)->cur.wc_flags & MROCE_WC_WITH_IMM) ? IBV_WC_WITH_IMM : 0;
}

static void cq_set_readers(struct mrv_cq *cq)
{
	struct ibv_cq_ex *x = &cq->cqx;

	x->start_poll = cq_start_poll;
	x->next_poll = cq_next_poll;
	x->end_poll = cq_end_poll;
	x->read_opcode = rd_opcode;
	x->read_vendor_err = rd_zero32;
	x->read_byte_len = rd_byte_len;
	x->read_imm_data = rd_imm_data;
	x->read_qp_num = rd_qp_num;
	x->read_src_qp = rd_zero32;	/* UD only */
	x->read_wc_flags = rd_wc_flags;
	x->read_slid = rd_zero32;	/* no LIDs on Ethernet */
	x->read_sl = rd_zero8;
	x->read_dlid_path_bits = rd_zero8;
}
