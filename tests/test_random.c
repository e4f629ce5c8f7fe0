// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Differential random tester of the transport on the simulated wire: each
 * seed plans a scenario (mode, depths, paths, counters near the 2^31 and
 * 2^32 wraps, a mix of every operation with 1-4 SGEs, late and too small
 * receives, loss/duplication/reordering/corruption, a peer that dies, a
 * region deregistered under READs, bad keys and ranges), runs both devices
 * in virtual time and holds every completion and every byte of memory
 * against the verbs rules of the reference model (random_ref.h,
 * docs/testing.md).
 *
 *   test_random                       cmocka slice (MROCE_RANDOM_SCENARIOS, _SEED)
 *   test_random --scenarios N --seed S   per class: count and first seed
 *   test_random --replay S            one scenario, verbosely
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "random_ref.h"
#include "../lib/testhook.h"

#if defined(__SANITIZE_ADDRESS__)
#define RT_ASAN		1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RT_ASAN		1
#endif
#endif
#ifndef RT_ASAN
#define RT_ASAN		0
#endif

#define RT_SLICE	(RT_ASAN ? 200 : 3000)	/* cmocka default: ~60 s -O2 budget, ~2 min ASan */
#define RT_SEED		20240601ULL

static bool rt_safe_sq;	/* --safe-sq / MROCE_RANDOM_SAFE_SQ=1 */

/* ---- randomness ---------------------------------------------------------- */

static __u64 rnd(struct rt_scn *c)
{
	__u64 z = (c->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ z >> 27) * 0x94d049bb133111ebULL;
	return z ^ z >> 31;
}

static __u32 below(struct rt_scn *c, __u32 n) { return n ? (__u32)(rnd(c) % n) : 0; }
static bool chance(struct rt_scn *c, __u32 pct) { return below(c, 100) < pct; }

static __u32 pick(struct rt_scn *c, const __u32 *v, size_t n) { return v[below(c, (__u32)n)]; }
#define PICK(c, arr) pick(c, arr, sizeof(arr) / sizeof(arr[0]))

/* ---- planning ------------------------------------------------------------ */

/* A message size: zero, tiny, around packet boundaries, or up to 64 KiB. */
static __u32 plan_len(struct rt_scn *c)
{
	__u32 p = c->payload, k = 1 + below(c, 3);

	if (c->bytes > (1u << 20))	/* a budget per scenario: speed, not coverage */
		return below(c, 2 * p);

	switch (below(c, 10)) {
	case 0:		return 0;
	case 1:
	case 2:		return 1 + below(c, 64);
	case 3:
	case 4:		return p - 1 + below(c, 3);
	case 5:		return k * p - 1 + below(c, 3);
	case 6:		return below(c, 4 * p);
	case 7:		return chance(c, 30) ? 65536 - below(c, 2) : below(c, 65537);
	default:	return below(c, 2048);
	}
}

static __u32 grant_off(struct rt_scn *c, struct rt_region *r, __u32 len)
{
	__u32 off = r->bump + 1 + below(c, 8);	/* a gap: overruns hit untouched bytes */

	r->bump = off + len;
	return off;
}

static void add_grant(struct rt_region *r, __u32 off, __u32 len, __u32 msg_off, __u8 kind,
		      __u8 side, __u32 idx)
{
	if (!len)
		return;
	if (r->ng == r->gcap) {
		r->gcap = r->gcap ? 2 * r->gcap : 16;
		r->g = realloc(r->g, r->gcap * sizeof(*r->g));
	}
	r->g[r->ng++] = (struct rt_grant){ .off = off, .len = len, .msg_off = msg_off, .idx = idx,
					   .kind = kind, .side = side };
}

/* Split len over 1-4 SGEs (some may be empty) in region rg, granting each if asked. */
static __u8 plan_sges(struct rt_scn *c, struct rt_region *r, __u8 rg, __u32 len, struct rt_sge *sg,
		      bool grant, __u8 kind, __u8 side, __u32 idx)
{
	__u8 n = (__u8)(!len && chance(c, 30) ? 0 : 1 + below(c, RT_MAX_SGE));
	__u32 left = len, msg_off = 0;

	for (__u8 i = 0; i < n; i++) {
		__u32 l = i == n - 1 ? left : below(c, left + 1);

		sg[i] = (struct rt_sge){ .rg = rg, .len = l, .off = grant_off(c, r, l) };
		if (grant)
			add_grant(r, sg[i].off, l, msg_off, kind, side, idx);
		msg_off += l;
		left -= l;
	}
	return n;
}

static enum mroce_wr_opcode plan_kind(struct rt_scn *c, const __u32 *w)
{
	__u32 t = w[0] + w[1] + w[2] + w[3] + w[4], x = below(c, t);

	for (int k = 0; k < 5; k++) {
		if (x < w[k])
			return (enum mroce_wr_opcode)k;
		x -= w[k];
	}
	return MROCE_WR_RDMA_WRITE;
}

