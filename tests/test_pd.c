// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Defect 20: regions were not scoped (a connected peer holding a key
 * reached any region of the device) and key indexes followed registration
 * order. Protection domains as in verbs, on the simulated wire: device B
 * has two PDs, its QP is in PD1, a region of PD2 is out of its reach.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#define BUF	(1 << 16)
#include "pair.h"

#define ACC_ALL	(MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE | MROCE_ACCESS_REMOTE_READ)
#define LEN	4096

/* A pair whose B QP is in pd1 (B's buffer registered there), plus a region of pd2 on B. */
struct pdpair {
	struct pair	p;
	struct waiter	*w;
	struct mroce_pd	*pd1, *pd2;
	struct mroce_mr	*mb1, *mr2;	/* B's buffer in pd1; other[] in pd2 */
	__u8		*other;
};

static void pdpair_open(struct pdpair *t, __u64 seed)
{
	MROCE_OPTS(mroce_qp_attr, attr);
	struct pair *p = &t->p;

	memset(t, 0, sizeof(*t));
	pair_open(p, seed, NULL, NULL);
	assert_int_equal(mroce_alloc_pd(p->db, &t->pd1), 0);
	assert_int_equal(mroce_alloc_pd(p->db, &t->pd2), 0);
	/* B's QP again, in pd1 */
	assert_int_equal(mroce_destroy_qp(p->qb), 0);
	attr.send_cq = attr.recv_cq = p->cqb;
	attr.pd = t->pd1;
	assert_int_equal(mroce_create_qp(p->db, &attr, &p->qb), 0);
	assert_int_equal(mroce_reg_mr_pd(t->pd1, p->lb, BUF, ACC_ALL, &t->mb1), 0);
	t->other = calloc(1, LEN);
	memset(t->other, 0x5a, LEN);
	assert_int_equal(mroce_reg_mr_pd(t->pd2, t->other, LEN, ACC_ALL, &t->mr2), 0);
	pair_connect(p);
	t->w = calloc(1, sizeof(*t->w));
	t->w->p = p;
}

static void pdpair_close(struct pdpair *t)
{
	assert_int_equal(mroce_dereg_mr(t->mr2), 0);
	assert_int_equal(mroce_dereg_mr(t->mb1), 0);
	assert_int_equal(mroce_destroy_qp(t->p.qb), 0);
	t->p.qb = NULL;
	assert_int_equal(mroce_dealloc_pd(t->pd1), 0);
	assert_int_equal(mroce_dealloc_pd(t->pd2), 0);
	free(t->other);
	free(t->w);
	pair_close(&t->p);
}

static void untouched(const __u8 *b, size_t n, __u8 v)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			fail_msg("byte %zu of another PD's region was written", i);
}

/* A WRITE naming a valid rkey of another PD than the responder QP's fails, memory untouched. */
static void test_cross_pd_write_refused(void **state)
{
	struct pdpair t;

	(void)state;
	pdpair_open(&t, 31);
	fill(t.p.la, LEN, 3);
	assert_int_equal(post(t.p.qa, MROCE_WR_RDMA_WRITE, 1, t.p.la, LEN, mroce_mr_lkey(t.p.ma),
			      (__u64)(unsigned long)t.other, mroce_mr_rkey(t.mr2), 0), 0);
	t.w->want_a = 1;
	assert_int_equal(sim_run(t.p.net, t.p.da, t.p.db, one_each, t.w, 2000000), 0);
	assert_int_equal(t.w->wa[0].status, MROCE_WC_REM_ACCESS_ERR);
	untouched(t.other, LEN, 0x5a);
	pdpair_close(&t);
}

