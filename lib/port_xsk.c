// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The AF_XDP port: a UMEM split in two halves (receive buffers kept on the
 * fill ring, transmit buffers on a free list), one socket bound to one
 * receive queue, zero-copy when the driver allows it and copy mode when it
 * does not, need_wakeup honoured in both directions.
 *
 * Jumbo frames (an MTU whose frames do not fit one 4 KiB buffer) use AF_XDP
 * multi-buffer (XDP_USE_SG, kernel 6.6+): a transmit slot is several
 * adjacent buffers the engine builds one frame across, sent as one
 * descriptor per buffer; a frame received in several buffers is gathered
 * into one before the engine sees it.
 *
 * Ring ownership: only the thread that holds dev->lock touches the rings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "engine.h"
#include "internal.h"

#define FRAME_SIZE	XSK_UMEM__DEFAULT_FRAME_SIZE	/* 4096 */
#define RING_SIZE	4096
/*
 * The UMEM's default: 2048 buffers of 4 KiB, half received frames, half
 * transmit slots. The kernel fills receive buffers in the order they go
 * back on the fill ring, so all of them are in use in turn, and every
 * frame it copies in finds its buffer cold once they outgrow the caches:
 * with 8192 (32 MiB) a 1 MiB WRITE on veth ran 12-20% slower and cost
 * 9-12% more CPU per byte than with 2048 (interleaved, MTU 3498; 4-10%
 * at MTU 9000). The price: 1024 receive buffers hold about 2 ms of a
 * full-rate transfer while the transport's thread is off the CPU; frames
 * beyond that are dropped by the kernel (counted: xsk_rx_fill_ring_empty) and
 * resent. A host that stalls longer sets umem_frames (up to 8192).
 */
#define UMEM_FRAMES	2048

/* Received data begins after the kernel's headroom: what one buffer holds of a frame. */
#define RX_ROOM		(FRAME_SIZE - XDP_PACKET_HEADROOM)

/* AF_XDP multi-buffer (kernel 6.6 uapi), for older headers. */
#ifndef XDP_USE_SG
#define XDP_USE_SG	(1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD	(1 << 0)
#endif

struct xsk_port {
	struct xsk_umem		*umem;
	struct xsk_socket	*xsk;
	struct xsk_ring_prod	fq, tx;
	struct xsk_ring_cons	cq, rx;
	__u8			*area;
	size_t			area_len;
	__u64			*free;		/* transmit slots not in flight */
	__u32			nfree, ntx;	/* free now, transmit slots in all */
	__u32			outstanding;	/* descriptors submitted, completion not reaped */
	__u32			slot_bufs;	/* buffers per transmit slot: 1, more for jumbo frames */
	__u64			tx_base;	/* UMEM offset of the first transmit slot */
	__u8			*gather;	/* jumbo frames: one received in several buffers, whole */
	struct mroce_dp		*dp;
	__u32			queue;
	__u32			dev_id;		/* its device's (struct mroce_queue) */
	int			fd;
	bool			tx_kick;
	bool			in_map;		/* our socket is (was) in the XSKMAP slot of queue */
	/* The transmit pool (mroce_alloc_umem): UMEM past the frames, in POOL_CHUNK chunks. */
	__u64			pool_base;	/* its UMEM offset; 0: no pool */
	__u32			pool_chunks;
	__u32			*pool_run;	/* at an allocation's first chunk: its chunks; else 0 */
	__u8			*pool_used;
};

static void reap_completions(struct xsk_port *p)
{
	__u32 idx, n = xsk_ring_cons__peek(&p->cq, RING_SIZE, &idx);
	__u64 slot = (__u64)p->slot_bufs * FRAME_SIZE;

	/* A slot is free again when its first buffer completes (a frame's complete in order). */
	for (__u32 i = 0; i < n; i++) {
		__u64 addr = *xsk_ring_cons__comp_addr(&p->cq, idx + i);

		if ((!p->pool_base || addr < p->pool_base) && (addr - p->tx_base) % slot == 0)
			p->free[p->nfree++] = addr;	/* a slot's first buffer, not a payload in the pool */
	}
	if (n) {
		xsk_ring_cons__release(&p->cq, n);
		p->outstanding -= n;
	}
}

/*
 * Copy mode transmits from sendto(), at most a small batch per call (32 in
 * current kernels, EAGAIN when it stops at that budget), so keep kicking
 * while the kernel takes descriptors. When a call takes none, the device is
 * busy (its queue stopped; EAGAIN says only "later"): the kick stays pending
 * and xp_wait() sleeps at most MROCE_TX_RETRY_US before the next flush tries
 * again. Clearing it would leave the rest of a burst in the ring until the
 * transport next sent something, which with a full window is its
 * retransmission timer. (Not seen in a write_bw on veth here; drivers that
 * stop their queues under load produce it.)
 *
 * Only system calls and the ring's shared indexes, none of the producer's
 * cached state: so it also runs without dev->lock (port.h tx_kick), beside
 * a thread that holds the lock and queues frames. The kick owed is taken
 * first, so a frame queued meanwhile leaves one owed for the next round;
 * one the kernel did not take (busy) leaves one owed too.
 */
