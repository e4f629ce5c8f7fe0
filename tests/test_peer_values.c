// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a peer that holds the token may put in the fields it sends, on the
 * simulated wire (no root): timestamps of every extreme (2^31 ahead and
 * behind, 0, UINT32_MAX), ACKs whose echoes, ECN counts, grants, PSNs and
 * per-path SACK name nothing we sent, data packets whose sequences jump,
 * and message lengths that disagree. Each must leave the transfer correct
 * (the bytes in memory) or end in a counted drop or a clear error, keep
 * the estimators sane, and do no arithmetic UBSan objects to (run this
 * binary from the clang-ubsan build too: make ubsan-clang).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/mman.h>

#define BUF	(1 << 20)
#include "pair.h"
#include "../lib/eng_int.h"
#include "../lib/cc.h"

#define L2L4	42	/* Ethernet + IPv4 + UDP: the simulated wire's */

static struct mroce_bth *bth_of(__u8 *frame) { return (struct mroce_bth *)(frame + L2L4); }
static void *ext_of(__u8 *frame) { return frame + L2L4 + sizeof(struct mroce_bth); }

static bool is_data(const struct mroce_bth *b)
{
	return b->opcode >= MROCE_OP_WRITE && b->opcode <= MROCE_OP_READ_RESP;
}

/* ---- the receiver's one-way delay baseline ------------------------------- */

struct rogue_ts {
	struct sim_net	*net;
	__u32		dqpn;		/* only this QP's packets (0: any) */
	__u32		mode;		/* which extreme */
	__u32		every;		/* rewrite every n-th data packet (0: the first only) */
	__u32		seen, rewritten;
};

enum { TS_AHEAD, TS_ZERO, TS_MAX, TS_BEHIND, TS_MIX };

static __u32 extreme_ts(struct rogue_ts *r, __u32 honest)
{
	switch (r->mode == TS_MIX ? r->rewritten % 4 : r->mode) {
	case TS_AHEAD:	return honest + 0x80000000u + 109;	/* the review's 2^31 ahead */
	case TS_ZERO:	return 0;
	case TS_MAX:	return UINT32_MAX;
	default:	return honest - 0x7fffffffu;		/* 2^31 - 1 behind */
	}
}

static void rewrite_ts(void *ctx, __u8 *frame, __u32 len)
{
	struct rogue_ts *r = ctx;
	struct mroce_bth *b = bth_of(frame);

	(void)len;
	if (!is_data(b) || (r->dqpn && mroce_be32(b->dqpn) != r->dqpn))
		return;
	if (r->every ? r->seen++ % r->every : r->seen++)
		return;
	b->ts = mroce_be32(extreme_ts(r, mroce_be32(b->ts)));
	r->rewritten++;
}

struct two {
	struct waiter	w;
	struct mroce_qp	*qa2, *qb2;
	__u32		max_hint;	/* the largest grant either sender heard */
};

static bool two_done(void *ctx)
{
	struct two *t = ctx;

	if (t->w.p->qa->st.rate_hint_kbps > t->max_hint)
		t->max_hint = t->w.p->qa->st.rate_hint_kbps;
	if (t->qa2->st.rate_hint_kbps > t->max_hint)
		t->max_hint = t->qa2->st.rate_hint_kbps;
	return collected(&t->w);
}

/*
 * Two senders into one receiver on a clean, uncongested wire, one of them
 * stamping data packets with extreme times. The receiver's grants share a
 * link only when its queueing delay says it is full: a baseline pinned by
 * one bogus stamp (2^31 ahead made it read 35 minutes of queue for ever,
 * and overflowed the signed subtraction) throttled both. Each extreme:
 * both transfers whole, the stamps counted, the baseline the wire's real
 * delay, no grant.
 */
