/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The reference model of tests/test_random.c: what a scenario planned
 * (requests, receives, memory, faults) and the verbs rules every
 * completion and every byte of memory must satisfy. docs/testing.md lists
 * the rules; each check names the violation class it counts.
 */
#ifndef MROCE_RANDOM_REF_H
#define MROCE_RANDOM_REF_H

#include <stdarg.h>
#include <stdio.h>

#include "sim.h"

/* ---- violation classes --------------------------------------------------- */

enum rt_viol {
	V_CRASH,		/* the scenario crashed (signal, sanitizer) or looped */
	V_HANG,			/* a request never completed within the virtual-time bound */
	V_HANG_DEAD,		/* ... with a dead peer: not failed within the bound */
	V_LOST,			/* a posted request or receive got no completion at all */
	V_DUP,			/* one work request completed twice */
	V_INVENTED,		/* a completion no posted work request explains */
	V_SEND_ORDER,		/* ordered QP: send completions not in posting order */
	V_RECV_ORDER,		/* ordered QP: receive completions not in posting order */
	V_VISIBILITY,		/* ordered QP: a receive completed before an earlier WRITE was in place */
	V_WC_FIELDS,		/* opcode, byte_len, imm_data, flags or qp_num wrong */
	V_WRITE_DATA,		/* WRITE(_IMM) reported SUCCESS, remote bytes differ */
	V_SEND_DATA,		/* receive reported SUCCESS, its buffer does not hold the message */
	V_READ_DATA,		/* READ reported SUCCESS, local bytes differ */
	V_READ_AFTER_DEREG,	/* a READ delivered bytes the responder had after deregistering */
	V_STRAY_WRITE,		/* bytes changed outside what was granted (guards, gaps, sources) */
	V_SEND_UNRECEIVED,	/* sender saw SUCCESS, the receive did not complete SUCCESS */
	V_SUCCESS_AFTER_ERR,	/* a SUCCESS after an error completion of the same QP */
	V_SECOND_ERR,		/* a second non-flush error after the first (must be WR_FLUSH_ERR) */
	V_BAD_SUCCESS,		/* a request that cannot succeed (bad rkey/range, too small receive) did */
	V_WRONG_STATUS,		/* an error status the request's fault cannot explain */
	V_PREMATURE_RNR,	/* RNR retries exceeded before rnr_retry x rnr_timer passed */
	V_SPURIOUS,		/* a QP failed although nothing in the scenario justifies it */
	V_POST_RC,		/* a post returned an error it must not (-EIO outside error state...) */
	V_CQ_OVERFLOW,		/* mroce_poll_cq() said -EOVERFLOW */
	V_N
};

static const char *const rt_viol_name[V_N] = {
	[V_CRASH] = "crash/sanitizer/real-time loop",
	[V_HANG] = "hang (request never completed)",
	[V_HANG_DEAD] = "hang after peer death (no error within bound)",
	[V_LOST] = "lost completion",
	[V_DUP] = "duplicate completion",
	[V_INVENTED] = "invented completion",
	[V_SEND_ORDER] = "send completions out of posting order",
	[V_RECV_ORDER] = "receive completions out of order",
	[V_VISIBILITY] = "receive completed before earlier WRITE visible",
	[V_WC_FIELDS] = "wrong wc fields",
	[V_WRITE_DATA] = "WRITE success, remote bytes wrong",
	[V_SEND_DATA] = "receive success, buffer bytes wrong",
	[V_READ_DATA] = "READ success, local bytes wrong",
	[V_READ_AFTER_DEREG] = "READ returned memory after dereg",
	[V_STRAY_WRITE] = "write outside granted memory",
	[V_SEND_UNRECEIVED] = "send success but receive not success",
	[V_SUCCESS_AFTER_ERR] = "SUCCESS after an error on the QP",
	[V_SECOND_ERR] = "non-flush error after the first error",
	[V_BAD_SUCCESS] = "impossible request reported SUCCESS",
	[V_WRONG_STATUS] = "error status not explained by the fault",
	[V_PREMATURE_RNR] = "RNR retries exceeded too early",
	[V_SPURIOUS] = "QP failed without cause",
	[V_POST_RC] = "unexpected post return code",
	[V_CQ_OVERFLOW] = "CQ overflow",
};

