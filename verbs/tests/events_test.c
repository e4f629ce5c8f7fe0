// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Completion channels and CQ polling under real traffic, as an unmodified
 * application sees them (Debian's verbs.h, -libverbs, run with
 * LD_LIBRARY_PATH=build/verbs). One process, two namespaces: side A is
 * opened in the namespace it starts in, side B after setns() into the one
 * named (each mroce device keeps the namespace it was opened in).
 *   events_test /run/netns/B
 * Checks: one event per arm however many completions; none without an arm;
 * an arm over waiting completions fires at once; the receive completions'
 * qp_num, opcode, byte_len, imm_data (network order), wc_flags; unsignaled
 * successes never reported; ibv_cq_ex reads; EBUSY for a CQ or PD in use.
 * Exit code: the number of failed checks (100: setup failed).
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failed;

#define CHECK(cond, ...) do {						\
	bool ok_ = (cond);						\
									\
	printf(ok_ ? "ok   " : "FAIL ");				\
	failed += !ok_;							\
	printf(__VA_ARGS__);						\
	printf("\n");							\
} while (0)

#define DIE(...) do { printf("SETUP FAILED: " __VA_ARGS__); printf("\n"); exit(100); } while (0)

struct side {
	struct ibv_device	**list;
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_comp_channel	*ch;
	struct ibv_cq		*cq;
	struct ibv_cq_ex	*cqx;
	struct ibv_qp		*qp;
	struct ibv_mr		*mr;
	char			buf[1 << 16];
	union ibv_gid		gid;
	uint32_t		psn;
};

static struct side A, B;

static struct ibv_qp *make_qp(struct side *s, uint32_t max_recv_wr)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_qp *qp;

	qa.send_cq = qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 32;
	qa.cap.max_recv_wr = max_recv_wr;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	qp = ibv_create_qp(s->pd, &qa);
	if (!qp)
		DIE("ibv_create_qp: %s", strerror(errno));
	s->psn = (uint32_t)rand() & 0xffffff;
	return qp;
}

static void open_side(struct side *s, bool channel, bool cq_ex)
{
	int n;

	s->list = ibv_get_device_list(&n);
	if (!s->list || n < 1)
		DIE("no device");
	s->ctx = ibv_open_device(s->list[0]);
	if (!s->ctx || ibv_query_gid(s->ctx, 1, 0, &s->gid))
		DIE("open / GID");
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		DIE("ibv_alloc_pd: %s", strerror(errno));
	s->mr = ibv_reg_mr(s->pd, s->buf, sizeof(s->buf), IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (channel && !(s->ch = ibv_create_comp_channel(s->ctx)))
		DIE("ibv_create_comp_channel");
	if (cq_ex) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = 64, .channel = s->ch,
			.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM,
		};

		s->cqx = ibv_create_cq_ex(s->ctx, &ca);
		s->cq = s->cqx ? ibv_cq_ex_to_cq(s->cqx) : NULL;
	} else {
		s->cq = ibv_create_cq(s->ctx, 64, s, s->ch, 0);
	}
	if (!s->mr || !s->cq)
		DIE("MR / CQ: %s", strerror(errno));
	s->qp = make_qp(s, 32);
}

static void connect_side(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		DIE("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		DIE("RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = s->psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		DIE("RTS: %s", strerror(errno));
}

static void post_recv(struct side *s, uint64_t id, size_t off)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, 1024, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		DIE("ibv_post_recv");
}

static void post_send(struct side *s, struct side *peer, enum ibv_wr_opcode op, uint64_t id,
		      uint32_t len, uint32_t imm, bool signaled)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, len, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = signaled ? IBV_SEND_SIGNALED : 0 }, *bad;

	wr.imm_data = htobe32(imm);
	wr.wr.rdma.remote_addr = (uintptr_t)peer->buf + 32768;
	wr.wr.rdma.rkey = peer->mr->rkey;
	if (ibv_post_send(s->qp, &wr, &bad))
		DIE("ibv_post_send: %s", strerror(errno));
}

