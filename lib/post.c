// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Work requests: argument checks and filling send and receive queue entries. */
#include <errno.h>
#include <string.h>

#include "engine.h"
#include "opcode.h"

/* Check a local SG list against registered memory; total length in *len. */
static int check_sges(const struct mroce_pd *pd, const struct mroce_sge *sg, int n,
		      bool need_write, __u32 *len)
{
	__u64 total = 0;

	if (n < 0 || n > MROCE_MAX_SGE || (n && !sg))
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (!mroce_mr_grants(pd, sg[i].lkey, false, sg[i].addr, sg[i].length,
				     need_write ? MROCE_ACCESS_LOCAL_WRITE : 0))
			return -EPERM;
		total += sg[i].length;
	}
	if (total > 0xffffffffu)
		return -EMSGSIZE;
	*len = (__u32)total;
	return 0;
}

int mroce_post_send(struct mroce_qp *qp, const struct mroce_send_wr *wr)
{
	return mroce_post_send_on(qp, 0, wr);
}

int mroce_post_recv(struct mroce_qp *qp, const struct mroce_recv_wr *wr)
{
	return mroce_post_recv_on(qp, 0, wr);
}

int mroce_post_send_on(struct mroce_qp *qp, __u32 stream, const struct mroce_send_wr *wr)
{
	const struct mroce_op_info *info;
	struct mroce_swqe *w;
	__u32 len = 0;
	__u8 op;
	int err;

	if (!qp || !wr || stream >= qp->attr.streams)
		return -EINVAL;
	op = mroce_op_from_wr(wr->opcode);
	if (!op)
		return -EINVAL;
	info = mroce_op_info(op);
	pthread_mutex_lock(&qp->dev->lock);
	err = qp->state == MROCE_QPS_RTS ? 0 : qp->state == MROCE_QPS_INIT ? -ENOTCONN : -EIO;
	if (!err && qp->streams[stream].failed)
		err = -EIO;	/* the stream's send half is in error for good (ack.c stream_fail) */
	/*
	 * sq_depth requests outstanding: entries already reported but behind an
	 * older one still going (another stream's, or a held stream's probe in
	 * flight) are not, as far as the ring (2 x sq_depth with streams) holds.
	 */
	if (!err && (qp->sq_tail - qp->sq_head - qp->sq_moved - qp->sq_reported >= qp->attr.sq_depth ||
		     qp->sq_tail - qp->sq_head > qp->sq_max_mask))
		err = -EAGAIN;
	if (!err)
		err = mroce_ring_reserve((void **)&qp->sq, &qp->sq_mask, qp->sq_max_mask,
					 sizeof(*qp->sq), qp->sq_head, qp->sq_tail,
					 qp->sq_tail - qp->sq_head + 1);
	if (!err)
		err = check_sges(qp->pd, wr->sg_list, wr->num_sge, info->awaits_resp, &len);
	if (err && err != -EPERM) {
		pthread_mutex_unlock(&qp->dev->lock);
		return err;
	}
	w = SWQE(qp, qp->sq_tail);
	memset(w, 0, sizeof(*w));
	if (err == -EPERM) {
		/* As in ibverbs: accepted, then completed with a protection error. */
		w->wr_id = wr->wr_id;
		w->opcode = op;
		w->stream = (__u16)stream;
		w->done = 1;
		w->status = MROCE_WC_LOC_PROT_ERR;
		qp->sq_tail++;
		pthread_mutex_unlock(&qp->dev->lock);
		return 0;
	}
	w->wr_id = wr->wr_id;
	w->opcode = op;
	w->flags = (__u8)wr->send_flags;
	w->raddr = wr->remote_addr;
	w->rkey = wr->rkey;
	w->imm = wr->imm_data;
	w->stream = (__u16)stream;
	w->len = len;
	w->num_sge = (__u32)wr->num_sge;
	if (wr->num_sge)	/* a zero-length request may come with no list at all */
		memcpy(w->sge, wr->sg_list, sizeof(*w->sge) * (size_t)wr->num_sge);
	if (!info->has_payload) {	/* a READ request: one packet */
		w->npkts = 1;
		w->msn = qp->sq_tail;	/* the READ's id in its responses */
	} else {
		w->npkts = len ? (__u32)(((__u64)len + qp->payload_max - 1) / qp->payload_max) : 1;
		w->msn = qp->streams[stream].ssn;
		if (info->consumes_recv)
			qp->streams[stream].ssn++;	/* takes one receive of the stream at the peer */
	}
	qp->sq_tail++;
	mroce_dev_post_kick(qp->dev, qp);
	pthread_mutex_unlock(&qp->dev->lock);
	return 0;
}

int mroce_post_recv_on(struct mroce_qp *qp, __u32 stream, const struct mroce_recv_wr *wr)
{
	struct mroce_stream *st;
	struct mroce_rwqe *w;
	__u32 len = 0;
	int err;

	if (!qp || !wr || stream >= qp->attr.streams)
		return -EINVAL;
	st = &qp->streams[stream];
	pthread_mutex_lock(&qp->dev->lock);
	err = qp->state == MROCE_QPS_ERR ? -EIO : 0;
	if (!err && st->rq_tail - st->rq_head >= qp->attr.rq_depth)
		err = -EAGAIN;
	if (!err)
		err = mroce_ring_reserve((void **)&st->rq, &st->rq_mask, qp->rq_max_mask,
					 sizeof(*st->rq), st->rq_head, st->rq_tail,
					 st->rq_tail - st->rq_head + 1);
	if (!err)
		err = check_sges(qp->pd, wr->sg_list, wr->num_sge, true, &len);
	if (!err) {
		w = RWQE(st, st->rq_tail);
		memset(w, 0, sizeof(*w));
		w->wr_id = wr->wr_id;
		w->len = len;
		w->num_sge = (__u32)wr->num_sge;
		if (wr->num_sge)	/* a zero-length receive may come with no list at all */
			memcpy(w->sge, wr->sg_list, sizeof(*w->sge) * (size_t)wr->num_sge);
		st->rq_tail++;
		mroce_qp_due_now(qp);
		mroce_dev_kick(qp->dev);	/* a held RNR retry may now succeed */
	}
	pthread_mutex_unlock(&qp->dev->lock);
	return err;
}
