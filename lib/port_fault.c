// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fault injection for tests, as a port between the transport and the real
 * one (lib/port_fault.h): a device created with test_faults talks to this
 * port, which applies the faults and passes frames on to the inner port.
 * Without test_faults the device talks to its port directly and nothing
 * here runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "port_fault.h"

#define FAULT_HOLD		8	/* frames a reorder fault can hold back */
/* A frame held back for reordering goes on after at most this long, traffic or not. */
#define FAULT_HOLD_MAX_US	200

struct fault_dir {
	__u64	rng;
	__u8	(*held)[MROCE_FRAME_MAX];
	__u32	held_len[FAULT_HOLD];
	__u64	held_at[FAULT_HOLD];
	__u32	nheld;
	bool	tx;
};

struct fault_port {
	const struct mroce_port_ops *ops;	/* the inner port */
	void			*port;
	struct mroce_faults	cfg;
	__u64			*faults;	/* the device's counter */
	struct fault_dir	txd, rxd;
	/* the receive callback of the burst in progress */
	mroce_rx_cb		rx_cb;
	void			*rx_ctx;
	__u8			scratch[MROCE_FRAME_MAX];
};

/*
 * The fault port whose receive burst runs on this thread. The inner port
 * gets the caller's ctx unchanged (a port may look at it: the simulated
 * wire's XDP stand-in reads the device), so the callback finds its fault
 * port here rather than in ctx.
 */
static __thread struct fault_port *rx_port;

static __u32 fault_rand(struct fault_dir *d)
{
	/* xorshift64*: repeatable from the seed, good enough for dice */
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return (__u32)((d->rng * 2685821657736338717ULL) >> 32);
}

static bool roll(struct fault_dir *d, __u32 ppm)
{
	return ppm && fault_rand(d) % 1000000 < ppm;
}

/* Where a frame goes on: out through the inner port, or up to the transport. */
static void deliver(struct fault_port *fp, struct fault_dir *d, const void *frame, __u32 len)
{
	__u32 cap;
	void *buf;

	if (!d->tx) {
		fp->rx_cb(fp->rx_ctx, frame, len, 0);
		return;
	}
	buf = fp->ops->tx_buf(fp->port, &cap);
	if (!buf || cap < len) {
		if (buf)
			fp->ops->tx_send(fp->port, buf, 0);
		return;	/* no room: as good as lost, the transport recovers */
	}
	memcpy(buf, frame, len);
	fp->ops->tx_send(fp->port, buf, len);
}

static void release_held(struct fault_port *fp, struct fault_dir *d, __u32 k)
{
	__u8 tmp[MROCE_FRAME_MAX];
	__u32 len = d->held_len[k], last = d->nheld - 1;

	memcpy(tmp, d->held[k], len);
	memcpy(d->held[k], d->held[last], d->held_len[last]);
	d->held_len[k] = d->held_len[last];
	d->held_at[k] = d->held_at[last];
	d->nheld--;
	deliver(fp, d, tmp, len);
}

/* One copy of a frame: maybe corrupted, maybe held back, else delivered. */
static void fault_copy(struct fault_port *fp, struct fault_dir *d, const void *frame, __u32 len,
		       __u32 corrupt, __u32 reorder)
{
	__u8 tmp[MROCE_FRAME_MAX];
	const void *out = frame;

	if (roll(d, corrupt) && len > 14) {
		memcpy(tmp, frame, len);
		tmp[14 + fault_rand(d) % (len - 14)] ^= (__u8)(1 + fault_rand(d) % 255);
		out = tmp;
		(*fp->faults)++;
	}
	if (roll(d, reorder) && d->nheld < FAULT_HOLD) {
		/* Held back; released after later frames, or after a while. */
		memcpy(d->held[d->nheld], out, len);
		d->held_at[d->nheld] = fp->ops->now_us(fp->port);
		d->held_len[d->nheld++] = len;
		(*fp->faults)++;
		return;
	}
	deliver(fp, d, out, len);
}

