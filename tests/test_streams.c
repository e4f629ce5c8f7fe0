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

/*
 * The stream-failure rule (protocol.md, "Streams"): with any rnr_retry, a
 * stream whose receiver posts nothing fails alone. 64 streams, STALLED's
 * receiver posts nothing; on STALLED the requester posts, in order, a
 * WRITE (W0), two SENDs (S0, S1), a WRITE (W1), and once the stream is held
 * another WRITE (W2). rnr_retry 1-6: S0 fails with RNR retries exceeded, no
 * sooner than rnr_retry RNR timers after it was posted; S1 and W2, not
 * started, are flushed (W2's target untouched); W0 and W1, on the wire
 * before the stream was held, complete with their bytes in place; the
 * stream takes no more requests (-EIO) while its receive half still takes
 * the peer's messages. rnr_retry 7 (and 0, which means 7): the stream waits,
 * nothing of it fails. Either way every other stream's completions are
 * successes with the right bytes, and both QPs stay connected.
 */
enum { W0, S0, S1, W1, W2, NTAGS };

struct fail_run {
	struct streams_run	r;
	bool			got[NTAGS];
	enum mroce_wc_status	status[NTAGS];
	__u32			byte_len[NTAGS];
	__u64			at[NTAGS];
	int			order[NTAGS], n;	/* tags in completion order */
	__u64			t_s0;			/* when S0 was posted */
	bool			w2_posted;
	/* receives to post again: unordered, one may complete before an earlier one frees its entry */
	__u32			pend[NSTREAMS][RECVS], npend[NSTREAMS];
};

/* Post again what completed, as far as the receive queue has room. */
static void fail_repost(struct fail_run *f)
{
	for (__u32 s = 0; s < NSTREAMS; s++)
		while (f->npend[s]) {
			__u32 k = f->pend[s][0];
			struct mroce_sge sge = { .addr = (__u64)(unsigned long)recv_buf(f->r.p, s, k),
						 .length = MSG, .lkey = mroce_mr_lkey(f->r.p->mb) };
			struct mroce_recv_wr wr = { .wr_id = (__u64)s << 32 | k, .sg_list = &sge,
						    .num_sge = 1 };

			memset(recv_buf(f->r.p, s, k), 0, MSG);
			if (mroce_post_recv_on(f->r.p->qb, s, &wr) == -EAGAIN)
				break;
			memmove(f->pend[s], f->pend[s] + 1, --f->npend[s] * sizeof(f->pend[s][0]));
		}
}

static __u8 *stalled_target(struct pair *p, int tag)
{
	return recv_buf(p, STALLED, tag == W0 ? 0 : tag == W1 ? 1 : 2);	/* never posted as receives */
}

static void post_stalled(struct fail_run *f, int tag)
{
	struct pair *p = f->r.p;
	__u8 *src = send_buf(p, STALLED);
	struct mroce_sge sge = { .addr = (__u64)(unsigned long)src, .length = MSG,
				 .lkey = mroce_mr_lkey(p->ma) };
	struct mroce_send_wr wr = { .wr_id = (__u64)STALLED << 32 | 0x80000000u | (__u32)tag,
				    .opcode = tag == S0 || tag == S1 ? MROCE_WR_SEND : MROCE_WR_RDMA_WRITE,
				    .sg_list = &sge, .num_sge = 1,
				    .remote_addr = (__u64)(unsigned long)stalled_target(p, tag),
				    .rkey = mroce_mr_rkey(p->mb) };

	assert_int_equal(mroce_post_send_on(p->qa, STALLED, &wr), 0);
}