/* ---- memory -------------------------------------------------------------- */

enum { RG_SRC, RG_WTGT, RG_RSRC, RG_VICT, RG_RDST, RG_RBUF, RG_N };
#define RT_GUARD	64
#define RT_MAX_SGE	4

/* A stretch of a region some work request may write: a peer's WRITE, our READ, our receive. */
enum { GR_OP, GR_RECV };
struct rt_grant {
	__u32	off, len;
	__u32	msg_off;	/* message byte at off */
	__u32	idx;		/* op or receive index */
	__u8	kind;		/* GR_OP / GR_RECV */
	__u8	side;		/* whose op or receive */
};

struct rt_region {
	__u8		*alloc, *mem;
	__u32		len, bump;
	__u32		salt;		/* contents: rt_pat(salt, off) */
	__u32		poison_salt;	/* after dereg (not freed): rt_pat(poison_salt, off) */
	bool		data;		/* filled with data nobody may change (sources) */
	bool		dereged, freed, poisoned;
	struct mroce_mr	*mr;
	__u32		rkey;		/* kept: a stale key is still used after dereg */
	struct rt_grant	*g;
	__u32		ng, gcap;
};

/* Cheap and random-access: a byte moved, shifted or from another region shows. */
static inline __u8 rt_pat(__u32 salt, __u32 off)
{
	return (__u8)(((off ^ salt) * 0x9e3779b1u + salt) >> 24);
}

static inline __u8 rt_guard_byte(__u32 i) { return (__u8)(0xa5 ^ i); }

/* ---- requests ------------------------------------------------------------ */

struct rt_sge {
	__u8	rg;
	__u32	off, len;
};

enum { BAD_NONE, BAD_RKEY, BAD_PAST_END, BAD_BEFORE };
enum { P_PENDING, P_POSTED, P_ABANDONED };

struct rt_op {
	enum mroce_wr_opcode kind;
	__u8		bad, victim, nsge, state;
	__u32		len, imm, roff;
	__s32		msg;		/* receive it consumes at the peer, -1: none */
	struct rt_sge	sge[RT_MAX_SGE];
	__u64		t_plan;		/* when to post, from the start */
	__u64		t_posted, t_done;
	__u32		ncompl;
	enum mroce_wc_status status;
};

struct rt_recv {
	__u32		cap;
	__u8		nsge, state;
	struct rt_sge	sge[RT_MAX_SGE];
	__s32		op;		/* peer op that consumes it, -1: none */
	__u64		t_plan, t_posted, t_done;
	__u32		ncompl;
	enum mroce_wc_status status;
};

struct rt_side {
	struct mroce_dev	*dev;
	struct mroce_cq		*cq;
	struct mroce_qp		*qp;
	__u32			qpn;
	struct rt_region	rg[RG_N];
	struct rt_op		*ops;
	__u32			nops, next_post;
	struct rt_recv		*rcv;
	__u32			nrcv, next_rpost;
	__u32			nconsume;
	__u32			next_cop, next_crcv;	/* ordered: next completion expected */
	__u32			vis_ptr;		/* peer ops known visible */
	bool			qerr;			/* an error completion was seen */
	bool			qcause;			/* ... one that is not a flush */
	__u32			qcur;			/* ops before it are all resolved */
	__u32			need;			/* receives owed to successful sends */
	bool			stopped;		/* dead: no more progress */
	bool			kills_peer;		/* posts what fails the peer as responder */
	__u32			seq[4];			/* sq, rq, msn, psn */
};

struct rt_scn {
	__u64			seed, rng;
	bool			verbose, destroying;
	struct mroce_qp_attr	attr;
	struct rt_side		s[2];
	struct sim_net		*net;
	__u64			t0;
	__u64			death_t;	/* from the start; 0: none */
	int			death_kind;	/* 1: B stops; 2: the link goes down for good */
	bool			dead;
	__u64			dereg_t;	/* B's victim region deregistered then; 0: none */
	bool			lossy;		/* loss heavy enough to exhaust retries */
	bool			any_kill;	/* some op fails a responder */
	__u64			bound_dead;	/* dead peer: every request done this long after */
	__u64			end;		/* absolute virtual-time bound */
	__u32			payload;	/* bytes per packet */
	__u32			bytes;		/* planned so far */
	__u64			viol;		/* bitmask of classes seen */
	char			detail[V_N][160];
};

