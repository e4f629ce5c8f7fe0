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
 * Path scoreboard: a path slot is retired at once and given a fresh entropy
 * value, so ECMP hashes it onto another route (as Ultra Ethernet rotates
 * entropy and SRD steers around bad paths), when this epoch it
 *  - lost a quarter or more of what it carried (at least 3 packets, as SACK
 *    holes prove): a dead or lossy route;
 *  - or, at the epoch's end, has a smoothed RTT more than twice the best
 *    slot's plus 100 us over at least 4 samples: a congested or slow route;
 *  - or, at the epoch's end, had at least 4 of its packets come back
 *    CE-marked, a marked fraction more than twice the QP's: a route whose
 *    queue builds while the others' do not.
 *    Both relative, so a fabric slow or marking everywhere (incast) retires
 *    nothing, and paths of different but sane delays are all kept.
 * Epochs last a few RTTs; counts start over with each.
 */
void mroce_path_scoreboard(struct mroce_qp *qp, __u64 now)
{
	__u32 epoch = 4 * qp->srtt_us > 200 ? 4 * qp->srtt_us : 200, best = 0, marks = 0, sent = 0;
	bool new_epoch;

	if (qp->attr.paths < 2 || qp->attr.static_paths)
		return;
	new_epoch = now - qp->path_epoch_us >= epoch;
	if (new_epoch)
		for (__u32 i = 0; i < qp->attr.paths; i++) {
			if (qp->paths[i].samples >= 4 && (!best || qp->paths[i].srtt_us < best))
				best = qp->paths[i].srtt_us;
			marks += qp->paths[i].marks;
			sent += qp->paths[i].sent;
		}
	for (__u32 i = 0; i < qp->attr.paths; i++) {
		struct mroce_path *p = &qp->paths[i];

		if (p->lost >= 3 && p->lost * 4 >= p->sent) {
			mroce_path_retire(qp, p);
		} else if (new_epoch) {
			if ((best && p->samples >= 4 && p->srtt_us > 2 * best + 100) ||
			    (p->marks >= 4 && (__u64)p->marks * sent > 2ULL * marks * p->sent))
				mroce_path_retire(qp, p);
			else
				p->sent = p->lost = p->samples = p->marks = 0;
		}
	}
	if (new_epoch)
		qp->path_epoch_us = now;
}

/*
 * A QP's entropy base (offset of its source ports): QPNs step through the
 * entropy space by its size over the golden ratio (a Weyl sequence), so n
 * QPs' bases lie about 16384 / n apart for any n: QPNs 1..1023 at least 11
 * apart, more than 8 paths each, where qpn * 64 repeated every 256 QPNs.
 * The start is a hash of the device's own address, so hosts sending to one
 * peer do not pick the same ports for the same QPN; it is not random, so a
 * run (and a simulated one) is repeatable.
 */
__u16 mroce_entropy_base(const struct mroce_dev *dev, __u32 qpn)
{
	const __u8 *b = (const __u8 *)&dev->local.src;
	__u32 h = 2166136261u;	/* FNV-1a */

	for (__u32 i = 0; i < sizeof(dev->local.src); i++)
		h = (h ^ b[i]) * 16777619u;
	for (__u32 i = 0; i < 6; i++)
		h = (h ^ dev->local.src_mac[i]) * 16777619u;
	return (__u16)((h + qpn * 10127u) % MROCE_ENTROPY_SPACE);
}
