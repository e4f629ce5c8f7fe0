// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Congestion control framework: the choice of algorithm per QP, the epoch
 * (about one RTT) the window-based ones act on, and "none", which keeps
 * the window at the QP's BDP cap.
 */
#include <string.h>

#include "cc.h"
#include "engine.h"

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

/*
 * The end of an epoch: a cut counts as one, otherwise the window grows by
 * one packet per RTT; always between 2 packets and the BDP cap.
 */
void mroce_cc_epoch_end(struct mroce_qp *qp, struct mroce_cc_epoch *e, __u32 cw, bool cut,
			__u64 now)
{
	__u32 floor = 2 * 256, cap = qp->attr.max_inflight * 256;

	if (cut) {
		qp->dev->stats.cc_cuts++;
		qp->st.cc_cuts++;
	} else {
		cw += 256;
	}
	qp->cwnd_x256 = cw < floor ? floor : cw > cap ? cap : cw;
	e->epoch_us = now;
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
