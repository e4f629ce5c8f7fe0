/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One AF_XDP socket on one queue of one interface (copy mode), with its own
 * UMEM split between receive frames (kept on the fill ring) and transmit
 * frames (a free list). Used by the fabric's switch ports (a socket per
 * queue) and by xsk_raw, the bare datapath benchmark. Receiving needs
 * fabric.bpf.o attached to the interface: xport_ingress_load() loads it
 * once for any number of ports and queues. The socket of queue q transmits
 * on the interface's transmit queue q (for veth: the peer's receive queue q).
 */
#ifndef MROCE_FABRIC_PORT_H
#define MROCE_FABRIC_PORT_H

#include <stdbool.h>
#include <net/if.h>
#include <linux/types.h>
#include <xdp/xsk.h>

#include "port_map.h"

#define XPORT_FRAME	XSK_UMEM__DEFAULT_FRAME_SIZE
#define XPORT_RING	2048

struct xport {
	char			name[IF_NAMESIZE];
	int			ifindex, fd;
	__u32			queue;
	bool			attached, kick;
	struct xsk_umem		*umem;
	struct xsk_socket	*xsk;
	struct xsk_ring_prod	fq, tx;
	struct xsk_ring_cons	cq, rx;
	__u8			*area;
	__u64			free[XPORT_RING];	/* transmit frames not in flight */
	__u32			nfree;
};

struct xport_ingress {
	struct bpf_object	*obj;
	int			prog_fd, ports_fd, xsks_fd;
};

/* Load fabric.bpf.o (path NULL: beside the running binary). */
int xport_ingress_load(struct xport_ingress *in, const char *path);
void xport_ingress_close(struct xport_ingress *in);

/*
 * Open port `slot` (0..XPORT_MAX_SLOTS-1) on ifname's queue (0..XPORT_MAX_QUEUES-1);
 * in NULL: transmit only. The first socket on an interface attaches the XDP
 * program and detaches it when closed; the others join it (close them first).
 */
int xport_open_queue(struct xport *p, const char *ifname, __u32 queue, __u32 slot,
		     const struct xport_ingress *in);
/* The same on queue 0. */
int xport_open(struct xport *p, const char *ifname, __u32 slot, const struct xport_ingress *in);
/* How many receive queues ifname has (ethtool's channel count), or a negative errno. */
int xport_rx_queues(const char *ifname);
void xport_close(struct xport *p);

/* Copy a frame into a transmit slot: 0, or -EAGAIN when the ring is full. */
int xport_tx(struct xport *p, const void *frame, __u32 len);
/* Make the kernel send what is queued (copy mode sends from sendto()). */
void xport_kick(struct xport *p);
/* Up to batch received frames through cb; returns how many. */
int xport_rx(struct xport *p, void (*cb)(void *ctx, const __u8 *frame, __u32 len), void *ctx,
	     __u32 batch);

#endif