static bool fail_step(void *ctx)
{
	struct fail_run *f = ctx;
	struct streams_run *r = &f->r;
	struct mroce_wc wc[64];
	int n;

	if (!f->w2_posted && r->p->qa->streams[STALLED].epoch > 0) {
		post_stalled(f, W2);	/* the stream is held: W2 waits with it */
		f->w2_posted = true;
	}
	while ((n = mroce_poll_cq(r->p->cqa, 64, wc)) > 0)
		for (int i = 0; i < n; i++) {
			__u32 s = (__u32)(wc[i].wr_id >> 32), tag = (__u32)wc[i].wr_id & 0xffff;

			if (s == STALLED && ((__u32)wc[i].wr_id & 0x80000000u) && tag < NTAGS &&
			    !f->got[tag]) {
				f->got[tag] = true;
				f->status[tag] = wc[i].status;
				f->byte_len[tag] = wc[i].byte_len;
				f->at[tag] = r->p->net->now;
				f->order[f->n++] = (int)tag;
			} else if (wc[i].status != MROCE_WC_SUCCESS || s >= NSTREAMS || s == STALLED) {
				r->bad++;
			} else {
				post_send_on(r, s);
			}
		}
	while ((n = mroce_poll_cq(r->p->cqb, 64, wc)) > 0)
		for (int i = 0; i < n; i++) {
			__u32 s = (__u32)(wc[i].wr_id >> 32), k = (__u32)wc[i].wr_id;

			/* whole, from its own stream, and (ordered) in the order its receives were posted */
			if (wc[i].status != MROCE_WC_SUCCESS || s >= NSTREAMS || s == STALLED ||
			    (k != r->next_recv[s] && r->p->qb->attr.order == MROCE_ORDERED) ||
			    k >= RECVS || wc[i].byte_len != MSG ||
			    memcmp(recv_buf(r->p, s, k), send_buf(r->p, s), MSG)) {
				r->bad++;
				continue;
			}
			r->bytes[s] += MSG;
			r->next_recv[s] = (k + 1) % RECVS;
			f->pend[s][f->npend[s]++] = k;
		}
	fail_repost(f);
	return r->p->net->now >= r->end;
}

/* The peer's SEND on STALLED, the other way: the stream's receive half works. */
struct half_run {
	struct pair		*p;
	enum mroce_wc_status	recv, send;
	bool			got_recv, got_send;
};

static bool half_step(void *ctx)
{
	struct half_run *h = ctx;
	struct mroce_wc wc[64];
	int n;

	while ((n = mroce_poll_cq(h->p->cqa, 64, wc)) > 0)
		for (int i = 0; i < n; i++)
			if (wc[i].wr_id == 77) {
				h->got_recv = true;
				h->recv = wc[i].status;
			}
	while ((n = mroce_poll_cq(h->p->cqb, 64, wc)) > 0)
		for (int i = 0; i < n; i++)
			if (wc[i].wr_id == 78) {
				h->got_send = true;
				h->send = wc[i].status;
			}
	return h->got_recv && h->got_send;
}

static void stalled_receive_half(struct pair *p)
{
	struct half_run h = { .p = p };
	__u8 *dst = p->la + BUF / 2, *src = recv_buf(p, STALLED, 3);	/* both unused */
	struct mroce_sge rs = { .addr = (__u64)(unsigned long)dst, .length = MSG,
				.lkey = mroce_mr_lkey(p->ma) };
	struct mroce_sge ss = { .addr = (__u64)(unsigned long)src, .length = MSG,
				.lkey = mroce_mr_lkey(p->mb) };
	struct mroce_recv_wr rw = { .wr_id = 77, .sg_list = &rs, .num_sge = 1 };
	struct mroce_send_wr sw = { .wr_id = 78, .opcode = MROCE_WR_SEND, .sg_list = &ss, .num_sge = 1 };

	fill(src, MSG, 99);
	memset(dst, 0, MSG);
	assert_int_equal(mroce_post_recv_on(p->qa, STALLED, &rw), 0);
	assert_int_equal(mroce_post_send_on(p->qb, STALLED, &sw), 0);
	assert_int_equal(sim_run(p->net, p->da, p->db, half_step, &h, 100000), 0);
	assert_int_equal(h.recv, MROCE_WC_SUCCESS);
	assert_int_equal(h.send, MROCE_WC_SUCCESS);
	assert_memory_equal(dst, src, MSG);
}

