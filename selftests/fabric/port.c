// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "port.h"

#define AREA	(2 * XPORT_RING * XPORT_FRAME)

int xport_ingress_load(struct xport_ingress *in, const char *path)
{
	char buf[PATH_MAX];
	struct bpf_program *prog;
	int err;

	memset(in, 0, sizeof(*in));
	if (!path) {
		ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 16);

		if (n <= 0)
			return -errno;
		buf[n] = '\0';
		strcpy(strrchr(buf, '/') + 1, "fabric.bpf.o");
		path = buf;
	}
	in->obj = bpf_object__open_file(path, NULL);
	if (!in->obj || libbpf_get_error(in->obj)) {
		in->obj = NULL;
		fprintf(stderr, "cannot open %s\n", path);
		return -ENOENT;
	}
	if ((err = bpf_object__load(in->obj))) {
		fprintf(stderr, "cannot load %s: %s\n", path, strerror(-err));
		return err;
	}
	prog = bpf_object__find_program_by_name(in->obj, "fabric_ingress");
	in->prog_fd = prog ? bpf_program__fd(prog) : -1;
	in->ports_fd = bpf_object__find_map_fd_by_name(in->obj, "fabric_ports");
	in->xsks_fd = bpf_object__find_map_fd_by_name(in->obj, "fabric_xsks");
	return in->prog_fd < 0 || in->ports_fd < 0 || in->xsks_fd < 0 ? -ENOENT : 0;
}

void xport_ingress_close(struct xport_ingress *in)
{
	bpf_object__close(in->obj);
	in->obj = NULL;
}

int xport_rx_queues(const char *name)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (void *)&ch;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		err = -errno;
	close(fd);
	return err ? err : (int)(ch.rx_count + ch.combined_count);
}

int xport_open(struct xport *p, const char *name, __u32 slot, const struct xport_ingress *in)
{
	return xport_open_queue(p, name, 0, slot, in);
}

int xport_open_queue(struct xport *p, const char *name, __u32 queue, __u32 slot,
		     const struct xport_ingress *in)
{
	struct xsk_umem_config ucfg = { .fill_size = XPORT_RING, .comp_size = XPORT_RING,
					.frame_size = XPORT_FRAME };
	struct xsk_socket_config xcfg = {
		.rx_size = XPORT_RING, .tx_size = XPORT_RING,
		.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
	};
	__u32 idx;
	int err;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->queue = queue;
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (slot >= XPORT_MAX_SLOTS || queue >= XPORT_MAX_QUEUES) {
		fprintf(stderr, "%s: port %u queue %u: at most %d ports of %d queues\n", name, slot, queue,
			XPORT_MAX_SLOTS, XPORT_MAX_QUEUES);
		return -EINVAL;
	}
	p->ifindex = (int)if_nametoindex(name);
	if (!p->ifindex) {
		fprintf(stderr, "no interface '%s'\n", name);
		return -ENODEV;
	}
	p->area = mmap(NULL, AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->area == MAP_FAILED) {
		p->area = NULL;
		return -errno;
	}
	err = xsk_umem__create(&p->umem, p->area, AREA, &p->fq, &p->cq, &ucfg);
	/* A socket closed a moment ago on this queue is released by the kernel
	 * asynchronously: EBUSY for a while after its process has exited. */
	for (int tries = 0; !err; tries++) {
		err = xsk_socket__create(&p->xsk, name, queue, p->umem, &p->rx, &p->tx, &xcfg);
		if (err != -EBUSY || tries == 100)
			break;
		usleep(10000);
	}
	if (err) {
		fprintf(stderr, "AF_XDP socket on %s queue %u: %s%s\n", name, queue, strerror(-err),
			err == -EINVAL && queue ? " (has the interface that many queues?)" : "");
		return err;
	}
	p->fd = xsk_socket__fd(p->xsk);
	if (xsk_ring_prod__reserve(&p->fq, XPORT_RING, &idx) != XPORT_RING)
		return -ENOSPC;
	for (__u32 k = 0; k < XPORT_RING; k++)
		*xsk_ring_prod__fill_addr(&p->fq, idx + k) = (__u64)k * XPORT_FRAME;
	xsk_ring_prod__submit(&p->fq, XPORT_RING);
	for (__u32 k = 0; k < XPORT_RING; k++)
		p->free[p->nfree++] = (__u64)(XPORT_RING + k) * XPORT_FRAME;
	if (!in)
		return 0;
	idx = slot * XPORT_MAX_QUEUES + queue;
	if (bpf_map_update_elem(in->ports_fd, &p->ifindex, &slot, BPF_ANY) ||
	    bpf_map_update_elem(in->xsks_fd, &idx, &p->fd, BPF_ANY))
		return -errno;
	err = bpf_xdp_attach(p->ifindex, in->prog_fd, XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err == -EBUSY || err == -EEXIST) {
		/* Another queue's socket attached this very program: join it. */
		struct bpf_prog_info info = {};
		__u32 id = 0, ilen = sizeof(info);

		if (!bpf_xdp_query_id(p->ifindex, XDP_FLAGS_DRV_MODE, &id) &&
		    !bpf_obj_get_info_by_fd(in->prog_fd, &info, &ilen) && id == info.id)
			return 0;
	}
	if (err) {
		fprintf(stderr, "native XDP on %s: %s\n", name, strerror(-err));
		return err;
	}
	p->attached = true;
	return 0;
}