static void kick_tx(struct xsk_port *p)
{
	if (!__atomic_exchange_n(&p->tx_kick, false, __ATOMIC_ACQ_REL))
		return;
	for (int i = 0; i < RING_SIZE / 32; i++) {
		__u32 cons = __atomic_load_n(p->tx.consumer, __ATOMIC_ACQUIRE);

		if (cons == __atomic_load_n(p->tx.producer, __ATOMIC_ACQUIRE))
			return;	/* the kernel took everything */
		if (!xsk_ring_prod__needs_wakeup(&p->tx))
			return;	/* zero-copy driver is processing on its own */
		if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
		    errno != EBUSY && errno != ENOBUFS)
			return;	/* down or worse: the next frame sent kicks again */
		if (__atomic_load_n(p->tx.consumer, __ATOMIC_ACQUIRE) == cons)
			break;	/* none taken: busy, try again after MROCE_TX_RETRY_US */
	}
	__atomic_store_n(&p->tx_kick, true, __ATOMIC_RELEASE);
}

static void xp_tx_kick(void *port)
{
	kick_tx(port);
}

/*
 * The transmit pool. A send whose payload lies in it goes as a frame of
 * several descriptors (AF_XDP multi-buffer): the headers in a transmit slot,
 * then the payload where it is, cut at the UMEM's 4 KiB chunk boundaries
 * (aligned mode: no descriptor crosses one). A zero-copy driver sends it
 * from there; copy mode (veth) copies it into the skb in the kernel, once,
 * instead of in the library. Measured on veth, copy mode: no faster than
 * the library's copy (the kernel allocates a page per extra descriptor),
 * so it is for drivers that do not copy (docs/datapath.md).
 */
#define POOL_CHUNK	(64u << 10)
#define REF_DESCS	(1 + (MROCE_FRAME_MAX + FRAME_SIZE - 1) / FRAME_SIZE + 1)

/* Descriptors a frame from tx_buf() may take: its slot's, or a reference send's. */
static __u32 tx_descs(const struct xsk_port *p)
{
	return p->pool_base && REF_DESCS > p->slot_bufs ? REF_DESCS : p->slot_bufs;
}

static bool xp_tx_can_ref(void *port, const void *payload, __u32 len)
{
	struct xsk_port *p = port;
	uintptr_t at = (uintptr_t)payload, base = (uintptr_t)p->area;

	return p->pool_base && len && at >= base + p->pool_base && at - base <= p->area_len &&
	       p->area_len - (at - base) >= len;
}

static void xp_tx_send_ref(void *port, void *buf, __u32 hdr_len, const void *payload, __u32 len)
{
	struct xsk_port *p = port;
	__u64 addr = (__u64)((__u8 *)buf - p->area), at = (__u64)((const __u8 *)payload - p->area);
	__u32 idx, n = 1;

	for (__u64 a = at; a < at + len; a = (a / FRAME_SIZE + 1) * FRAME_SIZE)
		n++;
	if (!hdr_len || n > REF_DESCS || xsk_ring_prod__reserve(&p->tx, n, &idx) != n) {
		p->free[p->nfree++] = addr;	/* cannot be: tx_buf() saw room for REF_DESCS */
		return;
	}
	*xsk_ring_prod__tx_desc(&p->tx, idx) = (struct xdp_desc){ .addr = addr, .len = hdr_len,
								  .options = XDP_PKT_CONTD };
	for (__u32 i = 1; i < n; i++) {
		__u64 end = (at / FRAME_SIZE + 1) * FRAME_SIZE;
		__u32 piece = (__u32)((end < at + len ? end : at + len) - at);

		*xsk_ring_prod__tx_desc(&p->tx, idx + i) = (struct xdp_desc){
			.addr = at, .len = piece, .options = i + 1 < n ? XDP_PKT_CONTD : 0 };
		at += piece;
		len -= piece;
	}
	xsk_ring_prod__submit(&p->tx, n);
	p->outstanding += n;
	__atomic_store_n(&p->tx_kick, true, __ATOMIC_RELEASE);
}

/* First fit, whole chunks; dev->lock held. */
static int xp_pool_alloc(void *port, size_t len, void **addr)
{
	struct xsk_port *p = port;
	__u32 need, run = 0;

	if (!p->pool_base)
		return -EOPNOTSUPP;
	if (len > (size_t)p->pool_chunks * POOL_CHUNK)
		return -ENOMEM;
	need = (__u32)((len + POOL_CHUNK - 1) / POOL_CHUNK);
	for (__u32 i = 0; i < p->pool_chunks; i++) {
		run = p->pool_used[i] ? 0 : run + 1;
		if (run == need) {
			__u32 first = i + 1 - need;

			memset(p->pool_used + first, 1, need);
			p->pool_run[first] = need;
			*addr = p->area + p->pool_base + (size_t)first * POOL_CHUNK;
			memset(*addr, 0, (size_t)need * POOL_CHUNK);
			return 0;
		}
	}
	return -ENOMEM;
}

static int xp_pool_free(void *port, void *addr)
{
	struct xsk_port *p = port;
	uintptr_t at = (uintptr_t)addr, base = (uintptr_t)p->area;
	size_t off;
	__u32 first;

	if (!p->pool_base || at < base + p->pool_base || at >= base + p->area_len)
		return -EINVAL;
	off = (size_t)(at - base - p->pool_base);
	first = (__u32)(off / POOL_CHUNK);
	if (off % POOL_CHUNK || !p->pool_run[first])
		return -EINVAL;	/* not the start of an allocation */
	memset(p->pool_used + first, 0, p->pool_run[first]);
	p->pool_run[first] = 0;
	return 0;
}

