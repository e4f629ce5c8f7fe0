// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Swift-like delay-based congestion control (attr.cc_delay): once per RTT,
 * cut the window in proportion to how far the RTT overshoots a target.
 * Also the combination of both signals (cc_ecn and cc_delay together).
 */
#include "cc.h"

struct swift_priv {
	struct mroce_cc_epoch		e;
	struct mroce_cc_swift_state	s;
};
_Static_assert(sizeof(struct swift_priv) <= MROCE_CC_PRIV_SIZE, "fits the QP's private area");

void mroce_cc_swift_sample(struct mroce_cc_swift_state *s, __u32 rtt_us)
{
	if (rtt_us > s->rtt_max)
		s->rtt_max = rtt_us;
}

/* The epoch's cut of *cw, if the largest RTT overshot the target; starts the next epoch. */
bool mroce_cc_swift_cut(const struct mroce_qp *qp, struct mroce_cc_swift_state *s, __u32 *cw)
{
	bool cut = false;

	if (s->rtt_max) {
		__u32 base = qp->min_rtt_us ? qp->min_rtt_us : s->rtt_max;
		__u32 target = qp->attr.target_delay_us ? qp->attr.target_delay_us :
			       3 * base > 50 ? 3 * base : 50;

		if (s->rtt_max > target) {
			__u32 over = (s->rtt_max - target) * 1024 / s->rtt_max;

			/* at most halve per RTT */
			*cw = (__u32)((__u64)*cw * (1024 - (over > 512 ? 512 : over)) / 1024);
			cut = true;
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
	mroce_cc_swift_sample(&p->s, rtt_us);
	if (!mroce_cc_epoch_over(qp, &p->e, now))
		return;
	cut = mroce_cc_swift_cut(qp, &p->s, &cw);
	mroce_cc_epoch_end(qp, &p->e, cw, cut, now);
}

const struct mroce_cc_ops mroce_cc_swift = {
	.name = "swift",
	.priv_size = sizeof(struct swift_priv),
	.init = mroce_cc_init_none,
	.on_ack = swift_on_ack,
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
	mroce_cc_swift_sample(&p->s, rtt_us);
	if (!mroce_cc_epoch_over(qp, &p->e, now))
		return;
	cut = mroce_cc_dctcp_cut(&p->d, &cw);
	cut |= mroce_cc_swift_cut(qp, &p->s, &cw);
	mroce_cc_epoch_end(qp, &p->e, cw, cut, now);
}

const struct mroce_cc_ops mroce_cc_dctcp_swift = {
	.name = "dctcp+swift",
	.priv_size = sizeof(struct both_priv),
	.init = mroce_cc_init_none,
	.on_ack = both_on_ack,
	.window = mroce_cc_clamp_window,
};