static inline void rt_log(struct rt_scn *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->verbose)
		return;
	va_start(ap, fmt);
	printf("  [%8llu] ", (unsigned long long)(c->net ? c->net->now - c->t0 : 0));
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Count a class once per scenario, keeping the first detail. */
static inline void rt_viol(struct rt_scn *c, enum rt_viol v, const char *fmt, ...)
{
	va_list ap;
	char buf[160];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!(c->viol & 1ULL << v))
		snprintf(c->detail[v], sizeof(c->detail[v]), "%s", buf);
	c->viol |= 1ULL << v;
	if (c->verbose)
		printf("  VIOLATION %s: %s\n", rt_viol_name[v], buf);
}

/* ---- what bytes should be where ------------------------------------------ */

/* Byte i of the message op j of side s carries (WRITE/SEND: from its SGEs; READ: remote). */
static inline __u8 rt_msg_byte(const struct rt_scn *c, int s, const struct rt_op *o, __u32 i)
{
	if (o->kind == MROCE_WR_RDMA_READ) {
		const struct rt_region *r = &c->s[1 - s].rg[o->victim ? RG_VICT : RG_RSRC];

		return rt_pat(r->salt, o->roff + i);
	}
	for (int k = 0; k < o->nsge; k++) {
		if (i < o->sge[k].len)
			return rt_pat(c->s[s].rg[RG_SRC].salt, o->sge[k].off + i);
		i -= o->sge[k].len;
	}
	return 0;
}

/* The byte a granted stretch must hold once its owner succeeded (bg: untouched). */
static inline int rt_grant_expect(const struct rt_scn *c, const struct rt_grant *g, __u32 p,
				  __u8 bg)
{
	const struct rt_side *os = &c->s[g->side];
	__u32 m = g->msg_off + p;

	if (g->kind == GR_OP)
		return rt_msg_byte(c, g->side, &os->ops[g->idx], m);
	/* A receive holds a SEND's bytes up to its length, nothing beyond, nothing for WRITE_IMM. */
	{
		const struct rt_recv *r = &os->rcv[g->idx];
		const struct rt_op *o = r->op >= 0 ? &c->s[1 - g->side].ops[r->op] : NULL;

		if (o && (o->kind == MROCE_WR_SEND || o->kind == MROCE_WR_SEND_WITH_IMM) && m < o->len)
			return rt_msg_byte(c, 1 - g->side, o, m);
		return bg;
	}
}

static inline bool rt_grant_ok(const struct rt_scn *c, const struct rt_grant *g)
{
	const struct rt_side *os = &c->s[g->side];

	return g->kind == GR_OP ? os->ops[g->idx].ncompl && os->ops[g->idx].status == MROCE_WC_SUCCESS :
	       os->rcv[g->idx].ncompl && os->rcv[g->idx].status == MROCE_WC_SUCCESS;
}

static inline enum rt_viol rt_data_class(int rg)
{
	return rg == RG_WTGT ? V_WRITE_DATA : rg == RG_RDST ? V_READ_DATA : V_SEND_DATA;
}

/* Poison: a READ byte the responder held only after it deregistered the region. */
static inline bool rt_is_poison(const struct rt_scn *c, const struct rt_grant *g, __u32 p, __u8 b,
				__u8 bg)
{
	const struct rt_op *o;
	const struct rt_region *v;

	if (g->kind != GR_OP)
		return false;
	o = &c->s[g->side].ops[g->idx];
	if (o->kind != MROCE_WR_RDMA_READ || !o->victim)
		return false;
	v = &c->s[1 - g->side].rg[RG_VICT];
	/* an untouched byte (bg) may equal the poison by chance: only a changed one tells */
	return v->poisoned && b == rt_pat(v->poison_salt, o->roff + g->msg_off + p) &&
	       b != rt_msg_byte(c, g->side, o, g->msg_off + p) && b != bg;
}

