// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A device: one port (AF_XDP socket or a test wire), its QPs and memory
 * regions, and the progress loop that runs the transport. With test_faults
 * the port is wrapped in the fault-injecting one (port_fault.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "eng_int.h"
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
 * New requests on qp. While the progress thread sleeps, the posting thread
 * sends them itself (it holds dev->lock, which is all the engine and the
 * port's rings need) instead of waking it: a wake-up and two context
 * switches fewer per post, which is what a ping-pong and a small-message
 * rate on its thread pay for most (docs/benchmarks.md). The sleeper's
 * deadline is moved earlier through its timerfd if the send started a
 * timer before it (a retransmission timeout), and arriving ACKs wake it
 * through its socket as before. A port without a timer fd for the thread,
 * or the fault-injecting test port (its held frames set deadlines of their
 * own), gets the wake-up.
 */
void mroce_dev_post_kick(struct mroce_dev *dev, struct mroce_qp *qp)
{
	struct itimerspec its = {};
	__u64 now, next;

	mroce_qp_due_now(qp);
	if (!dev->sleeping)
		return;
	/*
	 * With packets in flight, sending each post from here would cost a
	 * system call per post where the thread sends a burst with one: only a
	 * QP with nothing outstanding (a ping-pong's, a first request's) sends
	 * inline.
	 */
	now = dev->ops->now_us(dev->port);
	if (!dev->sleep_on_timer || dev->ops == &mroce_port_fault_ops || qp->snd_nxt != qp->snd_una) {
		if (now < dev->round_due_us)
			dev->round_due_us = now;	/* the woken thread's lateness is a stall */
		mroce_dev_kick(dev);
		return;
	}
	dev->tx_refused = false;
	mroce_qp_tx(qp, now);
	dev->ops->tx_flush(dev->port);
	if (dev->tx_refused) {
		mroce_dev_kick(dev);	/* no buffer now: the thread retries when one frees */
		return;
	}
	next = mroce_engine_next_timer(dev);
	if (next >= dev->sleep_until)
		return;
	its.it_value.tv_sec = (time_t)(next / 1000000);
	its.it_value.tv_nsec = (long)(next % 1000000) * 1000;
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;	/* all zero would disarm it */
	if (timerfd_settime(dev->timer_fd, TFD_TIMER_ABSTIME, &its, NULL))
		mroce_dev_kick(dev);
	else
		dev->sleep_until = next;
	if (next < dev->round_due_us)
		dev->round_due_us = next;
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

static void wait_fds_close(struct mroce_dev *dev)
{
	if (dev->timer_fd >= 0)
		close(dev->timer_fd);
	if (dev->wait_fd >= 0)
		close(dev->wait_fd);
	dev->timer_fd = dev->wait_fd = -1;
}

/*
 * What the progress thread sleeps on besides its socket: the wake-up eventfd
 * and a timerfd that posting threads move its deadline earlier with
 * (mroce_dev_post_kick), both behind one epoll fd. Without them (cannot
 * happen short of running out of descriptors) posts wake it as before.
 */
static void wait_fds_open(struct mroce_dev *dev)
{
	struct epoll_event ev = { .events = EPOLLIN };

	dev->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	dev->wait_fd = epoll_create1(EPOLL_CLOEXEC);
	if (dev->timer_fd >= 0 && dev->wait_fd >= 0 &&
	    !epoll_ctl(dev->wait_fd, EPOLL_CTL_ADD, dev->wake_fd, &ev) &&
	    !epoll_ctl(dev->wait_fd, EPOLL_CTL_ADD, dev->timer_fd, &ev))
		return;
	wait_fds_close(dev);
}

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
	dev->timer_fd = dev->wait_fd = -1;
	dev->ops = ops;
	dev->port = port;
	dev->dp = dp;
	dev->local = *local;
	dev->udp_port = local->dport ? local->dport : MROCE_DEFAULT_PORT;
	dev->local.dport = dev->udp_port;
	dev->nplanes = 1;	/* a port over several sets them after (port_xsk.c) */
	dev->plane_local[0] = dev->local;
	dev->plane_dp[0] = dp;
	memcpy(dev->attr.mac, local->src_mac, 6);
	dev->attr.queues = 1;	/* the AF_XDP port sets its own (port_xsk.c) */
	dev->grant.off = MROCE_OPT(opts, no_rate_grants, false);
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
		wait_fds_open(dev);
		err = -pthread_create(&dev->thread, NULL, progress_thread, dev);
		if (err) {
			if (faults)
				mroce_port_fault_free(dev->port);	/* the caller still owns the inner port */
			wait_fds_close(dev);
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
	/*
	 * This round comes this late after the time the last one wanted the
	 * next: the transport had no CPU, or its application did not call
	 * (loss.c, "Scheduling stalls"). The gaps of a polling application
	 * (timeout 0) count whole: it means to run the transport all the time.
	 */
	now = dev->ops->now_us(dev->port);
	mroce_stall_note(&dev->stall_us, &dev->stall_at_us,
			 dev->round_due_us && now > dev->round_due_us ?
			 (__u32)(now - dev->round_due_us < UINT32_MAX ? now - dev->round_due_us : UINT32_MAX) : 0,
			 now);
	work = mroce_engine_run_round(dev, mroce_engine_rx, !dev->ops->tx_kick);
	if (dev->ops->tx_kick) {
		/*
		 * The doorbell outside the lock: on copy-mode AF_XDP the kernel
		 * transmits, and runs the peer's receive, inside it, and a post
		 * meanwhile does not wait behind that (a futex sleep and wake-up
		 * each time it did). The thread is not `sleeping`, so such a post
		 * only makes its QP due, which the timer below then sees.
		 */
		pthread_mutex_unlock(&dev->lock);
		dev->ops->tx_kick(dev->port);
		pthread_mutex_lock(&dev->lock);
		/*
		 * Back under the lock: the transmit buffers the kernel is done
		 * with go back to the pool now, the most recent first, while
		 * still in cache (a kick still owed, if any, goes too). Left
		 * until the pool ran dry, every frame was built in a buffer
		 * all the others had gone through since (16 MiB of them with
		 * the 32 MiB UMEM then): 17% less throughput.
		 */
		dev->ops->tx_flush(dev->port);
	}
	next = mroce_engine_next_timer(dev);
	now = dev->ops->now_us(dev->port);
	/*
	 * A caller that polls (no wait) wants the next round at once, one that
	 * waits, at the timer; so does a simulation's, whose clock jumps to
	 * the next event.
	 */
	dev->round_due_us = (timeout_ms > 0 || !dev->wall_clock) && next > now ? next : now;
	/*
	 * Posts made from now on must wake us: they see `sleeping` under the
	 * lock. It is only ever read and written under the lock, so it is
	 * cleared under it too; the wake-up counter is drained after that, so
	 * a kick between waking and clearing does not wake the next sleep for
	 * nothing, and none after it rings (they see it clear).
	 */
	sleep = !work && timeout_ms > 0 && next > now;
	dev->sleeping = sleep;
	if (sleep) {
		__u64 wait = (__u64)timeout_ms * 1000, v;

		if (next - now < wait)
			wait = next - now;
		/* Only the progress thread sleeps on the timerfd; others are woken with the eventfd. */
		dev->sleep_until = now + wait;
		dev->sleep_on_timer = dev->wait_fd >= 0 && dev->thread_running &&
				      pthread_equal(pthread_self(), dev->thread);
		pthread_mutex_unlock(&dev->lock);
		dev->ops->wait(dev->port, (int)wait, dev->sleep_on_timer ? dev->wait_fd : dev->wake_fd);
		pthread_mutex_lock(&dev->lock);
		dev->sleeping = false;
		dev->sleep_on_timer = false;
		pthread_mutex_unlock(&dev->lock);
		if (read(dev->wake_fd, &v, sizeof(v)) < 0) {
			/* EAGAIN: nobody rang */
		}
		if (dev->timer_fd >= 0 && read(dev->timer_fd, &v, sizeof(v)) < 0) {
			/* EAGAIN: not expired */
		}
	} else {
		pthread_mutex_unlock(&dev->lock);
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
	wait_fds_close(dev);
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

int mroce_dev_udp_port(struct mroce_dev *dev)
{
	return dev ? dev->udp_port : -EINVAL;
}

/* The layouts earlier libraries' callers were built with: they only grow into padding. */
_Static_assert(sizeof(struct mroce_dev_attr) == 40, "mroce_dev_attr's size is ABI");
_Static_assert(sizeof(struct mroce_dp_info) == 100, "mroce_dp_info's size is ABI");

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
