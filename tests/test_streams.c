// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Wire protocol v2's ordered streams, on the simulated wire (no root): 64
 * streams over one QP through a 1 Gbit/s queue, one of them stalled (its
 * receiver posts nothing), against the same run with every stream served.
 * The stalled stream must cost the others under 5% of their throughput,
 * every message must land whole and in its stream's order, and the stalled
 * stream must resume once receives are posted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#define BUF	(1 << 20)
#include "pair.h"
#include "../lib/eng_int.h"

#define NSTREAMS	64
#define MSG		4096	/* bytes per SEND */
#define RECVS		4	/* receives each stream keeps posted */
#define SENDS		2	/* SENDs each stream keeps outstanding */
#define STALLED		7
#define RUN_US		100000

struct streams_run {
	struct pair	*p;
	bool		stall;		/* STALLED's receiver posts nothing */
	__u64		end;
	__u64		bytes[NSTREAMS];	/* received whole, per stream */
	__u32		next_recv[NSTREAMS];	/* receive slot expected to complete next */
	__u32		sent[NSTREAMS];		/* SENDs posted */
	int		bad;			/* completions out of order, short or wrong */
};

static __u8 *send_buf(struct pair *p, __u32 s) { return p->la + (size_t)s * MSG; }
static __u8 *recv_buf(struct pair *p, __u32 s, __u32 k) { return p->lb + ((size_t)s * RECVS + k) * MSG; }

static void post_send_on(struct streams_run *r, __u32 s)
{
	struct mroce_sge sge = { .addr = (__u64)(unsigned long)send_buf(r->p, s), .length = MSG,
				 .lkey = mroce_mr_lkey(r->p->ma) };
	struct mroce_send_wr wr = { .wr_id = (__u64)s << 32 | r->sent[s], .opcode = MROCE_WR_SEND,
				    .sg_list = &sge, .num_sge = 1 };

	assert_int_equal(mroce_post_send_on(r->p->qa, s, &wr), 0);
	r->sent[s]++;
}

static void post_recv_on(struct streams_run *r, __u32 s, __u32 k)
{
	struct mroce_sge sge = { .addr = (__u64)(unsigned long)recv_buf(r->p, s, k), .length = MSG,
				 .lkey = mroce_mr_lkey(r->p->mb) };
	struct mroce_recv_wr wr = { .wr_id = (__u64)s << 32 | k, .sg_list = &sge, .num_sge = 1 };

	memset(recv_buf(r->p, s, k), 0, MSG);
	assert_int_equal(mroce_post_recv_on(r->p->qb, s, &wr), 0);
}

/* The driver: repost what completed; the run ends at r->end of virtual time. */
static bool streams_step(void *ctx)
{
	struct streams_run *r = ctx;
	struct mroce_wc wc[64];
	int n;

	while ((n = mroce_poll_cq(r->p->cqa, 64, wc)) > 0)
		for (int i = 0; i < n; i++) {
			__u32 s = (__u32)(wc[i].wr_id >> 32);

			if (wc[i].status != MROCE_WC_SUCCESS || s >= NSTREAMS) {
				r->bad++;
				continue;
			}
			post_send_on(r, s);
		}
	while ((n = mroce_poll_cq(r->p->cqb, 64, wc)) > 0)
		for (int i = 0; i < n; i++) {
			__u32 s = (__u32)(wc[i].wr_id >> 32), k = (__u32)wc[i].wr_id;

			/* whole, from its own stream, and in the order its receives were posted */
			if (wc[i].status != MROCE_WC_SUCCESS || s >= NSTREAMS || k != r->next_recv[s] ||
			    wc[i].byte_len != MSG || memcmp(recv_buf(r->p, s, k), send_buf(r->p, s), MSG)) {
				r->bad++;
				continue;
			}
			r->bytes[s] += MSG;
			r->next_recv[s] = (k + 1) % RECVS;
			post_recv_on(r, s, k);
		}
	return r->p->net->now >= r->end;
}