/* One granted stretch: exact if its owner succeeded, else untouched or partial. */
static inline void rt_check_grant(struct rt_scn *c, int s, int rg, const struct rt_grant *g)
{
	const struct rt_region *r = &c->s[s].rg[rg];
	bool ok = rt_grant_ok(c, g);

	for (__u32 p = 0; p < g->len; p++) {
		__u8 b = r->mem[g->off + p], bg = rt_pat(r->salt, g->off + p);
		int want = rt_grant_expect(c, g, p, bg);

		if (rt_is_poison(c, g, p, b, bg)) {
			rt_viol(c, V_READ_AFTER_DEREG, "side %d op %u byte %u holds the poisoned region's byte",
				g->side, g->idx, g->msg_off + p);
			return;
		}
		if (b == want || (!ok && b == bg))
			continue;
		if (ok)
			rt_viol(c, rt_data_class(rg), "side %d %s %u: message byte %u is %02x, want %02x",
				g->side, g->kind == GR_OP ? "op" : "recv", g->idx, g->msg_off + p, b, want);
		else
			rt_viol(c, V_STRAY_WRITE, "side %d region %d: failed %s %u byte %u is %02x (want %02x or untouched %02x)",
				s, rg, g->kind == GR_OP ? "op" : "recv", g->idx, g->msg_off + p, b, want, bg);
		return;
	}
}

/* Every byte of a region: guards, gaps between grants, grants. */
static inline void rt_check_region(struct rt_scn *c, int s, int rg)
{
	const struct rt_region *r = &c->s[s].rg[rg];
	__u32 at = 0;

	if (!r->alloc || r->freed)
		return;
	for (__u32 i = 0; i < RT_GUARD; i++)
		if (r->alloc[i] != rt_guard_byte(i) || r->mem[r->len + i] != rt_guard_byte(i)) {
			rt_viol(c, V_STRAY_WRITE, "side %d region %d: guard byte %s%u changed", s, rg,
				r->alloc[i] != rt_guard_byte(i) ? "-" : "+", i);
			return;
		}
	for (__u32 k = 0; k <= r->ng; k++) {
		__u32 stop = k < r->ng ? r->g[k].off : r->len;

		for (; at < stop; at++) {
			__u8 want = r->poisoned ? rt_pat(r->poison_salt, at) : rt_pat(r->salt, at);

			if (r->mem[at] != want) {
				rt_viol(c, V_STRAY_WRITE, "side %d region %d: ungranted byte %u changed", s, rg, at);
				return;
			}
		}
		if (k < r->ng) {
			rt_check_grant(c, s, rg, &r->g[k]);
			at = r->g[k].off + r->g[k].len;
		}
	}
}

/* Ordered QP: when a receive completes, every earlier WRITE of the peer is in place. */
static inline void rt_check_visible(struct rt_scn *c, int s, __u32 upto)
{
	struct rt_side *me = &c->s[s], *peer = &c->s[1 - s];
	struct rt_region *r = &me->rg[RG_WTGT];

	for (; me->vis_ptr < upto; me->vis_ptr++) {
		const struct rt_op *o = &peer->ops[me->vis_ptr];

		if ((o->kind != MROCE_WR_RDMA_WRITE && o->kind != MROCE_WR_RDMA_WRITE_WITH_IMM) ||
		    o->bad || o->state != P_POSTED)
			continue;
		for (__u32 i = 0; i < o->len; i++)
			if (r->mem[o->roff + i] != rt_msg_byte(c, 1 - s, o, i)) {
				rt_viol(c, V_VISIBILITY, "side %d recv of op %u completed, earlier WRITE %u byte %u not there",
					s, upto, me->vis_ptr, i);
				me->vis_ptr = upto;
				return;
			}
	}
}

/* ---- completion rules ---------------------------------------------------- */

static inline bool rt_consumes(enum mroce_wr_opcode k)
{
	return k == MROCE_WR_SEND || k == MROCE_WR_SEND_WITH_IMM || k == MROCE_WR_RDMA_WRITE_WITH_IMM;
}

static inline bool rt_is_send(enum mroce_wr_opcode k)
{
	return k == MROCE_WR_SEND || k == MROCE_WR_SEND_WITH_IMM;
}

static inline enum mroce_wc_opcode rt_wc_opcode(enum mroce_wr_opcode k)
{
	return k == MROCE_WR_RDMA_READ ? MROCE_WC_RDMA_READ : rt_is_send(k) ? MROCE_WC_SEND :
	       MROCE_WC_RDMA_WRITE;
}