static void one_case(__u64 seed, __u32 mode, __u32 every)
{
	MROCE_OPTS(mroce_qp_attr, attr);
	struct two *t = calloc(1, sizeof(*t));
	struct rogue_ts r = { .mode = mode, .every = every };
	struct pair p;
	__u8 *lb2 = calloc(1, BUF);
	struct mroce_mr *mb2;

	pair_open(&p, seed, NULL, NULL);
	pair_connect(&p);
	attr.send_cq = attr.recv_cq = p.cqa;
	assert_int_equal(mroce_create_qp(p.da, &attr, &t->qa2), 0);
	attr.send_cq = attr.recv_cq = p.cqb;
	assert_int_equal(mroce_create_qp(p.db, &attr, &t->qb2), 0);
	assert_int_equal(sim_connect(t->qa2, t->qb2), 0);
	assert_int_equal(mroce_reg_mr(p.db, lb2, BUF, MROCE_ACCESS_LOCAL_WRITE |
				      MROCE_ACCESS_REMOTE_WRITE, &mb2), 0);
	p.net->a.link = (struct sim_link){ .delay_us = 10, .jitter_us = 3,
					   .rewrite = rewrite_ts, .rewrite_ctx = &r };
	p.net->b.link = (struct sim_link){ .delay_us = 10 };
	r.dqpn = p.qb->qpn;
	fill(p.la, BUF, 5 + mode);
	t->w.p = &p;
	t->w.want_a = 2 * 4;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(post(p.qa, MROCE_WR_RDMA_WRITE, (__u64)i, p.la, BUF, mroce_mr_lkey(p.ma),
				      (__u64)(unsigned long)p.lb, mroce_mr_rkey(p.mb), 0), 0);
		assert_int_equal(post(t->qa2, MROCE_WR_RDMA_WRITE, (__u64)i, p.la, BUF,
				      mroce_mr_lkey(p.ma), (__u64)(unsigned long)lb2,
				      mroce_mr_rkey(mb2), 0), 0);
	}
	assert_int_equal(sim_run(p.net, p.da, p.db, two_done, t, 20000000), 0);
	for (int i = 0; i < t->w.na; i++)
		assert_int_equal(t->w.wa[i].status, MROCE_WC_SUCCESS);
	assert_memory_equal(p.lb, p.la, BUF);
	assert_memory_equal(lb2, p.la, BUF);
	pthread_mutex_lock(&p.db->lock);
	printf("  mode %u every %u: %u stamps rewritten, %llu counted odd, baseline %d us, "
	       "largest grant heard %u kbit/s\n", mode, every, r.rewritten,
	       (unsigned long long)p.db->grant.ts_odd, (int)p.qb->owd_base, t->max_hint);
	assert_true(r.rewritten >= 1);
	/* no queue on this wire: no epoch saw congestion, nobody was granted a share */
	assert_int_equal(t->max_hint, 0);
	assert_int_equal(p.db->grant.cap_kbps, 0);
	/* the baseline is the wire's delay (the clocks agree here): 10 us and a path's step */
	assert_true(p.qb->owd_valid && p.qb->owd_base <= 100);
	assert_true(t->qb2->owd_valid && t->qb2->owd_base <= 100);
	/* counted: each one, and (the first one bogus) the real ones that unseated it */
	assert_true(p.db->grant.ts_odd >= (mode == TS_ZERO || mode == TS_MAX ? 1 : r.rewritten));
	assert_true(p.db->grant.ts_odd <= r.rewritten + 4);
	pthread_mutex_unlock(&p.db->lock);
	mroce_dereg_mr(mb2);
	mroce_destroy_qp(t->qa2);
	mroce_destroy_qp(t->qb2);
	free(lb2);
	free(t);
	pair_close(&p);
}

static void test_extreme_data_timestamps(void **state)
{
	(void)state;
	one_case(7003, TS_BEHIND, 0);	/* the first stamp: it was the baseline, for ever */
	one_case(7001, TS_AHEAD, 0);	/* one epoch of 2^31 us of queue */
	one_case(7002, TS_AHEAD, 97);
	one_case(7004, TS_BEHIND, 31);
	one_case(7005, TS_ZERO, 0);
	one_case(7006, TS_MAX, 13);
	one_case(7007, TS_MIX, 5);
}

/*
 * The estimator alone, in a QP's own terms: a stamp within the plausible
 * (50 ms ahead) is taken as the baseline, but only for two windows; a
 * clock that steps by a second is followed after a few packets, each odd
 * one counted; an implausible stamp moves nothing.
 */