/* The remote end of an RDMA op: a fresh stretch of the peer's target, or a READ source. */
static void plan_remote(struct rt_scn *c, int s, struct rt_op *o, __u32 j, bool bad_ok, bool vict)
{
	struct rt_side *peer = &c->s[1 - s];

	if (o->kind == MROCE_WR_RDMA_READ) {
		o->victim = vict && chance(c, 50);
		o->roff = below(c, 64);
		struct rt_region *r = &peer->rg[o->victim ? RG_VICT : RG_RSRC];
		if (r->len < o->roff + o->len)
			r->len = o->roff + o->len;
	} else {
		o->roff = grant_off(c, &peer->rg[RG_WTGT], o->len);
	}
	if (bad_ok && o->len && chance(c, 12))
		o->bad = (__u8)(BAD_RKEY + below(c, 3));
	if (o->kind != MROCE_WR_RDMA_READ && !o->bad)
		add_grant(&peer->rg[RG_WTGT], o->roff, o->len, 0, GR_OP, (__u8)s, j);
	if (o->bad || o->victim)
		c->s[s].kills_peer = c->any_kill = true;
}

static void plan_ops(struct rt_scn *c, int s, __u32 n, bool bad_ok, bool vict, __u64 spread)
{
	struct rt_side *me = &c->s[s];
	__u32 w[5];
	__u64 t = 0;

	for (int k = 0; k < 5; k++)
		w[k] = below(c, 4) * below(c, 4);
	w[below(c, 5)] += 1;
	me->ops = calloc(n ? n : 1, sizeof(*me->ops));
	me->nops = n;
	for (__u32 j = 0; j < n; j++) {
		struct rt_op *o = &me->ops[j];

		o->kind = plan_kind(c, w);
		o->len = plan_len(c);
		c->bytes += o->len;
		o->imm = (__u32)rnd(c);
		o->msg = rt_consumes(o->kind) ? (__s32)me->nconsume++ : -1;
		if (o->kind == MROCE_WR_RDMA_READ)
			o->nsge = plan_sges(c, &me->rg[RG_RDST], RG_RDST, o->len, o->sge, true, GR_OP, (__u8)s, j);
		else
			o->nsge = plan_sges(c, &me->rg[RG_SRC], RG_SRC, o->len, o->sge, false, GR_OP, (__u8)s, j);
		if (o->kind != MROCE_WR_SEND && o->kind != MROCE_WR_SEND_WITH_IMM)
			plan_remote(c, s, o, j, bad_ok, vict);
		if (spread && chance(c, 20))
			t += below(c, (__u32)spread);
		o->t_plan = t;
	}
}

/* The peer's receives: one per consuming message and a few spare; some late, some small. */
static void plan_recvs(struct rt_scn *c, int s, bool small_ok, __u64 late)
{
	struct rt_side *me = &c->s[s], *peer = &c->s[1 - s];
	__u32 n = peer->nconsume + below(c, 3);
	__u64 t = 0;

	me->rcv = calloc(n ? n : 1, sizeof(*me->rcv));
	me->nrcv = n;
	for (__u32 k = 0; k < n; k++)
		me->rcv[k].op = -1;
	for (__u32 j = 0; j < peer->nops; j++)
		if (peer->ops[j].msg >= 0)
			me->rcv[peer->ops[j].msg].op = (__s32)j;
	for (__u32 k = 0; k < n; k++) {
		struct rt_recv *r = &me->rcv[k];
		const struct rt_op *o = r->op >= 0 ? &peer->ops[r->op] : NULL;

		r->cap = (o && rt_is_send(o->kind) ? o->len : 0) + below(c, 65);
		if (o && rt_is_send(o->kind) && o->len && small_ok && chance(c, 15)) {
			r->cap = below(c, o->len);
			peer->kills_peer = c->any_kill = true;
		}
		r->nsge = plan_sges(c, &me->rg[RG_RBUF], RG_RBUF, r->cap, r->sge, true, GR_RECV, (__u8)s, k);
		if (late && chance(c, 25))
			t += below(c, (__u32)late);
		r->t_plan = t;
	}
}

static void plan_attr(struct rt_scn *c)
{
	static const __u32 depths[] = { 1, 2, 3, 4, 7, 8, 13, 16, 31, 64, 100, 128, 255, 256, 300 };
	static const __u32 mtus[] = { 256, 512, 1024, 1500, 1500, 1500 };
	struct mroce_qp_attr *a = &c->attr;

	memset(a, 0, sizeof(*a));
	a->sz = sizeof(*a);
	a->order = chance(c, 50) ? MROCE_ORDERED : MROCE_UNORDERED;
	a->sq_depth = PICK(c, depths);
	a->rq_depth = PICK(c, depths);
	a->paths = 1 + below(c, 8);
	a->max_inflight = chance(c, 50) ? 0 : 4 + below(c, 256);
	a->rto_low_us = chance(c, 50) ? 0 : 50 + below(c, 150);
	a->rto_high_us = chance(c, 50) ? 0 : 200 + below(c, 800);
	a->retry_cnt = chance(c, 60) ? 0 : 1 + below(c, 12);
	a->rnr_retry = 1 + below(c, 7);
	a->rnr_timer_us = 20 + below(c, 300);
	a->ack_every = chance(c, 50) ? 0 : 1 + below(c, 32);
	a->ack_delay_us = chance(c, 50) ? 0 : 5 + below(c, 100);
	a->mtu = PICK(c, mtus);
	/* The defaults create_qp fills in: the model's bounds need them. */
	if (!a->rto_low_us)
		a->rto_low_us = 200;
	if (!a->rto_high_us)
		a->rto_high_us = 1000;
	if (a->rto_low_us > a->rto_high_us)
		a->rto_low_us = a->rto_high_us;
	if (!a->retry_cnt)
		a->retry_cnt = 12;
}