static void stalled_stream_fails_alone(__u32 rnr_retry, enum mroce_order order, __u64 seed,
				       __u32 loss_ppm)
{
	MROCE_OPTS(mroce_qp_attr, attr, .streams = NSTREAMS, .rq_depth = RECVS, .paths = 4,
		   .rnr_timer_us = 500, .rnr_retry = rnr_retry, .order = order);
	struct fail_run *f = calloc(1, sizeof(*f));
	struct streams_run *r = &f->r;
	bool waits = rnr_retry == 0 || rnr_retry == 7;	/* 0: the default, 7 */
	__u32 budget = waits ? 7 : rnr_retry;
	__u64 min = ~0ull, max = 0;
	struct mroce_sge sge;
	struct mroce_send_wr wr = { .opcode = MROCE_WR_SEND, .sg_list = &sge, .num_sge = 1 };
	struct pair p;

	pair_open(&p, seed, &attr, NULL);
	p.net->a.link = (struct sim_link){ .delay_us = 10, .path_step_us = 5, .rate_mbps = 1000,
					   .queue_bytes = 1 << 20, .ecn_bytes = 64 << 10,
					   .loss_ppm = loss_ppm, .dup_ppm = loss_ppm / 2,
					   .jitter_us = loss_ppm ? 5 : 0 };
	p.net->b.link = (struct sim_link){ .delay_us = 10, .loss_ppm = loss_ppm,
					   .dup_ppm = loss_ppm / 2, .jitter_us = loss_ppm ? 5 : 0 };
	pair_connect(&p);
	for (__u32 s = 0; s < NSTREAMS; s++)
		fill(send_buf(&p, s), MSG, s + 1);
	r->p = &p;
	r->end = p.net->now + 60000;	/* RNR waits here take ~4.4 ms each: the probe queues */
	for (__u32 s = 0; s < NSTREAMS; s++) {
		if (s == STALLED) {
			post_stalled(f, W0);
			f->t_s0 = p.net->now;
			post_stalled(f, S0);
			post_stalled(f, S1);
			post_stalled(f, W1);
			continue;
		}
		for (__u32 k = 0; k < RECVS; k++)
			post_recv_on(r, s, k);
		for (__u32 i = 0; i < SENDS; i++)
			post_send_on(r, s);
	}
	assert_int_equal(sim_run(p.net, p.da, p.db, fail_step, f, 70000), 0);

	/* every other stream: only successes, each whole and in its order (fail_step) */
	assert_int_equal(r->bad, 0);
	for (__u32 s = 0; s < NSTREAMS; s++) {
		if (s == STALLED)
			continue;
		min = r->bytes[s] < min ? r->bytes[s] : min;
		max = r->bytes[s] > max ? r->bytes[s] : max;
	}
	assert_true(min >= 16 * MSG);			/* every one went on all along */
	assert_true(min * 2 >= max);
	assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_RTS);
	assert_int_equal(mroce_qp_state(p.qb), MROCE_QPS_RTS);
	assert_true(f->w2_posted);

	/* W0, on the wire before the stream was refused: done, its bytes in place */
	assert_true(f->got[W0]);
	assert_int_equal(f->status[W0], MROCE_WC_SUCCESS);
	assert_memory_equal(stalled_target(&p, W0), send_buf(&p, STALLED), MSG);
	/* W1 too; in ordered mode it reports after S0 and S1 (its stream's order) */
	assert_memory_equal(stalled_target(&p, W1), send_buf(&p, STALLED), MSG);
	/* W2 never went out */
	for (__u32 i = 0; i < MSG; i++)
		assert_int_equal(stalled_target(&p, W2)[i], 0);
	if (waits) {
		/* it waits for ever, as in ibverbs: nothing of it fails */
		assert_false(f->got[S0] || f->got[S1] || f->got[W2]);
		assert_int_equal(f->got[W1], order == MROCE_UNORDERED);
		assert_true(!f->got[W1] || f->status[W1] == MROCE_WC_SUCCESS);
		assert_false(p.qa->streams[STALLED].failed);
		assert_true(p.qa->streams[STALLED].epoch > 1);
	} else {
		assert_true(f->got[S0] && f->got[S1] && f->got[W1] && f->got[W2]);
		assert_int_equal(f->status[S0], MROCE_WC_RNR_RETRY_EXC_ERR);
		assert_int_equal(f->byte_len[S0], 0);
		/* not before rnr_retry RNR timers passed */
		assert_true(f->at[S0] >= f->t_s0 + (__u64)budget * attr.rnr_timer_us);
		/*
		 * Flushed; unordered, S1 may have run out of retries first (S0's
		 * packet lost, S1 the probe) and have been reported so.
		 */
		assert_true(f->status[S1] == MROCE_WC_WR_FLUSH_ERR ||
			    (order == MROCE_UNORDERED && f->status[S1] == MROCE_WC_RNR_RETRY_EXC_ERR));
		assert_int_equal(f->status[W1], MROCE_WC_SUCCESS);
		assert_int_equal(f->byte_len[W1], MSG);
		assert_int_equal(f->status[W2], MROCE_WC_WR_FLUSH_ERR);
		if (order == MROCE_ORDERED) {	/* the stream's posting order */
			int want[NTAGS] = { W0, S0, S1, W1, W2 };

			assert_int_equal(f->n, NTAGS);
			assert_memory_equal(f->order, want, sizeof(want));
		}
		/* the stream's send half stays in error; the others take requests */
		sge = (struct mroce_sge){ .addr = (__u64)(unsigned long)send_buf(&p, STALLED),
					  .length = MSG, .lkey = mroce_mr_lkey(p.ma) };
		assert_int_equal(mroce_post_send_on(p.qa, STALLED, &wr), -EIO);
		assert_int_equal(mroce_post_send_on(p.qa, STALLED + 1, &wr), 0);
		r->sent[STALLED + 1]++;
	}
	print_message("seed %llu, loss %u ppm, rnr_retry %u, %s: others %llu..%llu bytes each, stalled stream %s at %llu us\n",
		      (unsigned long long)seed, loss_ppm, rnr_retry,
		      order == MROCE_ORDERED ? "ordered" : "unordered",
		      (unsigned long long)min, (unsigned long long)max,
		      waits ? "waiting" : "failed",
		      waits ? 0ull : (unsigned long long)(f->at[S0] - f->t_s0));
	stalled_receive_half(&p);
	assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_RTS);
	assert_int_equal(mroce_qp_state(p.qb), MROCE_QPS_RTS);
	pair_close(&p);
	free(f);
}

