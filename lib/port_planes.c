// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One port over several planes (protocol.md, "Planes"): each plane is a
 * port of its own (an interface's AF_XDP socket, or a simulated wire), and
 * this one sends on the plane the engine selected last and receives from
 * all of them in turn. The engine picks a frame's plane before it asks
 * for the buffer; a buffer goes back to (or out of) the plane it came from.
 */
#define _GNU_SOURCE	/* ppoll */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "port.h"

struct planes_port {
	__u32			n;
	__u32			cur;		/* plane of the next tx_buf() */
	__u32			buf_plane;	/* plane the last buffer handed out came from */
	__u32			rx_next;	/* plane the next receive round starts at */
	const struct mroce_port_ops *ops[MROCE_MAX_PLANES];
	void			*port[MROCE_MAX_PLANES];
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
	free(pp);
}

static const struct mroce_port_ops planes_ops = {
	.tx_buf = pl_tx_buf, .tx_send = pl_tx_send, .tx_flush = pl_tx_flush,
	.rx_burst = pl_rx_burst, .wait = pl_wait, .now_us = pl_now, .close = pl_close,
	.stats = pl_stats, .select_plane = pl_select, .plane_drops = pl_plane_drops,
};

int mroce_port_planes_new(__u32 n, const struct mroce_port_ops *const *ops, void *const *ports,
			  const struct mroce_port_ops **ops_out, void **port_out)
{
	struct planes_port *pp;

	if (n < 2 || n > MROCE_MAX_PLANES)
		return -EINVAL;
	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return -ENOMEM;
	pp->n = n;
	for (__u32 i = 0; i < n; i++) {
		pp->ops[i] = ops[i];
		pp->port[i] = ports[i];
	}
	*ops_out = &planes_ops;
	*port_out = pp;
	return 0;
}