/* Counters near a wrap: 2^32 - k, 2^31 - k, zero, or anywhere. */
static __u32 plan_counter(struct rt_scn *c, __u32 span)
{
	__u32 k = below(c, span + 4);

	switch (below(c, 5)) {
	case 0:		return 0u - k;
	case 1:		return 0x80000000u - k;
	case 2:		return (__u32)rnd(c);
	case 3:		return 0;
	default:	return chance(c, 50) ? 0u - k : 0x80000000u - k;
	}
}

static void plan_link(struct rt_scn *c, struct sim_link *l, bool faults)
{
	memset(l, 0, sizeof(*l));
	l->delay_us = 1 + below(c, 50);
	l->path_step_us = chance(c, 50) ? below(c, 20) : 0;
	/* reordering inside every route: some scenarios by many RTTs (lib/reorder.c) */
	l->jitter_us = chance(c, 50) ? (chance(c, 20) ? below(c, 300) : below(c, 60)) : 0;
	if (!faults)
		return;
	l->loss_ppm = chance(c, 50) ? below(c, 30000) : 0;
	l->dup_ppm = chance(c, 30) ? below(c, 20000) : 0;
	l->corrupt_ppm = chance(c, 30) ? below(c, 10000) : 0;
}

/* Bytes of payload per packet: the MTU less the largest IPv4 header stack. */
static __u32 payload_of(__u32 mtu)
{
	return mtu - (__u32)(sizeof(struct iphdr) + sizeof(struct udphdr) + sizeof(struct mroce_bth) +
			     sizeof(struct mroce_reth) + sizeof(struct mroce_deth) +
			     sizeof(struct mroce_immeth));
}

static void plan(struct rt_scn *c)
{
	bool big = chance(c, 10), bidir = chance(c, 30), faults = chance(c, 60);
	bool bad = chance(c, 12), small = chance(c, 12), vict = chance(c, 12);
	__u64 late, spread = chance(c, 30) ? 500 : 0;
	__u32 n = big ? 1 + below(c, 300) : 1 + below(c, 24);

	plan_attr(c);
	c->payload = payload_of(c->attr.mtu);
	late = chance(c, 25) ? (__u64)c->attr.rnr_timer_us * (1 + below(c, 2 * c->attr.rnr_retry + 2)) : 0;
	plan_link(c, &c->net->a.link, faults);
	plan_link(c, &c->net->b.link, faults);
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < 4; k++)
			c->s[s].seq[k] = plan_counter(c, n + 4);
	/* To look past the SQ-sequence crash at 2^31: keep that counter low. */
	for (int s = 0; s < 2 && rt_safe_sq; s++)
		c->s[s].seq[0] &= 0x3fffffffu;
	/* Receivers must expect the sender's message sequence. */
	c->s[1].seq[1] = c->s[0].seq[2];
	c->s[0].seq[1] = c->s[1].seq[2];
	plan_ops(c, 0, n, bad, vict, spread);
	plan_ops(c, 1, bidir ? 1 + below(c, n) : 0, bad, false, spread);
	plan_recvs(c, 1, small, late);
	plan_recvs(c, 0, small, late);
	if (chance(c, 15))
		c->death_kind = 1 + (int)below(c, 2);
	c->death_t = c->death_kind ? 1 + below(c, 4000) : 0;
	c->dereg_t = vict ? 1 + below(c, 3000) : 0;
	for (int s = 0; s < 2; s++) {
		const struct sim_link *l = s ? &c->net->b.link : &c->net->a.link;
		__u32 bad_ppm = l->loss_ppm + l->corrupt_ppm;

		/*
		 * Jitter and paths of different delay reorder beyond what RACK
		 * waits for now and then, and a resend that causes spends a retry
		 * like any other: with fewer than four, such a link may use them
		 * up (a known cost: docs/testing.md).
		 */
		if (bad_ppm > 20000 ||
		    ((bad_ppm || l->jitter_us || l->path_step_us) && c->attr.retry_cnt < 4))
			c->lossy = true;
	}
}

/* ---- setting up ---------------------------------------------------------- */

static void region_alloc(struct rt_scn *c, struct rt_region *r, bool data)
{
	__u32 len = r->len > r->bump + 8 ? r->len : r->bump + 8;

	r->len = len;
	r->data = data;
	r->salt = (__u32)rnd(c);
	r->poison_salt = (__u32)rnd(c) | 1;
	r->alloc = malloc(len + 2 * RT_GUARD);
	r->mem = r->alloc + RT_GUARD;
	for (__u32 i = 0; i < RT_GUARD; i++)
		r->alloc[i] = r->mem[len + i] = rt_guard_byte(i);
	for (__u32 i = 0; i < len; i++)
		r->mem[i] = rt_pat(r->salt, i);
}

