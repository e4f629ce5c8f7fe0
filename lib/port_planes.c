// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One port over several ports, receiving from all of them in turn:
 * - planes (protocol.md, "Planes"): each plane is a port of its own (an
 *   interface's AF_XDP sockets, or a simulated wire), and this one sends on
 *   the plane the engine selected last. The engine picks a frame's plane
 *   before it asks for the buffer; a buffer goes back to (or out of) the
 *   plane it came from.
 * - an interface's receive queues (docs/datapath.md, "Queues"): a socket
 *   per queue, each with its own UMEM, and this one sends on the first.
 *   One thread, the device's, polls them all under dev->lock, so a QP's
 *   frames reach its engine from any queue without a lock of their own.
 */
#define _GNU_SOURCE	/* ppoll */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "mroce/dp_maps.h"
#include "port.h"

struct planes_port {
	__u32			n;
	__u32			cur;		/* plane of the next tx_buf() */
	__u32			buf_plane;	/* plane the last buffer handed out came from */
	__u32			rx_next;	/* plane the next receive round starts at */
	int			epfd;		/* queues: readable when any member is */
	const struct mroce_port_ops **ops;
	void			**port;
};

static void *pl_tx_buf(void *port, __u32 *cap)
{
	struct planes_port *pp = port;

	pp->buf_plane = pp->cur;
	return pp->ops[pp->cur]->tx_buf(pp->port[pp->cur], cap);
}

static void pl_tx_send(void *port, void *buf, __u32 len)
{
	struct planes_port *pp = port;

	pp->ops[pp->buf_plane]->tx_send(pp->port[pp->buf_plane], buf, len);
}

static void pl_tx_flush(void *port)
{
	struct planes_port *pp = port;

	for (__u32 i = 0; i < pp->n; i++)
		pp->ops[i]->tx_flush(pp->port[i]);
}

/* Every plane in turn, the first one moving round: none starves the others. */
static int pl_rx_burst(void *port, mroce_rx_cb cb, void *ctx, int budget)
{
	struct planes_port *pp = port;
	int done = 0;

	for (__u32 k = 0; k < pp->n && done < budget; k++) {
		__u32 i = (pp->rx_next + k) % pp->n;

		done += pp->ops[i]->rx_burst(pp->port[i], cb, ctx, budget - done);
	}
	pp->rx_next = (pp->rx_next + 1) % pp->n;
	return done;
}

static void pl_wait(void *port, int timeout_us, int wake_fd)
{
	struct planes_port *pp = port;
	struct pollfd pfd[MROCE_MAX_PLANES + 1];
	struct timespec ts;
	nfds_t n = 0;

	for (__u32 i = 0; i < pp->n; i++) {
		int fd = pp->ops[i]->poll_fd ? pp->ops[i]->poll_fd(pp->port[i]) : -1;

		if (fd < 0) {	/* a plane that cannot be polled: wait on the first alone */
			pp->ops[0]->wait(pp->port[0], timeout_us, wake_fd);
			return;
		}
		pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (pp->ops[i]->tx_pending && pp->ops[i]->tx_pending(pp->port[i]) &&
		    timeout_us > MROCE_TX_RETRY_US)
			timeout_us = MROCE_TX_RETRY_US;
	}
	pfd[n++] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
	ts = (struct timespec){ .tv_sec = timeout_us / 1000000,
				.tv_nsec = (timeout_us % 1000000) * 1000L };
	ppoll(pfd, n, &ts, NULL);
}

static __u64 pl_now(void *port)
{
	struct planes_port *pp = port;

	return pp->ops[0]->now_us(pp->port[0]);
}

static void pl_select(void *port, __u32 plane)
{
	struct planes_port *pp = port;

	pp->cur = plane < pp->n ? plane : 0;
}

/* Each plane's socket counters, summed (a port's stats op sets its fields). */
static void pl_stats(void *port, struct mroce_dev_stats *s)
{
	struct planes_port *pp = port;

	s->xsk_rx_dropped = s->xsk_rx_invalid_descs = s->xsk_tx_invalid_descs = 0;
	s->xsk_rx_ring_full = s->xsk_rx_fill_ring_empty = s->xsk_tx_ring_empty = 0;
	for (__u32 i = 0; i < pp->n; i++) {
		struct mroce_dev_stats k = {};

		if (!pp->ops[i]->stats)
			continue;
		pp->ops[i]->stats(pp->port[i], &k);
		s->xsk_rx_dropped += k.xsk_rx_dropped;
		s->xsk_rx_invalid_descs += k.xsk_rx_invalid_descs;
		s->xsk_tx_invalid_descs += k.xsk_tx_invalid_descs;
		s->xsk_rx_ring_full += k.xsk_rx_ring_full;
		s->xsk_rx_fill_ring_empty += k.xsk_rx_fill_ring_empty;
		s->xsk_tx_ring_empty += k.xsk_tx_ring_empty;
	}
}

static __u64 pl_plane_drops(void *port, __u32 plane)
{
	struct planes_port *pp = port;

	if (plane >= pp->n || !pp->ops[plane]->plane_drops)
		return 0;
	return pp->ops[plane]->plane_drops(pp->port[plane], 0);
}

static void pl_close(void *port)
{
	struct planes_port *pp = port;

	for (__u32 i = 0; i < pp->n; i++)
		if (pp->ops[i]->close)
			pp->ops[i]->close(pp->port[i]);
	if (pp->epfd >= 0)
		close(pp->epfd);
	free(pp->ops);
	free(pp->port);
	free(pp);
}

/* Queues: everything that sends goes through the first member (it owns the transmit pool). */
static void q_tx_kick(void *port)
{
	struct planes_port *pp = port;

	pp->ops[0]->tx_kick(pp->port[0]);
}

static bool q_tx_pending(void *port)
{
	struct planes_port *pp = port;

	return pp->ops[0]->tx_pending(pp->port[0]);
}

static bool q_tx_can_ref(void *port, const void *payload, __u32 len)
{
	struct planes_port *pp = port;

	return pp->ops[0]->tx_can_ref(pp->port[0], payload, len);
}

static void q_tx_send_ref(void *port, void *buf, __u32 hdr_len, const void *payload, __u32 len)
{
	struct planes_port *pp = port;

	pp->ops[0]->tx_send_ref(pp->port[0], buf, hdr_len, payload, len);
}

static int q_pool_alloc(void *port, size_t len, void **addr)
{
	struct planes_port *pp = port;

	return pp->ops[0]->pool_alloc(pp->port[0], len, addr);
}

static int q_pool_free(void *port, void *addr)
{
	struct planes_port *pp = port;

	return pp->ops[0]->pool_free(pp->port[0], addr);
}

static int q_poll_fd(void *port)
{
	return ((struct planes_port *)port)->epfd;
}

static void q_wait(void *port, int timeout_us, int wake_fd)
{
	struct planes_port *pp = port;
	struct pollfd pfd[2] = { { .fd = pp->epfd, .events = POLLIN },
				 { .fd = wake_fd, .events = POLLIN } };
	struct timespec ts;

	if (q_tx_pending(pp) && timeout_us > MROCE_TX_RETRY_US)
		timeout_us = MROCE_TX_RETRY_US;
	ts = (struct timespec){ .tv_sec = timeout_us / 1000000,
				.tv_nsec = (timeout_us % 1000000) * 1000L };
	ppoll(pfd, 2, &ts, NULL);
}

/* One interface's drops, whichever queue's port is asked. */
static __u64 q_plane_drops(void *port, __u32 plane)
{
	struct planes_port *pp = port;

	(void)plane;
	return pp->ops[0]->plane_drops ? pp->ops[0]->plane_drops(pp->port[0], 0) : 0;
}

static const struct mroce_port_ops planes_ops = {
	.tx_buf = pl_tx_buf, .tx_send = pl_tx_send, .tx_flush = pl_tx_flush,
	.rx_burst = pl_rx_burst, .wait = pl_wait, .now_us = pl_now, .close = pl_close,
	.stats = pl_stats, .select_plane = pl_select, .plane_drops = pl_plane_drops,
};

static const struct mroce_port_ops queues_ops = {
	.tx_buf = pl_tx_buf, .tx_send = pl_tx_send, .tx_flush = pl_tx_flush,
	.tx_kick = q_tx_kick, .tx_pending = q_tx_pending,
	.tx_can_ref = q_tx_can_ref, .tx_send_ref = q_tx_send_ref,
	.pool_alloc = q_pool_alloc, .pool_free = q_pool_free,
	.rx_burst = pl_rx_burst, .wait = q_wait, .now_us = pl_now, .close = pl_close,
	.stats = pl_stats, .poll_fd = q_poll_fd, .plane_drops = q_plane_drops,
};

static int group_new(__u32 n, const struct mroce_port_ops *const *ops, void *const *ports,
		     struct planes_port **out)
{
	struct planes_port *pp = calloc(1, sizeof(*pp));

	if (pp) {
		pp->ops = calloc(n, sizeof(*pp->ops));
		pp->port = calloc(n, sizeof(*pp->port));
	}
	if (!pp || !pp->ops || !pp->port) {
		if (pp) {
			free(pp->ops);
			free(pp->port);
		}
		free(pp);
		return -ENOMEM;
	}
	pp->n = n;
	pp->epfd = -1;
	for (__u32 i = 0; i < n; i++) {
		pp->ops[i] = ops[i];
		pp->port[i] = ports[i];
	}
	*out = pp;
	return 0;
}

int mroce_port_planes_new(__u32 n, const struct mroce_port_ops *const *ops, void *const *ports,
			  const struct mroce_port_ops **ops_out, void **port_out)
{
	struct planes_port *pp;
	int err;

	if (n < 2 || n > MROCE_MAX_PLANES)
		return -EINVAL;
	err = group_new(n, ops, ports, &pp);
	if (err)
		return err;
	*ops_out = &planes_ops;
	*port_out = pp;
	return 0;
}

int mroce_port_queues_new(__u32 n, const struct mroce_port_ops *ops, void *const *ports,
			  const struct mroce_port_ops **ops_out, void **port_out)
{
	const struct mroce_port_ops **all;
	struct planes_port *pp;
	int err;

	if (n < 2 || n > MROCE_MAX_QUEUES || !ops->poll_fd || !ops->tx_kick || !ops->tx_pending ||
	    !ops->tx_can_ref || !ops->tx_send_ref || !ops->pool_alloc || !ops->pool_free)
		return -EINVAL;
	all = calloc(n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++)
		all[i] = ops;
	err = group_new(n, all, ports, &pp);
	free(all);
	if (err)
		return err;
	pp->epfd = epoll_create1(EPOLL_CLOEXEC);
	for (__u32 i = 0; pp->epfd >= 0 && i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		if (epoll_ctl(pp->epfd, EPOLL_CTL_ADD, ops->poll_fd(ports[i]), &ev))
			err = -errno;
	}
	if (pp->epfd < 0 || err) {
		err = err ? err : -errno;
		if (pp->epfd >= 0)
			close(pp->epfd);
		free(pp->ops);
		free(pp->port);
		free(pp);
		return err;
	}
	*ops_out = &queues_ops;
	*port_out = pp;
	return 0;
}
