// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-path selective ACKs (MetaRoCE's per-path sequence and 256-bit SACK).
 *
 * Every copy a sender puts on one of its path slots carries the slot's
 * next sequence number (bth.pseq, mroce_emit). The receiver keeps, per
 * slot of its peer, the newest pseq that arrived and which of the 256
 * before it did, duplicates and payload-less probes included, and every
 * ACK carries that record for the slot of the packet it answers. A slot's
 * route does not reorder, so for the sender a copy MROCE_PATH_DUPTHRESH or
 * more places behind the newest arrival on its slot that did not arrive
 * is lost: it is resent at once, with no reordering allowance beyond what
 * the route itself jitters, and no timer.
 * This sees what the connection SACK cannot: a lost resend, a lost probe,
 * a copy whose PSN another copy already delivered.
 */
#include <stdlib.h>
#include <string.h>

#include "cc.h"
#include "eng_int.h"

/* Move every bit n places older (towards higher indices); what falls off is forgotten. */
static void psack_shift(__u64 bits[MROCE_PSACK_WORDS], __u32 n)
{
	__u32 w = n / 64, b = n % 64;

	for (int j = MROCE_PSACK_WORDS - 1; j >= 0; j--) {
		int src = j - (int)w;
		__u64 v = 0;

		if (src >= 0) {
			v = bits[src] << b;
			if (b && src > 0)
				v |= bits[src - 1] >> (64 - b);
		}
		bits[j] = v;
	}
}

/*
 * Receiver: a data packet (new or duplicate) with sequence pseq arrived on
 * the peer's slot. pseq is the peer's word: one that jumped ahead (a bug,
 * a lie) would leave every honest one after it too far behind to record,
 * and the slot's per-path SACK naming a sequence never sent, for up to
 * 2^15 packets. MROCE_PSACK_REBASE arrivals in a row too far behind say
 * the record is what is wrong: it starts again from the latest.
 */
#define MROCE_PSACK_REBASE	4

void mroce_psack_mark(struct mroce_rxpath *r, __u16 pseq)
{
	__s16 d = (__s16)(pseq - r->next);

	if (r->valid && d < 0 && (__u32)(-d - 1) >= MROCE_PSACK_BITS) {
		if (++r->stale < MROCE_PSACK_REBASE)
			return;	/* too old to fit: not wrapped onto another bit */
		r->valid = false;
	}
	r->stale = 0;
	if (!r->valid || d >= 0) {
		if (!r->valid || d >= MROCE_PSACK_BITS - 1)
			memset(r->bits, 0, sizeof(r->bits));
		else
			psack_shift(r->bits, (__u32)d + 1);
		r->bits[0] |= 1;
		r->next = (__u16)(pseq + 1);
		r->valid = true;
		return;
	}
	r->bits[(__u32)(-d - 1) / 64] |= 1ULL << ((__u32)(-d - 1) % 64);
}

/*
 * Receiver: the record of the peer's slot, made room for when it is first
 * heard. A QP holds records up to the highest slot heard (16 with the
 * defaults), not for all MROCE_MAX_PATHS the header can name: 10 KB of a
 * connection end's 25 were records of slots nobody used. NULL if out of
 * memory: that slot's packets then go without per-path SACK, which only
 * speeds loss detection up (the cumulative ACK and SACK still cover them).
 */
struct mroce_rxpath *mroce_rxpath_of(struct mroce_qp *qp, __u8 slot)
{
	struct mroce_rxpath *v;
	__u32 n = qp->rxpaths_n ? qp->rxpaths_n : 16;

	if (slot < qp->rxpaths_n)
		return &qp->rxpaths[slot];
	while (n <= slot)
		n *= 2;
	v = realloc(qp->rxpaths, n * sizeof(*v));
	if (!v)
		return NULL;
	memset(v + qp->rxpaths_n, 0, (n - qp->rxpaths_n) * sizeof(*v));
	qp->rxpaths = v;
	qp->rxpaths_n = n;
	return &v[slot];
}

