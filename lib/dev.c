// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A device: one port (AF_XDP socket or a test wire), its QPs and memory
 * regions, the progress loop that runs the transport, and the test-only
 * fault injection that sits between the transport and the port.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "engine.h"
#include "internal.h"

/* ---- fault injection (tests only) --------------------------------------- */

static __u32 fault_rand(struct mroce_fault_state *fs)
{
	/* xorshift64*: repeatable from the seed, good enough for dice */
	fs->rng ^= fs->rng >> 12;
	fs->rng ^= fs->rng << 25;
	fs->rng ^= fs->rng >> 27;
	return (__u32)((fs->rng * 2685821657736338717ULL) >> 32);
}

static bool roll(struct mroce_fault_state *fs, __u32 ppm)
{
	return ppm && fault_rand(fs) % 1000000 < ppm;
}

static struct mroce_fault_state *fault_new(const struct mroce_faults *cfg, __u64 salt)
{
	struct mroce_fault_state *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	fs->held = calloc(MROCE_FAULT_HOLD, MROCE_FRAME_MAX);
	if (!fs->held) {
		free(fs);
		return NULL;
	}
	fs->cfg = *cfg;
	fs->rng = ((__u64)cfg->seed << 32 | 0x9e3779b9u) ^ salt;
	if (!fs->rng)
		fs->rng = 1;
	return fs;
}

static void fault_free(struct mroce_fault_state *fs)
{
	if (fs) {
		free(fs->held);
		free(fs);
	}
}

static void release_held(struct mroce_dev *dev, struct mroce_fault_state *fs, __u32 k,
			 void (*deliver)(struct mroce_dev *, const void *, __u32))
{
	__u8 tmp[MROCE_FRAME_MAX];
	__u32 len = fs->held_len[k], last = fs->nheld - 1;

	memcpy(tmp, fs->held[k], len);
	memcpy(fs->held[k], fs->held[last], fs->held_len[last]);
	fs->held_len[k] = fs->held_len[last];
	fs->held_at[k] = fs->held_at[last];
	fs->nheld--;
	deliver(dev, tmp, len);
}

/*
 * Apply one direction's faults to a frame. deliver() is called for every
 * copy that goes on (zero, one or two, now or later, possibly corrupted).
 */
static void fault_apply(struct mroce_dev *dev, struct mroce_fault_state *fs, bool tx,
			const void *frame, __u32 len, void (*deliver)(struct mroce_dev *, const void *, __u32))
{
	const struct mroce_faults *c = &fs->cfg;
	__u32 drop = tx ? c->tx_drop_ppm : c->rx_drop_ppm;
	__u32 dup = tx ? c->tx_dup_ppm : c->rx_dup_ppm;
	__u32 reorder = tx ? c->tx_reorder_ppm : c->rx_reorder_ppm;
	__u32 corrupt = tx ? c->tx_corrupt_ppm : c->rx_corrupt_ppm;
	__u8 tmp[MROCE_FRAME_MAX];
	int copies = 1;

	if (len > MROCE_FRAME_MAX) {
		deliver(dev, frame, len);
		return;
	}
	if (roll(fs, drop)) {
		dev->stats.faults++;
		copies = 0;
	} else if (roll(fs, dup)) {
		dev->stats.faults++;
		copies = 2;
	}
	for (int i = 0; i < copies; i++) {
		const void *out = frame;

		if (roll(fs, corrupt) && len > 14) {
			memcpy(tmp, frame, len);
			tmp[14 + fault_rand(fs) % (len - 14)] ^= (__u8)(1 + fault_rand(fs) % 255);
			out = tmp;
			dev->stats.faults++;
		}
		if (roll(fs, reorder) && fs->nheld < MROCE_FAULT_HOLD) {
			/* Held back; released after later frames, or after a while. */
			memcpy(fs->held[fs->nheld], out, len);
			fs->held_at[fs->nheld] = dev->ops->now_us(dev->port);
			fs->held_len[fs->nheld++] = len;
			dev->stats.faults++;
			continue;
		}
		deliver(dev, out, len);
	}
	/* Let a held frame go with some probability, so it arrives out of order. */
	while (fs->nheld && fault_rand(fs) % 4 == 0) {
		__u32 k = fault_rand(fs) % fs->nheld;

		release_held(dev, fs, k, deliver);
	}
}

/* A frame held back for reordering goes on after at most this long, traffic or not. */
#define FAULT_HOLD_MAX_US	200

static void fault_tick(struct mroce_dev *dev, struct mroce_fault_state *fs,
		       void (*deliver)(struct mroce_dev *, const void *, __u32))
{
	__u64 now = dev->ops->now_us(dev->port);

	for (__u32 k = 0; k < fs->nheld;) {
		if (now - fs->held_at[k] >= FAULT_HOLD_MAX_US)
			release_held(dev, fs, k, deliver);
		else
			k++;
	}
}

static void deliver_tx(struct mroce_dev *dev, const void *frame, __u32 len)
{
	__u32 cap;
	void *buf = dev->ops->tx_buf(dev->port, &cap);

	if (!buf || cap < len) {
		if (buf)
			dev->ops->tx_send(dev->port, buf, 0);
		return;	/* no room: as good as lost, the transport recovers */
	}
	memcpy(buf, frame, len);
	dev->ops->tx_send(dev->port, buf, len);
}

