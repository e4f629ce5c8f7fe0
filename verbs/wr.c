// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The extended post API (ibv_qp_ex: ibv_wr_start, ibv_wr_rdma_write, ...,
 * ibv_wr_complete), which perftest uses by default. WRs are staged between
 * wr_start and wr_complete and posted through post.c at wr_complete, so
 * wr_abort can discard them; the first error met is what wr_complete returns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qpint.h"

static struct mrv_qpi *qpi(struct ibv_qp_ex *x)
{
	return (struct mrv_qpi *)x;
}

static void wr_start(struct ibv_qp_ex *x)
{
	struct mrv_qpi *q = qpi(x);

	pthread_mutex_lock(&q->post_lock);	/* held till complete or abort, as providers do */
	q->q.wr_err = 0;
	q->q.wr_n = 0;
}

/* A new staged WR of opcode op, or NULL (the error is kept for wr_complete). */
static struct mrv_wr_stage *stage_new(struct ibv_qp_ex *x, enum ibv_wr_opcode op)
{
	struct mrv_qpi *q = qpi(x);
	struct mrv_wr_stage *s;

	if (q->q.wr_err)
		return NULL;
	if (q->q.wr_n >= q->q.cap.max_send_wr) {
		q->q.wr_err = ENOMEM;
		return NULL;
	}
	if (q->q.wr_n >= q->stage_cap) {
		uint32_t n = q->stage_cap ? q->stage_cap * 2 : 16;
		void *p;

		if (n > q->q.cap.max_send_wr)
			n = q->q.cap.max_send_wr;
		p = realloc(q->stage, n * sizeof(*q->stage));
		if (!p) {
			q->q.wr_err = ENOMEM;
			return NULL;
		}
		q->stage = p;
		q->stage_cap = n;
	}
	s = &q->stage[q->q.wr_n++];
	memset(&s->wr, 0, sizeof(s->wr));
	s->wr.wr_id = x->wr_id;
	s->wr.send_flags = x->wr_flags;
	s->wr.opcode = op;
	s->has_data = false;
	s->inl_data = false;
	return s;
}

/* The WR the data setters complete: the latest staged, not given its data yet. */
static struct mrv_wr_stage *stage_cur(struct ibv_qp_ex *x)
{
	struct mrv_qpi *q = qpi(x);
	struct mrv_wr_stage *s;

	if (q->q.wr_err)
		return NULL;
	s = q->q.wr_n ? &q->stage[q->q.wr_n - 1] : NULL;
	if (!s || s->has_data) {
		q->q.wr_err = EINVAL;	/* data with no WR to carry it */
		return NULL;
	}
	s->has_data = true;
	return s;
}

static void wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	struct mrv_wr_stage *s = stage_new(x, IBV_WR_RDMA_WRITE);

	if (s) {
		s->wr.wr.rdma.rkey = rkey;
		s->wr.wr.rdma.remote_addr = raddr;
	}
}

static void wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct mrv_wr_stage *s = stage_new(x, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (s) {
		s->wr.wr.rdma.rkey = rkey;
		s->wr.wr.rdma.remote_addr = raddr;
		s->wr.imm_data = imm;
	}
}

static void wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	struct mrv_wr_stage *s = stage_new(x, IBV_WR_RDMA_READ);

	if (s) {
		s->wr.wr.rdma.rkey = rkey;
		s->wr.wr.rdma.remote_addr = raddr;
	}
}

static void wr_send(struct ibv_qp_ex *x)
{
	stage_new(x, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	struct mrv_wr_stage *s = stage_new(x, IBV_WR_SEND_WITH_IMM);

	if (s)
		s->wr.imm_data = imm;
}

static void wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct mrv_wr_stage *s = stage_cur(x);

	if (s) {
		s->sge[0] = (struct ibv_sge){ .addr = addr, .length = length, .lkey = lkey };
		s->wr.num_sge = 1;
	}
}