static void streams_open(struct pair *p, __u64 seed)
{
	MROCE_OPTS(mroce_qp_attr, attr, .streams = NSTREAMS, .rq_depth = RECVS, .paths = 4,
		   .rnr_timer_us = 500);

	pair_open(p, seed, &attr, NULL);
	p->net->a.link = (struct sim_link){ .delay_us = 10, .path_step_us = 5, .rate_mbps = 1000,
					    .queue_bytes = 1 << 20, .ecn_bytes = 64 << 10 };
	p->net->b.link = (struct sim_link){ .delay_us = 10 };
	pair_connect(p);
	for (__u32 s = 0; s < NSTREAMS; s++)
		fill(send_buf(p, s), MSG, s + 1);
}

/* Bytes the streams other than STALLED received in RUN_US. */
static __u64 streams_run(struct pair *p, struct streams_run *r, bool stall)
{
	__u64 others = 0;

	memset(r, 0, sizeof(*r));
	r->p = p;
	r->stall = stall;
	r->end = p->net->now + RUN_US;
	for (__u32 s = 0; s < NSTREAMS; s++) {
		for (__u32 k = 0; k < RECVS && !(stall && s == STALLED); k++)
			post_recv_on(r, s, k);
		for (__u32 i = 0; i < SENDS; i++)
			post_send_on(r, s);
	}
	assert_int_equal(sim_run(p->net, p->da, p->db, streams_step, r, RUN_US + 1000), 0);
	assert_int_equal(r->bad, 0);
	for (__u32 s = 0; s < NSTREAMS; s++)
		if (s != STALLED)
			others += r->bytes[s];
	return others;
}

static void test_stalled_stream_costs_others_little(void **state)
{
	struct streams_run *clean = calloc(1, sizeof(*clean)), *stalled = calloc(1, sizeof(*stalled));
	struct pair a, b;
	__u64 base, with;
	__u32 min = ~0u, max = 0;

	(void)state;
	streams_open(&a, 41);
	base = streams_run(&a, clean, false);
	pair_close(&a);

	streams_open(&b, 41);
	with = streams_run(&b, stalled, true);
	print_message("64 streams, 1 Gbit/s: others %.1f Mbit/s served, %.1f Mbit/s with stream %d "
		      "stalled (%.3fx)\n", base * 8.0 / RUN_US, with * 8.0 / RUN_US, STALLED,
		      (double)with / (double)base);
	assert_true(base * 8 / RUN_US > 800);		/* the link is used: > 0.8 Gbit/s */
	assert_true(with * 100 >= base * 95);		/* the stall costs the others < 5% */
	for (__u32 s = 0; s < NSTREAMS; s++) {
		if (s == STALLED)
			continue;
		min = stalled->bytes[s] < min ? (__u32)stalled->bytes[s] : min;
		max = stalled->bytes[s] > max ? (__u32)stalled->bytes[s] : max;
	}
	assert_true(min * 2 >= max);			/* and no other stream starves */
	/* The stalled stream waited, nothing else: no SEND of it completed, the QP lives. */
	assert_int_equal(stalled->bytes[STALLED], 0);
	assert_int_equal(mroce_qp_state(b.qa), MROCE_QPS_RTS);
	assert_int_equal(mroce_qp_state(b.qb), MROCE_QPS_RTS);
	assert_true(b.qa->streams[STALLED].epoch > 0);	/* it was refused, and restarted */

	/* Receives posted at last: the stalled stream's messages land, in order. */
	for (__u32 k = 0; k < RECVS; k++)
		post_recv_on(stalled, STALLED, k);
	stalled->end = b.net->now + 20000;
	assert_int_equal(sim_run(b.net, b.da, b.db, streams_step, stalled, 30000), 0);
	assert_int_equal(stalled->bad, 0);
	assert_true(stalled->bytes[STALLED] >= SENDS * MSG);
	pair_close(&b);
	free(clean);
	free(stalled);
}

