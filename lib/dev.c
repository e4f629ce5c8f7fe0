// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A device: one port (AF_XDP socket or a test wire), its QPs and memory
 * regions, and the progress loop that runs the transport. With test_faults
 * the port is wrapped in the fault-injecting one (port_fault.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "engine.h"
#include "internal.h"
#include "port_fault.h"

/* ---- device ------------------------------------------------------------- */

/* Port backends mroce_dev_open() can use; AF_XDP is the only real one (tests use mroce_dev_create). */
static const struct mroce_port_backend backends[] = {
	{ .name = "af_xdp", .open = mroce_port_xsk_open },
};

int mroce_dev_open(const char *ifname, const struct mroce_dev_opts *opts, struct mroce_dev **devp)
{
	return backends[0].open(ifname, opts, devp);
}

__u64 mroce_dev_random64(struct mroce_dev *dev)
{
	__u64 v = 0;

	if (dev->test_rng) {	/* splitmix64 */
		v = (dev->test_rng += 0x9e3779b97f4a7c15ULL);
		v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
		v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
		return v ^ (v >> 31);
	}

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

/*
 * The library's progress: it sleeps on the socket and the wake-up eventfd
 * until the next timer, as soon as a round finds no work. The sleep is
 * capped only so that a wake-up source nobody thought of costs a delay,
 * never a hang: idle, the thread wakes PROGRESS_IDLE_MS apart and costs
 * nothing measurable (it woke every millisecond before: 6.5% of a CPU for
 * an idle mroce-perf server, selftests/test_xsk.sh). Spinning 50 us before
 * each sleep was tried and gave no measurable latency gain on veth (the
 * application's own wake-up on the CQ's fd dominates), so it does not spin.
 */
#define PROGRESS_IDLE_MS	100

static void *progress_thread(void *arg)
{
	struct mroce_dev *dev = arg;

	while (!dev->stop)
		mroce_dev_progress(dev, PROGRESS_IDLE_MS);
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
	dev->pd0 = (struct mroce_pd){ .dev = dev, .is_default = true, .cookie = mroce_pd_cookie() };
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
		err = mroce_port_fault_new(ops, port, faults, &dev->stats.faults, &dev->port);
		if (err) {
			close(dev->wake_fd);
			free(dev);
			return err;
		}
		dev->ops = &mroce_port_fault_ops;
	}
	if (!MROCE_OPT(opts, no_thread, false)) {
		err = -pthread_create(&dev->thread, NULL, progress_thread, dev);
		if (err) {
			if (faults)
				mroce_port_fault_free(dev->port);	/* the caller still owns the inner port */
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
	bool sleep;
	int work;

	if (!dev)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	work = mroce_engine_run(dev, mroce_engine_rx);
	next = mroce_engine_next_timer(dev);
	now = dev->ops->now_us(dev->port);
	/*
	 * Posts made from now on must wake us: they see `sleeping` under the
	 * lock. It is only ever read and written under the lock, so it is
	 * cleared under it too; the wake-up counter is drained after that, so
	 * a kick between waking and clearing does not wake the next sleep for
	 * nothing, and none after it rings (they see it clear).
	 */
	sleep = !work && timeout_ms > 0 && next > now;
	dev->sleeping = sleep;
	pthread_mutex_unlock(&dev->lock);
	if (sleep) {
		__u64 wait = (__u64)timeout_ms * 1000, v;

		if (next - now < wait)
			wait = next - now;
		dev->ops->wait(dev->port, (int)wait, dev->wake_fd);
		pthread_mutex_lock(&dev->lock);
		dev->sleeping = false;
		pthread_mutex_unlock(&dev->lock);
		if (read(dev->wake_fd, &v, sizeof(v)) < 0) {
			/* EAGAIN: nobody rang */
		}
	}
	return work;
}

void mroce_dev_close(struct mroce_dev *dev)
{
	if (!dev)
		return;
	if (dev->thread_running) {
		__u64 one = 1;

		dev->stop = true;
		/* it may be asleep for up to PROGRESS_IDLE_MS: wake it now */
		if (write(dev->wake_fd, &one, sizeof(one)) < 0) {
			/* the counter cannot overflow here; it wakes on its timeout anyway */
		}
		pthread_join(dev->thread, NULL);
	}
	/* QPs the application left open go with the device, flushed. */
	for (__u32 q = 1; q < MROCE_MAX_QPS; q++)
		if (dev->qps[q])
			mroce_destroy_qp(dev->qps[q]);
	mroce_dm_close_all(dev);	/* before the port takes the datapath with it */
	if (dev->ops->close)
		dev->ops->close(dev->port);
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