/* The receive a SEND lands in is too small: it must fail (LOC_LEN at the receiver). */
static inline bool rt_too_small(const struct rt_scn *c, int s, const struct rt_op *o)
{
	return rt_is_send(o->kind) && o->msg >= 0 && (__u32)o->msg < c->s[1 - s].nrcv &&
	       c->s[1 - s].rcv[o->msg].cap < o->len;
}

/* RNR retries may run out only if the receive came later than rnr_retry x rnr_timer. */
static inline bool rt_rnr_justified(const struct rt_scn *c, int s, const struct rt_op *o)
{
	const struct rt_recv *r;

	if (!rt_consumes(o->kind) || o->msg < 0 || (__u32)o->msg >= c->s[1 - s].nrcv)
		return rt_consumes(o->kind);
	r = &c->s[1 - s].rcv[o->msg];
	if (r->state != P_POSTED)
		return true;
	return r->t_posted > o->t_posted + (__u64)c->attr.rnr_retry * c->attr.rnr_timer_us;
}

/* The first error of a QP: something in the scenario must explain it. */
static inline void rt_first_error(struct rt_scn *c, int s, bool is_op, __u32 idx,
				  enum mroce_wc_status st)
{
	const struct rt_op *o = is_op ? &c->s[s].ops[idx] : NULL;
	/*
	 * A peer QP in error drops what arrives, as an InfiniBand one does:
	 * our requests to it then run out of retries, for good reason.
	 */
	bool retry_ok = c->dead || c->lossy || c->any_kill || c->s[1 - s].qcause;

	switch (st) {
	case MROCE_WC_RETRY_EXC_ERR:
		if (!is_op)
			rt_viol(c, V_WRONG_STATUS, "side %d recv %u: retry exceeded on a receive", s, idx);
		else if (!retry_ok)
			rt_viol(c, V_SPURIOUS, "side %d op %u (%d, %u B): retries exceeded on a working link",
				s, idx, o->kind, o->len);
		break;
	case MROCE_WC_RNR_RETRY_EXC_ERR:
		if (!is_op || !rt_consumes(o->kind))
			rt_viol(c, V_WRONG_STATUS, "side %d %s %u: RNR error on what consumes no receive",
				s, is_op ? "op" : "recv", idx);
		else if (c->attr.rnr_retry == 7 ||	/* 7 waits for ever, as in ibverbs */
			 (!rt_rnr_justified(c, s, o) && !c->dead && !c->lossy))
			rt_viol(c, V_PREMATURE_RNR, "side %d op %u: RNR exceeded, receive %d posted %llu us after the send (budget %u x %u us)",
				s, idx, o->msg,
				(unsigned long long)(c->s[1 - s].rcv[o->msg].t_posted - o->t_posted),
				c->attr.rnr_retry, c->attr.rnr_timer_us);
		break;
	case MROCE_WC_REM_ACCESS_ERR:
		if (!is_op || (!o->bad && !o->victim))
			rt_viol(c, V_WRONG_STATUS, "side %d %s %u: remote access error without a bad key/range",
				s, is_op ? "op" : "recv", idx);
		break;
	case MROCE_WC_REM_INV_REQ_ERR:
		if (!is_op || !rt_too_small(c, s, o))
			rt_viol(c, V_WRONG_STATUS, "side %d %s %u: invalid request error without a too small receive",
				s, is_op ? "op" : "recv", idx);
		break;
	case MROCE_WC_LOC_LEN_ERR:
		if (is_op)
			rt_viol(c, V_WRONG_STATUS, "side %d op %u: local length error on a send", s, idx);
		break;	/* receives: checked where their length is known */
	default:
		rt_viol(c, V_WRONG_STATUS, "side %d %s %u: status %d (%s)", s, is_op ? "op" : "recv",
			idx, st, mroce_wc_status_str(st));
		break;
	}
}

/* After an error every completion of the QP is a flush (verbs), none a success. */
static inline void rt_error_rule(struct rt_scn *c, int s, bool is_op, __u32 idx,
				 enum mroce_wc_status st)
{
	struct rt_side *me = &c->s[s];