/* Poll until n completions came (or 5 s passed); how many came. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	time_t end = time(NULL) + 5;
	int got = 0;

	while (got < n && time(NULL) < end) {
		int k = ibv_poll_cq(cq, n - got, wc + got);

		if (k < 0)
			return -1;
		got += k;
	}
	return got;
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

int main(int argc, char **argv)
{
	struct ibv_wc wc[16];
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int ns_a, ns_b, n, flags;

	if (argc != 2) {
		fprintf(stderr, "usage: %s /run/netns/B\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand((unsigned int)getpid());
	ns_a = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ns_b = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (ns_a < 0 || ns_b < 0)
		DIE("namespaces");
	open_side(&A, true, false);
	if (setns(ns_b, CLONE_NEWNET))
		DIE("setns B");
	open_side(&B, false, true);
	connect_side(&B, &A);
	if (setns(ns_a, CLONE_NEWNET))
		DIE("setns A");
	connect_side(&A, &B);

	/* 1. three receives complete under one arm: one event, and only one */
	for (int i = 0; i < 4; i++)
		post_recv(&A, 100 + i, (size_t)i * 1024);
	CHECK(ibv_req_notify_cq(A.cq, 0) == 0, "arm A's CQ");
	CHECK(!readable(A.ch->fd, 100), "nothing completed: the channel is quiet");
	post_send(&B, &A, IBV_WR_SEND, 1, 100, 0, true);
	post_send(&B, &A, IBV_WR_SEND_WITH_IMM, 2, 200, 0x11223344, true);
	post_send(&B, &A, IBV_WR_RDMA_WRITE_WITH_IMM, 3, 300, 0xa1b2c3d4, true);
	n = poll_n(B.cq, wc, 3);
	CHECK(n == 3 && wc[0].status == IBV_WC_SUCCESS && wc[2].status == IBV_WC_SUCCESS &&
	      wc[0].qp_num == B.qp->qp_num && wc[0].opcode == IBV_WC_SEND &&
	      wc[2].opcode == IBV_WC_RDMA_WRITE,
	      "B: 3 send completions (got %d, qp_num %#x of %#x)", n, n > 0 ? wc[0].qp_num : 0,
	      B.qp->qp_num);
	CHECK(readable(A.ch->fd, 2000), "A's channel readable");
	CHECK(ibv_get_cq_event(A.ch, &ev_cq, &ev_ctx) == 0 && ev_cq == A.cq && ev_ctx == &A,
	      "ibv_get_cq_event: A's CQ and its cq_context");
	usleep(50000);
	CHECK(!readable(A.ch->fd, 100), "one event per arm: quiet after it, completions waiting");
	flags = fcntl(A.ch->fd, F_GETFL);
	fcntl(A.ch->fd, F_SETFL, flags | O_NONBLOCK);
	errno = 0;
	CHECK(ibv_get_cq_event(A.ch, &ev_cq, &ev_ctx) == -1 && errno == EAGAIN,
	      "a second ibv_get_cq_event: EAGAIN");
	fcntl(A.ch->fd, F_SETFL, flags);
	n = poll_n(A.cq, wc, 3);
	CHECK(n == 3, "A: 3 receive completions (%d)", n);
	if (n == 3) {
		CHECK(wc[0].wr_id == 100 && wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 100 &&
		      !(wc[0].wc_flags & IBV_WC_WITH_IMM) && wc[0].qp_num == A.qp->qp_num,
		      "SEND: wr_id %llu opcode %d byte_len %u qp_num %#x (A's %#x)",
		      (unsigned long long)wc[0].wr_id, wc[0].opcode, wc[0].byte_len, wc[0].qp_num,
		      A.qp->qp_num);
		CHECK(wc[1].wr_id == 101 && wc[1].opcode == IBV_WC_RECV && wc[1].byte_len == 200 &&
		      (wc[1].wc_flags & IBV_WC_WITH_IMM) && wc[1].imm_data == htobe32(0x11223344),
		      "SEND_WITH_IMM: imm_data %#x in network order", be32toh(wc[1].imm_data));
		CHECK(wc[2].wr_id == 102 && wc[2].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		      wc[2].byte_len == 300 && (wc[2].wc_flags & IBV_WC_WITH_IMM) &&
		      wc[2].imm_data == htobe32(0xa1b2c3d4),
		      "WRITE_WITH_IMM: opcode %d byte_len %u imm_data %#x", wc[2].opcode,
		      wc[2].byte_len, be32toh(wc[2].imm_data));
	}
	ibv_ack_cq_events(A.cq, 1);

	/* 2. no arm, no event; an arm over a completion already waiting fires at once */
	post_send(&B, &A, IBV_WR_SEND, 4, 10, 0, true);
	CHECK(poll_n(B.cq, wc, 1) == 1, "B: the send completed");
	CHECK(!readable(A.ch->fd, 200), "not armed: no event though a receive completed");
	CHECK(ibv_req_notify_cq(A.cq, 1) == 0 && readable(A.ch->fd, 2000) &&
	      ibv_get_cq_event(A.ch, &ev_cq, &ev_ctx) == 0 && ev_cq == A.cq,
	      "armed (solicited_only) over a waiting completion: an event at once");
	CHECK(poll_n(A.cq, wc, 1) == 1 && wc[0].wr_id == 103, "A: the waiting receive");
	ibv_ack_cq_events(A.cq, 1);

	/* 3. unsignaled successes are never reported; B's CQ is an ibv_cq_ex */
	for (int i = 0; i < 10; i++)
		post_send(&B, &A, IBV_WR_RDMA_WRITE, 1000 + i, 512, 0, false);
	post_send(&B, &A, IBV_WR_RDMA_WRITE, 2000, 512, 0, true);
	{
		struct ibv_poll_cq_attr pa = { 0 };
		time_t end = time(NULL) + 5;
		int err, got = 0;
		uint64_t id = 0;
		uint32_t qpn = 0;

		do {
			err = ibv_start_poll(B.cqx, &pa);
		} while (err == ENOENT && time(NULL) < end);
		if (!err) {
			do {
				got++;
				id = B.cqx->wr_id;
				qpn = ibv_wc_read_qp_num(B.cqx);
				if (ibv_wc_read_opcode(B.cqx) != IBV_WC_RDMA_WRITE ||
				    B.cqx->status != IBV_WC_SUCCESS)
					got += 100;
			} while (ibv_next_poll(B.cqx) == 0);
			ibv_end_poll(B.cqx);
		}
		usleep(100000);
		CHECK(got == 1 && id == 2000 && qpn == B.qp->qp_num && ibv_poll_cq(B.cq, 16, wc) == 0,
		      "10 unsignaled + 1 signaled WRITE: one completion, the signaled one (%d, wr_id %llu)",
		      got, (unsigned long long)id);
	}

	/*
	 * 5. more receive completions than A's CQ holds, none polled: the poll
	 * fails (negative) and IBV_EVENT_CQ_ERR comes once on the async fd;
	 * ibv_destroy_cq then waits for its ack. On a second QP pair.
	 */
	{
		struct ibv_qp *a1 = A.qp, *b1 = B.qp;
		struct ibv_async_event aev;
		struct ibv_poll_cq_attr pa = { 0 };
		const int total = 16384 + 64;	/* past the library's 16384-entry floor */
		int sent = 0, done = 0, rc;
		time_t end = time(NULL) + 20;

		A.qp = make_qp(&A, 20000);
		if (setns(ns_b, CLONE_NEWNET))
			DIE("setns B");
		B.qp = make_qp(&B, 32);
		connect_side(&B, &A);
		if (setns(ns_a, CLONE_NEWNET))
			DIE("setns A");
		connect_side(&A, &B);
		for (int i = 0; i < total; i++)
			post_recv(&A, 50000 + (uint64_t)i, 0);
		while (done < total && time(NULL) < end) {
			while (sent < total && sent - done < 32)
				post_send(&B, &A, IBV_WR_SEND, 7, 1, 0, true), sent++;
			if (ibv_start_poll(B.cqx, &pa) == 0) {
				do {
					done++;
				} while (ibv_next_poll(B.cqx) == 0);
				ibv_end_poll(B.cqx);
			}
		}
		CHECK(done == total, "B: %d of %d sends completed", done, total);
		usleep(100000);
		rc = ibv_poll_cq(A.cq, 16, wc);
		CHECK(rc < 0, "A's CQ overflowed: ibv_poll_cq %d", rc);
		CHECK(readable(A.ctx->async_fd, 1000) && ibv_get_async_event(A.ctx, &aev) == 0 &&
		      aev.event_type == IBV_EVENT_CQ_ERR && aev.element.cq == A.cq,
		      "IBV_EVENT_CQ_ERR for A's CQ on the async fd");
		ibv_poll_cq(A.cq, 16, wc);
		CHECK(!readable(A.ctx->async_fd, 100), "... once");
		ibv_ack_async_event(&aev);
		CHECK(ibv_destroy_qp(A.qp) == 0, "the second QP pair destroyed");
		A.qp = a1;
		if (setns(ns_b, CLONE_NEWNET))
			DIE("setns B");
		ibv_destroy_qp(B.qp);
		B.qp = b1;
		if (setns(ns_a, CLONE_NEWNET))
			DIE("setns A");
	}

	/* 4. in use: EBUSY */
	CHECK(ibv_destroy_cq(A.cq) == EBUSY, "ibv_destroy_cq with a QP on it: EBUSY");
	CHECK(ibv_dealloc_pd(A.pd) == EBUSY, "ibv_dealloc_pd with a QP and a region: EBUSY");
	CHECK(ibv_destroy_comp_channel(A.ch) == EBUSY, "ibv_destroy_comp_channel with a CQ: EBUSY");

	/* teardown, every object, in order; each side in its namespace (the device close detaches) */
	CHECK(ibv_destroy_qp(A.qp) == 0 && ibv_destroy_cq(A.cq) == 0 &&
	      ibv_destroy_comp_channel(A.ch) == 0 && ibv_dereg_mr(A.mr) == 0 &&
	      ibv_dealloc_pd(A.pd) == 0 && ibv_close_device(A.ctx) == 0, "A torn down");
	if (setns(ns_b, CLONE_NEWNET))
		DIE("setns B");
	CHECK(ibv_destroy_qp(B.qp) == 0 && ibv_destroy_cq(B.cq) == 0 && ibv_dereg_mr(B.mr) == 0 &&
	      ibv_dealloc_pd(B.pd) == 0 && ibv_close_device(B.ctx) == 0, "B torn down");
	ibv_free_device_list(A.list);
	ibv_free_device_list(B.list);
	close(ns_a);
	close(ns_b);
	printf("%d failed\n", failed);
	return failed;
}
