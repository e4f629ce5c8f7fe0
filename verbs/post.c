// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ibv_post_send / ibv_post_recv over mroce_post_send / mroce_post_recv, and
 * the completions the application must not see: mroce completes every send
 * WR, ibverbs reports an unsignaled one only when it fails. Each posted send
 * WR leaves an entry (signaled or not; its inline slot) in a per-QP ring;
 * the CQ poll (cq.c) takes the oldest for each send completion of the QP,
 * in posting order as mroce completes them, through mrv_qp_wc_hidden().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qpint.h"

enum { SIG_SIGNALED = 1 };

static int map_opcode(enum ibv_wr_opcode op, enum mroce_wr_opcode *out)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:		*out = MROCE_WR_RDMA_WRITE; return 0;
	case IBV_WR_RDMA_WRITE_WITH_IMM: *out = MROCE_WR_RDMA_WRITE_WITH_IMM; return 0;
	case IBV_WR_SEND:		*out = MROCE_WR_SEND; return 0;
	case IBV_WR_SEND_WITH_IMM:	*out = MROCE_WR_SEND_WITH_IMM; return 0;
	case IBV_WR_RDMA_READ:		*out = MROCE_WR_RDMA_READ; return 0;
	default:
		return EINVAL;	/* atomics, memory windows, invalidation, TSO, driver ops */
	}
}

/* The registered inline buffer, made at the first inline WR (post_lock held). */
static int inline_buf(struct mrv_qpi *q)
{
	size_t len = ((size_t)q->sig_mask + 1) * MRV_MAX_INLINE;
	int err;

	if (q->inl)
		return 0;
	q->inl = calloc(1, len);
	if (!q->inl)
		return ENOMEM;
	err = mroce_reg_mr_pd(q->pd->pd, q->inl, len, MROCE_ACCESS_LOCAL_WRITE, &q->inl_mr);
	if (err) {
		free(q->inl);
		q->inl = NULL;
		return ENOMEM;
	}
	return 0;
}

/* One WR; post_lock held. 0 or a positive errno. */
static int post_one(struct mrv_qpi *q, const struct ibv_send_wr *wr)
{
	struct mroce_sge sge[MROCE_MAX_SGE];
	struct mroce_send_wr m = { .wr_id = wr->wr_id, .sg_list = sge };
	uint32_t tail = q->sig_tail, slot;
	int err;

	if (map_opcode(wr->opcode, &m.opcode))
		return EINVAL;
	if (wr->num_sge < 0 || wr->num_sge > MROCE_MAX_SGE || (wr->num_sge && !wr->sg_list))
		return EINVAL;
	if (wr->send_flags & ~(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
			       IBV_SEND_INLINE))
		return EINVAL;	/* IP checksum offload: not on an RC QP */
	if (tail - __atomic_load_n(&q->sig_head, __ATOMIC_ACQUIRE) >= q->sig_cap)
		return ENOMEM;	/* the send queue is full until completions are polled */
	slot = tail & q->sig_mask;
	if (wr->send_flags & IBV_SEND_INLINE) {
		size_t len = 0;

		if (m.opcode == MROCE_WR_RDMA_READ)
			return EINVAL;	/* inline data is for what is sent */
		for (int i = 0; i < wr->num_sge; i++) {
			len += wr->sg_list[i].length;
			if (len > MRV_MAX_INLINE)
				return EINVAL;
		}
		err = inline_buf(q);
		if (err)
			return err;
		/* copied now: the application may reuse its buffer as soon as this returns */
		uint8_t *dst = q->inl + (size_t)slot * MRV_MAX_INLINE;

		len = 0;
		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(dst + len, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		sge[0] = (struct mroce_sge){ (uint64_t)(uintptr_t)dst, (uint32_t)len,
					     mroce_mr_lkey(q->inl_mr) };
		m.num_sge = len ? 1 : 0;
	} else {
		for (int i = 0; i < wr->num_sge; i++)
			sge[i] = (struct mroce_sge){ wr->sg_list[i].addr, wr->sg_list[i].length,
						     wr->sg_list[i].lkey };
		m.num_sge = wr->num_sge;
	}
	if (m.opcode == MROCE_WR_RDMA_WRITE_WITH_IMM || m.opcode == MROCE_WR_SEND_WITH_IMM)
		m.imm_data = ntohl(wr->imm_data);	/* ibverbs' is in network order */
	if (m.opcode != MROCE_WR_SEND && m.opcode != MROCE_WR_SEND_WITH_IMM) {
		m.remote_addr = wr->wr.rdma.remote_addr;
		m.rkey = wr->wr.rdma.rkey;
	}
	if (wr->send_flags & IBV_SEND_FENCE)
		m.send_flags |= MROCE_SEND_FENCE;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		m.send_flags |= MROCE_SEND_SOLICITED;
	/* recorded before the post: its completion may be polled before mroce_post_send returns */
	q->sig[slot] = (q->q.sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED)) ? SIG_SIGNALED : 0;
	__atomic_store_n(&q->sig_tail, tail + 1, __ATOMIC_RELEASE);
	err = mroce_post_send(q->q.qp, &m);
	if (err) {
		/* no completion will come for it: take the entry back */
		__atomic_store_n(&q->sig_tail, tail, __ATOMIC_RELEASE);
		return err == -EAGAIN || err == -ENOMEM ? ENOMEM : EINVAL;
	}
	return 0;
}