static int side_regions(struct rt_scn *c, int s)
{
	static const unsigned int acc[RG_N] = {
		[RG_SRC] = MROCE_ACCESS_LOCAL_WRITE,
		[RG_WTGT] = MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE,
		[RG_RSRC] = MROCE_ACCESS_REMOTE_READ,
		[RG_VICT] = MROCE_ACCESS_REMOTE_READ,
		[RG_RDST] = MROCE_ACCESS_LOCAL_WRITE,
		[RG_RBUF] = MROCE_ACCESS_LOCAL_WRITE,
	};
	struct rt_side *me = &c->s[s];

	for (int k = 0; k < RG_N; k++) {
		region_alloc(c, &me->rg[k], k == RG_SRC || k == RG_RSRC || k == RG_VICT);
		if (mroce_reg_mr(me->dev, me->rg[k].mem, me->rg[k].len, acc[k], &me->rg[k].mr))
			return -1;
		me->rg[k].rkey = mroce_mr_rkey(me->rg[k].mr);
	}
	return 0;
}

/* Both devices, CQs, QPs with their counters seeded, receives due at 0 posted, connected. */
static int setup(struct rt_scn *c)
{
	for (int s = 0; s < 2; s++) {
		struct rt_side *me = &c->s[s];
		struct mroce_qp_attr a = c->attr;
		int err;

		me->dev = sim_dev(c->net, s == 1, NULL);
		if (!me->dev || mroce_create_cq(me->dev, 2 * (a.sq_depth + a.rq_depth) + 64, &me->cq))
			return -1;
		a.send_cq = a.recv_cq = me->cq;
		if (mroce_create_qp(me->dev, &a, &me->qp))
			return -1;
		me->qpn = mroce_qp_num(me->qp);
		err = mroce_qp_test_seed_seq(me->qp, me->seq[0], me->seq[1], me->seq[2], me->seq[3]);
		if (err || side_regions(c, s))
			return -1;
	}
	return 0;
}

static int post_op(struct rt_scn *c, int s, __u32 j)
{
	struct rt_side *me = &c->s[s], *peer = &c->s[1 - s];
	struct rt_op *o = &me->ops[j];
	struct mroce_sge sg[RT_MAX_SGE];
	struct mroce_send_wr wr = { .wr_id = rt_wr_id(s, true, j), .opcode = o->kind, .sg_list = sg,
				    .num_sge = o->nsge, .imm_data = o->imm };
	const struct rt_region *rr = NULL;

	for (int k = 0; k < o->nsge; k++) {
		const struct rt_region *r = &me->rg[o->sge[k].rg];

		sg[k] = (struct mroce_sge){ .addr = (__u64)(uintptr_t)(r->mem + o->sge[k].off),
					    .length = o->sge[k].len, .lkey = mroce_mr_lkey(r->mr) };
	}
	if (o->kind == MROCE_WR_RDMA_READ)
		rr = &peer->rg[o->victim ? RG_VICT : RG_RSRC];
	else if (!rt_is_send(o->kind))
		rr = &peer->rg[RG_WTGT];
	if (rr) {
		wr.remote_addr = (__u64)(uintptr_t)(rr->mem + o->roff);
		wr.rkey = rr->rkey;
		if (o->bad == BAD_RKEY)
			wr.rkey ^= 0x5a5a5000u;	/* same table index, other random bits */
		else if (o->bad == BAD_PAST_END)
			wr.remote_addr = (__u64)(uintptr_t)(rr->mem + rr->len - o->len / 2);
		else if (o->bad == BAD_BEFORE)
			wr.remote_addr = (__u64)(uintptr_t)rr->mem - 1 - below(c, 16);
	}
	return mroce_post_send(me->qp, &wr);
}

static int post_rcv(struct rt_scn *c, int s, __u32 k)
{
	struct rt_side *me = &c->s[s];
	struct rt_recv *r = &me->rcv[k];
	struct mroce_sge sg[RT_MAX_SGE];
	struct mroce_recv_wr wr = { .wr_id = rt_wr_id(s, false, k), .sg_list = sg, .num_sge = r->nsge };

	for (int i = 0; i < r->nsge; i++)
		sg[i] = (struct mroce_sge){ .addr = (__u64)(uintptr_t)(me->rg[RG_RBUF].mem + r->sge[i].off),
					    .length = r->sge[i].len, .lkey = mroce_mr_lkey(me->rg[RG_RBUF].mr) };
	return mroce_post_recv(me->qp, &wr);
}

/* A post's return code: 0, -EAGAIN (retry later), -EIO only in error state. */
static bool post_result(struct rt_scn *c, int s, int rc, __u8 *state, __u64 *t_posted,
			const char *what, __u32 idx)
{
	if (rc == 0) {
		*state = P_POSTED;
		*t_posted = c->net->now - c->t0;
		return true;
	}
	if (rc == -EAGAIN)
		return false;
	rt_log(c, "side %d %s %u: post returned %d", s, what, idx, rc);
	if (rc != -EIO || mroce_qp_state(c->s[s].qp) != MROCE_QPS_ERR)
		rt_viol(c, V_POST_RC, "side %d %s %u: post returned %d in state %d", s, what, idx, rc,
			mroce_qp_state(c->s[s].qp));
	*state = P_ABANDONED;
	return true;
}