static void test_stalled_stream_fails_alone(void **state)
{
	(void)state;
	for (__u32 rnr = 0; rnr <= 7; rnr++) {
		stalled_stream_fails_alone(rnr, MROCE_ORDERED, 40 + rnr, 0);
		stalled_stream_fails_alone(rnr, MROCE_UNORDERED, 40 + rnr, 0);
	}
}

/* The same with 0.5% loss, 0.25% duplication and jitter both ways: NACKs, VOIDs and probes lost. */
static void test_stalled_stream_fails_alone_lossy(void **state)
{
	(void)state;
	for (__u64 seed = 1; seed <= 12; seed++)
		stalled_stream_fails_alone((__u32)(seed % 8),
					   seed % 2 ? MROCE_ORDERED : MROCE_UNORDERED, seed, 5000);
}

/*
 * A later message of a stream may run out of RNR retries first: S0's
 * packet is lost, S1 (same stream) is refused, and once the short RNR
 * timer ends S1 is the probe, refused again: S1 fails the stream while S0
 * is still in loss recovery. S0's resend is refused in turn and S0 runs out
 * of retries too. In the stream's order the first failure carries the
 * error: ordered, S0 reports RNR retries exceeded and S1, which failed
 * first, is flushed; unordered, each reports its own failure as it
 * happened. The QP stays up and the other stream's SEND completes.
 */
struct later_run {
	struct pair		*p;
	enum mroce_wc_status	st[3];
	int			got[3], order[3], n;
	bool			s1_failed_first;
};