static void *xp_tx_buf(void *port, __u32 *cap)
{
	struct xsk_port *p = port;

	if (!p->nfree)
		reap_completions(p);
	if (!p->nfree) {
		kick_tx(p);
		reap_completions(p);
	}
	if (!p->nfree || xsk_prod_nb_free(&p->tx, tx_descs(p)) < tx_descs(p))
		return NULL;
	*cap = p->slot_bufs * FRAME_SIZE;
	return p->area + p->free[--p->nfree];
}

static void xp_tx_send(void *port, void *buf, __u32 len)
{
	struct xsk_port *p = port;
	__u64 addr = (__u64)((__u8 *)buf - p->area);
	__u32 idx, n = (len + FRAME_SIZE - 1) / FRAME_SIZE;

	if (!len || n > p->slot_bufs || xsk_ring_prod__reserve(&p->tx, n, &idx) != n) {
		p->free[p->nfree++] = addr;	/* nothing to send, or no slot: back to the pool */
		return;
	}
	/* One descriptor per buffer of the slot; all but the last say "continued". */
	for (__u32 i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&p->tx, idx + i);

		d->addr = addr + (__u64)i * FRAME_SIZE;
		d->len = i + 1 < n ? FRAME_SIZE : len - i * FRAME_SIZE;
		d->options = i + 1 < n ? XDP_PKT_CONTD : 0;
	}
	xsk_ring_prod__submit(&p->tx, n);
	p->outstanding += n;
	__atomic_store_n(&p->tx_kick, true, __ATOMIC_RELEASE);
}

static void xp_tx_flush(void *port)
{
	struct xsk_port *p = port;

	kick_tx(p);
	reap_completions(p);
}

/*
 * The metadata our XDP program puts in front of every frame it redirects
 * (dp_maps.h): how much of a WRITE's payload it placed. Cleared once read,
 * so a frame without it (another program, or metadata XDP could not write)
 * never shows the one of a frame before it in the same buffer.
 */
static __u32 rx_placed_len(struct xsk_port *p, __u8 *frame)
{
	struct mroce_xdp_meta m;

	if (!p->dp)
		return 0;
	memcpy(&m, frame - sizeof(m), sizeof(m));
	memset(frame - sizeof(m), 0, sizeof(m));
	return m.magic == MROCE_XDP_META_MAGIC ? m.placed_len : 0;
}

/* Copy the n buffers of one frame into p->gather: its length, or 0 if it is too long. */
static __u32 gather(struct xsk_port *p, __u32 idx, __u32 n)
{
	__u32 len = 0;

	for (__u32 i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx + i);

		if (!p->gather || d->len > MROCE_FRAME_MAX - len)
			return 0;
		memcpy(p->gather + len, xsk_umem__get_data(p->area, d->addr), d->len);
		len += d->len;
	}
	return len;
}

/*
 * Hand a received frame's cache lines back once it has been read. On veth
 * (and wherever the kernel's receive runs on another core than ours) the
 * next copy into this buffer is the kernel's, on that core, and lines our
 * core still holds cost it a snoop each, on the sender's core, the
 * bottleneck of a transfer here. CLDEMOTE moves them to the shared cache
 * level; where the CPU lacks it, it is a NOP. xsk_raw rx --copy (which
 * copies each payload out, as any receiver must) measured 21.0-21.7 Gbit/s
 * without it and 23.3-23.8 with it, the same as a receiver that reads no
 * payload at all (22.6-24.1); mroce's 1 MiB WRITE and READ gained 3%.
 */
static void frame_done(const __u8 *frame, __u32 len)
{
#if defined(__x86_64__) || defined(__i386__)
	for (__u32 o = 0; o < len; o += 64)
		__asm__ volatile("cldemote %0" : : "m"(*(const volatile __u8 *)(frame + o)));
#else
	(void)frame;
	(void)len;
#endif
}

static int xp_rx_burst(void *port, mroce_rx_cb cb, void *ctx, int budget)
{
	struct xsk_port *p = port;
	__u32 idx_rx, idx_fq, n, done = 0;

	n = xsk_ring_cons__peek(&p->rx, (__u32)budget, &idx_rx);
	if (!n) {
		if (xsk_ring_prod__needs_wakeup(&p->fq))
			recvfrom(p->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		return 0;
	}
	while (done < n) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx_rx + done);
		__u8 *frame = xsk_umem__get_data(p->area, d->addr);
		__u32 placed = rx_placed_len(p, frame), len = d->len, k = done;

		/* A frame in several buffers (jumbo): its last one has no "continued" flag. */
		while (k < n && (xsk_ring_cons__rx_desc(&p->rx, idx_rx + k)->options & XDP_PKT_CONTD))
			k++;
		if (k == n)
			break;	/* its end is past this batch: next time, whole */
		if (k > done) {
			len = gather(p, idx_rx + done, k - done + 1);
			frame = p->gather;
		}
		if (len) {
			cb(ctx, frame, len, placed);
			if (frame != p->gather)
				frame_done(frame, len);
		}
		done = k + 1;
	}
	if (done < n)
		xsk_ring_cons__cancel(&p->rx, n - done);
	if (!done)
		return 0;
	/* The fill ring has room for every receive frame, so this cannot fail. */
	while (xsk_ring_prod__reserve(&p->fq, done, &idx_fq) != done)
		;
	for (__u32 i = 0; i < done; i++)
		*xsk_ring_prod__fill_addr(&p->fq, idx_fq + i) =
			xsk_umem__extract_addr(xsk_ring_cons__rx_desc(&p->rx, idx_rx + i)->addr);
	xsk_ring_prod__submit(&p->fq, done);
	xsk_ring_cons__release(&p->rx, done);
	return (int)done;
}