	if (st == MROCE_WC_SUCCESS) {
		if (me->qerr)
			rt_viol(c, V_SUCCESS_AFTER_ERR, "side %d %s %u: SUCCESS after the QP's error",
				s, is_op ? "op" : "recv", idx);
		return;
	}
	me->qerr = true;
	if (st == MROCE_WC_WR_FLUSH_ERR)
		return;
	/*
	 * Flushes of requests older than the failing one may come first (they
	 * complete in order); the one error status the QP reports is its cause.
	 */
	if (me->qcause)
		rt_viol(c, V_SECOND_ERR, "side %d %s %u: %s after the QP's first error",
			s, is_op ? "op" : "recv", idx, mroce_wc_status_str(st));
	me->qcause = true;
	if (!c->destroying)
		rt_first_error(c, s, is_op, idx, st);
}

/*
 * A QP that flushed without any error status must have failed as a
 * responder: refused a request, or (peer dead, link lossy, or the peer's
 * QP in error) ran out of retries on READ responses it had no request of
 * its own to charge with.
 */
static inline void rt_check_flush_cause(struct rt_scn *c)
{
	for (int s = 0; s < 2; s++)
		if (c->s[s].qerr && !c->s[s].qcause && !c->s[1 - s].kills_peer && !c->dead &&
		    !c->lossy && !c->s[1 - s].qcause)
			rt_viol(c, V_SPURIOUS, "side %d: flushed with no error status, nothing kills this QP", s);
}

static inline void rt_send_wc(struct rt_scn *c, int s, __u32 idx, const struct mroce_wc *wc)
{
	struct rt_side *me = &c->s[s];
	struct rt_op *o = &me->ops[idx];

	if (c->attr.order == MROCE_ORDERED && idx != me->next_cop)
		rt_viol(c, V_SEND_ORDER, "side %d: op %u completed, op %u expected", s, idx, me->next_cop);
	if (idx >= me->next_cop)
		me->next_cop = idx + 1;
	rt_error_rule(c, s, true, idx, wc->status);
	if (wc->status != MROCE_WC_SUCCESS)
		return;
	if (wc->opcode != rt_wc_opcode(o->kind) ||
	    (o->kind == MROCE_WR_RDMA_READ && wc->byte_len != o->len))
		rt_viol(c, V_WC_FIELDS, "side %d op %u: opcode %d byte_len %u, want %d %u", s, idx,
			wc->opcode, wc->byte_len, rt_wc_opcode(o->kind), o->len);
	if ((o->bad && o->len) || rt_too_small(c, s, o))
		rt_viol(c, V_BAD_SUCCESS, "side %d op %u: %s reported SUCCESS", s, idx,
			o->bad ? "bad rkey/range" : "SEND into a too small receive");
}

static inline void rt_recv_fields(struct rt_scn *c, int s, __u32 idx, const struct mroce_wc *wc,
				  const struct rt_op *o)
{
	bool imm = o->kind != MROCE_WR_SEND;
	enum mroce_wc_opcode op = o->kind == MROCE_WR_RDMA_WRITE_WITH_IMM ?
				  MROCE_WC_RECV_RDMA_WITH_IMM : MROCE_WC_RECV;

	if (wc->opcode != op || wc->byte_len != o->len || !!(wc->wc_flags & MROCE_WC_WITH_IMM) != imm ||
	    (imm && wc->imm_data != o->imm))
		rt_viol(c, V_WC_FIELDS, "side %d recv %u: opcode %d len %u flags %x imm %x, want %d %u %d %x",
			s, idx, wc->opcode, wc->byte_len, wc->wc_flags, wc->imm_data, op, o->len, imm, o->imm);
}

