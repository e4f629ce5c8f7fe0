// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Completion queues: a ring per CQ the engine pushes into, polled by the
 * application, with an eventfd readable while it is not empty.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine.h"

int mroce_create_cq(struct mroce_dev *dev, __u32 cqe, struct mroce_cq **cqp)
{
	struct mroce_cq *cq;
	__u32 size = 16;

	if (!dev || !cqp || !cqe || cqe > (1u << 24))
		return -EINVAL;
	while (size < cqe)
		size <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->ring = calloc(size, sizeof(*cq->ring));
	cq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!cq->ring || cq->efd < 0) {
		int err = cq->efd < 0 ? -errno : -ENOMEM;

		free(cq->ring);
		if (cq->efd >= 0)
			close(cq->efd);
		free(cq);
		return err;
	}
	pthread_mutex_init(&cq->poll_lock, NULL);
	cq->dev = dev;
	cq->size = size;
	*cqp = cq;
	return 0;
}

int mroce_destroy_cq(struct mroce_cq *cq)
{
	struct mroce_dev *dev;

	if (!cq)
		return -EINVAL;
	dev = cq->dev;
	pthread_mutex_lock(&dev->lock);
	for (__u32 i = 0; i < MROCE_MAX_QPS; i++) {
		struct mroce_qp *qp = dev->qps[i];

		if (qp && (qp->send_cq == cq || qp->recv_cq == cq)) {
			pthread_mutex_unlock(&dev->lock);
			return -EBUSY;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	close(cq->efd);
	pthread_mutex_destroy(&cq->poll_lock);
	free(cq->ring);
	free(cq);
	return 0;
}

/*
 * The eventfd's handshake. The producer publishes tail, then rings unless
 * signaled was already set; a poller that empties the ring drains the fd,
 * clears signaled, then looks at tail again and rings itself if an entry
 * came meanwhile. Both sides' store-then-load are sequentially consistent,
 * so at least one of them sees the other's: a completion is never left in
 * the ring with the fd quiet.
 */
static void cq_signal(struct mroce_cq *cq)
{
	__u64 one = 1;

	if (__atomic_load_n(&cq->quiet, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&cq->signaled, __ATOMIC_SEQ_CST) ||
	    __atomic_exchange_n(&cq->signaled, true, __ATOMIC_SEQ_CST))
		return;
	if (write(cq->efd, &one, sizeof(one)) < 0) {
		/* counter saturation is impossible at 2^64 - 1; nothing to do */
	}
}

/* dev->lock held: the only producer. */
void mroce_cq_push(struct mroce_cq *cq, const struct mroce_wc *wc)
{
	if (cq->tail - __atomic_load_n(&cq->head, __ATOMIC_ACQUIRE) >= cq->size) {
		/* QPs are sized so this cannot happen; if it does, say so. */
		__atomic_store_n(&cq->overflow, true, __ATOMIC_RELEASE);
		return;
	}
	cq->ring[cq->tail & (cq->size - 1)] = *wc;
	__atomic_store_n(&cq->tail, cq->tail + 1, __ATOMIC_SEQ_CST);
	cq_signal(cq);
}

int mroce_poll_cq(struct mroce_cq *cq, int n, struct mroce_wc *wc)
{
	__u32 head, tail;
	int got = 0;
	__u64 v;

	if (!cq || n < 0 || (n && !wc))
		return -EINVAL;
	pthread_mutex_lock(&cq->poll_lock);
	if (__atomic_load_n(&cq->overflow, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&cq->poll_lock);
		return -EOVERFLOW;
	}
	head = cq->head;
	tail = __atomic_load_n(&cq->tail, __ATOMIC_ACQUIRE);
	while (got < n && head != tail)
		wc[got++] = cq->ring[head++ & (cq->size - 1)];
	__atomic_store_n(&cq->head, head, __ATOMIC_RELEASE);
	if (head == tail && __atomic_load_n(&cq->signaled, __ATOMIC_SEQ_CST)) {
		if (read(cq->efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: already clear */
		}
		if (cq->race_hook)
			cq->race_hook(cq);
		__atomic_store_n(&cq->signaled, false, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&cq->tail, __ATOMIC_SEQ_CST) != head)
			cq_signal(cq);	/* one came between the read and the clear */
	}
	pthread_mutex_unlock(&cq->poll_lock);
	return got;
}

int mroce_cq_fd(const struct mroce_cq *cq)
{
	return cq ? cq->efd : -EINVAL;
}

int mroce_cq_set_notify(struct mroce_cq *cq, bool on)
{
	if (!cq)
		return -EINVAL;
	pthread_mutex_lock(&cq->poll_lock);
	__atomic_store_n(&cq->quiet, !on, __ATOMIC_SEQ_CST);
	/* Entries that came while quiet: readable now. */
	if (on && __atomic_load_n(&cq->tail, __ATOMIC_SEQ_CST) != cq->head)
		cq_signal(cq);
	pthread_mutex_unlock(&cq->poll_lock);
	return 0;
}

const char *mroce_wc_status_str(enum mroce_wc_status s)
{
	static const char *const names[] = {
		[MROCE_WC_SUCCESS] = "success",
		[MROCE_WC_LOC_LEN_ERR] = "local length error",
		[MROCE_WC_LOC_PROT_ERR] = "local protection error",
		[MROCE_WC_REM_ACCESS_ERR] = "remote access error",
		[MROCE_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[MROCE_WC_RNR_RETRY_EXC_ERR] = "receiver-not-ready retries exceeded",
		[MROCE_WC_RETRY_EXC_ERR] = "transport retries exceeded",
		[MROCE_WC_WR_FLUSH_ERR] = "flushed",
		[MROCE_WC_REM_OP_ERR] = "remote operation error",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown status";
}