/* A message on a stream the QP does not have is refused at posting. */
static void test_stream_out_of_range(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .streams = 4);
	struct pair p;
	struct mroce_sge sge;
	struct mroce_send_wr wr = { .opcode = MROCE_WR_SEND, .sg_list = &sge, .num_sge = 1 };
	struct mroce_recv_wr rw = { .sg_list = &sge, .num_sge = 1 };

	(void)state;
	pair_open(&p, 5, &attr, NULL);
	pair_connect(&p);
	sge = (struct mroce_sge){ .addr = (__u64)(unsigned long)p.la, .length = 8,
				  .lkey = mroce_mr_lkey(p.ma) };
	assert_int_equal(mroce_post_send_on(p.qa, 4, &wr), -EINVAL);
	assert_int_equal(mroce_post_recv_on(p.qa, 4, &rw), -EINVAL);
	assert_int_equal(mroce_post_send_on(p.qa, 3, &wr), 0);
	assert_int_equal(mroce_post_send_on(NULL, 0, &wr), -EINVAL);
	pair_close(&p);
}

/* The first NACK on its way to device a, decoded into *h; false if none. */
struct nack_seen {
	struct sim_net	*net;
	struct mroce_hdr h;
	bool		seen;
};

static bool nack_to_a(void *ctx)
{
	struct nack_seen *ns = ctx;
	struct sim_port *to = &ns->net->a;

	for (__u32 i = 0; !ns->seen && i < to->n; i++) {
		struct mroce_pkt pkt;

		if (mroce_parse(to->heap[i]->data, to->heap[i]->data + to->heap[i]->len,
				MROCE_DEFAULT_PORT, &pkt) != MROCE_STAT_RX)
			continue;
		mroce_hdr_decode(&pkt, &ns->h);
		ns->seen = ns->h.opcode == MROCE_OP_NACK;
	}
	return ns->seen;
}

/*
 * A peer that sends on a stream this QP does not have (its stream count
 * unknown: a caller that filled the QP info itself) is refused with
 * INVALID_REQ, and the NACK names the refused message's stream and msn, as
 * docs/protocol.md says of every refused receive-consuming message, not
 * stream 0. The sender fails that request, and only it.
 */
static void test_refused_stream_nack_names_it(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .streams = 8);
	struct waiter *w = calloc(1, sizeof(*w));
	struct nack_seen ns = { 0 };
	struct mroce_qp_info ia, ib;
	struct in6_addr a6 = { 0 }, b6;
	struct mroce_sge sge;
	struct mroce_send_wr wr = { .wr_id = 77, .opcode = MROCE_WR_SEND, .sg_list = &sge,
				    .num_sge = 1 };
	struct pair p;

	(void)state;
	pair_open(&p, 17, &attr, NULL);
	mroce_destroy_qp(p.qb);			/* b has 4 streams, a 8 */
	attr.streams = 4;
	attr.send_cq = attr.recv_cq = p.cqb;
	assert_int_equal(mroce_create_qp(p.db, &attr, &p.qb), 0);
	a6.s6_addr[10] = a6.s6_addr[11] = 0xff;
	b6 = a6;
	memcpy(&a6.s6_addr[12], &p.qa->dev->local.src.v4, 4);
	memcpy(&b6.s6_addr[12], &p.qb->dev->local.src.v4, 4);
	assert_int_equal(mroce_qp_local_info(p.qa, &a6, AF_INET, &ia), 0);
	assert_int_equal(mroce_qp_local_info(p.qb, &b6, AF_INET, &ib), 0);
	ia.streams = ib.streams = 0;		/* unknown: not checked */
	assert_int_equal(mroce_qp_connect(p.qa, &ib, ib.mac), 0);
	assert_int_equal(mroce_qp_connect(p.qb, &ia, ia.mac), 0);

	sge = (struct mroce_sge){ .addr = (__u64)(unsigned long)p.la, .length = 64,
				  .lkey = mroce_mr_lkey(p.ma) };
	for (__u32 s = 0; s < 3; s++)		/* messages 0, 1, 2 of stream 6 */
		assert_int_equal(mroce_post_send_on(p.qa, 6, &wr), 0);
	ns.net = p.net;
	assert_int_equal(sim_run(p.net, p.da, p.db, nack_to_a, &ns, 100000), 0);
	assert_int_equal(ns.h.nak_code, MROCE_NAK_INVALID_REQ);
	assert_int_equal(ns.h.nak_stream, 6);
	assert_int_equal(ns.h.nak_msn, 0);
	/* the sender: the refused SEND fails as a remote invalid request */
	w->p = &p;
	w->want_a = 1;
	assert_int_equal(sim_run(p.net, p.da, p.db, collected, w, 100000), 0);
	assert_int_equal(w->wa[0].wr_id, 77);
	assert_int_equal(w->wa[0].status, MROCE_WC_REM_INV_REQ_ERR);
	assert_int_equal(mroce_qp_state(p.qb), MROCE_QPS_ERR);
	pair_close(&p);
	free(w);
}