static bool later_step(void *ctx)
{
	struct later_run *l = ctx;
	struct mroce_qp *q = l->p->qa;
	struct mroce_wc wc[8];
	int n;

	for (__u32 i = q->sq_head; i != q->sq_tail; i++) {
		const struct mroce_swqe *w = SWQE(q, i), *w0 = NULL;

		for (__u32 j = q->sq_head; j != q->sq_tail; j++)
			if (SWQE(q, j)->wr_id == 0 && !SWQE(q, j)->moved)
				w0 = SWQE(q, j);
		if (w->wr_id == 1 && !w->moved && w->done && w->status && w0 && !w0->done)
			l->s1_failed_first = true;
	}
	while ((n = mroce_poll_cq(l->p->cqa, 8, wc)) > 0)
		for (int i = 0; i < n; i++)
			if (wc[i].wr_id < 3 && !l->got[wc[i].wr_id]++) {
				l->st[wc[i].wr_id] = wc[i].status;
				l->order[l->n++] = (int)wc[i].wr_id;
			}
	while (mroce_poll_cq(l->p->cqb, 8, wc) > 0)
		;
	return l->got[0] && l->got[1] && l->got[2];
}

static void later_fails_first(enum mroce_order order)
{
	MROCE_OPTS(mroce_qp_attr, attr, .streams = 2, .rnr_timer_us = 30, .rnr_retry = 1,
		   .order = order);
	struct later_run l = { 0 };
	struct pair p;
	__u32 psn;

	pair_open(&p, 3, &attr, NULL);
	p.net->a.link = (struct sim_link){ .delay_us = 10 };
	p.net->b.link = (struct sim_link){ .delay_us = 10 };
	pair_connect(&p);
	l.p = &p;
	fill(p.la, 64, 1);
	assert_int_equal(post_recv(p.qb, 9, p.lb + 4096, 64, mroce_mr_lkey(p.mb)), 0);	/* stream 0 */
	psn = p.qa->snd_nxt;
	p.net->a.link.drop_psn = psn;	/* S0's first copy */
	p.net->a.link.drop_armed = true;
	p.net->a.link.drop_copies = 3;	/* S0 stays lost past two RNR timers */
	{
		struct mroce_sge sge = { .addr = (__u64)(unsigned long)p.la, .length = 64,
					 .lkey = mroce_mr_lkey(p.ma) };
		struct mroce_send_wr wr = { .opcode = MROCE_WR_SEND, .sg_list = &sge, .num_sge = 1 };

		wr.wr_id = 0;
		assert_int_equal(mroce_post_send_on(p.qa, 1, &wr), 0);	/* S0 */
		wr.wr_id = 1;
		assert_int_equal(mroce_post_send_on(p.qa, 1, &wr), 0);	/* S1 */
		wr.wr_id = 2;
		assert_int_equal(mroce_post_send_on(p.qa, 0, &wr), 0);	/* the other stream's */
	}
	assert_int_equal(sim_run(p.net, p.da, p.db, later_step, &l, 200000), 0);
	print_message("%s: S1 failed first %d; S0 %s, S1 %s\n",
		      order == MROCE_ORDERED ? "ordered" : "unordered", l.s1_failed_first,
		      mroce_wc_status_str(l.st[0]), mroce_wc_status_str(l.st[1]));
	assert_true(l.s1_failed_first);
	assert_int_equal(l.st[2], MROCE_WC_SUCCESS);
	assert_memory_equal(p.lb + 4096, p.la, 64);
	assert_int_equal(l.st[0], MROCE_WC_RNR_RETRY_EXC_ERR);
	if (order == MROCE_ORDERED) {
		assert_int_equal(l.st[1], MROCE_WC_WR_FLUSH_ERR);
		assert_true(l.order[0] == 0 || l.order[1] == 0);	/* S0 before S1 */
		assert_true(l.order[2] == 1);
	} else {
		assert_int_equal(l.st[1], MROCE_WC_RNR_RETRY_EXC_ERR);
	}
	assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_RTS);
	assert_int_equal(mroce_qp_state(p.qb), MROCE_QPS_RTS);
	pair_close(&p);
}

static void test_stream_later_fails_first(void **state)
{
	(void)state;
	later_fails_first(MROCE_ORDERED);
	later_fails_first(MROCE_UNORDERED);
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
		cmocka_unit_test(test_stalled_stream_fails_alone),
		cmocka_unit_test(test_stalled_stream_fails_alone_lossy),
		cmocka_unit_test(test_stream_later_fails_first),
		cmocka_unit_test(test_stream_out_of_range),
		cmocka_unit_test(test_refused_stream_nack_names_it),
		cmocka_unit_test(test_streams_must_match),
		cmocka_unit_test(test_streams_attr_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