/* Receiver: the per-path SACK of the peer's slot an ACK carries. */
void mroce_psack_fill(const struct mroce_qp *qp, __u8 slot, struct mroce_hdr *h)
{
	const struct mroce_rxpath *r = slot < qp->rxpaths_n ? &qp->rxpaths[slot] : NULL;

	if (!r || !r->valid)
		return;
	h->pflags = MROCE_PF_VALID;
	h->ppath = slot;
	h->ppsn_next = r->next;
	memcpy(h->psack, r->bits, sizeof(h->psack));
}

/* The newest place, DUPTHRESH or more behind the newest arrival, that did not arrive. */
static int psack_newest_hole(const struct mroce_hdr *h)
{
	for (__u32 w = 0; w < MROCE_PSACK_WORDS; w++) {
		__u64 missing = ~h->psack[w];

		if (w == 0)
			missing &= ~((1ULL << MROCE_PATH_DUPTHRESH) - 1);
		if (missing)
			return (int)(64 * w + (__u32)__builtin_ctzll(missing));
	}
	return -1;
}

/*
 * Sender: what an ACK's per-path SACK proves lost. Only copies on the
 * slot's current entropy value count (an older route's may still be on
 * their way), and only a copy sent what a route's jitter may reorder
 * (mroce_path_reo_us) before the newest arrival on the slot, as path_gap
 * judges the sender's own records: places alone are not enough where
 * packets leave microseconds apart and a route jitters by more. When the
 * newest arrival's send time is not known (its record moved on to a later
 * copy), the copy must have been out for the path's RTT plus that too.
 * Only news is looked at: a hole newer than the newest one whose copies
 * were all judged. Returns the packets declared lost.
 */
__u32 mroce_psack_holes(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now)
{
	struct mroce_path *p;
	__u16 newest, hole;
	__u32 lost = 0, wait, reo;
	bool unripe = false, have_newest = false;
	__u64 newest_sent = 0;
	int i;

	if (!(h->pflags & MROCE_PF_VALID) || h->ppath >= qp->attr.paths)
		return 0;
	p = &qp->paths[h->ppath];
	newest = (__u16)(h->ppsn_next - 1);
	/* a sequence the slot never sent is no evidence (a stale or forged ACK) */
	if ((__s16)(p->tx_pseq - h->ppsn_next) < 0 || !mroce_psack_has(h, 0))
		return 0;
	mroce_reo_check(qp, h, now);	/* losses it shows were only late (reorder.c) */
	i = psack_newest_hole(h);
	if (i < 0)
		return 0;
	hole = (__u16)(newest - (__u32)i);
	if (p->hole_valid && (__s16)(hole - p->hole_pseq) <= 0)
		return 0;
	reo = mroce_path_reo_us(qp, p);
	wait = (p->srtt_us ? p->srtt_us : qp->srtt_us) + reo;
	for (__u32 psn = qp->snd_una; psn != qp->snd_nxt; psn++) {
		const struct mroce_txpkt *rec = PKT(qp, psn);

		if (rec->path == h->ppath && rec->entropy == p->entropy && rec->pseq == newest &&
		    rec->state != PKT_FREE) {
			newest_sent = rec->sent_us;
			have_newest = true;
			break;
		}
	}
	for (__u32 psn = qp->snd_una; psn != qp->snd_nxt; psn++) {
		struct mroce_txpkt *rec = PKT(qp, psn);
		__u16 d = (__u16)(newest - rec->pseq);

		if (rec->state != PKT_INFLIGHT || rec->gbn || rec->path != h->ppath ||
		    rec->entropy != p->entropy || d < MROCE_PATH_DUPTHRESH ||
		    d >= MROCE_PSACK_BITS || mroce_psack_has(h, d))
			continue;
		if (have_newest ? newest_sent < rec->sent_us + reo : now < rec->sent_us + wait) {
			unripe = true;	/* looked at again with the next ACK (and RACK's timer) */
			continue;
		}
		mroce_declare_lost(qp, rec, psn);
		qp->st.psack_lost++;
		lost++;
	}
	if (!unripe) {
		p->hole_pseq = hole;
		p->hole_valid = true;
	}
	return lost;
}
