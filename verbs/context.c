// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A context: what ibv_open_device() returns. Applications built against
 * rdma-core 44's verbs.h call many verbs as inline functions that go
 * through context->ops (poll, notify, post) or through struct
 * verbs_context, which sits right before the ibv_context and is found by
 * abi_compat == __VERBS_ABI_IS_EXTENDED; sz tells them which of its ops
 * exist. An op left NULL makes its inline wrapper return EOPNOTSUPP (or
 * fall back to a legacy verb), which is how extended features mroce does
 * not have are refused.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "mrv.h"

/* Until the QP helper's post.c / qp.c is linked in: QPs are not there. */
__attribute__((weak)) int mrv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
					struct ibv_send_wr **bad_wr)
{
	(void)qp;
	if (bad_wr)
		*bad_wr = wr;
	return EOPNOTSUPP;
}

__attribute__((weak)) int mrv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
					struct ibv_recv_wr **bad_wr)
{
	(void)qp;
	if (bad_wr)
		*bad_wr = wr;
	return EOPNOTSUPP;
}

__attribute__((weak)) struct ibv_qp *mrv_create_qp_ex(struct ibv_context *ibctx,
						       struct ibv_qp_init_attr_ex *attr)
{
	(void)ibctx;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

int mrv_ctx_init(struct mrv_context *ctx)
{
	struct verbs_context *v = &ctx->vctx;
	struct ibv_context *c = &v->context;

	/* each read takes one event: ibv_get_async_event() blocks in read() */
	ctx->async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ctx->async_fd < 0)
		return errno;
	pthread_mutex_init(&ctx->lock, NULL);

	c->device = &ctx->dev->ibdev;
	c->cmd_fd = -1;			/* no kernel: nothing to talk to */
	c->async_fd = ctx->async_fd;
	c->num_comp_vectors = 1;
	pthread_mutex_init(&c->mutex, NULL);
	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->ops.poll_cq = mrv_poll_cq_op;
	c->ops.req_notify_cq = mrv_req_notify_cq_op;
	c->ops.post_send = mrv_post_send;
	c->ops.post_recv = mrv_post_recv;
	/* alloc_mw, bind_mw, dealloc_mw, post_srq_recv: NULL, no memory windows or SRQs */

	v->sz = sizeof(*v);
	v->query_port = mrv_query_port_op;
	v->query_device_ex = mrv_query_device_ex_op;
	v->create_cq_ex = mrv_create_cq_ex_op;
	v->create_qp_ex = mrv_create_qp_ex;
	return 0;
}

void mrv_ctx_fini(struct mrv_context *ctx)
{
	close(ctx->async_fd);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->vctx.context.mutex);
}

/* ---- asynchronous events ------------------------------------------------ */

#define AEV_SLOTS	(sizeof(((struct mrv_context *)0)->aev) / sizeof(struct ibv_async_event))

static void async_push(struct mrv_context *ctx, const struct ibv_async_event *ev)
{
	uint64_t one = 1;

	pthread_mutex_lock(&ctx->lock);
	/* full: the application reads none; the latest are the ones lost */
	if (ctx->aev_tail - ctx->aev_head < AEV_SLOTS) {
		ctx->aev[ctx->aev_tail++ % AEV_SLOTS] = *ev;
		if (write(ctx->async_fd, &one, sizeof(one)) < 0) {
			/* an eventfd counter cannot overflow at 64 events */
		}
	}
	pthread_mutex_unlock(&ctx->lock);
}

void mrv_async_event(struct mrv_context *ctx, struct ibv_qp *qp, enum ibv_event_type type)
{
	struct ibv_async_event ev = { .element.qp = qp, .event_type = type };

	async_push(ctx, &ev);
}

void mrv_async_event_cq(struct mrv_context *ctx, struct ibv_cq *cq, enum ibv_event_type type)
{
	struct ibv_async_event ev = { .element.cq = cq, .event_type = type };

	async_push(ctx, &ev);
}

MRV_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct mrv_context *ctx;
	uint64_t v;

	if (!context || !event) {
		errno = EINVAL;
		return -1;
	}
	ctx = mrv_ctx(context);
	/* blocks like libibverbs' read of the kernel's async fd; O_NONBLOCK on it: EAGAIN */
	if (read(ctx->async_fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	pthread_mutex_lock(&ctx->lock);
	*event = ctx->aev[ctx->aev_head++ % AEV_SLOTS];
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/* Counted where ibv_destroy_qp / ibv_destroy_cq wait for them, as libibverbs does. */
MRV_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	if (!event)
		return;
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_broadcast(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		break;
	}
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR: case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST: case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_broadcast(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		break;
	}
	default:
		break;	/* port and device events: nothing waits for them */
	}
}

/* ---- fork --------------------------------------------------------------- */

/*
 * No page is pinned for a device to DMA into: the library copies between
 * registered memory and its own frames, so a fork() child never takes a
 * page the transport writes. Nothing to set up, and nothing needed.
 */
MRV_EXPORT int ibv_fork_init(void)
{
	return 0;
}

MRV_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}