static void test_owd_baseline_recovers(void **state)
{
	struct pair p;
	struct mroce_hdr h = { .opcode = MROCE_OP_WRITE };
	struct mroce_qp *qb;
	__u64 now;
	__u64 odd;

	(void)state;
	pair_open(&p, 7100, NULL, NULL);
	pair_connect(&p);
	qb = p.qb;
	pthread_mutex_lock(&p.db->lock);
	now = p.net->now;
	for (int i = 0; i < 10; i++, now += 10) {
		h.ts = (__u32)now - 20;
		mroce_grant_rx(qb, &h, 1000, false, now);
	}
	assert_int_equal(qb->owd_base, 20);
	/* one plausible liar: 50 ms ahead */
	h.ts = (__u32)now + 50000;
	mroce_grant_rx(qb, &h, 1000, false, now);
	assert_int_equal(qb->owd_base, (__u32)-50000);
	odd = p.db->grant.ts_odd;
	/* honest again: the baseline comes back within two windows */
	for (int i = 0; i < 2500; i++, now += 1000) {
		h.ts = (__u32)now - 20;
		mroce_grant_rx(qb, &h, 1000, false, now);
	}
	assert_int_equal(qb->owd_base, 20);
	assert_int_equal(p.db->grant.ts_odd, odd);
	/* implausible stamps, one at a time among honest ones: never the baseline */
	for (int i = 0; i < 100; i++, now += 10) {
		h.ts = (__u32)now + (i & 1 ? 0x80000000u : 0x10000000u);
		mroce_grant_rx(qb, &h, 1000, false, now);
		h.ts = (__u32)now - 25;
		mroce_grant_rx(qb, &h, 1000, false, now);
		assert_int_equal(qb->owd_base, 20);
	}
	assert_int_equal(p.db->grant.ts_odd, odd + 100);
	/* the peer's clock steps back by a second: followed after MROCE_OWD_REBASE (4) packets */
	for (int i = 0; i < 4; i++, now += 10) {
		h.ts = (__u32)now - 1000020;
		mroce_grant_rx(qb, &h, 1000, false, now);
	}
	assert_int_equal(qb->owd_base, 1000020);
	assert_int_equal(p.db->grant.ts_odd, odd + 104);
	/* queueing delay summed: never more than the plausible, whatever the stamps */
	for (int i = 0; i < 1000; i++, now += 1) {
		h.ts = (__u32)sim_rand(p.net);
		mroce_grant_rx(qb, &h, 1000, false, now);
		assert_true(p.db->grant.queue_sum_us <= (__u64)p.db->grant.pkts * 100000);
	}
	pthread_mutex_unlock(&p.db->lock);
	pair_close(&p);
}

/* ---- ACKs that name nothing we sent ------------------------------------ */

struct rogue_ack {
	struct sim_net	*net;
	__u32		n, rewritten, kind;
};

enum { A_ECHO_FAR, A_ECHO_ZERO, A_ECHO_AHEAD, A_MARKS, A_GRANT_MAX, A_GRANT_MIN, A_CUM, A_SACK,
       A_PSACK_SLOT, A_PSACK_SEQ, A_KINDS };

/*
 * Every third ACK says the impossible: an echo 2^31 away or ahead of our
 * clock, or none, 65535 marks of one packet, a grant of UINT32_MAX or 1 kbit/s, a
 * cumulative PSN 2^31 ahead, SACK bits past anything sent, a per-path
 * SACK of slot 255 or of a sequence its slot never reached. None of it
 * may lose a byte, wedge the window or poison an estimator.
 */
static void rewrite_ack(void *ctx, __u8 *frame, __u32 len)
{
	struct rogue_ack *r = ctx;
	struct mroce_bth *b = bth_of(frame);
	struct mroce_aeth *a = ext_of(frame);
	__u32 now = (__u32)r->net->now, k;

	(void)len;
	if (b->opcode != MROCE_OP_ACK || r->n++ % 3)
		return;
	k = r->rewritten++;
	switch (r->kind) {
	case A_ECHO_FAR:	a->ts_echo = mroce_be32(now + 0x80000000u + (k & 1)); break;
	case A_ECHO_ZERO:	a->ts_echo = 0; break;	/* none: no RTT sample */
	case A_ECHO_AHEAD:	a->ts_echo = mroce_be32(now + 1000 + k); break;	/* ahead on arrival */
	case A_MARKS:		a->ecn_ce = mroce_be16(0xffff); a->ecn_pkts = mroce_be16(k & 1); break;
	case A_GRANT_MAX:	a->rate = mroce_be32(UINT32_MAX); break;
	case A_GRANT_MIN:	a->rate = mroce_be32(1); break;
	case A_CUM:	a->cum_psn = mroce_be32(mroce_be32(a->cum_psn) + 0x80000000u + k); break;
	case A_SACK:
		for (int i = 8; i < MROCE_SACK_WORDS; i++)
			a->sack[i] = ~0ULL;	/* 513 PSNs on and more: never sent */
		break;
	case A_PSACK_SLOT:
		a->pflags = MROCE_PF_VALID;
		a->ppath = (__u8)(255 - k % 4);
		memset(a->psack, 0xff, sizeof(a->psack));
		break;
	default:
		a->pflags = MROCE_PF_VALID;
		a->ppsn_next = mroce_be16((__u16)(mroce_be16(a->ppsn_next) + 0x7fff - k % 64));
		memset(a->psack, 0, sizeof(a->psack));
		a->psack[0] = 1;
		break;
	}
}

struct dctcp_view {	/* cc_ecn.c's private area */
	struct mroce_cc_epoch		e;
	struct mroce_cc_dctcp_state	d;
};

