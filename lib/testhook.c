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

/*
 * What the XDP program drops before user space sees a frame (the same
 * shared checks as bpf/mroce.bpf.c), for ports that have no XDP program in
 * front of them: the simulated wire of the unit tests and the simulator's
 * hosts (sim/), so a simulated receiver meets the same early drops as a real one.
 */
bool mroce_dev_test_xdp_drops(struct mroce_dev *dev, const void *frame, __u32 len)
{
	struct mroce_pkt pkt;
	struct mroce_qp *qp;
	__u32 qpn, psn;
	__u64 now;
	int v;

	if (mroce_parse(frame, (const __u8 *)frame + len, dev->udp_port, &pkt) != MROCE_STAT_RX)
		return true;
	qpn = mroce_be32(pkt.bth->dqpn);
	qp = qpn && qpn < MROCE_MAX_QPS ? dev->qps[qpn] : NULL;
	if (!qp || qp->flow->state != MROCE_FLOW_ACTIVE || pkt.bth->token != qp->flow->token)
		return true;
	if (!(pkt.layout & MROCE_EXT_SEQ))
		return false;
	psn = mroce_be32(pkt.bth->psn);
	v = mroce_rxwin_check(qp->flow, psn);
	if (v == MROCE_RXWIN_BEYOND)
		return true;
	if (v == MROCE_RXWIN_DUP)
		return !(pkt.bth->flags & MROCE_F_DUP_ANSWER);	/* not rate-limited here */
	if (!(qp->flow->flags & MROCE_FLOW_GO_BACK_N))
		return false;
	/* a virtual clock may start at 0: the state's zeros are an interval ago */
	now = dev->ops->now_us(dev->port) * 1000 + MROCE_ANSWER_GAP_NS;
	return mroce_gbn_check(&qp->xdp_emu, psn, qp->flow->rx_base, now) == MROCE_GBN_DROP;
}

__u64 mroce_dev_test_ref_pkts(struct mroce_dev *dev)
{
	__u64 n;

	pthread_mutex_lock(&dev->lock);
	n = dev->tx_ref_pkts;
	pthread_mutex_unlock(&dev->lock);
	return n;
}
