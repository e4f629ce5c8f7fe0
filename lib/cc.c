// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Congestion control framework: the choice of algorithm per QP, the epoch
 * (about one RTT) the window-based ones act on, and "none", which keeps
 * the window at the QP's BDP cap.
 */
#include <string.h>

#include "cc.h"

void mroce_cc_init_window(struct mroce_qp *qp)
{
	qp->cwnd_x256 = qp->attr.max_inflight * 256;	/* start at the BDP cap, as IRN does */
}

void mroce_cc_init_none(struct mroce_qp *qp)
{
	memset(qp->cc_priv, 0, sizeof(qp->cc_priv));
	mroce_cc_init_window(qp);
}

static __u32 none_window(const struct mroce_qp *qp)
{
	return qp->attr.max_inflight;
}

const struct mroce_cc_ops mroce_cc_none = {
	.name = "none",
	.init = mroce_cc_init_none,
	.window = none_window,
};

/* Packets in flight the window allows: at least one, at most the BDP cap. */
__u32 mroce_cc_clamp_window(const struct mroce_qp *qp)
{
	__u32 cw = qp->cwnd_x256 / 256;

	return cw < 1 ? 1 : cw < qp->attr.max_inflight ? cw : qp->attr.max_inflight;
}

bool mroce_cc_epoch_over(const struct mroce_qp *qp, const struct mroce_cc_epoch *e, __u64 now)
{
	return now - e->epoch_us >= (qp->srtt_us > 20 ? qp->srtt_us : 20);
}

#define CC_FLOOR_X256	(2 * 256)	/* the window never goes below 2 packets */

/* Set the window, between its floor and the BDP cap; a cut is counted. */
static void cc_set(struct mroce_qp *qp, __u32 cw, bool cut)
{
	__u32 cap = qp->attr.max_inflight * 256;

	if (cut) {
		qp->dev->stats.cc_cuts++;
		qp->st.cc_cuts++;
	}
	qp->cwnd_x256 = cw < CC_FLOOR_X256 ? CC_FLOOR_X256 : cw > cap ? cap : cw;
}

/* The end of an epoch: a cut counts as one, otherwise the window grows by one packet per RTT. */
void mroce_cc_epoch_end(struct mroce_qp *qp, struct mroce_cc_epoch *e, __u32 cw, bool cut,
			__u64 now)
{
	cc_set(qp, cut ? cw : cw + 256, cut);
	e->epoch_us = now;
}

/*
 * Declared losses: halve the window, at most once per RTT, since the
 * packets one overflow of a queue takes are declared lost over about one
 * RTT and are one congestion event (as TCP's fast recovery treats them).
 * A lossy tail-drop queue that never marks is a signal ECN alone misses.
 */
void mroce_cc_loss_cut(struct mroce_qp *qp, struct mroce_cc_epoch *e, __u64 now)
{
	if (now - e->loss_cut_us < (qp->srtt_us > 20 ? qp->srtt_us : 20))
		return;
	e->loss_cut_us = now;
	cc_set(qp, qp->cwnd_x256 / 2, true);
}

/* The retransmission timer fired: nothing got through for an RTO, start again from the floor. */
void mroce_cc_rto_floor(struct mroce_qp *qp, struct mroce_cc_epoch *e, __u64 now)
{
	e->loss_cut_us = e->epoch_us = now;
	cc_set(qp, CC_FLOOR_X256, true);
}

void mroce_cc_init(struct mroce_qp *qp)
{
	const struct mroce_cc_ops *ops = &mroce_cc_none;

	if (qp->attr.cc_ecn && qp->attr.cc_delay)
		ops = &mroce_cc_dctcp_swift;
	else if (qp->attr.cc_ecn)
		ops = &mroce_cc_dctcp;
	else if (qp->attr.cc_delay)
		ops = &mroce_cc_swift;
	qp->cc = ops;
	ops->init(qp);
}