static void test_extreme_ack_fields(void **state)
{
	(void)state;
	/* the ones that did harm first: a future echo, marks past packets */
	static const __u32 order[A_KINDS] = { A_ECHO_AHEAD, A_MARKS, A_ECHO_FAR, A_ECHO_ZERO,
					      A_GRANT_MAX, A_GRANT_MIN, A_CUM, A_SACK, A_PSACK_SLOT,
					      A_PSACK_SEQ };

	for (__u32 i = 0; i < A_KINDS; i++) {
		MROCE_OPTS(mroce_qp_attr, attr, .cc_ecn = true, .paths = 4, .ack_every = 2);
		__u32 kind = order[i];
		struct rogue_ack r = { .kind = kind };
		struct waiter *w = calloc(1, sizeof(*w));
		struct pair p;
		struct mroce_qp *qa;
		__u32 alpha;

		pair_open(&p, 7200 + kind, &attr, NULL);
		pair_connect(&p);
		qa = p.qa;
		r.net = p.net;
		/* 10 Gbit/s: the ACKs come spread out, many of them */
		p.net->a.link = (struct sim_link){ .delay_us = 10, .jitter_us = 2, .rate_mbps = 10000,
						   .queue_bytes = 8 << 20 };
		p.net->b.link = (struct sim_link){ .delay_us = 10, .rewrite = rewrite_ack,
						   .rewrite_ctx = &r };
		pair_write_n(&p, w, 2, 9 + kind, NULL);	/* every byte in place, every WRITE a success */
		pthread_mutex_lock(&p.da->lock);
		alpha = ((struct dctcp_view *)mroce_cc_priv(qa))->d.alpha_x1024;
		printf("  kind %u: %u ACKs rewritten, %llu echoes ignored; srtt %u us, min RTT %u us, "
		       "DCTCP alpha %u/1024, window %u, resends %llu, took %llu us\n", kind, r.rewritten,
		       (unsigned long long)p.da->echo_odd, qa->srtt_us, qa->min_rtt_us, alpha,
		       qa->cwnd_x256 / 256, (unsigned long long)p.da->stats.retx_pkts,
		       (unsigned long long)(p.net->now - 1000000));
		assert_true(r.rewritten >= 100);
		/* the echoes that were no time of ours: none the newest, each counted */
		assert_true((__s32)(qa->echo_newest - (__u32)p.net->now) <= 0);
		/* marks no more than packets: the fraction stays a fraction */
		assert_true(alpha <= 1024);
		if (kind == A_ECHO_FAR || kind == A_ECHO_AHEAD)
			assert_int_equal(p.da->echo_odd, r.rewritten);
		else
			assert_int_equal(p.da->echo_odd, 0);
		/* RTTs the wire's: 2 x 10 us, jitter, the queue of a window at most */
		assert_in_range(qa->srtt_us, 15, 1000);
		assert_in_range(qa->min_rtt_us, 15, 1000);
		for (__u32 j = 0; j < qa->attr.paths; j++)
			assert_true(qa->paths[j].srtt_us < 1000);
		assert_true(qa->cwnd_x256 <= qa->attr.max_inflight * 256);
		/* nothing left half-counted */
		assert_int_equal(qa->snd_una, qa->snd_nxt);
		assert_int_equal(qa->nsacked, 0);
		assert_int_equal(qa->nlost, 0);
		pthread_mutex_unlock(&p.da->lock);
		free(w);
		pair_close(&p);
	}
}

/* ---- data packets whose sequences and lengths are the peer's fancy -------- */

struct rogue_data {
	__u32	n, rewritten, mode;
};

enum { D_PSN, D_PSEQ, D_PATH, D_MSN_STREAM };

static void rewrite_data(void *ctx, __u8 *frame, __u32 len)
{
	struct rogue_data *r = ctx;
	struct mroce_bth *b = bth_of(frame);

	(void)len;
	if (b->opcode != MROCE_OP_WRITE || r->n++ % 11 != 5 || (r->mode == D_PSEQ && r->n > 600))
		return;
	r->rewritten++;
	switch (r->mode) {
	case D_PSN:	/* half the sequence space away: the window refuses it, counted */
		b->psn = mroce_be32(mroce_be32(b->psn) + 0x80000000u + r->n);
		break;
	case D_PSEQ:	/* ahead, past the 256 the record keeps, or half the space */
		b->pseq = mroce_be16((__u16)(mroce_be16(b->pseq) + (r->n & 1 ? 1000 + r->n : 0x7fff)));
		break;
	case D_PATH:
		b->path = (__u8)(255 - r->n % 3);
		break;
	default:	/* a WRITE's message and stream numbers mean nothing: extremes change nothing */
		b->msn = mroce_be32(UINT32_MAX - r->n);
		((struct mroce_deth *)((__u8 *)ext_of(frame) + sizeof(struct mroce_reth)))->stream =
			mroce_be16(0xffff);
		break;
	}
}

