// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Swift-like delay-based congestion control (attr.cc_delay): once per RTT,
 * cut the window in proportion to how far the RTT overshoots a target.
 * Also the combination of both signals (cc_ecn and cc_delay together).
 */
#include "cc.h"
#include "eng_int.h"

struct swift_priv {
	struct mroce_cc_epoch		e;
	struct mroce_cc_swift_state	s;
};
_Static_assert(sizeof(struct swift_priv) <= MROCE_CC_PRIV_SIZE, "fits the QP's private area");

/*
 * The base delay is a windowed minimum (as BBR's min_rtt filter and Swift's
 * base delay): the lowest RTT of the previous window and the current one,
 * a window being 10 smoothed RTTs (at least 1 ms). A minimum kept for ever
 * would hold a route's old delay after it changed (a longer route, with no
 * queue on it) and take every later RTT for queueing.
 */
void mroce_cc_swift_sample(const struct mroce_qp *qp, struct mroce_cc_swift_state *s,
			   __u32 rtt_us, __u64 now)
{
	__u32 win = 10 * qp->srtt_us > 1000 ? 10 * qp->srtt_us : 1000;

	if (mroce_since(now, s->win_us) >= win) {
		s->base_us = s->win_min;
		s->win_min = 0;
		s->win_us = now;
	}
	if (rtt_us > s->rtt_max)
		s->rtt_max = rtt_us;
	if (!s->win_min || rtt_us < s->win_min)
		s->win_min = rtt_us;
	if (!s->base_us || rtt_us < s->base_us)
		s->base_us = rtt_us;
}

/* Forget the base delay (a path moved to a route of unknown delay). */
void mroce_cc_swift_reset(struct mroce_cc_swift_state *s)
{
	s->base_us = s->win_min = 0;
	s->win_us = 0;
}

/*
 * The epoch's cut of *cw, if the largest RTT overshot the target; starts
 * the next epoch. With no queue at all (every RTT within a quarter of the
 * base) and may_grow, the window grows by half: after a route change or a
 * timeout it gets back to the BDP in a few RTTs, not one packet per RTT.
 */
bool mroce_cc_swift_cut(const struct mroce_qp *qp, struct mroce_cc_swift_state *s, __u32 *cw,
			bool may_grow)
{
	bool cut = false;

	if (s->rtt_max) {
		__u32 base = s->base_us ? s->base_us : s->rtt_max;
		__u32 target = qp->attr.target_delay_us ? qp->attr.target_delay_us :
			       3 * base > 50 ? 3 * base : 50;

		if (s->rtt_max > target) {
			/* 64-bit: an RTT past 4 s (the peer's echo may claim 10) must not wrap */
			__u32 over = (__u32)((__u64)(s->rtt_max - target) * 1024 / s->rtt_max);

			/* at most halve per RTT */
			*cw = (__u32)((__u64)*cw * (1024 - (over > 512 ? 512 : over)) / 1024);
			cut = true;
		} else if (may_grow && s->rtt_max <= base + base / 4 + 10) {
			*cw += *cw / 2;
		}
	}
	s->rtt_max = 0;
	return cut;
}

static void swift_on_ack(struct mroce_qp *qp, const struct mroce_hdr *ack, __u32 rtt_us, __u64 now)
{
	struct swift_priv *p = mroce_cc_priv(qp);
	__u32 cw = qp->cwnd_x256;
	bool cut;

	(void)ack;
	mroce_cc_swift_sample(qp, &p->s, rtt_us, now);
	if (!mroce_cc_epoch_over(qp, &p->e, rtt_us, now))
		return;
	cut = mroce_cc_swift_cut(qp, &p->s, &cw, true);
	mroce_cc_epoch_end(qp, &p->e, cw, cut, now);
}

static void swift_on_loss(struct mroce_qp *qp, __u64 now)
{
	mroce_cc_loss_cut(qp, &((struct swift_priv *)mroce_cc_priv(qp))->e, now);
}

static void swift_on_rto(struct mroce_qp *qp, __u64 now)
{
	mroce_cc_rto_floor(qp, &((struct swift_priv *)mroce_cc_priv(qp))->e, now);
}

static void swift_on_path_retired(struct mroce_qp *qp)
{
	mroce_cc_swift_reset(&((struct swift_priv *)mroce_cc_priv(qp))->s);
}

const struct mroce_cc_ops mroce_cc_swift = {
	.name = "swift",
	.priv_size = sizeof(struct swift_priv),
	.init = mroce_cc_init_slow_start,
	.on_ack = swift_on_ack,
	.on_loss = swift_on_loss,
	.on_rto = swift_on_rto,
	.on_path_retired = swift_on_path_retired,
	.window = mroce_cc_clamp_window,
};

/* Both signals in one epoch: the ECN cut first, then the delay cut of what is left. */
struct both_priv {
	struct mroce_cc_epoch		e;
	struct mroce_cc_dctcp_state	d;
	struct mroce_cc_swift_state	s;
};
_Static_assert(sizeof(struct both_priv) <= MROCE_CC_PRIV_SIZE, "fits the QP's private area");

static void both_on_ack(struct mroce_qp *qp, const struct mroce_hdr *ack, __u32 rtt_us, __u64 now)
{
	struct both_priv *p = mroce_cc_priv(qp);
	__u32 cw = qp->cwnd_x256;
	bool cut;

	mroce_cc_dctcp_sample(&p->d, ack);
	mroce_cc_swift_sample(qp, &p->s, rtt_us, now);
	if (!mroce_cc_epoch_over(qp, &p->e, rtt_us, now))
		return;
	cut = mroce_cc_dctcp_cut(&p->d, &cw);
	cut |= mroce_cc_swift_cut(qp, &p->s, &cw, !cut);
	mroce_cc_epoch_end(qp, &p->e, cw, cut, now);
}

static void both_on_loss(struct mroce_qp *qp, __u64 now)
{
	mroce_cc_loss_cut(qp, &((struct both_priv *)mroce_cc_priv(qp))->e, now);
}

static void both_on_rto(struct mroce_qp *qp, __u64 now)
{
	mroce_cc_rto_floor(qp, &((struct both_priv *)mroce_cc_priv(qp))->e, now);
}

static void both_on_path_retired(struct mroce_qp *qp)
{
	mroce_cc_swift_reset(&((struct both_priv *)mroce_cc_priv(qp))->s);
}

static void both_init(struct mroce_qp *qp)
{
	mroce_cc_init_slow_start(qp);
	((struct both_priv *)mroce_cc_priv(qp))->d.alpha_x1024 = 1024;
}

const struct mroce_cc_ops mroce_cc_dctcp_swift = {
	.name = "dctcp+swift",
	.priv_size = sizeof(struct both_priv),
	.init = both_init,
	.on_ack = both_on_ack,
	.on_loss = both_on_loss,
	.on_rto = both_on_rto,
	.on_path_retired = both_on_path_retired,
	.window = mroce_cc_clamp_window,
};
