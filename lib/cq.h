/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Completion queues, as the engine sees them. Not installed. */
#ifndef MROCE_CQ_H
#define MROCE_CQ_H

#include <pthread.h>
#include <stdbool.h>

#include "mroce/mroce.h"

/*
 * One producer, the engine (under dev->lock), and the application's pollers,
 * which never take dev->lock: the engine holds it for a whole round, and a
 * poll waiting behind it cost both threads a futex sleep and wake-up every
 * few rounds. tail is published with a release store after the entry,
 * head after the entries are read; pollers serialise among themselves on
 * poll_lock. signaled is the producer's and the pollers' handshake on the
 * eventfd (cq.c).
 */
struct mroce_cq {
	struct mroce_dev	*dev;
	struct mroce_wc		*ring;
	__u32			size;		/* power of two */
	__u32			head, tail;	/* consumer, producer (atomic) */
	int			efd;		/* eventfd: readable while not empty */
	bool			signaled;	/* efd holds a count: a syscall per
						 * empty-to-not-empty change, not per
						 * entry (atomic) */
	bool			quiet;		/* mroce_cq_set_notify(cq, false) (atomic) */
	bool			overflow;	/* (atomic) */
	pthread_mutex_t		poll_lock;	/* pollers among themselves */
	/* Tests only: runs where a push beside an emptying poller is most dangerous. */
	void			(*race_hook)(struct mroce_cq *cq);
};

/* dev->lock held. */
void mroce_cq_push(struct mroce_cq *cq, const struct mroce_wc *wc);

#endif /* MROCE_CQ_H */