/* A READ of another PD's region likewise: nothing of it arrives. */
static void test_cross_pd_read_refused(void **state)
{
	struct pdpair t;

	(void)state;
	pdpair_open(&t, 32);
	memset(t.p.la, 0x11, LEN);
	assert_int_equal(post(t.p.qa, MROCE_WR_RDMA_READ, 1, t.p.la, LEN, mroce_mr_lkey(t.p.ma),
			      (__u64)(unsigned long)t.other, mroce_mr_rkey(t.mr2), 0), 0);
	t.w->want_a = 1;
	assert_int_equal(sim_run(t.p.net, t.p.da, t.p.db, one_each, t.w, 2000000), 0);
	assert_int_equal(t.w->wa[0].status, MROCE_WC_REM_ACCESS_ERR);
	untouched(t.p.la, LEN, 0x11);
	pdpair_close(&t);
}

/* The QP's own SGE naming a region of another PD: a local protection error, nothing sent. */
static void test_cross_pd_local_sge_refused(void **state)
{
	struct pdpair t;
	struct mroce_wc wc;
	struct mroce_dev_stats st;
	int n = 0;

	(void)state;
	pdpair_open(&t, 33);
	/* B's QP (pd1) sends from other[] (pd2) into A's buffer. */
	assert_int_equal(post(t.p.qb, MROCE_WR_RDMA_WRITE, 7, t.other, LEN, mroce_mr_lkey(t.mr2),
			      (__u64)(unsigned long)t.p.la, mroce_mr_rkey(t.p.ma), 0), 0);
	for (int i = 0; i < 100 && !n; i++) {
		mroce_dev_progress(t.p.db, 0);
		n = mroce_poll_cq(t.p.cqb, 1, &wc);
	}
	assert_int_equal(n, 1);
	assert_int_equal(wc.wr_id, 7);
	assert_int_equal(wc.status, MROCE_WC_LOC_PROT_ERR);
	assert_int_equal(mroce_dev_stats(t.p.db, &st), 0);
	assert_int_equal(st.tx_pkts, 0);
	untouched(t.p.la, LEN, 0);
	pdpair_close(&t);
}

/* The same kind of region reached through a QP of its own PD works, both ways. */
static void test_same_pd_works(void **state)
{
	struct pdpair t;

	(void)state;
	pdpair_open(&t, 34);
	fill(t.p.la, LEN, 5);
	assert_int_equal(post(t.p.qa, MROCE_WR_RDMA_WRITE, 1, t.p.la, LEN, mroce_mr_lkey(t.p.ma),
			      (__u64)(unsigned long)t.p.lb, mroce_mr_rkey(t.mb1), 0), 0);
	fill(t.p.lb + LEN, LEN, 9);
	assert_int_equal(post(t.p.qa, MROCE_WR_RDMA_READ, 2, t.p.la + LEN, LEN, mroce_mr_lkey(t.p.ma),
			      (__u64)(unsigned long)(t.p.lb + LEN), mroce_mr_rkey(t.mb1), 0), 0);
	t.w->want_a = 2;
	assert_int_equal(sim_run(t.p.net, t.p.da, t.p.db, one_each, t.w, 2000000), 0);
	assert_int_equal(t.w->wa[0].status, MROCE_WC_SUCCESS);
	assert_int_equal(t.w->wa[1].status, MROCE_WC_SUCCESS);
	assert_memory_equal(t.p.lb, t.p.la, LEN);
	assert_memory_equal(t.p.la + LEN, t.p.lb + LEN, LEN);
	untouched(t.other, LEN, 0x5a);
	pdpair_close(&t);
}