void mroce_dev_xmit(struct mroce_dev *dev, void *buf, __u32 len)
{
	if (!dev->txf) {
		dev->ops->tx_send(dev->port, buf, len);
		return;
	}
	/* The frame leaves its TX buffer through fault_apply's copies. */
	memcpy(dev->scratch, buf, len);
	dev->ops->tx_send(dev->port, buf, 0);
	fault_apply(dev, dev->txf, true, dev->scratch, len, deliver_tx);
}

static void deliver_rx(struct mroce_dev *dev, const void *frame, __u32 len)
{
	mroce_engine_rx(dev, frame, len);
}

static void rx_faulty(void *ctx, const void *frame, __u32 len)
{
	struct mroce_dev *dev = ctx;

	fault_apply(dev, dev->rxf, false, frame, len, deliver_rx);
}

/* ---- device ------------------------------------------------------------- */

__u64 mroce_random64(void)
{
	__u64 v = 0;

	/* getrandom() on a healthy system never fails for 8 bytes after boot. */
	while (getrandom(&v, sizeof(v), 0) != sizeof(v))
		;
	return v;
}

void mroce_dev_kick(struct mroce_dev *dev)
{
	__u64 one = 1;

	if (dev->sleeping && write(dev->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow in practice; the thread wakes anyway on its timeout */
	}
}

static void *progress_thread(void *arg)
{
	struct mroce_dev *dev = arg;

	while (!dev->stop)
		mroce_dev_progress(dev, 1);
	return NULL;
}

int mroce_dev_create(const struct mroce_port_ops *ops, void *port, struct mroce_dp *dp,
		     const struct mroce_route *local, const struct mroce_dev_opts *opts,
		     struct mroce_dev **devp)
{
	const struct mroce_faults *faults = MROCE_OPT(opts, test_faults, NULL);
	struct mroce_dev *dev = calloc(1, sizeof(*dev));
	int err;

	if (!dev)
		return -ENOMEM;
	pthread_mutex_init(&dev->lock, NULL);
	dev->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (dev->wake_fd < 0) {
		err = -errno;
		free(dev);
		return err;
	}
	dev->ops = ops;
	dev->port = port;
	dev->dp = dp;
	dev->local = *local;
	dev->udp_port = local->dport ? local->dport : MROCE_DEFAULT_PORT;
	dev->local.dport = dev->udp_port;
	memcpy(dev->attr.mac, local->src_mac, 6);
	if (faults) {
		dev->txf = fault_new(faults, 1);
		dev->rxf = fault_new(faults, 2);
		if (!dev->txf || !dev->rxf) {
			fault_free(dev->txf);
			fault_free(dev->rxf);
			close(dev->wake_fd);
			free(dev);
			return -ENOMEM;
		}
	}
	if (!MROCE_OPT(opts, no_thread, false)) {
		err = -pthread_create(&dev->thread, NULL, progress_thread, dev);
		if (err) {
			fault_free(dev->txf);
			fault_free(dev->rxf);
			close(dev->wake_fd);
			free(dev);
			return err;
		}
		dev->thread_running = true;
		dev->attr.thread = true;
	}
	*devp = dev;
	return 0;
}

int mroce_dev_progress(struct mroce_dev *dev, int timeout_ms)
{
	__u64 now, next;
	int work;

	if (!dev)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	if (dev->txf) {
		fault_tick(dev, dev->txf, deliver_tx);
		fault_tick(dev, dev->rxf, deliver_rx);
	}
	work = mroce_engine_run(dev, dev->rxf ? rx_faulty : mroce_engine_rx);
	next = mroce_engine_next_timer(dev);
	now = dev->ops->now_us(dev->port);
	/* Posts made from now on must wake us: they see `sleeping` under the lock. */
	dev->sleeping = !work && timeout_ms > 0 && next > now;
	pthread_mutex_unlock(&dev->lock);
	if (dev->sleeping) {
		__u64 wait = (__u64)timeout_ms * 1000, v;

		if (next - now < wait)
			wait = next - now;
		dev->ops->wait(dev->port, (int)wait, dev->wake_fd);
		if (read(dev->wake_fd, &v, sizeof(v)) < 0) {
			/* EAGAIN: nobody rang */
		}
		__atomic_store_n(&dev->sleeping, false, __ATOMIC_RELAXED);
	}
	return work;
}

void mroce_dev_close(struct mroce_dev *dev)
{
	if (!dev)
		return;
	if (dev->thread_running) {
		dev->stop = true;
		pthread_join(dev->thread, NULL);
	}
	/* QPs the application left open go with the device, flushed. */
	for (__u32 q = 1; q < MROCE_MAX_QPS; q++)
		if (dev->qps[q])
			mroce_destroy_qp(dev->qps[q]);
	if (dev->ops->close)
		dev->ops->close(dev->port);
	fault_free(dev->txf);
	fault_free(dev->rxf);
	close(dev->wake_fd);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

int mroce_dev_query(struct mroce_dev *dev, struct mroce_dev_attr *attr)
{
	if (!dev || !attr)
		return -EINVAL;
	*attr = dev->attr;
	return 0;
}

int mroce_dev_stats(struct mroce_dev *dev, struct mroce_dev_stats *stats)
{
	if (!dev || !stats)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	*stats = dev->stats;
	if (dev->ops->stats)
		dev->ops->stats(dev->port, stats);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}