/*
 * Both ends must number their streams alike: the QP info carries the count
 * (through pack and unpack), and connecting to a peer with another count is
 * refused with a clear error, before any message could be refused for it.
 */
static void test_streams_must_match(void **state)
{
	MROCE_OPTS(mroce_qp_attr, attr, .streams = 4);
	struct mroce_qp_info ia, ib, back;
	__u8 wire[MROCE_QP_INFO_WIRE_LEN];
	struct mroce_qp *other;
	struct pair p;
	char msg[128];

	(void)state;
	pair_open(&p, 9, &attr, NULL);
	attr.streams = 2;
	attr.send_cq = attr.recv_cq = p.cqb;
	assert_int_equal(mroce_create_qp(p.db, &attr, &other), 0);
	assert_int_equal(mroce_qp_local_info(p.qa, NULL, AF_INET, &ia), 0);
	assert_int_equal(mroce_qp_local_info(other, NULL, AF_INET, &ib), 0);
	assert_int_equal(ia.streams, 4);
	mroce_qp_info_pack(&ia, wire);
	assert_int_equal(mroce_qp_info_unpack(wire, &back), 0);
	assert_int_equal(back.streams, 4);
	assert_int_equal(mroce_qp_connect(p.qa, &ib, ib.mac), -MROCE_ERR_STREAMS);
	assert_int_equal(mroce_qp_connect(other, &ia, ia.mac), -MROCE_ERR_STREAMS);
	assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_INIT);
	assert_int_equal(mroce_strerror(-MROCE_ERR_STREAMS, msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "streams"));
	ib.streams = 0;	/* unknown (a caller that fills the info itself): not checked */
	assert_int_equal(mroce_qp_connect(p.qa, &ib, ib.mac), 0);
	mroce_destroy_qp(other);
	pair_close(&p);
}

/* Too many streams, or too many receive entries in all, is refused at creation. */
static void test_streams_attr_bounds(void **state)
{
	struct sim_net *net = sim_new(1);
	struct mroce_dev *d = sim_dev(net, false, NULL);
	struct mroce_cq *cq;
	struct mroce_qp *qp;

	(void)state;
	assert_int_equal(mroce_create_cq(d, 64, &cq), 0);
	{
		MROCE_OPTS(mroce_qp_attr, attr, .send_cq = cq, .recv_cq = cq,
			   .streams = MROCE_MAX_STREAMS + 1, .rq_depth = 1);
		assert_int_equal(mroce_create_qp(d, &attr, &qp), -EINVAL);
	}
	{
		MROCE_OPTS(mroce_qp_attr, attr, .send_cq = cq, .recv_cq = cq,
			   .streams = MROCE_MAX_STREAMS, .rq_depth = 1024);
		assert_int_equal(mroce_create_qp(d, &attr, &qp), -EINVAL);
	}
	{
		MROCE_OPTS(mroce_qp_attr, attr, .send_cq = cq, .recv_cq = cq,
			   .streams = MROCE_MAX_STREAMS, .rq_depth = 16);
		assert_int_equal(mroce_create_qp(d, &attr, &qp), 0);
		assert_int_equal(mroce_destroy_qp(qp), 0);
	}
	mroce_destroy_cq(cq);
	mroce_dev_close(d);
	sim_free_net(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stalled_stream_costs_others_little),
		cmocka_unit_test(test_stream_out_of_range),
		cmocka_unit_test(test_refused_stream_nack_names_it),
		cmocka_unit_test(test_streams_must_match),
		cmocka_unit_test(test_streams_attr_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
