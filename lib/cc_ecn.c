// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * DCTCP-like congestion control (attr.cc_ecn): once per RTT, cut the window
 * by half the moving fraction of CE-marked packets the ACKs echo.
 */
#include "cc.h"

struct dctcp_priv {
	struct mroce_cc_epoch		e;
	struct mroce_cc_dctcp_state	d;
};
_Static_assert(sizeof(struct dctcp_priv) <= MROCE_CC_PRIV_SIZE, "fits the QP's private area");

void mroce_cc_dctcp_sample(struct mroce_cc_dctcp_state *s, const struct mroce_hdr *ack)
{
	/*
	 * The peer's counts: no more marks than packets, whatever it says, and
	 * an epoch of ACKs that would wrap the sums halves them (the fraction is
	 * what counts), so the fraction stays within 0 .. 1.
	 */
	if (s->pkts > UINT32_MAX - 0xffff) {
		s->pkts /= 2;
		s->ce /= 2;
	}
	s->ce += ack->ecn_ce < ack->ecn_pkts ? ack->ecn_ce : ack->ecn_pkts;
	s->pkts += ack->ecn_pkts;
}

/* The epoch's cut of *cw, if any marks came back; starts the next epoch's counts. */
bool mroce_cc_dctcp_cut(struct mroce_cc_dctcp_state *s, __u32 *cw)
{
	bool cut = false;

	if (s->pkts) {
		__u32 frac = (__u32)((__u64)s->ce * 1024 / s->pkts);	/* 0 .. 1024 */

		s->alpha_x1024 = s->alpha_x1024 - s->alpha_x1024 / 16 + frac / 16;
		if (s->ce) {
			*cw = (__u32)((__u64)*cw * (2048 - s->alpha_x1024) / 2048);
			cut = true;
		}
	}
	s->ce = s->pkts = 0;
	return cut;
}

static void dctcp_on_ack(struct mroce_qp *qp, const struct mroce_hdr *ack, __u32 rtt_us, __u64 now)
{
	struct dctcp_priv *p = mroce_cc_priv(qp);
	__u32 cw = qp->cwnd_x256;
	bool cut;

	mroce_cc_dctcp_sample(&p->d, ack);
	if (!mroce_cc_epoch_over(qp, &p->e, rtt_us, now))
		return;
	cut = mroce_cc_dctcp_cut(&p->d, &cw);
	mroce_cc_epoch_end(qp, &p->e, cw, cut, now);
}

static void dctcp_on_loss(struct mroce_qp *qp, __u64 now)
{
	mroce_cc_loss_cut(qp, &((struct dctcp_priv *)mroce_cc_priv(qp))->e, now);
}

static void dctcp_on_rto(struct mroce_qp *qp, __u64 now)
{
	mroce_cc_rto_floor(qp, &((struct dctcp_priv *)mroce_cc_priv(qp))->e, now);
}

/* In slow start, with the moving fraction at 1 (as Linux's DCTCP): the first marks halve. */
static void dctcp_init(struct mroce_qp *qp)
{
	mroce_cc_init_slow_start(qp);
	((struct dctcp_priv *)mroce_cc_priv(qp))->d.alpha_x1024 = 1024;
}

const struct mroce_cc_ops mroce_cc_dctcp = {
	.name = "dctcp",
	.priv_size = sizeof(struct dctcp_priv),
	.init = dctcp_init,
	.on_ack = dctcp_on_ack,
	.on_loss = dctcp_on_loss,
	.on_rto = dctcp_on_rto,
	.window = mroce_cc_clamp_window,
};

/*
 * The default (cc.h, MROCE_CC_DEFAULT): the same, but a retransmission
 * timeout leaves the window alone. On a software path most timeouts are
 * the host's (a process off the CPU, an ACK held in a ring), not the
 * network's: on a clean veth pair, 256 MiB of WRITEs saw up to 12 of them,
 * and each took the window to 2 packets. Congestion is what ECN and runs
 * of losses on a queued path say; a dead route is the scoreboard's.
 */
const struct mroce_cc_ops mroce_cc_default = {
	.name = "default",
	.priv_size = sizeof(struct dctcp_priv),
	.init = dctcp_init,
	.on_ack = dctcp_on_ack,
	.on_loss = dctcp_on_loss,
	.window = mroce_cc_clamp_window,
};