static void test_extreme_data_fields(void **state)
{
	(void)state;
	for (__u32 mode = D_PSN; mode <= D_MSN_STREAM; mode++) {
		MROCE_OPTS(mroce_qp_attr, attr, .paths = 4);
		struct rogue_data r = { .mode = mode };
		struct waiter *w = calloc(1, sizeof(*w));
		struct pair p;

		pair_open(&p, 7300 + mode, &attr, NULL);
		pair_connect(&p);
		p.net->a.link = (struct sim_link){ .delay_us = 10, .jitter_us = 2,
						   .rewrite = rewrite_data, .rewrite_ctx = &r };
		p.net->b.link = (struct sim_link){ .delay_us = 10 };
		pair_write_n(&p, w, 2, 11 + mode, NULL);	/* whole, in place */
		printf("  mode %u: %u packets rewritten; window drops %llu, resends %llu\n", mode,
		       r.rewritten, (unsigned long long)p.db->stats.rx_dropped_window,
		       (unsigned long long)p.da->stats.retx_pkts);
		assert_true(r.rewritten >= 10);
		if (mode == D_PSN)	/* each refused (out of the window: dropped), so resent */
			assert_true(p.da->stats.retx_pkts >= r.rewritten);
		assert_int_equal(mroce_qp_state(p.qa), MROCE_QPS_RTS);
		assert_int_equal(mroce_qp_state(p.qb), MROCE_QPS_RTS);
		/* the receiver's per-path records follow what each slot really sent, at the end */
		pthread_mutex_lock(&p.db->lock);
		for (__u32 i = 0; mode == D_PSEQ && i < attr.paths; i++) {
			assert_true(p.qb->rxpaths[i].valid);
			assert_int_equal(p.qb->rxpaths[i].next, p.qa->paths[i].tx_pseq);
		}
		pthread_mutex_unlock(&p.db->lock);
		free(w);
		pair_close(&p);
	}
}

/*
 * A SEND whose first packet names a longer message than its others: the
 * receive would wait for bytes that never come (its count of bytes never
 * meets the length). Refused as an invalid request instead: the receive
 * and the SEND complete with the error, nothing waits.
 */
struct rogue_len {
	__u32	rewritten;
	__u32	extra;
};

static void rewrite_len(void *ctx, __u8 *frame, __u32 len)
{
	struct rogue_len *r = ctx;
	struct mroce_bth *b = bth_of(frame);
	struct mroce_deth *d = ext_of(frame);	/* SEND: the DETH first */

	(void)len;
	if (b->opcode != MROCE_OP_SEND || !(b->flags & MROCE_F_FIRST) || r->rewritten)
		return;
	r->rewritten++;
	d->msg_len = mroce_be32(mroce_be32(d->msg_len) + r->extra);
	b->flags &= (__u8)~MROCE_F_LAST;	/* no longer its message's last packet */
}

static void test_send_length_disagrees(void **state)
{
	(void)state;
	for (int c = 0; c < 2; c++) {
		struct rogue_len r = { .extra = c ? 1 : 4096 };
		struct waiter *w = calloc(1, sizeof(*w));
		struct pair p;

		pair_open(&p, 7400 + (__u64)c, NULL, NULL);
		pair_connect(&p);
		p.net->a.link = (struct sim_link){ .delay_us = 10, .rewrite = rewrite_len,
						   .rewrite_ctx = &r };
		p.net->b.link = (struct sim_link){ .delay_us = 10 };
		fill(p.la, 8192, 3);
		assert_int_equal(post_recv(p.qb, 1, p.lb, 65536, mroce_mr_lkey(p.mb)), 0);
		assert_int_equal(post(p.qa, MROCE_WR_SEND, 2, p.la, 8192, mroce_mr_lkey(p.ma), 0, 0, 0), 0);
		w->p = &p;
		w->want_a = w->want_b = 1;
		assert_int_equal(sim_run(p.net, p.da, p.db, collected, w, 2000000), 0);
		printf("  msg_len + %u on the first packet: send %s, receive %s\n", r.extra,
		       mroce_wc_status_str(w->wa[0].status), mroce_wc_status_str(w->wb[0].status));
		assert_int_equal(r.rewritten, 1);
		assert_int_equal(w->wb[0].status, MROCE_WC_REM_INV_REQ_ERR);
		assert_int_equal(w->wa[0].status, MROCE_WC_REM_INV_REQ_ERR);
		free(w);
		pair_close(&p);
	}
}


/*
 * A length near 4 GiB (a peer's READ request of 2^32 - 1 bytes; our own
 * WRITE of as much over four SGEs) in packets: the count must not wrap to
 * none, which left a READ job with nothing to send and a WRITE done before
 * a byte went.
 */