/* Post what is due; after -EIO the application gives up on the rest. */
static void pump(struct rt_scn *c, int s)
{
	struct rt_side *me = &c->s[s];
	__u64 now = c->net->now - c->t0;

	while (me->next_post < me->nops && me->ops[me->next_post].t_plan <= now) {
		struct rt_op *o = &me->ops[me->next_post];

		if (!post_result(c, s, post_op(c, s, me->next_post), &o->state, &o->t_posted, "op",
				 me->next_post))
			break;
		me->next_post++;
		if (o->state == P_ABANDONED && mroce_qp_state(me->qp) == MROCE_QPS_ERR)
			for (; me->next_post < me->nops; me->next_post++)
				me->ops[me->next_post].state = P_ABANDONED;
	}
	while (me->next_rpost < me->nrcv && me->rcv[me->next_rpost].t_plan <= now) {
		struct rt_recv *r = &me->rcv[me->next_rpost];

		if (!post_result(c, s, post_rcv(c, s, me->next_rpost), &r->state, &r->t_posted, "recv",
				 me->next_rpost))
			break;
		me->next_rpost++;
		if (r->state == P_ABANDONED && mroce_qp_state(me->qp) == MROCE_QPS_ERR)
			for (; me->next_rpost < me->nrcv; me->next_rpost++)
				me->rcv[me->next_rpost].state = P_ABANDONED;
	}
}

static int connect_pair(struct rt_scn *c)
{
	/* Receives due at once go in before connect, as INIT allows. */
	c->t0 = c->net->now;
	for (int s = 0; s < 2; s++)
		while (c->s[s].next_rpost < c->s[s].nrcv && !c->s[s].rcv[c->s[s].next_rpost].t_plan) {
			struct rt_recv *r = &c->s[s].rcv[c->s[s].next_rpost];

			if (!post_result(c, s, post_rcv(c, s, c->s[s].next_rpost), &r->state, &r->t_posted,
					 "recv", c->s[s].next_rpost))
				break;
			c->s[s].next_rpost++;
		}
	return sim_connect(c->s[0].qp, c->s[1].qp);
}

/* ---- running ------------------------------------------------------------- */

/* Completions polled: they may free queue slots or make posts fail, so the caller goes round again. */
static int poll_side(struct rt_scn *c, int s)
{
	struct mroce_wc wc[64];
	int n, got = 0;

	while ((n = mroce_poll_cq(c->s[s].cq, 64, wc)) > 0) {
		for (int i = 0; i < n; i++)
			rt_on_wc(c, s, &wc[i]);
		got += n;
	}
	if (n == -EOVERFLOW)
		rt_viol(c, V_CQ_OVERFLOW, "side %d: CQ overflowed", s);
	return got;
}

/* B's victim region goes away under the READs aimed at it. */
static void do_dereg(struct rt_scn *c)
{
	struct rt_region *v = &c->s[1].rg[RG_VICT];

	rt_log(c, "dereg B's victim region");
	mroce_dereg_mr(v->mr);
	v->mr = NULL;
	v->dereged = true;
	if (RT_ASAN) {
		free(v->alloc);	/* the sanitizer sees any later read */
		v->alloc = v->mem = NULL;
		v->freed = true;
		return;
	}
	for (__u32 i = 0; i < v->len; i++)	/* the application reuses it */
		v->mem[i] = rt_pat(v->poison_salt, i);
	v->poisoned = true;
}

static void do_death(struct rt_scn *c)
{
	rt_log(c, "peer B dies (%s)", c->death_kind == 1 ? "stops progressing" : "link down for good");
	c->dead = true;
	if (c->death_kind == 1)
		c->s[1].stopped = true;
	else
		c->net->a.link.down = c->net->b.link.down = true;
}

static void events(struct rt_scn *c)
{
	__u64 now = c->net->now - c->t0;

	if (c->dereg_t && now >= c->dereg_t && !c->s[1].rg[RG_VICT].dereged)
		do_dereg(c);
	if (c->death_t && now >= c->death_t && !c->dead)
		do_death(c);
	for (int s = 0; s < 2; s++)
		if (!c->s[s].stopped)
			pump(c, s);
}

/* Earliest planned post or event after now (from the start), or UINT64_MAX. */
static __u64 next_event(const struct rt_scn *c)
{
	__u64 now = c->net->now - c->t0, next = UINT64_MAX;

#define CONSIDER(t) do { if ((t) > now && (t) < next) next = (t); } while (0)
	if (c->dereg_t && !c->s[1].rg[RG_VICT].dereged)
		CONSIDER(c->dereg_t);
	if (c->death_t && !c->dead)
		CONSIDER(c->death_t);
	for (int s = 0; s < 2; s++) {
		const struct rt_side *me = &c->s[s];

		if (me->stopped)
			continue;
		if (me->next_post < me->nops)
			CONSIDER(me->ops[me->next_post].t_plan);
		if (me->next_rpost < me->nrcv)
			CONSIDER(me->rcv[me->next_rpost].t_plan);
	}
#undef CONSIDER
	return next == UINT64_MAX ? next : c->t0 + next;
}

