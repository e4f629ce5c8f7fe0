/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * qp_test: the QP state machine and refusals of mroce's libibverbs through
 * Debian's verbs.h, one end only (the peer address need not answer): create
 * refusals (UD, SGEs, inline, atomic send ops), required masks per
 * transition, GID / QPN / CUR_STATE checks, posting per state, query_qp,
 * ERR flushing every WR, ERR -> RESET -> INIT. Usage: qp_test DEV
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#define CHECK(c, ...) do { if (!(c)) { printf("FAIL %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); fails++; } else ok++; } while (0)
int main(int argc, char **argv)
{
	int n, fails = 0, ok = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: qp_test DEV\n");
		return 2;
	}
	struct ibv_device **l = ibv_get_device_list(&n);
	struct ibv_context *c = NULL;
	for (int i = 0; i < n; i++) if (!strcmp(ibv_get_device_name(l[i]), argv[1])) c = ibv_open_device(l[i]);
	if (!c) { printf("no dev\n"); return 2; }
	struct ibv_pd *pd = ibv_alloc_pd(c);
	struct ibv_cq *cq = ibv_create_cq(c, 64, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .cap = { 16, 16, 1, 1, 0 }, .qp_type = IBV_QPT_UD };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	CHECK(!qp && errno == EOPNOTSUPP, "UD: %p errno %d", (void *)qp, errno);
	ia.qp_type = IBV_QPT_RC; ia.cap.max_send_sge = 5;
	qp = ibv_create_qp(pd, &ia);
	CHECK(!qp && errno == EINVAL, "sge 5: errno %d", errno);
	ia.cap.max_send_sge = 1; ia.cap.max_inline_data = 300;
	qp = ibv_create_qp(pd, &ia);
	CHECK(!qp && errno == EINVAL, "inline 300: errno %d", errno);
	ia.cap.max_inline_data = 64;
	qp = ibv_create_qp(pd, &ia);
	CHECK(qp && ia.cap.max_inline_data >= 64, "create rc: %d", errno);
	struct ibv_qp_init_attr_ex iax = { .send_cq = cq, .recv_cq = cq, .cap = { 16, 16, 1, 1, 0 }, .qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD };
	struct ibv_qp *q2 = ibv_create_qp_ex(c, &iax);
	CHECK(!q2 && errno == EOPNOTSUPP, "atomic send ops: errno %d", errno);
	iax.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND;
	q2 = ibv_create_qp_ex(c, &iax);
	CHECK(q2 && ibv_qp_to_qp_ex(q2), "qp_ex: errno %d", errno);
	char buf[64]; struct ibv_mr *mr = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uintptr_t)buf, 8, mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad = NULL;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad = NULL;
	CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr, "post_send in RESET");
	CHECK(ibv_post_recv(qp, &rwr, &rbad) == EINVAL, "post_recv in RESET");
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT) == EINVAL, "INIT missing mask");
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS) == 0, "INIT");
	CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0, "post_recv in INIT");
	CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL, "post_send in INIT");
	a.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "INIT->RTS");
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR; a.path_mtu = IBV_MTU_1024; a.dest_qp_num = 5; a.rq_psn = 7; a.max_dest_rd_atomic = 1; a.min_rnr_timer = 12;
	a.ah_attr.is_global = 0; a.ah_attr.port_num = 1;
	CHECK(ibv_modify_qp(qp, &a, rtr) == EINVAL, "RTR not global");
	a.ah_attr.is_global = 1; a.ah_attr.grh.dgid.raw[0] = 0xfe;
	CHECK(ibv_modify_qp(qp, &a, rtr) == EINVAL, "RTR v6 gid");
	memset(&a.ah_attr.grh.dgid, 0, 16); a.ah_attr.grh.dgid.raw[10] = a.ah_attr.grh.dgid.raw[11] = 0xff;
	unsigned char ip[4] = { 198, 18, 0, 2 }; memcpy(&a.ah_attr.grh.dgid.raw[12], ip, 4);
	CHECK(ibv_modify_qp(qp, &a, rtr & ~IBV_QP_RQ_PSN) == EINVAL, "RTR missing psn");
	a.dest_qp_num = 0;
	CHECK(ibv_modify_qp(qp, &a, rtr) == EINVAL, "RTR dest qpn 0");
	a.dest_qp_num = 5;
	a.cur_qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(qp, &a, rtr | IBV_QP_CUR_STATE) == EINVAL, "cur state wrong");
	CHECK(ibv_modify_qp(qp, &a, rtr) == 0, "RTR: %d", errno);
	struct ibv_qp_attr qa; struct ibv_qp_init_attr qi;
	CHECK(ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi) == 0 && qa.qp_state == IBV_QPS_RTR && qa.dest_qp_num == 5 && qa.rq_psn == 7, "query RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS; a.sq_psn = 9; a.timeout = 14; a.retry_cnt = 7; a.rnr_retry = 7; a.max_rd_atomic = 1;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) == 0, "RTS");
	CHECK(ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi) == 0 && qa.qp_state == IBV_QPS_RTS && qa.sq_psn == 9 && qa.timeout == 14, "query RTS");
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD; bad = NULL;
	CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr, "atomic post");
	wr.opcode = IBV_WR_SEND; wr.send_flags = IBV_SEND_INLINE; sge.length = 65;
	CHECK(ibv_post_send(qp, &wr, &bad) == 0, "inline 65 (cap 256)");
	a.qp_state = IBV_QPS_ERR;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0, "ERR");
	struct ibv_wc wc[8]; int got = 0;
	for (int i = 0; i < 1000000 && got < 2; i++) { int r = ibv_poll_cq(cq, 8, wc + got); if (r > 0) got += r; }
	CHECK(got == 2 && wc[0].status == IBV_WC_WR_FLUSH_ERR && wc[1].status == IBV_WC_WR_FLUSH_ERR, "flushed: %d", got);
	uint32_t old = qp->qp_num;
	a.qp_state = IBV_QPS_RESET;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0, "RESET");
	a.qp_state = IBV_QPS_INIT; a.port_num = 1; a.pkey_index = 0; a.qp_access_flags = 0;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS) == 0, "INIT again (qpn %x -> %x)", old, qp->qp_num);
	CHECK(ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi) == 0 && qa.qp_state == IBV_QPS_INIT, "query INIT");
	CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_qp(q2) == 0, "destroy");

	/*
	 * A send CQ holds what the application sized it for plus every send WR
	 * of its QPs (unsignaled completions wait there until a poll hides
	 * them): a QP that could overflow it is refused, ENOMEM, and fits again
	 * once another QP is gone. The CQ of 1 entry gets the 16384 floor.
	 */
	struct ibv_cq *small = ibv_create_cq(c, 1, NULL, NULL, 0);
	struct ibv_qp_init_attr big = { .send_cq = small, .recv_cq = cq,
					.cap = { 8192, 16, 1, 1, 0 }, .qp_type = IBV_QPT_RC };
	struct ibv_qp *b1 = ibv_create_qp(pd, &big), *b2, *b3;

	b2 = ibv_create_qp(pd, &big);
	CHECK(b1 && !b2 && errno == ENOMEM, "second 8192-deep QP on a 16384-entry CQ: %p errno %d",
	      (void *)b2, errno);
	CHECK(b1 && ibv_destroy_qp(b1) == 0 && (b3 = ibv_create_qp(pd, &big)) != NULL &&
	      ibv_destroy_qp(b3) == 0, "room back after a destroy");
	CHECK(ibv_destroy_cq(small) == 0, "the small CQ");
	CHECK(ibv_dereg_mr(mr) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dealloc_pd(pd) == 0 &&
	      ibv_close_device(c) == 0, "teardown");
	ibv_free_device_list(l);
	printf("%d ok, %d failed\n", ok, fails);
	return fails != 0;
}