static inline void rt_recv_wc(struct rt_scn *c, int s, __u32 idx, const struct mroce_wc *wc)
{
	struct rt_side *me = &c->s[s], *peer = &c->s[1 - s];
	struct rt_recv *r = &me->rcv[idx];
	const struct rt_op *o = r->op >= 0 && peer->ops[r->op].state == P_POSTED ? &peer->ops[r->op] : NULL;

	if (c->attr.order == MROCE_ORDERED && idx != me->next_crcv)
		rt_viol(c, V_RECV_ORDER, "side %d: recv %u completed (%s), recv %u expected", s, idx,
			mroce_wc_status_str(wc->status), me->next_crcv);
	if (idx >= me->next_crcv)
		me->next_crcv = idx + 1;
	rt_error_rule(c, s, false, idx, wc->status);
	if (wc->status == MROCE_WC_LOC_LEN_ERR && (!o || !rt_is_send(o->kind) || o->len <= r->cap))
		rt_viol(c, V_WRONG_STATUS, "side %d recv %u: length error, message fits", s, idx);
	if (wc->status != MROCE_WC_SUCCESS)
		return;
	if (!o) {
		rt_viol(c, V_INVENTED, "side %d recv %u: SUCCESS but no message was sent for it", s, idx);
		return;
	}
	rt_recv_fields(c, s, idx, wc, o);
	if (rt_is_send(o->kind) && o->len > r->cap)
		rt_viol(c, V_BAD_SUCCESS, "side %d recv %u: %u B message into %u B reported SUCCESS",
			s, idx, o->len, r->cap);
	if (c->attr.order == MROCE_ORDERED)
		rt_check_visible(c, s, (__u32)r->op + (o->kind == MROCE_WR_RDMA_WRITE_WITH_IMM));
	else if (o->kind == MROCE_WR_RDMA_WRITE_WITH_IMM) {
		__u32 save = me->vis_ptr;

		me->vis_ptr = (__u32)r->op;
		rt_check_visible(c, s, (__u32)r->op + 1);
		me->vis_ptr = save;
	}
}

#define RT_MAGIC	0x5aULL
static inline __u64 rt_wr_id(int s, bool is_op, __u32 idx)
{
	return RT_MAGIC << 56 | (__u64)(is_op ? 1 : 2) << 48 | (__u64)s << 40 | idx;
}

/* One completion polled from side s's CQ. */
static inline void rt_on_wc(struct rt_scn *c, int s, const struct mroce_wc *wc)
{
	struct rt_side *me = &c->s[s];
	__u64 id = wc->wr_id;
	bool is_op = (id >> 48 & 0xff) == 1;
	__u32 idx = (__u32)id;
	__u32 *ncompl;

	rt_log(c, "side %d wc %s %u status %s opcode %d len %u imm %x", s,
	       is_op ? "op" : "recv", idx, mroce_wc_status_str(wc->status), wc->opcode, wc->byte_len,
	       wc->imm_data);
	if (id >> 56 != RT_MAGIC || (id >> 40 & 0xff) != (__u64)s || (id >> 32 & 0xff) ||
	    !((id >> 48 & 0xff) == 1 || (id >> 48 & 0xff) == 2) ||
	    idx >= (is_op ? me->nops : me->nrcv) ||
	    (is_op ? me->ops[idx].state : me->rcv[idx].state) != P_POSTED) {
		rt_viol(c, V_INVENTED, "side %d: wr_id %llx names no posted request", s,
			(unsigned long long)id);
		return;
	}
	if (wc->qp_num != me->qpn)
		rt_viol(c, V_WC_FIELDS, "side %d: qp_num %u, want %u", s, wc->qp_num, me->qpn);
	ncompl = is_op ? &me->ops[idx].ncompl : &me->rcv[idx].ncompl;
	if (++*ncompl > 1) {
		rt_viol(c, V_DUP, "side %d %s %u completed %u times", s, is_op ? "op" : "recv", idx, *ncompl);
		return;
	}
	if (is_op) {
		const struct rt_op *o = &me->ops[idx];

		if (wc->status == MROCE_WC_SUCCESS && o->msg >= 0 && (__u32)o->msg < c->s[1 - s].nrcv &&
		    !c->s[1 - s].rcv[o->msg].ncompl)
			c->s[1 - s].need++;
		me->ops[idx].status = wc->status;
		me->ops[idx].t_done = c->net->now - c->t0;
		rt_send_wc(c, s, idx, wc);
	} else {
		const struct rt_recv *r = &me->rcv[idx];

		if (r->op >= 0 && c->s[1 - s].ops[r->op].ncompl &&
		    c->s[1 - s].ops[r->op].status == MROCE_WC_SUCCESS)
			me->need--;
		me->rcv[idx].status = wc->status;
		me->rcv[idx].t_done = c->net->now - c->t0;
		rt_recv_wc(c, s, idx, wc);
	}
}

#endif /* MROCE_RANDOM_REF_H */