/* Every request of a live side completed, every receive a successful message needs. */
static bool quiescent(struct rt_scn *c)
{
	for (int s = 0; s < 2; s++) {
		struct rt_side *me = &c->s[s];

		if (me->stopped)
			continue;
		while (me->qcur < me->nops && (me->ops[me->qcur].state == P_ABANDONED ||
					       (me->ops[me->qcur].state == P_POSTED && me->ops[me->qcur].ncompl)))
			me->qcur++;
		if (me->qcur < me->nops || me->need)
			return false;
	}
	return true;
}

static __u64 dev_timer(struct mroce_dev *d)
{
	__u64 t;

	pthread_mutex_lock(&d->lock);
	t = mroce_engine_next_timer(d);
	pthread_mutex_unlock(&d->lock);
	return t;
}

/* sim_run() with planned events, a peer that may stop, and completions checked as they come. */
static bool run(struct rt_scn *c, __u64 end)
{
	struct sim_net *net = c->net;

	while (net->now < end) {
		int work;
		__u64 next;

		events(c);
		work = mroce_dev_progress(c->s[0].dev, 0);
		if (!c->s[1].stopped)
			work += mroce_dev_progress(c->s[1].dev, 0);
		work += poll_side(c, 0);
		work += poll_side(c, 1);
		if (quiescent(c))
			return true;
		if (work)
			continue;
		next = end < next_event(c) ? end : next_event(c);
		if (net->a.n && net->a.heap[0]->at < next)
			next = net->a.heap[0]->at;
		if (!c->s[1].stopped && net->b.n && net->b.heap[0]->at < next)
			next = net->b.heap[0]->at;
		if (dev_timer(c->s[0].dev) < next)
			next = dev_timer(c->s[0].dev);
		if (!c->s[1].stopped && dev_timer(c->s[1].dev) < next)
			next = dev_timer(c->s[1].dev);
		net->now = next > net->now ? next : net->now + 1;
	}
	return quiescent(c);
}

/*
 * How long anything may take. A dead peer: the RTO doubles to at most 512 x
 * rto_high (loss.c, MROCE_RTO_BACKOFF) and retry_cnt + 1 expiries fail the
 * QP, after any RNR hold.
 * Otherwise the same after the last planned post, plus one high RTO per
 * packet for progress under loss.
 */
static void bounds(struct rt_scn *c)
{
	const struct mroce_qp_attr *a = &c->attr;
	__u64 last = c->death_t > c->dereg_t ? c->death_t : c->dereg_t, pkts = 0;

	c->bound_dead = (__u64)(a->retry_cnt + 2) * 512 * a->rto_high_us +
			(__u64)(a->rnr_retry + 2) * a->rnr_timer_us + 10000;
	for (int s = 0; s < 2; s++) {
		const struct rt_side *me = &c->s[s];

		for (__u32 j = 0; j < me->nops; j++) {
			pkts += me->ops[j].len / c->payload + 2;
			if (me->ops[j].t_plan > last)
				last = me->ops[j].t_plan;
		}
		for (__u32 k = 0; k < me->nrcv; k++)
			if (me->rcv[k].t_plan > last)
				last = me->rcv[k].t_plan;
	}
	c->end = c->t0 + last + c->bound_dead + pkts * a->rto_high_us;
}

/* ---- after the run --------------------------------------------------------- */

static void check_done(struct rt_scn *c)
{
	for (int s = 0; s < 2; s++) {
		const struct rt_side *me = &c->s[s];

		for (__u32 j = 0; j < me->nops; j++) {
			const struct rt_op *o = &me->ops[j];
			__u64 from = o->t_posted > c->death_t ? o->t_posted : c->death_t;

			if (me->stopped || o->state == P_ABANDONED)
				continue;
			if (o->state == P_PENDING || !o->ncompl)
				rt_viol(c, c->dead ? V_HANG_DEAD : V_HANG,
					"side %d op %u (opcode %d, %u B) %s after %llu us (bound %llu us)", s, j,
					o->kind, o->len, o->state == P_PENDING ? "never accepted" : "not completed",
					(unsigned long long)(c->net->now - c->t0),
					(unsigned long long)(c->end - c->t0));
			else if (c->dead && o->t_done > from + c->bound_dead)
				rt_viol(c, V_HANG_DEAD, "side %d op %u completed %llu us after the peer died (bound %llu)",
					s, j, (unsigned long long)(o->t_done - from),
					(unsigned long long)c->bound_dead);
		}
	}
}

/* A consuming request the sender saw succeed was received successfully. */
static void check_received(struct rt_scn *c)
{
	for (int s = 0; s < 2; s++) {
		const struct rt_side *me = &c->s[s], *peer = &c->s[1 - s];

		for (__u32 j = 0; j < me->nops; j++) {
			const struct rt_op *o = &me->ops[j];
			const struct rt_recv *r;

			if (o->msg < 0 || !o->ncompl || o->status != MROCE_WC_SUCCESS)
				continue;
			r = (__u32)o->msg < peer->nrcv ? &peer->rcv[o->msg] : NULL;
			if (!r || !r->ncompl || r->status != MROCE_WC_SUCCESS)
				rt_viol(c, V_SEND_UNRECEIVED, "side %d op %u (opcode %d) SUCCESS, its receive %d %s",
					s, j, o->kind, o->msg,
					!r || r->state != P_POSTED ? "was never posted" :
					!r->ncompl ? "did not complete" : mroce_wc_status_str(r->status));
		}
	}
}