static void xp_wait(void *port, int timeout_us, int wake_fd)
{
	struct xsk_port *p = port;
	struct pollfd pfd[2] = { { .fd = p->fd, .events = POLLIN }, { .fd = wake_fd, .events = POLLIN } };
	struct timespec ts;

	/* Frames the kernel has not taken yet: back soon to kick again (kick_tx()). */
	if (__atomic_load_n(&p->tx_kick, __ATOMIC_ACQUIRE) && timeout_us > MROCE_TX_RETRY_US)
		timeout_us = MROCE_TX_RETRY_US;
	ts = (struct timespec){ .tv_sec = timeout_us / 1000000, .tv_nsec = (timeout_us % 1000000) * 1000L };
	ppoll(pfd, 2, &ts, NULL);
}

static __u64 xp_now(void *port)
{
	struct timespec ts;

	(void)port;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000 + (__u64)ts.tv_nsec / 1000;
}

static void xp_close(void *port)
{
	struct xsk_port *p = port;

	/*
	 * Only the slot we filled, never one a failed open found taken: that
	 * would cut another process's socket off its queue. XSKMAP entries
	 * cannot be read from user space to compare, but a socket bound to the
	 * queue keeps every other one out of it until it is closed.
	 */
	if (p->in_map) {
		mroce_dp_xsk_clear(p->dp, p->queue);
		mroce_dp_queue_set(p->dp, p->queue, 0, 0);
	}
	if (p->xsk)
		xsk_socket__delete(p->xsk);
	if (p->umem)
		xsk_umem__delete(p->umem);
	if (p->area)
		munmap(p->area, p->area_len);
	mroce_dp_close(p->dp);
	free(p->free);
	free(p->gather);
	free(p->pool_run);
	free(p->pool_used);
	free(p);
}

/* Add one socket's kernel counters; false if fd is not an AF_XDP socket. */
static bool xsk_add_stats(int fd, struct mroce_dev_stats *s)
{
	struct xdp_statistics xs = {};
	socklen_t len = sizeof(xs);

	if (fd < 0 || getsockopt(fd, SOL_XDP, XDP_STATISTICS, &xs, &len))
		return false;
	s->xsk_rx_dropped += xs.rx_dropped;
	s->xsk_rx_invalid_descs += xs.rx_invalid_descs;
	s->xsk_tx_invalid_descs += xs.tx_invalid_descs;
	s->xsk_rx_ring_full += xs.rx_ring_full;		/* 0 from kernels before 5.9 */
	s->xsk_rx_fill_ring_empty += xs.rx_fill_ring_empty_descs;
	s->xsk_tx_ring_empty += xs.tx_ring_empty_descs;
	return true;
}

static void xp_stats(void *port, struct mroce_dev_stats *s)
{
	struct xsk_port *p = port;
	struct mroce_dev_stats k = {};

	if (!xsk_add_stats(p->fd, &k))
		return;
	s->xsk_rx_dropped = k.xsk_rx_dropped;
	s->xsk_rx_invalid_descs = k.xsk_rx_invalid_descs;
	s->xsk_tx_invalid_descs = k.xsk_tx_invalid_descs;
	s->xsk_rx_ring_full = k.xsk_rx_ring_full;
	s->xsk_rx_fill_ring_empty = k.xsk_rx_fill_ring_empty;
	s->xsk_tx_ring_empty = k.xsk_tx_ring_empty;
}

/* Every frame our XDP program dropped on this interface (stats.h's "drop:" counters). */
static __u64 xp_plane_drops(void *port, __u32 plane)
{
	static const enum mroce_stat drops[] = {
		MROCE_STAT_TRUNCATED, MROCE_STAT_FRAGMENT, MROCE_STAT_BAD_LENGTH,
		MROCE_STAT_BAD_VERSION, MROCE_STAT_BAD_OPCODE, MROCE_STAT_BAD_FLAGS,
		MROCE_STAT_UNKNOWN_QP, MROCE_STAT_BAD_TOKEN, MROCE_STAT_DUPLICATE,
		MROCE_STAT_DUP_RETX_LIMIT, MROCE_STAT_OUT_OF_WINDOW, MROCE_STAT_OUT_OF_ORDER,
		MROCE_STAT_NO_XSK, MROCE_STAT_BAD_CSUM,
	};
	struct xsk_port *p = port;
	__u64 c[MROCE_STAT_MAX], n = 0;

	(void)plane;
	if (!p->dp || mroce_dp_stats(p->dp, c))
		return 0;
	for (size_t i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
		n += c[drops[i]];
	return n;
}

/*
 * Sum the AF_XDP sockets among one process's descriptors. *refused: a
 * descriptor list or socket this process may not read (no CAP_SYS_PTRACE),
 * so that the sum would be short.
 */
static int scan_process(int pid, struct mroce_dev_stats *s, bool *refused)
{
	char path[64], link[64];
	struct dirent *e;
	int pfd, n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d) {
		*refused |= errno == EACCES || errno == EPERM;
		return 0;
	}
	pfd = pidfd_open(pid, 0);
	while (pfd >= 0 && (e = readdir(d))) {
		char fdpath[64 + sizeof(e->d_name)];
		ssize_t l;
		int fd;

		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, e->d_name);
		l = readlink(fdpath, link, sizeof(link) - 1);
		if (l < 8 || strncmp(link, "socket:", 7))
			continue;
		fd = pidfd_getfd(pfd, atoi(e->d_name), 0);
		if (fd < 0)
			*refused |= errno == EPERM || errno == EACCES;
		if (fd >= 0 && xsk_add_stats(fd, s))
			n++;
		if (fd >= 0)
			close(fd);
	}
	if (pfd >= 0)
		close(pfd);
	closedir(d);
	return n;
}

