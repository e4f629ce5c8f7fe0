/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Two connected QPs on two devices over the simulated wire (tests/sim.h),
 * with a registered buffer on each side, and helpers to post work and
 * gather completions: what every transport unit test starts from.
 */
#ifndef MROCE_TEST_PAIR_H
#define MROCE_TEST_PAIR_H

#include "sim.h"

#ifndef BUF
#define BUF	(1 << 20)
#endif

struct pair {
	struct sim_net	*net;
	struct mroce_dev *da, *db;
	struct mroce_cq	*cqa, *cqb;
	struct mroce_qp	*qa, *qb;
	__u8		*la, *lb;	/* local buffers */
	struct mroce_mr	*ma, *mb;
};

static inline void pair_open(struct pair *p, __u64 seed, const struct mroce_qp_attr *attr_in,
		      const struct mroce_faults *faults)
{
	struct mroce_qp_attr attr = attr_in ? *attr_in : (struct mroce_qp_attr){ .sz = sizeof(attr) };
	unsigned int acc = MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE | MROCE_ACCESS_REMOTE_READ;

	memset(p, 0, sizeof(*p));
	p->net = sim_new(seed);
	p->da = sim_dev(p->net, false, faults);
	p->db = sim_dev(p->net, true, faults);
	assert_non_null(p->da);
	assert_non_null(p->db);
	assert_int_equal(mroce_create_cq(p->da, 4096, &p->cqa), 0);
	assert_int_equal(mroce_create_cq(p->db, 4096, &p->cqb), 0);
	attr.send_cq = attr.recv_cq = p->cqa;
	assert_int_equal(mroce_create_qp(p->da, &attr, &p->qa), 0);
	attr.send_cq = attr.recv_cq = p->cqb;
	assert_int_equal(mroce_create_qp(p->db, &attr, &p->qb), 0);
	p->la = calloc(1, BUF);
	p->lb = calloc(1, BUF);
	assert_int_equal(mroce_reg_mr(p->da, p->la, BUF, acc, &p->ma), 0);
	assert_int_equal(mroce_reg_mr(p->db, p->lb, BUF, acc, &p->mb), 0);
}

static inline void pair_connect(struct pair *p)
{
	assert_int_equal(sim_connect(p->qa, p->qb), 0);
	assert_int_equal(mroce_qp_state(p->qa), MROCE_QPS_RTS);
}

static inline void pair_close(struct pair *p)
{
	if (p->qa)
		mroce_destroy_qp(p->qa);
	if (p->qb)
		mroce_destroy_qp(p->qb);
	mroce_destroy_cq(p->cqa);
	mroce_destroy_cq(p->cqb);
	mroce_dev_close(p->da);
	mroce_dev_close(p->db);
	free(p->la);
	free(p->lb);
	sim_free_net(p->net);
}

/* Completions gathered while the simulation runs. */
struct waiter {
	struct pair	*p;
	struct mroce_wc	wa[4096], wb[4096];
	int		na, nb, want_a, want_b;
};

static inline bool collected(void *ctx)
{
	struct waiter *w = ctx;
	int n;

	while ((n = mroce_poll_cq(w->p->cqa, 64, w->wa + w->na)) > 0)
		w->na += n;
	while ((n = mroce_poll_cq(w->p->cqb, 64, w->wb + w->nb)) > 0)
		w->nb += n;
	return w->na >= w->want_a && w->nb >= w->want_b;
}

static inline void fill(__u8 *p, size_t n, __u32 seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (__u8)(seed * 131 + i * 7 + (i >> 8));
}

static inline int post(struct mroce_qp *qp, enum mroce_wr_opcode op, __u64 wr_id, void *laddr, __u32 len,
		__u32 lkey, __u64 raddr, __u32 rkey, __u32 imm)
{
	struct mroce_sge sge = { .addr = (__u64)(unsigned long)laddr, .length = len, .lkey = lkey };
	struct mroce_send_wr wr = { .wr_id = wr_id, .opcode = op, .sg_list = &sge, .num_sge = 1,
				    .remote_addr = raddr, .rkey = rkey, .imm_data = imm };

	return mroce_post_send(qp, &wr);
}

static inline int post_recv(struct mroce_qp *qp, __u64 wr_id, void *addr, __u32 len, __u32 lkey)
{
	struct mroce_sge sge = { .addr = (__u64)(unsigned long)addr, .length = len, .lkey = lkey };
	struct mroce_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	return mroce_post_recv(qp, &wr);
}

static inline bool one_each(void *ctx)
{
	struct waiter *w = ctx;

	return collected(ctx) && w->na >= w->want_a && w->nb >= w->want_b;
}

/*
 * n WRITEs of the whole buffer from A to B, until(w) or all completed, each
 * checked: success and B's bytes. Returns the virtual time it took.
 */
static inline __u64 pair_write_n(struct pair *p, struct waiter *w, int n, __u32 seed,
				 bool (*until)(void *))
{
	__u64 t0 = p->net->now;

	memset(w, 0, sizeof(*w));
	w->p = p;
	fill(p->la, BUF, seed);
	for (int i = 0; i < n; i++)
		assert_int_equal(post(p->qa, MROCE_WR_RDMA_WRITE, (__u64)i, p->la, BUF, mroce_mr_lkey(p->ma),
				      (__u64)(unsigned long)p->lb, mroce_mr_rkey(p->mb), 0), 0);
	w->want_a = n;
	assert_int_equal(sim_run(p->net, p->da, p->db, until ? until : one_each, w, 60000000), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(w->wa[i].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p->lb, p->la, BUF);
	return p->net->now - t0;
}

#endif /* MROCE_TEST_PAIR_H */