static void check_once(struct rt_scn *c)
{
	for (int s = 0; s < 2; s++) {
		const struct rt_side *me = &c->s[s];

		for (__u32 j = 0; j < me->nops; j++)
			if (me->ops[j].state == P_POSTED && !me->ops[j].ncompl)
				rt_viol(c, V_LOST, "side %d op %u: no completion, even after destroy", s, j);
		for (__u32 k = 0; k < me->nrcv; k++)
			if (me->rcv[k].state == P_POSTED && !me->rcv[k].ncompl)
				rt_viol(c, V_LOST, "side %d recv %u: no completion, even after destroy", s, k);
	}
}

static void teardown(struct rt_scn *c)
{
	for (int s = 0; s < 2; s++) {
		struct rt_side *me = &c->s[s];

		if (me->qp)
			mroce_destroy_qp(me->qp);
		me->qp = NULL;
	}
	for (int s = 0; s < 2; s++) {
		struct rt_side *me = &c->s[s];

		for (int k = 0; k < RG_N; k++) {
			if (me->rg[k].mr)
				mroce_dereg_mr(me->rg[k].mr);
			free(me->rg[k].alloc);
			free(me->rg[k].g);
		}
		if (me->cq)
			mroce_destroy_cq(me->cq);
		if (me->dev)
			mroce_dev_close(me->dev);
		free(me->ops);
		free(me->rcv);
	}
}


static void describe(const struct rt_scn *c)
{
	const struct mroce_qp_attr *a = &c->attr;

	printf("scenario %llu: %s sq %u rq %u paths %u mtu %u inflight %u rto %u/%u retry %u rnr %ux%u ack %u/%u\n",
	       (unsigned long long)c->seed, a->order == MROCE_ORDERED ? "ordered" : "unordered",
	       a->sq_depth, a->rq_depth, a->paths, a->mtu, a->max_inflight, a->rto_low_us, a->rto_high_us,
	       a->retry_cnt, a->rnr_retry, a->rnr_timer_us, a->ack_every, a->ack_delay_us);
	for (int s = 0; s < 2; s++) {
		const struct sim_link *l = s ? &c->net->b.link : &c->net->a.link;

		printf("  side %c: sq %08x rq %08x msn %08x psn %08x, %u ops, %u recvs; link out: delay %u step %u jitter %u loss %u dup %u corrupt %u ppm\n",
		       'A' + s, c->s[s].seq[0], c->s[s].seq[1], c->s[s].seq[2], c->s[s].seq[3],
		       c->s[s].nops, c->s[s].nrcv, l->delay_us, l->path_step_us, l->jitter_us,
		       l->loss_ppm, l->dup_ppm, l->corrupt_ppm);
		for (__u32 j = 0; j < c->s[s].nops; j++) {
			const struct rt_op *o = &c->s[s].ops[j];

			printf("    op %u: opcode %d len %u sge %u msg %d bad %u victim %u at %llu\n", j, o->kind,
			       o->len, o->nsge, o->msg, o->bad, o->victim, (unsigned long long)o->t_plan);
		}
		for (__u32 k = 0; k < c->s[s].nrcv; k++)
			printf("    recv %u: cap %u sge %u for op %d at %llu\n", k, c->s[s].rcv[k].cap,
			       c->s[s].rcv[k].nsge, c->s[s].rcv[k].op, (unsigned long long)c->s[s].rcv[k].t_plan);
	}
	printf("  death %llu (kind %d), dereg %llu, lossy %d, bound after death %llu us, run bound %llu us\n",
	       (unsigned long long)c->death_t, c->death_kind, (unsigned long long)c->dereg_t, c->lossy,
	       (unsigned long long)c->bound_dead, (unsigned long long)(c->end - c->t0));
}

/* One scenario from its seed; returns the classes it violated (details in c). */
static __u64 scenario(struct rt_scn *c, struct sim_net *net, __u64 seed, bool verbose)
{
	memset(c, 0, sizeof(*c));
	c->seed = seed;
	c->rng = seed;
	c->verbose = verbose;
	sim_reset(net, seed);
	c->net = net;
	plan(c);
	if (setup(c) || connect_pair(c)) {
		rt_viol(c, V_POST_RC, "setup failed");
		teardown(c);
		return c->viol;
	}
	bounds(c);
	if (verbose)
		describe(c);
	run(c, c->end);
	check_done(c);
	check_received(c);
	rt_check_flush_cause(c);
	c->destroying = true;
	for (int s = 0; s < 2; s++) {
		mroce_destroy_qp(c->s[s].qp);
		c->s[s].qp = NULL;
		poll_side(c, s);
	}
	check_once(c);
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < RG_N; k++)
			rt_check_region(c, s, k);
	teardown(c);
	return c->viol;
}

/* ---- many scenarios ------------------------------------------------------ */

/* Shared with the child processes that run the scenarios, so a crash loses nothing. */
struct rt_stats {
	__u64	count[V_N];
	__u64	first[V_N];
	char	detail[V_N][160];
	__u64	cur, done, bad_scenarios;
};

