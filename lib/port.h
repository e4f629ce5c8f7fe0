/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The frame I/O port below the engine. Not installed. */
#ifndef MROCE_PORT_H
#define MROCE_PORT_H

#include <stdbool.h>

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
	/* Optional, a port over several planes: the plane the next tx_buf() is for. */
	void	(*select_plane)(void *port, __u32 plane);
	/* Optional: a descriptor readable when frames arrive (port_planes.c polls them all). */
	int	(*poll_fd)(void *port);
	/*
	 * Optional: how many frames the datapath has dropped so far on plane's
	 * interface (a wrong token, malformed, unknown QP ...; a single-plane
	 * port: its own, whatever plane says). Read only when a plane's silence
	 * is judged (planes.c plane_busy): it may cost a system call.
	 */
	__u64	(*plane_drops)(void *port, __u32 plane);
	/* Optional: frames wait for the kernel to take them (kick again in MROCE_TX_RETRY_US). */
	bool	(*tx_pending)(void *port);
	/*
	 * Optional: the doorbell part of tx_flush() alone (the system calls
	 * that make the kernel take queued frames), safe without dev->lock and
	 * beside any other port call. A progress round ends with it after
	 * unlocking (dev.c): on copy-mode AF_XDP the kernel transmits, and runs
	 * the peer's receive, inside that call, most of a sender's time, and
	 * a thread posting meanwhile no longer waits behind it for the lock.
	 */
	void	(*tx_kick)(void *port);
	/*
	 * Optional, a port whose memory can hold payloads (the AF_XDP port's
	 * transmit pool, mroce_alloc_umem): whether len bytes at payload can
	 * be sent from where they are, and the send: a frame from tx_buf()
	 * whose headers (hdr_len bytes, UDP checksum filled in over the
	 * payload) are in buf, its payload at payload. Always succeeds after a
	 * yes: tx_buf() only hands out a buffer with room for it.
	 */
	bool	(*tx_can_ref)(void *port, const void *payload, __u32 len);
	void	(*tx_send_ref)(void *port, void *buf, __u32 hdr_len, const void *payload, __u32 len);
	/* Optional: the transmit pool's memory, whole 64 KiB chunks, zeroed: 0, -EOPNOTSUPP, -ENOMEM. */
	int	(*pool_alloc)(void *port, size_t len, void **addr);
	int	(*pool_free)(void *port, void *addr);
	/*
	 * The NIC fills in every frame's UDP checksum and drops what arrives
	 * with a wrong one, as checksum offload does: the engine neither
	 * computes nor checks it (the simulated hosts' NICs, sim/host.c; the
	 * AF_XDP port has no offload, and the XDP program checks before it
	 * places).
	 */
	bool	csum_offload;
};

/* How soon a port whose frames the kernel did not take tries again (port_xsk.c). */
#define MROCE_TX_RETRY_US	50

/*
 * One port over n planes' ports (port_planes.c): sends on the plane
 * select_plane() named, receives from all. It owns the inner ports from
 * then on (closes them when it is closed).
 */
int mroce_port_planes_new(__u32 n, const struct mroce_port_ops *const *ops, void *const *ports,
			  const struct mroce_port_ops **ops_out, void **port_out);

/*
 * One port over an interface's n receive queues' ports, all of ops (the
 * AF_XDP port's, which has every optional op this needs): sends on the
 * first, receives from all. It owns them from then on.
 */
int mroce_port_queues_new(__u32 n, const struct mroce_port_ops *ops, void *const *ports,
			  const struct mroce_port_ops **ops_out, void **port_out);

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