/* Whether pid is in our network namespace; a process we may not ask counts as refused. */
static bool same_netns(int pid, const struct stat *self, bool *refused)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	if (stat(path, &st)) {
		*refused |= errno == EACCES || errno == EPERM;
		return false;
	}
	return st.st_ino == self->st_ino && st.st_dev == self->st_dev;
}

int mroce_xsk_scan_stats(struct mroce_dev_stats *stats)
{
	struct stat self;
	struct dirent *e;
	int n = 0, me = getpid();
	bool refused = false;
	DIR *d;

	if (!stats)
		return -EINVAL;
	memset(stats, 0, sizeof(*stats));
	if (stat("/proc/self/ns/net", &self))
		return -errno;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int pid = atoi(e->d_name);

		if (pid > 0 && pid != me && same_netns(pid, &self, &refused))
			n += scan_process(pid, stats, &refused);
	}
	closedir(d);
	/*
	 * /proc/PID/ns/net and pidfd_getfd need ptrace access, /proc/PID/fd
	 * its owner or CAP_DAC_READ_SEARCH. Refused for want of them, a partial
	 * sum would read as the whole: none. Refused with both (a process an
	 * LSM or a sandbox guards even from root), nothing more can be read.
	 */
	if (refused && (!mroce_has_cap(CAP_SYS_PTRACE) || !mroce_has_cap(CAP_DAC_READ_SEARCH))) {
		memset(stats, 0, sizeof(*stats));
		return -MROCE_ERR_CAP_SYS_PTRACE;
	}
	return n;
}

static int xp_poll_fd(void *port)
{
	return ((struct xsk_port *)port)->fd;
}

static bool xp_tx_pending(void *port)
{
	return __atomic_load_n(&((struct xsk_port *)port)->tx_kick, __ATOMIC_ACQUIRE);
}

static const struct mroce_port_ops xsk_ops = {
	.tx_buf = xp_tx_buf, .tx_send = xp_tx_send, .tx_flush = xp_tx_flush, .tx_kick = xp_tx_kick,
	.tx_can_ref = xp_tx_can_ref, .tx_send_ref = xp_tx_send_ref,
	.pool_alloc = xp_pool_alloc, .pool_free = xp_pool_free,
	.rx_burst = xp_rx_burst, .wait = xp_wait, .now_us = xp_now, .close = xp_close,
	.stats = xp_stats, .poll_fd = xp_poll_fd, .tx_pending = xp_tx_pending,
	.plane_drops = xp_plane_drops,
};