static void account(struct rt_stats *st, const struct rt_scn *c, __u64 seed)
{
	st->done++;
	if (!c->viol)
		return;
	st->bad_scenarios++;
	for (int v = 0; v < V_N; v++) {
		if (!(c->viol & 1ULL << v))
			continue;
		if (!st->count[v]++) {
			st->first[v] = seed;
			snprintf(st->detail[v], sizeof(st->detail[v]), "%s", c->detail[v]);
		}
	}
}

static void run_range(struct rt_stats *st, __u64 from, __u64 to)
{
	struct sim_net *net = sim_new(0);
	struct rt_scn *c = calloc(1, sizeof(*c));

	for (__u64 seed = from; seed < to; seed++) {
		st->cur = seed;
		alarm(30);	/* a real-time loop inside the engine counts as a crash */
		scenario(c, net, seed, false);
		account(st, c, seed);
	}
	alarm(0);
	free(c);
	sim_free_net(net);
}

/* Scenarios [base, base + n) in child processes; a crashed one is counted and skipped. */
static struct rt_stats *run_many(__u64 base, __u64 n, bool fork_each_crash)
{
	struct rt_stats *st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	__u64 next = base;
	bool quiet = false;

	if (st == MAP_FAILED)
		return NULL;
	memset(st, 0, sizeof(*st));
	if (!fork_each_crash) {
		run_range(st, base, base + n);
		return st;
	}
	while (next < base + n) {
		int status = 0;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			if (quiet && !freopen("/dev/null", "w", stderr))
				_exit(3);
			run_range(st, next, base + n);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			break;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			break;
		/* The child died in scenario st->cur: count it, go on after it. */
		st->done++;
		st->bad_scenarios++;
		if (!st->count[V_CRASH]++) {
			st->first[V_CRASH] = st->cur;
			snprintf(st->detail[V_CRASH], sizeof(st->detail[V_CRASH]), "%s %d",
				 WIFSIGNALED(status) ? "signal" : "exit", WIFSIGNALED(status) ?
				 WTERMSIG(status) : WEXITSTATUS(status));
		}
		quiet = true;	/* one sanitizer report is enough */
		next = st->cur + 1;
	}
	return st;
}

static void report(const struct rt_stats *st, __u64 base, double secs)
{
	printf("random transport scenarios: %llu run from seed %llu in %.1f s (%.0f/s), %llu violated a rule\n",
	       (unsigned long long)st->done, (unsigned long long)base, secs,
	       secs > 0 ? st->done / secs : 0.0, (unsigned long long)st->bad_scenarios);
	for (int v = 0; v < V_N; v++)
		if (st->count[v])
			printf("  %-48s %6llu  first seed %llu: %s\n", rt_viol_name[v],
			       (unsigned long long)st->count[v], (unsigned long long)st->first[v],
			       st->detail[v]);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __u64 env_u64(const char *name, __u64 dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

/* ---- cmocka slice and command line --------------------------------------- */

static void test_random_slice(void **state)
{
	__u64 base = env_u64("MROCE_RANDOM_SEED", RT_SEED);
	__u64 n = env_u64("MROCE_RANDOM_SCENARIOS", RT_SLICE);
	double t = now_s();
	struct rt_stats *st = run_many(base, n, true);

	(void)state;
	assert_non_null(st);
	report(st, base, now_s() - t);
	if (st->bad_scenarios)
		printf("replay one: %s --replay SEED\n", "build/tests/test_random");
	assert_int_equal(st->done, n);
	assert_int_equal(st->bad_scenarios, 0);
	munmap(st, sizeof(*st));
}

static int replay(__u64 seed)
{
	struct sim_net *net = sim_new(0);
	struct rt_scn *c = calloc(1, sizeof(*c));
	__u64 v = scenario(c, net, seed, true);

	printf("scenario %llu: %s\n", (unsigned long long)seed, v ? "VIOLATIONS" : "ok");
	for (int k = 0; k < V_N; k++)
		if (v & 1ULL << k)
			printf("  %s: %s\n", rt_viol_name[k], c->detail[k]);
	free(c);
	sim_free_net(net);
	return v ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: test_random [--scenarios N] [--seed S] [--no-fork] [--safe-sq] | [--safe-sq] --replay SEED\n"
			"  no arguments: the cmocka slice (MROCE_RANDOM_SCENARIOS, MROCE_RANDOM_SEED)\n");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_random_slice) };
	__u64 base = env_u64("MROCE_RANDOM_SEED", RT_SEED), n = env_u64("MROCE_RANDOM_SCENARIOS", 100000);
	bool forking = true;
	struct rt_stats *st;
	double t;

	rt_safe_sq = env_u64("MROCE_RANDOM_SAFE_SQ", 0);
	if (argc == 1)
		return cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--replay") && i + 1 < argc)
			return replay(strtoull(argv[++i], NULL, 0));
		else if (!strcmp(argv[i], "--scenarios") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			base = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--safe-sq"))
			rt_safe_sq = true;
		else if (!strcmp(argv[i], "--no-fork"))
			forking = false;
		else {
			usage();
			return 2;
		}
	}
	t = now_s();
	st = run_many(base, n, forking);
	if (!st)
		return 2;
	report(st, base, now_s() - t);
	return st->bad_scenarios ? 1 : 0;
}