static void test_lengths_near_4gib(void **state)
{
	struct pair p;
	struct mroce_rjob j = { .len = UINT32_MAX, .msg_len = UINT32_MAX };
	size_t span = 1ULL << 32;
	__u8 *big = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
	struct mroce_mr *mr;
	struct mroce_sge sge[4];
	struct mroce_send_wr wr = { .wr_id = 1, .opcode = MROCE_WR_RDMA_WRITE, .sg_list = sge,
				    .num_sge = 4 };
	__u32 want;

	(void)state;
	assert_true(big != MAP_FAILED);
	pair_open(&p, 7500, NULL, NULL);
	pair_connect(&p);
	want = (__u32)(((__u64)UINT32_MAX + p.qa->payload_max - 1) / p.qa->payload_max);
	pthread_mutex_lock(&p.db->lock);
	assert_int_equal(mroce_rjob_pkts(p.qb, &j), want);
	pthread_mutex_unlock(&p.db->lock);
	assert_int_equal(mroce_reg_mr(p.da, big, span, MROCE_ACCESS_LOCAL_WRITE, &mr), 0);
	for (int i = 0; i < 4; i++)
		sge[i] = (struct mroce_sge){ .addr = (__u64)(unsigned long)big + (__u64)i * (1ULL << 30),
					     .length = i < 3 ? 1u << 30 : (1u << 30) - 1,
					     .lkey = mroce_mr_lkey(mr) };
	wr.remote_addr = (__u64)(unsigned long)p.lb;
	wr.rkey = mroce_mr_rkey(p.mb);
	/* posted, never sent (nothing runs the devices here): only its count is looked at */
	assert_int_equal(mroce_post_send(p.qa, &wr), 0);
	pthread_mutex_lock(&p.da->lock);
	assert_int_equal(SWQE(p.qa, p.qa->sq_tail - 1)->npkts, want);
	pthread_mutex_unlock(&p.da->lock);
	pthread_mutex_lock(&p.da->lock);
	mroce_qp_fail(p.qa, MROCE_WC_WR_FLUSH_ERR);	/* the WRITE goes no further */
	pthread_mutex_unlock(&p.da->lock);
	mroce_destroy_qp(p.qa);
	p.qa = NULL;
	assert_int_equal(mroce_dereg_mr(mr), 0);
	pair_close(&p);
	munmap(big, span);
}

/*
 * Congestion control fed the extremes a peer's ACKs may carry: Swift an RTT
 * of 5 s (its echo may claim up to 10) halves the window, as any RTT far
 * past the target does (the excess times 1024 wrapped 32 bits and cut by
 * 16%); DCTCP 65535 marks of one packet is a fraction of 1, not 65535.
 */
static void test_cc_extremes(void **state)
{
	struct pair p;
	struct mroce_cc_swift_state sw = { .rtt_max = 5000000, .base_us = 20 };
	struct mroce_cc_dctcp_state d = {};
	struct mroce_hdr ack = { .ecn_ce = 0xffff, .ecn_pkts = 1 };
	__u32 cw = 100 * 256;

	(void)state;
	pair_open(&p, 7600, NULL, NULL);
	pair_connect(&p);
	pthread_mutex_lock(&p.da->lock);
	assert_true(mroce_cc_swift_cut(p.qa, &sw, &cw, true));
	assert_int_equal(cw, 50 * 256);
	pthread_mutex_unlock(&p.da->lock);
	for (int i = 0; i < 100000; i++)
		mroce_cc_dctcp_sample(&d, &ack);
	assert_true(d.ce <= d.pkts);
	cw = 100 * 256;
	assert_true(mroce_cc_dctcp_cut(&d, &cw));
	assert_true(d.alpha_x1024 <= 1024);
	assert_true(cw < 100 * 256 && cw >= 50 * 256);
	pair_close(&p);
}

/* ---- a fuzzer of every field, both ways ------------------------------- */

struct fuzz {
	__u64	rng;
	__u32	ppm;		/* frames rewritten, per million */
	__u64	rewritten;
};

static __u32 fz_rand(struct fuzz *z)
{
	z->rng ^= z->rng << 13;
	z->rng ^= z->rng >> 7;
	z->rng ^= z->rng << 17;
	return (__u32)(z->rng >> 16);
}

/* An extreme, or the honest value moved a little or half the space, or anything. */
static __u64 fz_value(struct fuzz *z, __u64 honest, int bytes)
{
	__u64 mask = bytes == 8 ? ~0ULL : (1ULL << (8 * bytes)) - 1, v;

	switch (fz_rand(z) % 9) {
	case 0: v = 0; break;
	case 1: v = 1; break;
	case 2: v = mask; break;
	case 3: v = 1ULL << (8 * bytes - 1); break;
	case 4: v = (1ULL << (8 * bytes - 1)) - 1; break;
	case 5: v = honest + (1ULL << (8 * bytes - 1)); break;
	case 6: v = honest + fz_rand(z) % 64 - 32; break;
	case 7: v = honest + fz_rand(z) % 4096; break;
	default: v = (__u64)fz_rand(z) << 32 | fz_rand(z); break;
	}
	return v & mask;
}