void xport_close(struct xport *p)
{
	if (p->attached)
		bpf_xdp_detach(p->ifindex, XDP_FLAGS_DRV_MODE, NULL);
	if (p->xsk)
		xsk_socket__delete(p->xsk);
	if (p->umem)
		xsk_umem__delete(p->umem);
	if (p->area)
		munmap(p->area, AREA);
	memset(p, 0, sizeof(*p));
}

static void reap(struct xport *p)
{
	__u32 idx, n = xsk_ring_cons__peek(&p->cq, XPORT_RING, &idx);

	for (__u32 i = 0; i < n; i++)
		p->free[p->nfree++] = *xsk_ring_cons__comp_addr(&p->cq, idx + i);
	if (n)
		xsk_ring_cons__release(&p->cq, n);
}

/*
 * Copy mode sends from sendto(), a small batch per call: kick while the
 * kernel takes descriptors. A call that takes none means the device is busy
 * (its queue stopped): the kick stays pending, and the caller comes back
 * soon (fabric.c sleeps at most 50 us).
 */
void xport_kick(struct xport *p)
{
	for (int i = 0; p->kick && i < XPORT_RING / 32; i++) {
		__u32 before = xsk_prod_nb_free(&p->tx, XPORT_RING);

		if (before >= XPORT_RING)
			break;
		if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
		    errno != EBUSY && errno != ENOBUFS)
			break;
		if (xsk_prod_nb_free(&p->tx, XPORT_RING) == before)
			break;
	}
	p->kick = xsk_prod_nb_free(&p->tx, XPORT_RING) < XPORT_RING;
	reap(p);
}

int xport_tx(struct xport *p, const void *frame, __u32 len)
{
	struct xdp_desc *d;
	__u32 idx;

	if (!p->nfree)
		reap(p);
	if (!p->nfree) {
		p->kick = true;
		xport_kick(p);
		if (!p->nfree)
			return -EAGAIN;
	}
	if (xsk_ring_prod__reserve(&p->tx, 1, &idx) != 1)
		return -EAGAIN;
	d = xsk_ring_prod__tx_desc(&p->tx, idx);
	d->addr = p->free[--p->nfree];
	d->len = len;
	d->options = 0;
	memcpy(p->area + d->addr, frame, len);
	xsk_ring_prod__submit(&p->tx, 1);
	p->kick = true;
	return 0;
}

int xport_rx(struct xport *p, void (*cb)(void *ctx, const __u8 *frame, __u32 len), void *ctx,
	     __u32 batch)
{
	__u32 idx_rx, idx_fq, n = xsk_ring_cons__peek(&p->rx, batch, &idx_rx);

	for (__u32 k = 0; k < n; k++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx_rx + k);

		cb(ctx, xsk_umem__get_data(p->area, d->addr), d->len);
	}
	if (!n)
		return 0;
	while (xsk_ring_prod__reserve(&p->fq, n, &idx_fq) != n)
		;	/* room for every receive frame: cannot stay full */
	for (__u32 k = 0; k < n; k++)
		*xsk_ring_prod__fill_addr(&p->fq, idx_fq + k) =
			xsk_umem__extract_addr(xsk_ring_cons__rx_desc(&p->rx, idx_rx + k)->addr);
	xsk_ring_prod__submit(&p->fq, n);
	xsk_ring_cons__release(&p->rx, n);
	return (int)n;
}