int mrv_post_send_locked(struct mrv_qpi *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	int err = 0;

	/* sends only from RTS, as ibverbs providers have it (the mroce QP connects at RTR) */
	if (wr && q->state != IBV_QPS_RTS)
		err = EINVAL;
	for (; !err && wr; wr = wr->next) {
		err = post_one(q, wr);
		if (err)
			break;
	}
	if (err && bad_wr)
		*bad_wr = wr;
	return err;
}

int mrv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct mrv_qpi *q = mrv_qpi(ibqp);
	int err;

	pthread_mutex_lock(&q->post_lock);
	err = mrv_post_send_locked(q, wr, bad_wr);
	pthread_mutex_unlock(&q->post_lock);
	return err;
}

int mrv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct mrv_qpi *q = mrv_qpi(ibqp);
	int err = 0;

	if (!wr)
		return 0;
	pthread_mutex_lock(&q->post_lock);
	if (q->state != IBV_QPS_INIT && q->state != IBV_QPS_RTR && q->state != IBV_QPS_RTS)
		err = EINVAL;
	for (; !err && wr; wr = wr->next) {
		struct mroce_sge sge[MROCE_MAX_SGE];
		struct mroce_recv_wr m = { .wr_id = wr->wr_id, .sg_list = sge,
					   .num_sge = wr->num_sge };

		if (wr->num_sge < 0 || wr->num_sge > MROCE_MAX_SGE || (wr->num_sge && !wr->sg_list)) {
			err = EINVAL;
			break;
		}
		for (int i = 0; i < wr->num_sge; i++)
			sge[i] = (struct mroce_sge){ wr->sg_list[i].addr, wr->sg_list[i].length,
						     wr->sg_list[i].lkey };
		err = mroce_post_recv(q->q.qp, &m);
		if (err) {
			err = err == -EAGAIN || err == -ENOMEM ? ENOMEM : EINVAL;
			break;
		}
	}
	pthread_mutex_unlock(&q->post_lock);
	if (err && bad_wr)
		*bad_wr = wr;
	return err;
}

bool mrv_qp_wc_hidden(struct mrv_qp *qp, const struct mroce_wc *wc)
{
	struct mrv_qpi *q = (struct mrv_qpi *)qp;
	uint32_t i;

	if (wc->opcode != MROCE_WC_SEND && wc->opcode != MROCE_WC_RDMA_WRITE &&
	    wc->opcode != MROCE_WC_RDMA_READ)
		return false;	/* a receive: always the application's */
	i = __atomic_fetch_add(&q->sig_head, 1, __ATOMIC_ACQ_REL);
	if (i == __atomic_load_n(&q->sig_tail, __ATOMIC_ACQUIRE)) {
		/* nothing recorded (a completion from before a reset): keep the count in step */
		__atomic_fetch_sub(&q->sig_head, 1, __ATOMIC_ACQ_REL);
		return false;
	}
	/* errors are reported for unsignaled WRs too, as ibverbs does */
	return !(q->sig[i & q->sig_mask] & SIG_SIGNALED) && wc->status == MROCE_WC_SUCCESS;
}