static void fz_field(struct fuzz *z, void *p, int bytes)
{
	__u64 v = 0;
	__u8 *b = p;

	for (int i = 0; i < bytes; i++)
		v = v << 8 | b[i];
	v = fz_value(z, v, bytes);
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		b[i] = (__u8)v;
}

/* A field of the frame's MetaRoCE headers (by their layout), set to fz_value's choice. */
static void rewrite_fuzz(void *ctx, __u8 *frame, __u32 len)
{
	static const struct { __u16 off, bytes; } bth[] = {
		{ 2, 1 }, { 3, 1 }, { 8, 4 }, { 12, 4 }, { 24, 4 }, { 30, 2 },
	}, reth[] = { { 0, 8 }, { 8, 4 } }, deth[] = { { 0, 4 }, { 4, 4 }, { 8, 2 }, { 10, 2 } },
	aeth[] = {
		{ 0, 4 }, { 4, 4 }, { 8, 8 }, { 16, 8 }, { 120, 8 }, { 128, 2 }, { 130, 2 },
		{ 132, 4 }, { 136, 4 }, { 140, 4 }, { 144, 1 }, { 145, 1 }, { 146, 2 }, { 148, 8 },
		{ 172, 8 },
	}, naketh[] = { { 0, 4 }, { 4, 4 }, { 8, 1 }, { 9, 1 }, { 10, 2 }, { 12, 4 }, { 16, 2 } };
	struct fuzz *z = ctx;
	__u8 *h = (__u8 *)bth_of(frame), *e = ext_of(frame);
	int layout = mroce_op_layout(h[1]), n = 1 + (int)(fz_rand(z) % 3);

	if (len < L2L4 + MROCE_HDR_MAX - sizeof(struct mroce_aeth) || layout < 0 ||
	    fz_rand(z) % 1000000 >= z->ppm)
		return;
	z->rewritten++;
	while (n--) {
		__u32 pick = fz_rand(z) % 4;

		if (pick == 0 || !(layout & (MROCE_EXT_RETH | MROCE_EXT_DETH | MROCE_EXT_AETH |
					     MROCE_EXT_NAK))) {
			__u32 i = fz_rand(z) % (sizeof(bth) / sizeof(bth[0]));

			fz_field(z, h + bth[i].off, bth[i].bytes);
		} else if (layout & MROCE_EXT_AETH) {
			__u32 i = fz_rand(z) % (sizeof(aeth) / sizeof(aeth[0]));

			fz_field(z, e + aeth[i].off, aeth[i].bytes);
		} else if (layout & MROCE_EXT_NAK) {
			__u32 i = fz_rand(z) % (sizeof(naketh) / sizeof(naketh[0]));

			fz_field(z, e + naketh[i].off, naketh[i].bytes);
		} else if ((layout & MROCE_EXT_RETH) && pick == 1) {
			__u32 i = fz_rand(z) % 2;

			fz_field(z, e + reth[i].off, reth[i].bytes);
		} else {
			__u8 *d = e + (layout & MROCE_EXT_RETH ? sizeof(struct mroce_reth) : 0);
			__u32 i = fz_rand(z) % (sizeof(deth) / sizeof(deth[0]));

			if (pick == 3 && (layout & MROCE_EXT_RREQ))	/* the READ's length */
				fz_field(z, d + sizeof(struct mroce_deth), 4);
			else
				fz_field(z, d + deth[i].off, deth[i].bytes);
		}
	}
}

/*
 * Both peers' frames, one in ppm, get one to three fields of their headers
 * set to an extreme or a near miss (the checksum redone, so they pass it):
 * WRITEs, WRITE_IMMs, SENDs and READs, ACKs and NACKs. Whatever each does,
 * every request completes, with success or an error (no hang, no crash,
 * and, under make ubsan-clang, no undefined arithmetic); what succeeded
 * after a clean exchange is in place. MROCE_FUZZ_ITERS sets how many
 * exchanges (default 300).
 */
