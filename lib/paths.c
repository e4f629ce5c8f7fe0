// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The path scoreboard: which entropy values (UDP source ports) a QP sprays
 * its packets and ACKs over, and which of them get retired for a fresh one.
 */
#include "cc.h"
#include "eng_int.h"

__u8 mroce_pick_path(struct mroce_qp *qp)
{
	__u8 p = (__u8)(qp->next_path % qp->attr.paths);

	qp->next_path++;
	return p;
}

/*
 * ACKs are sprayed too, round robin over at least MROCE_ACK_PATHS source
 * ports: on one fixed path, a failure of that path would silence every ACK
 * and fail the sender's QP although data still gets through. Each ACK
 * repeats the whole SACK state, so losing a share of them costs little.
 */
__u8 mroce_ack_path(struct mroce_qp *qp)
{
	__u32 n = qp->attr.paths > MROCE_ACK_PATHS ? qp->attr.paths : MROCE_ACK_PATHS;

	return (__u8)(qp->ack_path++ % n);
}

/* Replace a path's entropy value with a fresh one no other slot holds. */
void mroce_path_retire(struct mroce_qp *qp, struct mroce_path *p)
{
	bool used;

	do {
		qp->next_entropy = (__u16)((qp->next_entropy + 1) % MROCE_ENTROPY_SPACE);
		used = false;
		for (__u32 k = 0; k < qp->attr.paths; k++)
			used |= qp->paths[k].entropy == qp->next_entropy;
	} while (used);
	p->entropy = qp->next_entropy;
	p->sent = p->lost = p->samples = p->srtt_us = p->marks = 0;
	qp->dev->stats.paths_retired++;
	qp->st.paths_retired++;
	/* the new route's delay is unknown: delay control re-learns its base */
	mroce_cc_on_path_retired(qp);
}

/*
 * A declared loss, charged to the path it was sent on if it tells about
 * that path as it is now: on the entropy value the slot still holds (a
 * retired value is history), and a first transmission: a resend goes where
 * tx_resend steers it, in a burst, and at a tail-drop queue a burst's
 * losses are the burst's, not the path's.
 */
void mroce_path_loss(struct mroce_qp *qp, const struct mroce_txpkt *rec)
{
	struct mroce_path *p = &qp->paths[rec->path];

	if (rec->path < qp->attr.paths && p->entropy == rec->entropy && !rec->retx && !rec->gbn)
		p->lost++;
}

/* The QP's counts over all its paths. */
struct path_totals {
	__u32	sent, lost, marks, best_srtt;
	bool	all_losing;	/* every path that carried anything lost a quarter */
};

static bool path_losing(const struct mroce_path *p)
{
	return p->lost >= 3 && p->lost * 4 >= p->sent;
}

static void path_totals(const struct mroce_qp *qp, struct path_totals *t)
{
	*t = (struct path_totals){ .all_losing = true };
	for (__u32 i = 0; i < qp->attr.paths; i++) {
		const struct mroce_path *p = &qp->paths[i];

		if (p->samples >= 4 && (!t->best_srtt || p->srtt_us < t->best_srtt))
			t->best_srtt = p->srtt_us;
		t->sent += p->sent;
		t->lost += p->lost;
		t->marks += p->marks;
		if (p->sent && !path_losing(p))
			t->all_losing = false;
	}
}

/*
 * Loss is judged against the rest of the QP: a path is bad only if it lost
 * a quarter of what it carried and far more than the other paths did over
 * the same time (more than twice their rate, plus a few packets). Paths
 * through one tail-drop queue all lose alike, and retiring one would only
 * move it to another port of the same queue; when every path loses,
 * nothing is retired on loss at all.
 */
static bool path_lossy(const struct mroce_path *p, const struct path_totals *t)
{
	__u32 rest_sent = t->sent - p->sent, rest_lost = t->lost - p->lost;

	if (!path_losing(p) || t->all_losing)
		return false;
	if (!rest_sent)
		return true;
	return p->lost > 2 * ((__u64)rest_lost * p->sent / rest_sent) + 3;
}

/* At an epoch's end: slow (delay rule) or marked far more than the QP (marks rule). */
static bool path_congested(const struct mroce_path *p, const struct path_totals *t)
{
	return (t->best_srtt && p->samples >= 4 && p->srtt_us > 2 * t->best_srtt + 100) ||
	       (p->marks >= 4 && (__u64)p->marks * t->sent > 2ULL * t->marks * p->sent);
}

/*
 * Path scoreboard: a path slot is retired at once and given a fresh entropy
 * value, so ECMP hashes it onto another route (as Ultra Ethernet rotates
 * entropy and SRD steers around bad paths), when
 *  - it lost a quarter or more of what it carried (at least 3 packets, as
 *    SACK holes prove), far more than the QP's other paths: a dead or lossy
 *    route;
 *  - or, at an epoch's end, has a smoothed RTT more than twice the best
 *    slot's plus 100 us over at least 4 samples: a congested or slow route;
 *  - or, at an epoch's end, had at least 4 of its packets come back
 *    CE-marked, a marked fraction more than twice the QP's: a route whose
 *    queue builds while the others' do not.
 *    All relative, so a fabric slow, marking or dropping everywhere (incast,
 *    a shared bottleneck) retires nothing, and paths of different but sane
 *    delays are all kept.
 * Epochs last a few RTTs. RACK declares a loss an RTT or more after the
 * packet went out, often an epoch later, so loss counts are not started
 * over but halved with each epoch: a window over about the last two, in
 * which a dead path's losses still meet what it was sent. RTT samples and
 * marks start over.
 */
void mroce_path_scoreboard(struct mroce_qp *qp, __u64 now)
{
	__u32 epoch = 4 * qp->srtt_us > 200 ? 4 * qp->srtt_us : 200;
	struct path_totals t;
	bool new_epoch;

	if (qp->attr.paths < 2 || qp->attr.static_paths)
		return;
	new_epoch = now - qp->path_epoch_us >= epoch;
	path_totals(qp, &t);
	for (__u32 i = 0; i < qp->attr.paths; i++) {
		struct mroce_path *p = &qp->paths[i];

		if (path_lossy(p, &t) || (new_epoch && path_congested(p, &t))) {
			mroce_path_retire(qp, p);
		} else if (new_epoch) {
			p->sent /= 2;
			p->lost /= 2;
			p->samples = p->marks = 0;
		}
	}
	if (new_epoch)
		qp->path_epoch_us = now;
}

/*
 * A QP's entropy base (offset of its source ports): one of the 1024 slots
 * of 16 ports in the entropy space, stepped through by the golden ratio (a
 * Weyl sequence: 633 / 1024), so every QPN of a device (1..1023) has a slot
 * of its own and n QPs lie about 1024 / n slots apart, where qpn * 64
 * repeated every 256 QPNs. Slots keep a path's offset within its 16 ports
 * the same for every QP. The start is a hash of the device's own address,
 * so hosts sending to one peer do not pick the same ports for the same QPN;
 * it is not random, so a run (and a simulated one) is repeatable.
 */
__u16 mroce_entropy_base(const struct mroce_dev *dev, __u32 qpn)
{
	const __u8 *b = (const __u8 *)&dev->local.src;
	__u32 h = 2166136261u;	/* FNV-1a */

	for (__u32 i = 0; i < sizeof(dev->local.src); i++)
		h = (h ^ b[i]) * 16777619u;
	for (__u32 i = 0; i < 6; i++)
		h = (h ^ dev->local.src_mac[i]) * 16777619u;
	return (__u16)(((h + qpn * 633u) % (MROCE_ENTROPY_SPACE / 16)) * 16);
}
