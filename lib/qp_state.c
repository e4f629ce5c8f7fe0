// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * QP state changes requested by the application. Kept apart from the engine
 * so that users above the public API (the collectives) need no engine header.
 */
#include <errno.h>

#include "engine.h"

int mroce_qp_set_error(struct mroce_qp *qp)
{
	if (!qp)
		return -EINVAL;
	pthread_mutex_lock(&qp->dev->lock);
	mroce_qp_fail(qp, MROCE_WC_WR_FLUSH_ERR);	/* nothing if already failed */
	pthread_mutex_unlock(&qp->dev->lock);
	return 0;
}