static void test_fuzz_fields(void **state)
{
	const char *env = getenv("MROCE_FUZZ_ITERS");
	__u32 iters = env ? (__u32)strtoul(env, NULL, 0) : 300;
	__u64 ok = 0, failed = 0, bad = 0, rewritten = 0, odd = 0, echo_odd = 0, status[16] = {};

	(void)state;
	for (__u32 it = 0; it < iters; it++) {
		MROCE_OPTS(mroce_qp_attr, attr, .paths = 1 + it % 4, .cc_ecn = it % 2,
			   .cc_delay = it % 3 == 0, .streams = 2, .rnr_retry = it % 8);
		struct fuzz za = { .rng = 0x9e3779b97f4a7c15ULL * (it + 1), .ppm = 2000 + it % 7 * 10000 };
		struct fuzz zb = { .rng = 0xbf58476d1ce4e5b9ULL * (it + 1), .ppm = za.ppm };
		struct waiter *w = calloc(1, sizeof(*w));
		struct pair p;
		int n = 0;

		pair_open(&p, 9000 + it, &attr, NULL);
		pair_connect(&p);
		p.net->a.link = (struct sim_link){ .delay_us = 5, .jitter_us = it % 5 * 3,
						   .rewrite = rewrite_fuzz, .rewrite_ctx = &za };
		p.net->b.link = (struct sim_link){ .delay_us = 5, .jitter_us = it % 3 * 4,
						   .rewrite = rewrite_fuzz, .rewrite_ctx = &zb };
		fill(p.la, 256 << 10, it);
		for (int i = 0; i < 8; i++)
			assert_int_equal(post_recv(p.qb, 100 + (__u64)i, p.lb + (512 << 10) + i * 16384,
						   16384, mroce_mr_lkey(p.mb)), 0);
		for (int i = 0; i < 12; i++) {
			static const enum mroce_wr_opcode ops[] = {
				MROCE_WR_RDMA_WRITE, MROCE_WR_SEND, MROCE_WR_RDMA_READ,
				MROCE_WR_RDMA_WRITE_WITH_IMM, MROCE_WR_SEND_WITH_IMM,
			};
			enum mroce_wr_opcode op = ops[(it + (__u32)i) % 5];
			__u32 len = op == MROCE_WR_SEND || op == MROCE_WR_SEND_WITH_IMM ||
				    op == MROCE_WR_RDMA_WRITE_WITH_IMM ? 1 + (it * 7 + (__u32)i * 977) % 16384 :
				    1 + (it * 131 + (__u32)i * 7919) % 65536;
			__u8 *local = op == MROCE_WR_RDMA_READ ? p.la + (512 << 10) + i * 65536 / 4 :
				      p.la + i * 16384;
			int err = post(p.qa, op, (__u64)i, local, len, mroce_mr_lkey(p.ma),
				       (__u64)(unsigned long)(p.lb + i * 16384), mroce_mr_rkey(p.mb), 7);

			if (err)
				break;	/* the QP already failed */
			n++;
		}
		w->p = &p;
		w->want_a = n;
		/* every request completes, whatever the peer said (the timers bound each wait) */
		assert_int_equal(sim_run(p.net, p.da, p.db, collected, w, 600000000), 0);
		for (int i = 0; i < w->na; i++) {
			ok += w->wa[i].status == MROCE_WC_SUCCESS;
			failed += w->wa[i].status != MROCE_WC_SUCCESS;
			status[w->wa[i].status & 15]++;
		}
		bad += p.da->stats.bad_pkts + p.db->stats.bad_pkts;
		rewritten += za.rewritten + zb.rewritten;
		odd += p.db->grant.ts_odd + p.da->grant.ts_odd;
		echo_odd += p.da->echo_odd + p.db->echo_odd;
		pthread_mutex_lock(&p.da->lock);
		/* the sender's books balance, whatever it was told */
		if (p.qa->state == MROCE_QPS_RTS) {
			assert_true(p.qa->snd_nxt - p.qa->snd_una <= MROCE_RXWIN_PSNS);
			assert_true(p.qa->nlost <= p.qa->snd_nxt - p.qa->snd_una);
			assert_true(p.qa->nsacked <= p.qa->snd_nxt - p.qa->snd_una);
		}
		pthread_mutex_unlock(&p.da->lock);
		free(w);
		pair_close(&p);
	}
	printf("  %u exchanges, %llu frames rewritten: %llu requests succeeded, %llu failed; "
	       "%llu frames dropped as bad, %llu stamps and %llu echoes ignored\n", iters,
	       (unsigned long long)rewritten, (unsigned long long)ok, (unsigned long long)failed,
	       (unsigned long long)bad, (unsigned long long)odd, (unsigned long long)echo_odd);
	for (int i = 0; i < 16; i++)
		if (status[i])
			printf("    %llu %s\n", (unsigned long long)status[i], mroce_wc_status_str(i));
	assert_true(rewritten > iters);
	assert_true(ok > 0 && failed > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extreme_data_timestamps),
		cmocka_unit_test(test_owd_baseline_recovers),
		cmocka_unit_test(test_extreme_ack_fields),
		cmocka_unit_test(test_extreme_data_fields),
		cmocka_unit_test(test_send_length_disagrees),
		cmocka_unit_test(test_lengths_near_4gib),
		cmocka_unit_test(test_cc_extremes),
		cmocka_unit_test(test_fuzz_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
