// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * How much a QP's routes reorder, learned from its own mistakes.
 *
 * Both loss rules wait a reordering window past the evidence that a copy
 * was overtaken: the per-path rule (a copy sent on a slot before one that
 * arrived, loss.c path_gap and psack.c) a quarter of the route's base RTT,
 * RACK's time rule (loss.c) the RTT plus the QP's allowance. Those suit a
 * route that delivers in order, as the per-path sequence assumes. Real
 * routes sometimes do not (multi-queue transmit, a LAG or ECMP rehash, a
 * VM or container host), and a transport that sprays must not pay a resend
 * for every overtaking.
 *
 * So every loss either rule declares on a copy's own route is remembered
 * (its slot, its place in the slot's sequence, when it was sent). The
 * peer's per-path SACK marks every place that arrived on a slot, late
 * copies and duplicates included. When an ACK's record of that slot shows
 * the remembered place arrived after all, the loss was spurious (TCP's
 * DSACK, RACK's reordering window growth, RFC 8985 section 6.2): the
 * window grows to how late the copy was, measured from its sending to the
 * news of it, less the route's base RTT, plus a quarter. The loss is not
 * charged to the route (no retirement, no ASSUMED_BAD for reordering).
 * Once 16 remembered losses in a row proved real (their places still
 * empty an RTT and twice the window after they went), the window halves:
 * a rehash that is over stops slowing loss detection.
 *
 * A route that never reorders never grows the window: on such a wire, loss
 * is found exactly as before. The window is capped at the high RTO: a peer
 * whose ACKs lie can slow only its own connection's loss detection.
 */
#include "eng_int.h"

#define MROCE_REO_DECAY		16	/* real losses in a row that halve the window */

/* A copy arrived deg_us of sending later than one that overtook it: the window covers that. */
static void reo_seen(struct mroce_qp *qp, __u64 deg_us)
{
	deg_us += deg_us / 4 + 1;
	if (deg_us > qp->attr.rto_high_us)
		deg_us = qp->attr.rto_high_us;
	if (deg_us > qp->reo_seen_us)
		qp->reo_seen_us = (__u32)deg_us;
	qp->reo_real = 0;
}

/*
 * A first transmission acknowledged on the slot and entropy value it went
 * on, behind a later copy of the same slot already known delivered: its
 * route reordered them by the time between their sendings.
 */
void mroce_reo_overtaken(struct mroce_qp *qp, const struct mroce_path *p,
			 const struct mroce_txpkt *rec)
{
	if (p->del_valid && (__s16)(rec->pseq - p->del_pseq) < 0 && p->del_sent_us > rec->sent_us)
		reo_seen(qp, p->del_sent_us - rec->sent_us);
}

/* A loss either rule declared on rec at psn (not yet resent: rec is as it went). */
void mroce_reo_declared(struct mroce_qp *qp, const struct mroce_txpkt *rec, __u32 psn)
{
	const struct mroce_path *p = &qp->paths[rec->path];
	struct mroce_suspect *s;

	if (rec->path >= qp->attr.paths || p->entropy != rec->entropy || rec->gbn)
		return;
	s = &qp->suspects[qp->suspect_next++ % MROCE_SUSPECTS];
	if (!s->valid)
		qp->nsuspects++;
	*s = (struct mroce_suspect){ .sent_us = rec->sent_us, .psn = psn, .pseq = rec->pseq,
				     .path = rec->path, .entropy = rec->entropy,
				     .charged = !rec->retx, .valid = true };
}

/* A remembered loss judged (or out of reach): forgotten. */
static void forget(struct mroce_qp *qp, struct mroce_suspect *s)
{
	s->valid = false;
	qp->nsuspects--;
}

/* The loss was spurious: take back what it charged to its route. */
static void uncharge(struct mroce_qp *qp, const struct mroce_suspect *s)
{
	struct mroce_path *p = &qp->paths[s->path];

	if (p->entropy != s->entropy)
		return;		/* retired since: history */
	if (s->charged && p->lost)
		p->lost--;
	if (p->bad && p->bad_sent_us == s->sent_us)
		p->bad = false;	/* it was not silent, only late */
}

/*
 * Proven spurious: learn how late it was, and take the loss back from its
 * route. A route not heard from before (its copies all declared lost
 * before their ACKs came: a slower route than the QP's first) takes the
 * time to this news as its RTT, so that its next copies wait for it.
 */
static void spurious(struct mroce_qp *qp, struct mroce_suspect *s, __u32 base, __u64 now)
{
	struct mroce_path *p = &qp->paths[s->path];

	forget(qp, s);
	reo_seen(qp, mroce_since(now, s->sent_us + base));
	qp->st.spurious_losses++;
	uncharge(qp, s);
	if (p->entropy == s->entropy && !p->srtt_us && now > s->sent_us)
		p->srtt_us = (__u32)mroce_since(now, s->sent_us);
}

/*
 * The PSN of a remembered loss acknowledged before it was resent: nothing
 * but a copy declared lost can have delivered it. This reaches a
 * reordering too deep for the per-path SACK's 256 places. (Once resent,
 * the news could be the resend's: a resend's ACK comes back at once, the
 * receiver holds none for a hole filled, so even an ACK sooner than the
 * QP's lowest RTT after it proves nothing.)
 */
void mroce_reo_acked(struct mroce_qp *qp, const struct mroce_txpkt *rec, __u32 psn, __u64 now)
{
	struct mroce_suspect *s = NULL;

	if (rec->state != PKT_LOST || !qp->nsuspects)
		return;

	/* of its copies declared lost, the newest: what delivered is at least that late */
	for (__u32 i = 0; i < MROCE_SUSPECTS; i++) {
		struct mroce_suspect *c = &qp->suspects[i];

		if (c->valid && c->psn == psn && c->sent_us <= rec->sent_us &&
		    (!s || c->sent_us > s->sent_us))
			s = c;
	}
	if (s) {
		const struct mroce_path *p = &qp->paths[s->path];

		spurious(qp, s, p->min_rtt_us ? p->min_rtt_us : qp->min_rtt_us, now);
	}
}

/*
 * An ACK's per-path SACK (already checked against what the slot sent):
 * which remembered losses on its slot arrived after all, and which were
 * real.
 */
void mroce_reo_check(struct mroce_qp *qp, const struct mroce_hdr *h, __u64 now)
{
	__u16 newest = (__u16)(h->ppsn_next - 1);
	const struct mroce_path *p = &qp->paths[h->ppath];
	__u32 base = p->min_rtt_us ? p->min_rtt_us : qp->min_rtt_us;

	for (__u32 i = 0; qp->nsuspects && i < MROCE_SUSPECTS; i++) {
		struct mroce_suspect *s = &qp->suspects[i];
		__u16 d = (__u16)(newest - s->pseq);

		if (!s->valid || s->path != h->ppath || d >= 0x8000)
			continue;
		if (d >= MROCE_PSACK_BITS) {
			forget(qp, s);	/* out of the record's reach: nothing learned */
		} else if (mroce_psack_has(h, d)) {
			spurious(qp, s, base, now);
		} else if (now > s->sent_us + qp->srtt_us + 2ULL * qp->reo_seen_us) {
			/* still missing an RTT and twice the window after it went: really lost */
			forget(qp, s);
			if (qp->reo_seen_us && ++qp->reo_real >= MROCE_REO_DECAY) {
				qp->reo_seen_us /= 2;
				qp->reo_real = 0;
			}
		}
	}
}