static void wr_set_sge_list(struct ibv_qp_ex *x, size_t n, const struct ibv_sge *list)
{
	struct mrv_wr_stage *s = stage_cur(x);

	if (!s)
		return;
	if (n > MROCE_MAX_SGE || (n && !list)) {
		qpi(x)->q.wr_err = EINVAL;
		return;
	}
	if (n)
		memcpy(s->sge, list, n * sizeof(*list));
	s->wr.num_sge = (int)n;
}

/* Inline data is copied now (the caller may reuse its buffer at once), posted from the stage. */
static void wr_set_inline_data_list(struct ibv_qp_ex *x, size_t n, const struct ibv_data_buf *bufs)
{
	struct mrv_wr_stage *s = stage_cur(x);
	size_t len = 0;

	if (!s)
		return;
	for (size_t i = 0; i < n; i++) {
		if (bufs[i].length > MRV_MAX_INLINE - len) {
			qpi(x)->q.wr_err = EINVAL;
			return;
		}
		memcpy(s->inl + len, bufs[i].addr, bufs[i].length);
		len += bufs[i].length;
	}
	s->sge[0] = (struct ibv_sge){ .length = (uint32_t)len };	/* .addr: s->inl, at complete */
	s->wr.num_sge = 1;
	s->wr.send_flags |= IBV_SEND_INLINE;
	s->inl_data = true;
}

static void wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	wr_set_inline_data_list(x, 1, &b);
}

static void wr_abort(struct ibv_qp_ex *x)
{
	struct mrv_qpi *q = qpi(x);

	q->q.wr_n = 0;
	q->q.wr_err = 0;
	pthread_mutex_unlock(&q->post_lock);
}

/* Unsupported builders: the WR fails at wr_complete, nothing crashes. */
static void wr_bad_atomic_cas(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, uint64_t c,
			      uint64_t s)
{
	(void)rkey; (void)raddr; (void)c; (void)s;
	if (!qpi(x)->q.wr_err)
		qpi(x)->q.wr_err = EOPNOTSUPP;
}

static void wr_bad_atomic_fa(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, uint64_t a)
{
	(void)rkey; (void)raddr; (void)a;
	if (!qpi(x)->q.wr_err)
		qpi(x)->q.wr_err = EOPNOTSUPP;
}

static void wr_bad_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	(void)rkey;
	if (!qpi(x)->q.wr_err)
		qpi(x)->q.wr_err = EOPNOTSUPP;
}

static int wr_complete(struct ibv_qp_ex *x)
{
	struct mrv_qpi *q = qpi(x);
	int err = q->q.wr_err;
	uint32_t n = q->q.wr_n;

	for (uint32_t i = 0; !err && i < n; i++)
		if (!q->stage[i].has_data && q->stage[i].wr.opcode != IBV_WR_SEND &&
		    q->stage[i].wr.opcode != IBV_WR_SEND_WITH_IMM)
			q->stage[i].wr.num_sge = 0;	/* a zero-length WRITE / READ */
	for (uint32_t i = 0; !err && i < n; i++) {
		struct mrv_wr_stage *s = &q->stage[i];
		struct ibv_send_wr *bad;

		/* pointers into the stage only now: it may have moved as it grew */
		s->wr.sg_list = s->sge;
		if (s->inl_data)
			s->sge[0].addr = (uintptr_t)s->inl;
		s->wr.next = NULL;
		err = mrv_post_send_locked(q, &s->wr, &bad);
	}
	q->q.wr_n = 0;
	q->q.wr_err = 0;
	pthread_mutex_unlock(&q->post_lock);
	return err;
}

void mrv_wr_init(struct mrv_qpi *q)
{
	struct ibv_qp_ex *x = &q->q.qpx;

	x->comp_mask = 0;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_atomic_cmp_swp = wr_bad_atomic_cas;
	x->wr_atomic_fetch_add = wr_bad_atomic_fa;
	x->wr_local_inv = wr_bad_inv;
	x->wr_send_inv = wr_bad_inv;
}
