/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Completion queues, as the engine sees them. Not installed. */
#ifndef MROCE_CQ_H
#define MROCE_CQ_H

#include <stdbool.h>

#include "mroce/mroce.h"

struct mroce_cq {
	struct mroce_dev	*dev;
	struct mroce_wc		*ring;
	__u32			size;		/* power of two */
	__u32			head, tail;	/* consumer, producer */
	int			efd;		/* eventfd: readable while not empty */
	bool			signaled;	/* efd holds a count: a syscall per
						 * empty-to-not-empty change, not per entry */
	bool			quiet;		/* mroce_cq_set_notify(cq, false) */
	bool			overflow;
};

/* dev->lock held. */
void mroce_cq_push(struct mroce_cq *cq, const struct mroce_wc *wc);

#endif /* MROCE_CQ_H */