/* The interface's MAC, MTU and first address (IPv4 preferred). */
static int if_facts(const char *ifname, struct mroce_route *local, __u32 *mtu)
{
	struct ifaddrs *ifa, *i;
	int err = mroce_if_hw(ifname, local->src_mac, mtu);

	if (err)
		return err;
	if (getifaddrs(&ifa))
		return -errno;
	for (int pass = 0; pass < 2 && !local->family; pass++) {
		for (i = ifa; i; i = i->ifa_next) {
			if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
				continue;
			if (pass == 0 && i->ifa_addr->sa_family == AF_INET) {
				local->family = AF_INET;
				local->src.v4 = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
				break;
			}
			if (pass == 1 && i->ifa_addr->sa_family == AF_INET6 &&
			    !IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr)) {
				local->family = AF_INET6;
				local->src.v6 = ((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
				break;
			}
		}
	}
	freeifaddrs(ifa);
	return local->family ? 0 : -EADDRNOTAVAIL;
}

/* What opening one interface's socket found out. */
struct xsk_facts {
	struct mroce_route	local;
	struct mroce_dp_info	info;
	__u32			mtu;
	bool			zc;
};

/*
 * Whether a live process's device is recorded on queue q (a dead one's
 * socket is gone). Only a hint: a pid may be reused, or another pid
 * namespace's; the bind decides.
 */
static bool queue_taken(struct mroce_dp *dp, __u32 q)
{
	__u32 id, pid;

	if (mroce_dp_queue_get(dp, q, &id, &pid) || !id || !pid)
		return false;
	return !(kill((pid_t)pid, 0) && errno == ESRCH);
}

/*
 * One interface's AF_XDP socket on queue, its datapath attached if it was
 * not, serving it for device dev_id (first: the device's first queue, whose
 * port is the device's). -EBUSY: another socket has the queue.
 */
static int xsk_port_open(const char *ifname, const struct mroce_dev_opts *opts, __u64 pool_bytes,
			 __u32 queue, bool first, __u32 def_frames, __u32 dev_id, struct xsk_port **pp,
			 struct xsk_facts *fx)
{
	struct xsk_umem_config ucfg = {
		.fill_size = RING_SIZE, .comp_size = RING_SIZE, .frame_size = FRAME_SIZE,
	};
	struct xsk_socket_config xcfg = {
		.rx_size = RING_SIZE, .tx_size = RING_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
	};
	struct mroce_route local = {};
	struct mroce_dp_info info;
	struct xsk_port *p;
	__u32 nframes, mtu = 0, idx;
	bool zc = false, sg;
	int err;

	nframes = MROCE_OPT(opts, umem_frames, 0) ? MROCE_OPT(opts, umem_frames, 0) : def_frames;
	if (nframes < 64 || nframes > 2 * RING_SIZE || (nframes & (nframes - 1)))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->queue = queue;
	p->dev_id = dev_id;
	p->fd = -1;

	err = mroce_dp_open(ifname, &p->dp);
	if (err == -MROCE_ERR_NOT_ATTACHED) {
		MROCE_OPTS(mroce_attach_opts, ao, .mode = MROCE_OPT(opts, xdp_mode, MROCE_XDP_NATIVE),
			   .udp_port = MROCE_OPT(opts, udp_port, 0));

		err = mroce_dp_attach_open(ifname, &ao, &p->dp);
		if (err == -MROCE_ERR_ATTACHED)	/* another process won the race */
			err = mroce_dp_open(ifname, &p->dp);
	}
	if (!err)
		err = mroce_dp_info(p->dp, &info);
	if (!err)
		err = if_facts(ifname, &local, &mtu);
	if (err)
		goto fail;
	/* Room for two VLAN tags on what arrives; beyond one buffer, multi-buffer. */
	if (mtu + sizeof(struct ethhdr) + 8 > MROCE_FRAME_MAX) {
		err = -EMSGSIZE;
		goto fail;
	}
	sg = mtu + sizeof(struct ethhdr) + 8 > RX_ROOM;
	p->slot_bufs = sg ? (mtu + (__u32)sizeof(struct ethhdr) + FRAME_SIZE - 1) / FRAME_SIZE : 1;
	if (sg && !(p->gather = malloc(MROCE_FRAME_MAX))) {
		err = -ENOMEM;
		goto fail;
	}
	local.dport = info.udp_port;

	if (pool_bytes > MROCE_UMEM_POOL_MAX) {
		err = -EINVAL;
		goto fail;
	}
	p->area_len = (size_t)nframes * FRAME_SIZE;
	if (pool_bytes) {
		p->pool_base = p->area_len;
		p->pool_chunks = (__u32)((pool_bytes + POOL_CHUNK - 1) / POOL_CHUNK);
		p->area_len += (size_t)p->pool_chunks * POOL_CHUNK;
		p->pool_run = calloc(p->pool_chunks, sizeof(*p->pool_run));
		p->pool_used = calloc(p->pool_chunks, 1);
		if (!p->pool_run || !p->pool_used) {
			err = -ENOMEM;
			goto fail;
		}
	}
	p->area = mmap(NULL, p->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->area == MAP_FAILED) {
		p->area = NULL;
		err = -errno;
		goto fail;
	}
	p->ntx = nframes / 2 / p->slot_bufs;
	p->tx_base = (__u64)(nframes / 2) * FRAME_SIZE;
	p->free = calloc(p->ntx, sizeof(*p->free));
	if (!p->free) {
		err = -ENOMEM;
		goto fail;
	}
	for (__u32 i = 0; i < p->ntx; i++)
		p->free[p->nfree++] = p->tx_base + (__u64)i * p->slot_bufs * FRAME_SIZE;
	err = xsk_umem__create(&p->umem, p->area, p->area_len, &p->fq, &p->cq, &ucfg);
	if (err) {
		err = mroce_cap_err(err, MROCE_NEED_NET_RAW | MROCE_NEED_MEMLOCK);
		goto fail;
	}
	if (!MROCE_OPT(opts, force_copy, false)) {
		xcfg.bind_flags = XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP | (sg || pool_bytes ? XDP_USE_SG : 0);
		err = xsk_socket__create(&p->xsk, ifname, p->queue, p->umem, &p->rx, &p->tx, &xcfg);
		zc = !err;
	}
	if (!p->xsk) {	/* the driver refused zero-copy (veth always does): copy mode */
		xcfg.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP | (sg || pool_bytes ? XDP_USE_SG : 0);
		/*
		 * A socket closed a moment ago on this queue (a restarted application) is
		 * released by the kernel asynchronously: EBUSY for a while, up to 1 s. Not
		 * worth waiting for while a live device is recorded there: it holds it.
		 */
		for (int tries = 0;; tries++) {
			err = xsk_socket__create(&p->xsk, ifname, p->queue, p->umem, &p->rx, &p->tx, &xcfg);
			if (err != -EBUSY || tries == 100 || queue_taken(p->dp, queue))
				break;
			usleep(10000);
		}
	}
	if (err) {
		err = mroce_cap_err(err, MROCE_NEED_NET_RAW | MROCE_NEED_MEMLOCK);
		goto fail;
	}
	p->fd = xsk_socket__fd(p->xsk);
	/* Every receive frame goes on the fill ring up front. */
	if (xsk_ring_prod__reserve(&p->fq, nframes / 2, &idx) != nframes / 2) {
		err = -ENOSPC;
		goto fail;
	}
	for (__u32 i = 0; i < nframes / 2; i++)
		*xsk_ring_prod__fill_addr(&p->fq, idx + i) = (__u64)i * FRAME_SIZE;
	xsk_ring_prod__submit(&p->fq, nframes / 2);
	/* Ours now (the bind is the lock): the owner first, then the socket. */
	err = mroce_dp_queue_set(p->dp, p->queue, dev_id, first ? MROCE_QUEUE_PORT : 0);
	p->in_map = !err;
	if (!err)
		err = mroce_dp_xsk_set(p->dp, p->queue, p->fd);
	if (err)
		goto fail;
	*fx = (struct xsk_facts){ .local = local, .info = info, .mtu = mtu, .zc = zc };
	*pp = p;
	return 0;
fail:
	xp_close(p);
	return err;
}

static bool same_addr(const struct mroce_route *a, const struct mroce_route *b)
{
	return a->family == AF_INET ? a->src.v4.s_addr == b->src.v4.s_addr :
				      !memcmp(&a->src.v6, &b->src.v6, sizeof(a->src.v6));
}

/* A device's id in the datapath: random, never 0 (struct mroce_queue). */
static __u32 new_dev_id(void)
{
	__u32 id = 0;

	while (!id)
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (__u32)getpid() ^ (__u32)xp_now(NULL);
	return id;
}

/* The receive queues of ifname a device can serve: at most MROCE_MAX_QUEUES. */
static __u32 rx_queues(const char *ifname)
{
	__u32 nq = mroce_if_rx_queues(ifname);

	return nq < MROCE_MAX_QUEUES ? nq : MROCE_MAX_QUEUES;
}

/* One interface's sockets, on queues first .. first + n - 1: as one port. */
struct xsk_iface {
	struct xsk_port		*p[MROCE_MAX_QUEUES];
	__u32			first, n;
	const struct mroce_port_ops *ops;
	void			*port;
	struct xsk_facts	fx;
};

static void iface_close(struct xsk_iface *f)
{
	if (f->port && f->ops != &xsk_ops) {
		f->ops->close(f->port);	/* the queues' port owns the sockets */
	} else {
		for (__u32 i = 0; i < f->n; i++)
			xp_close(f->p[i]);
	}
	memset(f, 0, sizeof(*f));
}

/*
 * Open queues [first, first + n) of ifname; -EBUSY with *busy the queue
 * another socket holds, any other error as it came.
 */
static int iface_run(const char *ifname, const struct mroce_dev_opts *opts, __u64 pool_bytes,
		     __u32 first, __u32 n, __u32 dev_id, struct xsk_iface *f, __u32 *busy)
{
	struct xsk_facts fx;
	__u32 share = UMEM_FRAMES;
	int err = 0;

	/*
	 * The first queue sends, and keeps the default UMEM; the others only
	 * receive their share of what RSS spreads: a UMEM as many times smaller
	 * as there are queues, at least 256 frames (a 32-queue device: 39 MiB,
	 * not 256). umem_frames, when set, is every queue's.
	 */
	for (__u32 k = 1; k < n && share > 256; k <<= 1)
		share >>= 1;
	memset(f, 0, sizeof(*f));
	f->first = first;
	for (__u32 i = 0; i < n && !err; i++) {
		/* the transmit pool: in the first queue's UMEM, which sends */
		err = xsk_port_open(ifname, opts, i ? 0 : pool_bytes, first + i, !i,
				    i ? share : UMEM_FRAMES, dev_id, &f->p[i], i ? &fx : &f->fx);
		if (!err)
			f->n++;
		else if (err == -EBUSY)
			*busy = first + i;
	}
	if (!err && n > 1)
		err = mroce_port_queues_new(n, &xsk_ops, (void *const *)f->p, &f->ops, &f->port);
	else if (!err)
		f->ops = &xsk_ops, f->port = f->p[0];
	if (err)
		iface_close(f);
	return err;
}

/*
 * The queues a device serves on ifname (struct mroce_dev_opts, queue and
 * queues): a run of `want` free queues from `from` on, or exactly queues
 * [from, from + want) when exact (every queue, a plane after the first).
 */
static int iface_open(const char *ifname, const struct mroce_dev_opts *opts, __u64 pool_bytes,
		      __u32 from, __u32 want, bool exact, __u32 dev_id, struct xsk_iface *f)
{
	__u32 nq = rx_queues(ifname), busy = 0;
	int err = -MROCE_ERR_QUEUES_BUSY;

	if (from >= nq || want > nq - from)
		return -ENXIO;	/* no such queue */
	for (__u32 s = from; s + want <= nq; s = busy + 1) {
		err = iface_run(ifname, opts, pool_bytes, s, want, dev_id, f, &busy);
		if (err != -EBUSY)
			return err;
		if (exact)
			break;
	}
	return -MROCE_ERR_QUEUES_BUSY;
}

/*
 * How many queues a device serves when the application does not say
 * (opts.queues 0, opts.queue 0): one on veth, which spreads nothing (a
 * frame arrives on the queue its sender sent it from), and on a NIC with
 * one queue or with more than a device serves (MROCE_MAX_QUEUES: its port
 * is to be steered); every queue on a NIC whose RSS spreads a peer's
 * packets over them all.
 */
static __u32 default_queues(const char *ifname)
{
	__u32 nq = mroce_if_rx_queues(ifname);

	if (nq <= 1 || nq > MROCE_MAX_QUEUES || mroce_if_driver_is(ifname, "veth"))
		return 1;
	return nq;
}

/*
 * The AF_XDP backend of mroce_dev_open() (dev.c): ifname's sockets, one per
 * receive queue served, and as many on each of opts->planes, under one port.
 */
int mroce_port_xsk_open(const char *ifname, const struct mroce_dev_opts *opts,
			struct mroce_dev **devp)
{
	const struct mroce_port_ops *ops[MROCE_MAX_PLANES], *top;
	const char *const *planes = MROCE_OPT(opts, planes, NULL);
	__u32 n = 1 + (planes ? MROCE_OPT(opts, n_planes, 0) : 0), opened = 0, mtu = 0;
	__u32 from = MROCE_OPT(opts, queue, 0), want = MROCE_OPT(opts, queues, 0), dev_id;
	struct xsk_iface *f;
	struct mroce_dev *dev;
	void *ports[MROCE_MAX_PLANES], *port;
	bool exact;
	int err = 0;

	mroce_print_install();
	if (!ifname || !devp || !mroce_opts_valid(opts, opts ? opts->sz : 0, sizeof(*opts)) ||
	    n > MROCE_MAX_PLANES || from >= MROCE_MAX_QUEUES ||
	    (want > MROCE_MAX_QUEUES && want != MROCE_QUEUES_ALL))
		return -EINVAL;
	f = calloc(MROCE_MAX_PLANES, sizeof(*f));
	if (!f)
		return -ENOMEM;
	dev_id = new_dev_id();
	/* every queue, one named queue, or the default: exactly those (RSS would spread
	 * to another's, a steering rule names one); N: the first free run of N */
	exact = want == MROCE_QUEUES_ALL || !want;
	if (want == MROCE_QUEUES_ALL) {
		__u32 nq = rx_queues(ifname);

		want = from < nq ? nq - from : 1;
	} else if (!want) {
		want = from ? 1 : default_queues(ifname);
		exact = want > 1 || from;
	}
	for (__u32 i = 0; i < n && !err; i++) {
		const char *name = i ? planes[i - 1] : ifname;

		if (!name)
			err = -EINVAL;
		for (__u32 j = 0; !err && j < i; j++)
			if (!strcmp(name, j ? planes[j - 1] : ifname))
				err = -EINVAL;	/* an interface named twice */
		if (!err)
			/* The transmit pool: a device over planes has none (a frame leaves
			 * through its own socket's UMEM). Planes: the first's queues. */
			err = iface_open(name, opts, n > 1 ? 0 : MROCE_OPT(opts, umem_pool_bytes, 0),
					 i ? f[0].first : from, i ? f[0].n : want, i ? true : exact,
					 dev_id, &f[i]);
		if (err)
			break;
		opened++;
		ops[i] = f[i].ops;
		ports[i] = f[i].port;
		if (i && f[i].fx.local.family != f[0].fx.local.family)
			err = -EAFNOSUPPORT;	/* the peer reaches every plane in one family */
		if (i && f[i].fx.info.udp_port != f[0].fx.info.udp_port)
			err = -EINVAL;	/* datapaths attached for different UDP ports */
		for (__u32 j = 0; !err && j < i; j++)
			if (same_addr(&f[i].fx.local, &f[j].fx.local))
				err = -EADDRINUSE;	/* planes are told apart by address */
		if (!mtu || f[i].fx.mtu < mtu)
			mtu = f[i].fx.mtu;
	}
	top = ops[0];
	port = ports[0];
	if (!err && n > 1)
		err = mroce_port_planes_new(n, ops, ports, &top, &port);
	if (err) {
		for (__u32 i = 0; i < opened; i++)
			iface_close(&f[i]);
		free(f);
		return err;
	}
	/* The device's UDP port: the base's plus its first queue (struct mroce_cfg). */
	f[0].fx.local.dport = (__u16)(f[0].fx.info.udp_port + f[0].first);
	err = f[0].first < f[0].fx.info.udp_ports ? 0 : -EADDRNOTAVAIL;	/* past port 65535 */
	if (!err)
		err = mroce_dev_create(top, port, f[0].p[0]->dp, &f[0].fx.local, opts, &dev);
	if (err) {
		top->close(port);
		free(f);
		return err;
	}
	pthread_mutex_lock(&dev->lock);
	snprintf(dev->attr.ifname, sizeof(dev->attr.ifname), "%s", ifname);
	dev->attr.ifindex = f[0].fx.info.ifindex;
	dev->attr.queue = f[0].first;
	dev->attr.queues = (__u8)f[0].n;
	dev->attr.mtu = mtu;
	dev->attr.zero_copy = f[0].fx.zc;
	dev->attr.need_wakeup = true;
	dev->wall_clock = true;
	dev->dev_id = dev_id;
	dev->attr.planes = (__u8)n;
	dev->nplanes = (__u8)n;
	for (__u32 i = 0; i < n; i++) {
		f[i].fx.local.dport = dev->udp_port;
		dev->plane_local[i] = f[i].fx.local;
		dev->plane_dp[i] = f[i].p[0]->dp;
		dev->plane_ifindex[i] = f[i].fx.info.ifindex;
	}
	pthread_mutex_unlock(&dev->lock);
	free(f);
	*devp = dev;
	return 0;
}
