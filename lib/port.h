/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The frame I/O port below the engine. Not installed. */
#ifndef MROCE_PORT_H
#define MROCE_PORT_H

#include "mroce/mroce.h"

/* The largest frame: MTU 9000 (jumbo, AF_XDP multi-buffer), its Ethernet header, two VLAN tags. */
#define MROCE_FRAME_MAX		9216

/*
 * A received frame, handed up. placed_len > 0: XDP has placed the payload,
 * that many bytes, in device memory already and cut the frame where the
 * payload began (struct mroce_xdp_meta); only a port that reads that
 * metadata from our XDP program passes anything but 0.
 */
typedef void (*mroce_rx_cb)(void *ctx, const void *frame, __u32 len, __u32 placed_len);

/* Frame I/O below the transport: an AF_XDP socket, or a simulated wire in tests. */
struct mroce_port_ops {
	/* A buffer to build one frame in (cap set to its size), or NULL if none now. */
	void	*(*tx_buf)(void *port, __u32 *cap);
	/* Send a frame built in a buffer from tx_buf(). */
	void	(*tx_send)(void *port, void *buf, __u32 len);
	/* Push queued frames out (doorbell / wakeup). */
	void	(*tx_flush)(void *port);
	/* Hand up to budget received frames to cb; returns how many. */
	int	(*rx_burst)(void *port, mroce_rx_cb cb, void *ctx, int budget);
	/* Wait up to timeout_us for frames to arrive or wake_fd to become readable. */
	void	(*wait)(void *port, int timeout_us, int wake_fd);
	__u64	(*now_us)(void *port);
	void	(*close)(void *port);
	/* Optional: fill the port's own counters (the xsk_* fields). */
	void	(*stats)(void *port, struct mroce_dev_stats *stats);
};

/*
 * A port backend: opens an interface's port and creates a device over it
 * (mroce_dev_create). mroce_dev_open() picks one from dev.c's table.
 */
struct mroce_port_backend {
	const char	*name;
	int		(*open)(const char *ifname, const struct mroce_dev_opts *opts,
				struct mroce_dev **devp);
};

int mroce_port_xsk_open(const char *ifname, const struct mroce_dev_opts *opts,
			struct mroce_dev **devp);

#endif /* MROCE_PORT_H */
