// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only hooks (lib/testhook.h). Kept apart from the engine's files. */
#include <errno.h>

#include "engine.h"
#include "testhook.h"

int mroce_dev_test_seed_random(struct mroce_dev *dev, __u64 seed)
{
	if (!dev || !seed)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	dev->test_rng = seed;
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

int mroce_qp_test_seed_seq(struct mroce_qp *qp, __u32 sq_seq, __u32 rq_seq, __u32 msn, __u32 psn)
{
	int err = 0;

	if (!qp)
		return -EINVAL;
	pthread_mutex_lock(&qp->dev->lock);
	if (qp->state != MROCE_QPS_INIT)
		err = -EISCONN;
	else if (qp->sq_head != qp->sq_tail || qp->streams[0].rq_head != qp->streams[0].rq_tail)
		err = -EBUSY;
	if (!err) {
		qp->sq_head = qp->sq_next = qp->sq_tail = sq_seq;
		qp->streams[0].rq_head = qp->streams[0].rq_tail = rq_seq;
		qp->streams[0].ssn = msn;
		qp->snd_una = qp->snd_nxt = psn;
	}
	pthread_mutex_unlock(&qp->dev->lock);
	return err;
}
