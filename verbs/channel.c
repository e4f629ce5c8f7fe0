// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Completion channels. A channel's fd is an epoll fd over the CQ fds
 * (mroce_cq_fd: readable while completions wait) of its CQs, each added
 * EPOLLONESHOT and disabled: ibv_req_notify_cq() enables it, so an armed CQ
 * that holds completions (already, or when the next arrives) makes the
 * channel readable and yields exactly one event; it stays quiet until the
 * next arm. Applications may poll()/select() the fd, or set O_NONBLOCK on
 * it, as with libibverbs' kernel channel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "mrv.h"

MRV_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct mrv_channel *ch;

	if (!context) {
		errno = EINVAL;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	ch->ch.fd = epoll_create1(EPOLL_CLOEXEC);
	if (ch->ch.fd < 0) {
		int err = errno;

		free(ch);
		errno = err;
		return NULL;
	}
	ch->ch.context = context;
	return &ch->ch;
}

/* EBUSY while a CQ uses it. */
MRV_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct mrv_channel *ch;
	struct ibv_context *c;

	if (!channel)
		return EINVAL;
	ch = mrv_of(channel, struct mrv_channel, ch);
	c = channel->context;
	pthread_mutex_lock(&c->mutex);
	if (ch->refcnt) {
		pthread_mutex_unlock(&c->mutex);
		return EBUSY;
	}
	pthread_mutex_unlock(&c->mutex);
	close(channel->fd);
	free(ch);
	return 0;
}

/* A new CQ on the channel: in its set, disabled until armed. 0 or an errno. */
int mrv_channel_add(struct mrv_cq *cq)
{
	struct mrv_channel *ch = cq->channel;
	struct epoll_event ev = { .events = EPOLLONESHOT, .data.ptr = cq };
	struct ibv_context *c = ch->ch.context;

	if (epoll_ctl(ch->ch.fd, EPOLL_CTL_ADD, mroce_cq_fd(cq->cq), &ev) < 0)
		return errno;
	pthread_mutex_lock(&c->mutex);
	ch->refcnt++;
	ch->ch.refcnt = ch->refcnt;
	pthread_mutex_unlock(&c->mutex);
	return 0;
}

void mrv_channel_del(struct mrv_cq *cq)
{
	struct mrv_channel *ch = cq->channel;
	struct ibv_context *c = ch->ch.context;

	epoll_ctl(ch->ch.fd, EPOLL_CTL_DEL, mroce_cq_fd(cq->cq), NULL);
	pthread_mutex_lock(&c->mutex);
	ch->refcnt--;
	ch->ch.refcnt = ch->refcnt;
	pthread_mutex_unlock(&c->mutex);
}

/* cq->ibcq.mutex held: the CQ's next completion (or one waiting) wakes the channel once. */
int mrv_channel_arm(struct mrv_cq *cq)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = cq };

	if (epoll_ctl(cq->channel->ch.fd, EPOLL_CTL_MOD, mroce_cq_fd(cq->cq), &ev) < 0)
		return errno;
	cq->armed = true;
	return 0;
}

MRV_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
				void **cq_context)
{
	struct epoll_event ev;
	int flags;

	if (!channel || !cq || !cq_context) {
		errno = EINVAL;
		return -1;
	}
	/* the application's O_NONBLOCK on the fd means what it means on a kernel channel */
	flags = fcntl(channel->fd, F_GETFL);
	if (flags < 0)
		return -1;
	for (;;) {
		struct mrv_cq *c;
		int n = epoll_wait(channel->fd, &ev, 1, (flags & O_NONBLOCK) ? 0 : -1);

		if (n < 0)
			return -1;	/* EINTR as a read() of the kernel's fd would be */
		if (n == 0) {
			errno = EAGAIN;
			return -1;
		}
		c = ev.data.ptr;
		pthread_mutex_lock(&c->ibcq.mutex);
		if (!c->armed) {	/* EPOLLONESHOT reports only armed CQs: never, kept safe */
			pthread_mutex_unlock(&c->ibcq.mutex);
			continue;
		}
		c->armed = false;
		c->comp_events_reported++;
		pthread_mutex_unlock(&c->ibcq.mutex);
		*cq = &c->ibcq;
		*cq_context = c->ibcq.cq_context;
		return 0;
	}
}

/* ibv_destroy_cq() waits until every event handed out is acknowledged. */
MRV_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (!cq)
		return;
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