/* Apply one direction's faults to a frame: zero, one or two copies go on, now or later. */
static void fault_apply(struct fault_port *fp, struct fault_dir *d, const void *frame, __u32 len)
{
	const struct mroce_faults *c = &fp->cfg;
	__u32 drop = d->tx ? c->tx_drop_ppm : c->rx_drop_ppm;
	__u32 dup = d->tx ? c->tx_dup_ppm : c->rx_dup_ppm;
	__u32 reorder = d->tx ? c->tx_reorder_ppm : c->rx_reorder_ppm;
	__u32 corrupt = d->tx ? c->tx_corrupt_ppm : c->rx_corrupt_ppm;
	int copies = 1;

	if (len > MROCE_FRAME_MAX) {
		deliver(fp, d, frame, len);
		return;
	}
	if (roll(d, drop)) {
		(*fp->faults)++;
		copies = 0;
	} else if (roll(d, dup)) {
		(*fp->faults)++;
		copies = 2;
	}
	for (int i = 0; i < copies; i++)
		fault_copy(fp, d, frame, len, corrupt, reorder);
	/* Let a held frame go with some probability, so it arrives out of order. */
	while (d->nheld && fault_rand(d) % 4 == 0) {
		__u32 k = fault_rand(d) % d->nheld;

		release_held(fp, d, k);
	}
}

static void fault_tick(struct fault_port *fp, struct fault_dir *d)
{
	__u64 now = fp->ops->now_us(fp->port);

	for (__u32 k = 0; k < d->nheld;) {
		if (now - d->held_at[k] >= FAULT_HOLD_MAX_US)
			release_held(fp, d, k);
		else
			k++;
	}
}

static void *fp_tx_buf(void *port, __u32 *cap)
{
	struct fault_port *fp = port;

	return fp->ops->tx_buf(fp->port, cap);
}

static void fp_tx_send(void *port, void *buf, __u32 len)
{
	struct fault_port *fp = port;

	if (!len) {
		fp->ops->tx_send(fp->port, buf, 0);	/* a buffer given back */
		return;
	}
	/* The frame leaves its TX buffer through fault_apply's copies. */
	memcpy(fp->scratch, buf, len);
	fp->ops->tx_send(fp->port, buf, 0);
	fault_apply(fp, &fp->txd, fp->scratch, len);
}

/* Frames held back to reorder leave later on whichever plane is selected then. */
static void fp_select_plane(void *port, __u32 plane)
{
	struct fault_port *fp = port;

	if (fp->ops->select_plane)
		fp->ops->select_plane(fp->port, plane);
}

static void fp_tx_flush(void *port)
{
	struct fault_port *fp = port;

	fp->ops->tx_flush(fp->port);
}

static void fp_rx_one(void *ctx, const void *frame, __u32 len, __u32 placed_len)
{
	struct fault_port *fp = rx_port;

	(void)ctx;	/* fp->rx_ctx, the same */
	/*
	 * A frame XDP placed has crossed the wire already: it can still be
	 * lost on its way up (the payload is in memory then, unacknowledged,
	 * and is sent and placed again), but it is not the wire's to corrupt,
	 * copy or hold back.
	 */
	if (placed_len) {
		if (roll(&fp->rxd, fp->cfg.rx_drop_ppm))
			(*fp->faults)++;
		else
			fp->rx_cb(fp->rx_ctx, frame, len, placed_len);
		return;
	}
	fault_apply(fp, &fp->rxd, frame, len);
}

/* Frames held back too long go on first (both ways), then what arrives now. */
static int fp_rx_burst(void *port, mroce_rx_cb cb, void *ctx, int budget)
{
	struct fault_port *fp = port, *outer = rx_port;
	int n;

	fp->rx_cb = cb;
	fp->rx_ctx = ctx;
	fault_tick(fp, &fp->txd);
	fault_tick(fp, &fp->rxd);
	rx_port = fp;
	n = fp->ops->rx_burst(fp->port, fp_rx_one, ctx, budget);
	rx_port = outer;
	return n;
}