/* A PD in use by a region or a QP cannot go; argument errors are refused. */
static void test_pd_lifetime_and_args(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr);
	struct sim_net *net = sim_new(2);
	struct mroce_dev *d = sim_dev(net, false, NULL), *e = sim_dev(net, true, NULL);
	struct mroce_pd *pd, *pe;
	struct mroce_cq *cq;
	struct mroce_qp *qp;
	struct mroce_mr *mr;
	static __u8 buf[64];

	(void)state;
	assert_non_null(d);
	assert_non_null(e);
	assert_int_equal(mroce_alloc_pd(NULL, &pd), -EINVAL);
	assert_int_equal(mroce_alloc_pd(d, NULL), -EINVAL);
	assert_int_equal(mroce_dealloc_pd(NULL), -EINVAL);
	assert_int_equal(mroce_reg_mr_pd(NULL, buf, sizeof(buf), ACC_ALL, &mr), -EINVAL);
	assert_int_equal(mroce_alloc_pd(d, &pd), 0);
	assert_int_equal(mroce_alloc_pd(e, &pe), 0);
	assert_int_equal(mroce_reg_mr_pd(pd, buf, sizeof(buf), 0xff, &mr), -EINVAL);
	assert_int_equal(mroce_reg_mr_pd(pd, buf, sizeof(buf), ACC_ALL, &mr), 0);
	assert_int_equal(mroce_dealloc_pd(pd), -EBUSY);
	assert_int_equal(mroce_dereg_mr(mr), 0);
	assert_int_equal(mroce_create_cq(d, 16, &cq), 0);
	attr.send_cq = attr.recv_cq = cq;
	attr.pd = pe;	/* another device's PD */
	assert_int_equal(mroce_create_qp(d, &attr, &qp), -EINVAL);
	attr.pd = pd;
	assert_int_equal(mroce_create_qp(d, &attr, &qp), 0);
	assert_int_equal(mroce_dealloc_pd(pd), -EBUSY);
	assert_int_equal(mroce_destroy_qp(qp), 0);
	assert_int_equal(mroce_dealloc_pd(pd), 0);
	assert_int_equal(mroce_dealloc_pd(pe), 0);
	mroce_destroy_cq(cq);
	mroce_dev_close(d);
	mroce_dev_close(e);
	sim_free_net(net);
}

/* Key indexes do not follow registration order; only the exact key names a region. */
static void test_keys_not_in_registration_order(void **state)
{
	struct mroce_dev *d;
	struct sim_net *net = sim_new(1);
	struct mroce_mr *mr[64];
	struct mroce_pd *pd0;
	static __u8 buf[64];
	int steps = 0, up = 0;

	(void)state;
	d = sim_dev(net, false, NULL);
	assert_non_null(d);
	for (int i = 0; i < 64; i++)
		assert_int_equal(mroce_reg_mr(d, buf + i, 1, ACC_ALL, &mr[i]), 0);
	for (int i = 1; i < 64; i++) {
		__u32 a = mroce_mr_rkey(mr[i - 1]) & 0xfff, b = mroce_mr_rkey(mr[i]) & 0xfff;

		steps += b - a == 1;
		up += b > a;
	}
	print_message("successive index differences of 1: %d of 63, increasing: %d\n", steps, up);
	assert_true(steps < 8);
	assert_true(up < 48);
	pd0 = &d->pd0;
	for (int i = 0; i < 64; i++) {
		__u32 rk = mroce_mr_rkey(mr[i]), lk = mroce_mr_lkey(mr[i]);
		__u64 a = (__u64)(unsigned long)(buf + i);

		assert_int_not_equal(rk, lk);
		assert_true(mroce_mr_grants(pd0, rk, true, a, 1, MROCE_ACCESS_REMOTE_WRITE));
		assert_false(mroce_mr_grants(pd0, lk, true, a, 1, MROCE_ACCESS_REMOTE_WRITE));
		for (__u32 bit = 12; bit < 32; bit++)
			assert_false(mroce_mr_grants(pd0, rk ^ (1u << bit), true, a, 1,
						     MROCE_ACCESS_REMOTE_WRITE));
	}
	for (int i = 0; i < 64; i++)
		assert_int_equal(mroce_dereg_mr(mr[i]), 0);
	mroce_dev_close(d);
	sim_free_net(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cross_pd_write_refused),
		cmocka_unit_test(test_cross_pd_read_refused),
		cmocka_unit_test(test_cross_pd_local_sge_refused),
		cmocka_unit_test(test_same_pd_works),
		cmocka_unit_test(test_pd_lifetime_and_args),
		cmocka_unit_test(test_keys_not_in_registration_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