/* The sleep ends when a held frame is due, however long the transport would sleep. */
static void fp_wait(void *port, int timeout_us, int wake_fd)
{
	struct fault_port *fp = port;
	__u64 now = fp->ops->now_us(fp->port);
	const struct fault_dir *dirs[2] = { &fp->txd, &fp->rxd };

	for (int i = 0; i < 2; i++)
		for (__u32 k = 0; k < dirs[i]->nheld; k++) {
			__u64 due = dirs[i]->held_at[k] + FAULT_HOLD_MAX_US;
			__u64 left = due > now ? due - now : 0;

			if (left < (__u64)timeout_us)
				timeout_us = (int)left;
		}
	if (timeout_us > 0)
		fp->ops->wait(fp->port, timeout_us, wake_fd);
}

static __u64 fp_now_us(void *port)
{
	struct fault_port *fp = port;

	return fp->ops->now_us(fp->port);
}

static void fp_close(void *port)
{
	struct fault_port *fp = port;

	if (fp->ops->close)
		fp->ops->close(fp->port);
	mroce_port_fault_free(fp);
}

/*
 * Sends from where the payload is (the inner port's transmit pool) pass
 * through only while nothing is injected on transmit: a frame the faults
 * may copy, hold or duplicate is built whole, by the engine's copy.
 * Faults on receive still apply to what comes back.
 */
static bool fp_tx_can_ref(void *port, const void *payload, __u32 len)
{
	struct fault_port *fp = port;
	const struct mroce_faults *c = &fp->cfg;

	return fp->ops->tx_can_ref && !c->tx_drop_ppm && !c->tx_dup_ppm && !c->tx_reorder_ppm &&
	       !c->tx_corrupt_ppm && fp->ops->tx_can_ref(fp->port, payload, len);
}

static void fp_tx_send_ref(void *port, void *buf, __u32 hdr_len, const void *payload, __u32 len)
{
	struct fault_port *fp = port;

	fp->ops->tx_send_ref(fp->port, buf, hdr_len, payload, len);
}

static int fp_pool_alloc(void *port, size_t len, void **addr)
{
	struct fault_port *fp = port;

	return fp->ops->pool_alloc ? fp->ops->pool_alloc(fp->port, len, addr) : -EOPNOTSUPP;
}

static int fp_pool_free(void *port, void *addr)
{
	struct fault_port *fp = port;

	return fp->ops->pool_free ? fp->ops->pool_free(fp->port, addr) : -EINVAL;
}

static void fp_stats(void *port, struct mroce_dev_stats *stats)
{
	struct fault_port *fp = port;

	if (fp->ops->stats)
		fp->ops->stats(fp->port, stats);
}

const struct mroce_port_ops mroce_port_fault_ops = {
	.tx_buf = fp_tx_buf,
	.tx_send = fp_tx_send,
	.tx_flush = fp_tx_flush,
	.select_plane = fp_select_plane,
	.rx_burst = fp_rx_burst,
	.wait = fp_wait,
	.now_us = fp_now_us,
	.close = fp_close,
	.stats = fp_stats,
	.tx_can_ref = fp_tx_can_ref,
	.tx_send_ref = fp_tx_send_ref,
	.pool_alloc = fp_pool_alloc,
	.pool_free = fp_pool_free,
};

static int dir_init(struct fault_dir *d, const struct mroce_faults *cfg, __u64 salt, bool tx)
{
	d->held = calloc(FAULT_HOLD, MROCE_FRAME_MAX);
	if (!d->held)
		return -ENOMEM;
	d->rng = ((__u64)cfg->seed << 32 | 0x9e3779b9u) ^ salt;
	if (!d->rng)
		d->rng = 1;
	d->tx = tx;
	return 0;
}

int mroce_port_fault_new(const struct mroce_port_ops *ops, void *port, const struct mroce_faults *cfg,
			 __u64 *faults, void **fport)
{
	struct fault_port *fp = calloc(1, sizeof(*fp));

	if (!fp)
		return -ENOMEM;
	fp->ops = ops;
	fp->port = port;
	fp->cfg = *cfg;
	fp->faults = faults;
	if (dir_init(&fp->txd, cfg, 1, true) || dir_init(&fp->rxd, cfg, 2, false)) {
		mroce_port_fault_free(fp);
		return -ENOMEM;
	}
	*fport = fp;
	return 0;
}

void mroce_port_fault_free(void *fport)
{
	struct fault_port *fp = fport;

	if (fp) {
		free(fp->txd.held);
		free(fp->rxd.held);
		free(fp);
	}
}
