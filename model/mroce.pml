/*
 * SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
 *
 * A Promela model of mroce's reliable transport (lib/tx.c, rx.c, place.c,
 * ack.c, loss.c, comp.c, qp.c:flush_all), checked with SPIN.
 * docs/model.md says what is modelled, what is abstracted, every property,
 * and the rule that keeps this file and lib/ in step.
 *
 * Two QPs run the same engine code: QP 0 is the requester (a send queue of
 * NW work requests), QP 1 the responder (a receive queue, READ-response jobs
 * sent in its own PSN space). Packets are counted, not bytes. PSNs on the
 * wire are 4 bits (modulo 16) and every rule compares them in serial
 * arithmetic, as the C does with 32 bits; the engine keeps them as counters
 * only so that ghost checks can name absolute PSNs.
 *
 * Receive-consuming messages (SENDs) go on stream 0; a WRITE may go on
 * stream 1. A SEND refused for want of a receive (RNR) restarts its stream
 * from it (ack.c stream_restart): its PSNs are given up (VOID records, sent
 * as VOID packets), it goes again with new PSNs in the stream's next epoch
 * after the RNR timer, one probe packet first; the receiver keeps one
 * attempt's bytes per message (place.c msg_slot).
 *
 * BUG_* switches put back the rule of the C code before a fix; the default
 * is the fixed rule. Workloads: -DWL=n (see init).
 */

/*
 * Configurations (workload, completion mode, dead peer) are chosen by init,
 * one per run of the search: -DWL=n [-DORDERED=o -DDEAD=d] pins one, -DCFG_<NAME>
 * picks a set (see init). Default: CFG_SAFETY, all of them.
 */
#ifndef LOSS
#define LOSS 1		/* packets the network may drop (either direction) */
#endif
#ifndef DUPS
#define DUPS 1		/* packets the network may duplicate */
#endif
#ifndef REORDER
#define REORDER 1	/* 1: the second-oldest packet of a direction may overtake the oldest */
#endif
#ifndef ORDERED
#define ORDERED 1	/* with -DWL: completion mode, 1 ordered, 0 unordered */
#endif
#ifndef DEAD
#define DEAD 0		/* with -DWL: 1 responder dead from the start; 2 it may die at any step */
#endif
#ifndef RETRY
#define RETRY 2		/* attr.retry_cnt */
#endif
#ifndef RNR_RETRY
#define RNR_RETRY 1	/* attr.rnr_retry; 7 waits for ever (ack.c nack_rnr, as ibverbs) */
#endif
#ifndef HOLDS
#define HOLDS 255	/* bound on RNR timer expiries (rnrwrite run: the stream is then held for ever) */
#endif
#ifndef JOBS
#define JOBS 1		/* responder READ-response job slots (MROCE_READ_JOBS) */
#endif
#ifndef TMAX
#define TMAX 24		/* bound on timer events (dead-peer property) */
#endif
#ifndef EARLY
#define EARLY 1		/* losses declared early, right or wrong (a path's sequence, RACK) */
#endif
#ifndef GRANTS
#define GRANTS 0	/* the receiver's rate grant changes the window (rate.c), so many times */
#endif
#define GRANT_MIN 2	/* the smallest window a grant leaves (cc.h: mroce_grant_window) */

#ifndef PSN0
#define PSN0 13		/* QP 0's first PSN (absolute; the wire carries it modulo 16) */
#endif
#ifndef PSN1
#define PSN1 14		/* QP 1's */
#endif

#define WIN 4		/* MROCE_SPAN_MAX: PSNs beyond snd_una per QP */
#ifndef PIPE
#define PIPE 3		/* the window (cwnd <= max_inflight < SPAN_MAX): records in flight */
#endif
#define CAP 8		/* packets one direction of the network holds */
#define NWMAX 3
#define NRMAX 2

/* serial arithmetic on 4-bit wire PSNs: a before b */
#define WIRE(x)		((x) & 15)
#define BEFORE(a, b)	(((WIRE(a) - WIRE(b)) & 15) >= 8)

/* opcodes (proto.h) */
#define OP_WRITE 1
#define OP_SEND 3
#define OP_RREQ 5
#define OP_RRESP 6
#define OP_VOID 7	/* gives up a PSN whose request was refused (RNR) */
#define OP_ACK 16
#define OP_NAK 17
/* NAK codes */
#define NAK_ACCESS 2
#define NAK_INVREQ 3
#define NAK_RNR 4
/* completion status */
#define ST_OK 0
#define ST_LOCLEN 1
#define ST_FLUSH 5
#define ST_RETRY 12
#define ST_RNR 13
#define ST_RACCESS 10
#define ST_RINV 9
/* record states */
#define FREE 0
#define INFL 1
#define SACKD 2
#define LOST 3
#define JOB 8		/* rec_wqe >= JOB: a READ job, not an SQ entry */
#define VOIDW 7		/* rec_wqe == VOIDW: PKT_VOID, a PSN given up, naming no request */
#define ISREQ(r)	(rec_wqe[r] < NWMAX)	/* PKT_REQ: the record's request is rec_wqe */
/* message slots */
#define MFREE 0
#define MACT 1
#define MWHOLE 2
/* place results */
#define PLACED 0
#define NOT_NOW 100
#define RNR 101

/* ---- the configuration of this run -------------------------------------- */
byte wl;			/* workload (init) */
bool ordered;			/* attr.order == MROCE_ORDERED */
byte dead;			/* 0 responder lives; 1 dead from the start; 2 may die any time */

#ifdef BUG_SEND_DONE_ON_SACK
#define SACK_DONE	1
#else
#define SACK_DONE	(!ordered)
#endif

/* ---- per-QP engine state ------------------------------------------------ */
bool up[2];			/* qp->state == RTS */
bool alive[2];			/* process running (the dead-peer case kills QP 1) */
bool dirty[2];			/* a progress round (tx + completions) is due */
bool fpend[2];			/* failed: flush_all still to run */
byte fwhy[2];
byte una[2], nxt[2];		/* snd_una, snd_nxt */
byte tmo[2];			/* timeouts since progress */
/*
 * QP 0's stream 0, the one whose messages take receives (struct
 * mroce_stream, sending half): restarts so far (its epoch), held for the RNR
 * timer, then probing (one packet until one is taken). Only QP 0 sends
 * receive-consuming messages, and only on stream 0; other streams carry
 * only requests that are never refused for want of a receive, so they have
 * no such state.
 */
byte sep;			/* st->epoch */
bool shold;			/* now < st->hold_until_us */
bool sprobing, sprobe_sent;	/* st->probing, st->probe_sent */
byte sprobe_psn;		/* st->probe_psn */
byte rnrwaits;			/* ghost: RNR timer periods (stream 0's holds ended) so far */
/*
 * The stream-failure rule (ack.c stream_fail): a request out of RNR retries
 * fails its stream alone when the QP has more than one (nstr, attr.streams:
 * 2 in wl 2 and 10, else 1, an ibverbs RC QP, which fails whole). The
 * request carries the error, the stream's later requests not yet started
 * are flushed (wserr: a status of the stream's, not the QP's), the stream
 * is held no more, and the QP goes on.
 */
byte nstr = 1;			/* attr.streams */
bool wserr[NWMAX];		/* the request's status is its stream's failure (swqe stream_err) */
byte serr_str;			/* ghost: streams with a failure of their own reported */
/*
 * rec_retx: the record's resends after a timer declared it lost, which
 * retry_cnt bounds (qp.h's rec->tmo). rec_early: its current LOST was
 * declared early (a path's sequence or RACK: loss.c), not by a timer, so
 * its resend is not a timer's retry (qp.h's rec->timer_lost clear).
 */
byte rec_st[16], rec_wqe[16], rec_off[16], rec_retx[16];
bool rec_gbn[16], rec_early[16];
byte rec_ga[8];			/* ghost, QP 0: the attempt (epoch) of its request it was sent in */
#define R(q, p)	((q) * 8 + ((p) & 7))	/* ring of 8 records >= WIN */
#define INF1(i)	(rec_st[i] == INFL -> 1 : 0)
/* the pipe (cc.h, mroce_window_open): records sent, neither known delivered nor lost */
#define INFLIGHT(q)	(INF1((q)*8) + INF1((q)*8+1) + INF1((q)*8+2) + INF1((q)*8+3) + \
			 INF1((q)*8+4) + INF1((q)*8+5) + INF1((q)*8+6) + INF1((q)*8+7))

/* receive window of each QP (for the peer's PSN space) */
byte rbase[2];
int rbits[2];			/* bit WIRE(psn): placed, beyond base */
int gplaced[2];			/* ghost: absolute PSNs ever placed */

/* QP 0's send queue */
byte NW;
byte wop[NWMAX], wlen[NWMAX], wmsn[NWMAX];
byte wstr[NWMAX];		/* its stream (mroce_post_send_on): 0, or 1 for a WRITE of another */
byte wep[NWMAX];		/* its attempt, sent as deth.epoch (w->epoch) */
byte wgm[NWMAX];		/* ghost: offsets acknowledged in its current attempt */
bool wbad[NWMAX];
byte wemit[NWMAX], wacked[NWMAX], wfirst[NWMAX];
bool wdone[NWMAX], wrep[NWMAX];
byte wst[NWMAX];
byte rdbits[NWMAX];		/* READ: response packets placed */
bool rdseen[NWMAX];
byte rdto[NWMAX];		/* READ: response timeouts since response progress */
bool rereq[NWMAX];		/* READ: re-request of the missing range due */
byte wrnr[NWMAX];		/* RNR waits the request was charged (swqe rnr_waits) */
byte wrnr0[NWMAX];		/* ghost: rnrwaits when it was first charged */
byte rdreq[NWMAX];		/* READ: PSN of its latest request packet */
byte sq_head, sq_next;

/* QP 1's receive queue */
byte NR, NRPOST;		/* receives the application posts; posted at start */
byte rq_head, rq_tail;
byte rlen[NRMAX];
bool rrep[NRMAX];
byte mst[NRMAX], mgot[NRMAX], mlen[NRMAX], mmax[NRMAX];
byte mep[NRMAX];		/* the attempt its bytes are from (msgslot epoch) */
byte mgm[NRMAX];		/* ghost: offsets placed in it */
bool lenerr;			/* a length error waits for its turn (fix of defect 8) */
byte lenerr_msn, lenerr_psn;

/* QP 1's READ jobs */
bool jused[JOBS];
byte jmsn[JOBS], jbase[JOBS], jlen[JOBS], jtot[JOBS], jemit[JOBS], jacked[JOBS];

/* ---- ghosts for the properties ------------------------------------------ */
bool scomp[NWMAX];
byte scst[NWMAX];
bool rcomp[NRMAX];
byte rcst[NRMAX];
bool send_ok[NRMAX];
byte r_next;
bool s_err, r_err;
byte ntimer;

/* ---- the network: per direction (sender's QP number) a FIFO list that
 * may lose, duplicate and let the second-oldest packet overtake ---------- */
typedef Pkt {
	byte op; byte psn; byte g; byte msn; byte off; byte ln;
	byte cum; byte gc; byte sack; byte code; bool bad;
	byte ep		/* SEND: its attempt (deth.epoch); RNR NAK: the refused copy's (naketh.epoch);
			 * -DASK, an ACK: an ask's number (bth.ts), 0 for none */
};
Pkt net[16];
byte nq[2];
byte loss_left = LOSS, dup_left = DUPS, early_left = EARLY, grant_left = GRANTS;
byte pipe[2] = PIPE;		/* the window: PIPE, or less while a rate grant caps it */
hidden Pkt tp, rp;		/* scratch: packet being built / being received */
#ifdef REO
/*
 * The learned reordering window (lib/reorder.c), in packets: an early loss
 * needs more than reo_win later records already acknowledged (overtaken by
 * more than the window). rec_cp: the record's copies sent so far (a data
 * packet carries its copy + 1 in `code`: the per-path SACK's pseq names the
 * exact copy); rec_sp: the copy an early loss declared lost, + 1 (0: none).
 * The receiver echoes, in each ACK's `g` and `code`, the newest data packet
 * that arrived and its copy (the per-path SACK of that packet's slot, which
 * marks duplicates too). garr: ghost, the copies of each record that arrived.
 */
byte reo_win[2];
byte rec_cp[16], rec_sp[16];
byte last_g[2], last_cp[2];
byte garr[16];
#endif
#ifdef ASK
/*
 * Asking before resending (loss.c "Asks", -DASK): an RTO expiry among the
 * first ASKS of a silence sends an ask (an ACK whose ep is the ask's
 * number, its bth.ts) instead of declaring anything lost. The receiver answers at
 * once, and every ACK it sends from then on echoes the newest ask number it
 * took (ln), as every later ACK's ts_echo is at or after the ask's. An ACK
 * echoing the oldest ask out, or a later one, is its answer: a record that
 * was in flight when that ask went (rec_ask), is still in flight and not
 * acknowledged by the answer, is lost.
 */
#ifndef ASKS
#define ASKS 3		/* MROCE_ASK_RTOS */
#endif
bool ask_live[2];		/* qp->ask_live */
byte ask_first[2];		/* the oldest ask out's number (ask_ts) */
byte ask_no[2];			/* asks sent so far */
byte echo_no[2];		/* the newest ask number taken: what our ACKs echo */
bool rec_ask[16];		/* in flight when the oldest ask out went (sent before ask_sent_us) */
#endif
hidden byte h_i, h_j, h_k, h_p, h_res, h_why, h_q;
hidden byte h_b, h_prog;

inline net_put1(d)
{
	assert(nq[(d)] < CAP);	/* model bound, not a protocol property */
	h_k = (d) * CAP + nq[(d)];
	net[h_k].op = tp.op; net[h_k].psn = tp.psn; net[h_k].g = tp.g;
	net[h_k].msn = tp.msn; net[h_k].off = tp.off; net[h_k].ln = tp.ln;
	net[h_k].cum = tp.cum; net[h_k].gc = tp.gc; net[h_k].sack = tp.sack;
	net[h_k].code = tp.code; net[h_k].bad = tp.bad; net[h_k].ep = tp.ep;
	nq[(d)]++
}

/* mroce_emit -> mroce_dev_xmit: the wire may lose or duplicate it */
inline emit(d)
{
	if
	:: loss_left > 0 -> loss_left--
	:: true -> net_put1(d);
		if
		:: dup_left > 0 -> dup_left--; net_put1(d)
		:: true -> skip
		fi
	fi;
	tp.op = 0; tp.psn = 0; tp.g = 0; tp.msn = 0; tp.off = 0; tp.ln = 0;
	tp.cum = 0; tp.gc = 0; tp.sack = 0; tp.code = 0; tp.bad = 0; tp.ep = 0
}

/* take packet i of direction d into rp */
inline net_take(d, i)
{
	h_k = (d) * CAP + i;
	rp.op = net[h_k].op; rp.psn = net[h_k].psn; rp.g = net[h_k].g;
	rp.msn = net[h_k].msn; rp.off = net[h_k].off; rp.ln = net[h_k].ln;
	rp.cum = net[h_k].cum; rp.gc = net[h_k].gc; rp.sack = net[h_k].sack;
	rp.code = net[h_k].code; rp.bad = net[h_k].bad; rp.ep = net[h_k].ep;
	h_k = (d) * CAP + i;
	do
	:: h_k + 1 < (d) * CAP + nq[(d)] ->
		net[h_k].op = net[h_k + 1].op; net[h_k].psn = net[h_k + 1].psn;
		net[h_k].g = net[h_k + 1].g; net[h_k].msn = net[h_k + 1].msn;
		net[h_k].off = net[h_k + 1].off; net[h_k].ln = net[h_k + 1].ln;
		net[h_k].cum = net[h_k + 1].cum; net[h_k].gc = net[h_k + 1].gc;
		net[h_k].sack = net[h_k + 1].sack; net[h_k].code = net[h_k + 1].code;
		net[h_k].bad = net[h_k + 1].bad; net[h_k].ep = net[h_k + 1].ep; h_k++
	:: else -> break
	od;
	net[h_k].op = 0; net[h_k].psn = 0; net[h_k].g = 0; net[h_k].msn = 0;
	net[h_k].off = 0; net[h_k].ln = 0; net[h_k].cum = 0; net[h_k].gc = 0;
	net[h_k].sack = 0; net[h_k].code = 0; net[h_k].bad = 0; net[h_k].ep = 0;
	nq[(d)]--
}

/* ---- completions (ghost checks at the CQ push) ------------------------- */

/* ordered: every request posted before i on i's stream has its completion */
#define SPRIOR(i)	(((i) < 1 || scomp[0] || wstr[0] != wstr[i]) && \
			 ((i) < 2 || scomp[1] || wstr[1] != wstr[i]))

/* mroce_cq_push on QP 0's send CQ */
inline spush(i, st)
{
	assert(!scomp[i]);				/* P1: at most one completion */
	scomp[i] = 1; scst[i] = st;
	assert(!ordered || SPRIOR(i));			/* P3: ordered, posting order in its stream */
	/* P11: a success is earned by its current attempt's packets, each one acknowledged
	 * (a PSN given up, VOID, completes nothing) */
	assert(st != ST_OK || wop[i] == OP_RREQ || wgm[i] == (1 << wlen[i]) - 1);
	if
	:: s_err -> assert(st == ST_FLUSH || (st == ST_OK && wdone[i]))	/* P4 */
	:: else -> skip
	fi;
	/* P12: ordered, after its stream's failure a request of that stream is flushed,
	 * or was already on the wire and done; a stream fails alone only in a QP of several */
	assert(!ordered || !((serr_str >> wstr[i]) & 1) || st == ST_FLUSH || (st == ST_OK && wdone[i]));
	assert(!wserr[i] || (nstr > 1 && st != ST_OK));
	if
	:: st != ST_OK && st != ST_FLUSH && !wserr[i] -> s_err = 1
	:: st != ST_OK && st != ST_FLUSH && wserr[i] -> serr_str = serr_str | (1 << wstr[i])
	:: else -> skip
	fi;
	if
	:: st == ST_OK && wop[i] == OP_SEND ->
		send_ok[wmsn[i]] = 1;
		assert(!(rcomp[wmsn[i]] && rcst[wmsn[i]] != ST_OK))	/* P2 */
	:: else -> skip
	fi
}

/* mroce_cq_push on QP 1's receive CQ */
inline rpush(k, st)
{
	assert(!rcomp[k]);				/* P1 */
	rcomp[k] = 1; rcst[k] = st;
	assert(!ordered || k == r_next);		/* P3 */
	r_next = k + 1;
	if
	:: r_err -> assert(st == ST_FLUSH)		/* P4 */
	:: else -> skip
	fi;
	if
	:: st != ST_OK && st != ST_FLUSH -> r_err = 1
	:: else -> skip
	fi;
	/* P10: a receive completes with every packet of its message, each placed once */
	assert(st != ST_OK || mgm[k] == (1 << mlen[k]) - 1);
	assert(st == ST_OK || !send_ok[k])		/* P2 */
}

/* qp.c: flush_all (flush_sq, flush_rq) */
inline flush_all(q, why)
{
	if
	:: q == 0 ->
		h_why = why;
		h_i = sq_head;
		do
		:: h_i < NW -> if :: wdone[h_i] && wst[h_i] != ST_OK && !wserr[h_i] -> h_why = ST_FLUSH :: else -> skip fi; h_i++
		:: else -> break
		od;
		do
		:: sq_head < NW ->
			if
			:: wrep[sq_head] -> skip
			:: !wrep[sq_head] && wdone[sq_head] -> spush(sq_head, wst[sq_head]); wrep[sq_head] = 1
			:: !wrep[sq_head] && !wdone[sq_head] -> spush(sq_head, h_why); wrep[sq_head] = 1; h_why = ST_FLUSH
			fi;
			sq_head++
		:: else -> break
		od;
		sq_next = NW
	:: else ->
		do
		:: rq_head < rq_tail ->
			if
			:: !rrep[rq_head] -> rpush(rq_head, ST_FLUSH); rrep[rq_head] = 1
			:: else -> skip
			fi;
			rq_head++
		:: else -> break
		od
	fi
}

/*
 * qp.c: mroce_qp_fail. The QP stops at once; its completions (flush_all)
 * are pushed by the QP's next step, before anything else can read its CQs
 * (one expansion of flush_all keeps pan small).
 */
inline qp_fail(q, why)
{
	if
	:: up[q] ->
		up[q] = 0; fwhy[q] = why; fpend[q] = 1;
		if
		:: q == 0 -> sq_next = NW
		:: else -> skip
		fi;
		if
		:: q == 1 -> h_j = 0;
			do
			:: h_j < JOBS -> jused[h_j] = 0; jmsn[h_j] = 0; jbase[h_j] = 0; jlen[h_j] = 0;
				jtot[h_j] = 0; jemit[h_j] = 0; jacked[h_j] = 0; h_j++
			:: else -> break
			od
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* tx.c: mroce_fail_wqe_of. h_q = record index */
inline fail_wqe_of(q, rec, st)
{
	if
	:: q == 0 && ISREQ(rec) ->
		/* P7: an error is never charged to a request already finished */
		assert(!wdone[rec_wqe[rec]]);
		wdone[rec_wqe[rec]] = 1; wst[rec_wqe[rec]] = st
	:: else -> skip
	fi;
	qp_fail(q, st)
}

/* the oldest unfinished request fails (fixes of defects 3 and 4) */
inline fail_oldest(st)
{
	h_i = sq_head;
	do
	:: h_i < NW && wdone[h_i] -> h_i++
	:: else -> break
	od;
	if
	:: h_i < NW -> wdone[h_i] = 1; wst[h_i] = st
	:: else -> skip
	fi;
	qp_fail(0, st)
}

/* comp.c: mroce_read_maybe_done */
inline read_maybe_done(i)
{
	if
	:: !wdone[i] && rdseen[i] && rdbits[i] == (1 << wlen[i]) - 1 && wacked[i] ->
		wdone[i] = 1; wst[i] = ST_OK
	:: else -> skip
	fi
}

/* ack.c: mroce_pkt_acked; by_cum: the cumulative PSN passed it */
inline pkt_acked(q, rec, by_cum)
{
	rec_st[rec] = SACKD;
	if
	:: rec_wqe[rec] >= JOB ->
		h_j = rec_wqe[rec] - JOB;
		jacked[h_j]++;
		if
		:: jacked[h_j] == jlen[h_j] -> jused[h_j] = 0; jmsn[h_j] = 0; jbase[h_j] = 0;
			jlen[h_j] = 0; jtot[h_j] = 0; jemit[h_j] = 0; jacked[h_j] = 0
		:: else -> skip
		fi
	:: rec_wqe[rec] == VOIDW -> skip	/* a PSN given up: it names no request */
	:: ISREQ(rec) ->
		h_i = rec_wqe[rec];
		if	/* the peer took the restarted stream's probe: the stream goes on */
		:: wstr[h_i] == 0 && sprobing && sprobe_sent && rec == R(0, sprobe_psn) -> sprobing = 0
		:: else -> skip
		fi;
		if
		:: wop[h_i] == OP_RREQ -> wacked[h_i] = 1; read_maybe_done(h_i)
		:: else ->
			wacked[h_i]++;
			if	/* ghost: a packet of the request's current attempt */
			:: rec_ga[rec] == wep[h_i] -> wgm[h_i] = wgm[h_i] | (1 << rec_off[rec])
			:: else -> skip
			fi;
			/* (ordered) a receive-consuming message is done only when the
			 * cumulative ACK passes it */
			if
			:: wacked[h_i] == wlen[h_i] && !wdone[h_i] && (wop[h_i] != OP_SEND || by_cum || SACK_DONE) ->
				wdone[h_i] = 1; wst[h_i] = ST_OK
			:: else -> skip
			fi
		fi
	fi
}

/* ---- transmit (tx.c) ---------------------------------------------------- */

/* tx.c: send_psn. Builds tp from the record of PSN p and emits it. */
inline send_psn(q, p)
{
	h_q = R(q, p);
#ifdef ASK
	rec_ask[h_q] = 0;	/* sent after the ask: its answer does not judge this copy */
#endif
	tp.psn = WIRE(p); tp.g = p;
#ifdef REO
	tp.code = rec_cp[h_q] + 1; rec_cp[h_q]++
#endif
	if
	:: rec_wqe[h_q] >= JOB ->
		h_j = rec_wqe[h_q] - JOB;
		tp.op = OP_RRESP; tp.msn = jmsn[h_j]; tp.off = rec_off[h_q]; tp.ln = jtot[h_j]
	:: rec_wqe[h_q] == VOIDW -> tp.op = OP_VOID	/* carries nothing */
	:: ISREQ(h_q) ->
		h_i = rec_wqe[h_q];
		tp.op = wop[h_i]; tp.msn = wmsn[h_i]; tp.off = rec_off[h_q]; tp.ln = wlen[h_i];
		tp.bad = wbad[h_i]; tp.ep = wep[h_i]
	fi;
	emit(q)
}

/* READs whose request went out and that are not finished */
inline reads_out(n)
{
	n = 0; h_j = 0;
	do
	:: h_j < NW -> if :: wop[h_j] == OP_RREQ && wemit[h_j] && !wdone[h_j] -> n++ :: else -> skip fi; h_j++
	:: else -> break
	od
}

/*
 * tx.c: stream_held. A stream restarted by an RNR (ack.c stream_restart)
 * sends nothing new until its RNR timer ends, then one packet, the probe,
 * until the peer takes one of its packets. Only stream 0 is ever refused.
 */
#define HELD(i)		(wstr[i] == 0 && (shold || (sprobing && sprobe_sent)))

/*
 * tx.c: mroce_next_new. Sets h_i (wqe), h_p (offset); h_b false if nothing.
 */
inline next_new(q)
{
	h_b = 0;
	if
	:: q == 1 ->
		h_j = 0;
		do
		:: h_j < JOBS && jused[h_j] && jemit[h_j] < jlen[h_j] ->
			h_i = JOB + h_j; h_p = jbase[h_j] + jemit[h_j]; h_b = 1; break
		:: h_j < JOBS && !(jused[h_j] && jemit[h_j] < jlen[h_j]) -> h_j++
		:: else -> break
		od
	:: else ->
#ifndef BUG_READ_NO_TIMER
		/* a re-request of a READ's missing response range */
		h_j = 0;
		do
		:: h_j < NW && rereq[h_j] ->
			h_i = h_j; h_p = 0;
			do
			:: h_p < wlen[h_j] && (rdbits[h_j] >> h_p) & 1 -> h_p++
			:: else -> break
			od;
			h_b = 1; break
		:: h_j < NW && !rereq[h_j] -> h_j++
		:: else -> break
		od;
#endif
		h_k = sq_next;
		do
		:: !h_b && h_k < NW ->
			if
			:: wdone[h_k] || wemit[h_k] == (wop[h_k] == OP_RREQ -> 1 : wlen[h_k]) ->
				if :: h_k == sq_next -> sq_next++ :: else -> skip fi;
				h_k++
			:: !(wdone[h_k] || wemit[h_k] == (wop[h_k] == OP_RREQ -> 1 : wlen[h_k])) && HELD(h_k) ->
				h_k++	/* its stream waits; the others go on */
			:: else ->
#ifndef BUG_READ_SLOTS
				/* the responder's READ slots, negotiated: at most JOBS READs out */
				if
				:: wop[h_k] == OP_RREQ -> reads_out(h_res)
				:: else -> h_res = 0
				fi;
				if
				:: wop[h_k] == OP_RREQ && h_res >= JOBS -> break
				:: else -> skip
				fi;
#endif
				h_i = h_k;
				h_p = (wop[h_k] == OP_RREQ -> 0 : wemit[h_k]);
				h_b = 1
			fi
		:: else -> break
		od
	fi
}

/*
 * An early loss's resend is not a timer's retry (tx.c: rec->tmo counts only
 * timer_lost copies). BUG_EARLY_COUNTS: it is, so a packet the path rule
 * (or RACK) took for lost while it only lagged, and then one real loss,
 * exhaust retry_cnt = 2 on a healthy link.
 */
#ifdef BUG_EARLY_COUNTS
#define EARLY_FREE(i)	0
#else
#define EARLY_FREE(i)	rec_early[i]
#endif

/*
 * BUG_RNR_HOLDS_QP: the old rule's QP-wide RNR hold: while the refused
 * stream waits for its RNR timer, the QP sends nothing (resends neither)
 * and its RTO waits too.
 */
#ifdef BUG_RNR_HOLDS_QP
#define QPHELD(q)	((q) == 0 && shold)
#else
#define QPHELD(q)	0
#endif

/* tx.c: mroce_qp_tx (tx_resend, then tx_new) */
inline qp_tx(q)
{
	if
	:: up[q] && !QPHELD(q) ->
		h_p = una[q];
		do
		:: up[q] && h_p != nxt[q] ->
			h_q = R(q, h_p);
			if
			:: rec_st[h_q] == LOST && !rec_gbn[h_q] && !EARLY_FREE(h_q) && rec_retx[h_q] >= RETRY ->
				fail_wqe_of(q, h_q, ST_RETRY)
			:: rec_st[h_q] == LOST && !(!rec_gbn[h_q] && !EARLY_FREE(h_q) && rec_retx[h_q] >= RETRY) ->
				send_psn(q, h_p);
				h_q = R(q, h_p);
				if :: !rec_gbn[h_q] && !EARLY_FREE(h_q) -> rec_retx[h_q]++ :: else -> skip fi;
				rec_gbn[h_q] = 0; rec_early[h_q] = 0; rec_st[h_q] = INFL
			:: else -> skip
			fi;
			h_p++
		:: else -> break
		od;
		do
		:: up[q] && nxt[q] - una[q] < WIN && INFLIGHT(q) < pipe[q] ->
			next_new(q);
			if
			:: !h_b -> break
			:: else ->
				h_q = R(q, nxt[q]);
				rec_st[h_q] = INFL; rec_wqe[h_q] = h_i; rec_off[h_q] = h_p;
				rec_retx[h_q] = 0; rec_gbn[h_q] = 0; rec_early[h_q] = 0;
				if
				:: h_i >= JOB -> jemit[h_i - JOB]++
				:: else ->
					rec_ga[h_q] = wep[h_i];
					if
					:: rereq[h_i] -> rereq[h_i] = 0
					:: else ->
						if :: !wemit[h_i] -> wfirst[h_i] = nxt[q] :: else -> skip fi;
						wemit[h_i]++
					fi;
					if :: wop[h_i] == OP_RREQ -> rdreq[h_i] = nxt[q] :: else -> skip fi;
					if	/* tx_account_new: the stream waits for this one's verdict */
					:: wstr[h_i] == 0 && sprobing && !sprobe_sent ->
						sprobe_sent = 1; sprobe_psn = WIRE(nxt[q])
					:: else -> skip
					fi
				fi;
				send_psn(q, nxt[q]);
				nxt[q]++
			fi
		:: else -> break
		od
	:: else -> skip
	fi
}

/*
 * tx.c: mroce_send_ack: cumulative PSN and SACK bits for base+1..base+3,
 * the whole window beyond the base, as the implementation's SACK is.
 */
inline send_ack(q)
{
	tp.op = OP_ACK; tp.cum = WIRE(rbase[q]); tp.gc = rbase[q];
#ifdef REO
	tp.g = last_g[q]; tp.code = last_cp[q];
#endif
	tp.sack = ((rbits[q] >> WIRE(rbase[q] + 1)) & 1) |
		  (((rbits[q] >> WIRE(rbase[q] + 2)) & 1) << 1) |
		  (((rbits[q] >> WIRE(rbase[q] + 3)) & 1) << 2);
#ifdef ASK
	tp.ln = echo_no[q];
#endif
	emit(q)
}

inline send_nack(q, code_, psn_, g_, msn_)
{
	tp.op = OP_NAK; tp.code = code_; tp.psn = psn_; tp.g = g_; tp.msn = msn_;
	tp.ep = (code_ == NAK_RNR -> rp.ep : 0);	/* RNR: naketh.epoch, the refused copy's */
	emit(q)
}

/* ---- completions (comp.c) ----------------------------------------------- */

/*
 * comp.c: complete_sq_done. Ordered: in posting order within each stream
 * (h_b: the streams with a request not done yet); every posted entry is
 * looked at, also beyond sq_next (a restarted stream's rewound entry).
 */
inline complete_sq()
{
	h_i = sq_head; h_b = 0;
	do
	:: up[0] && h_i < NW ->
		if
		:: ordered && ((h_b >> wstr[h_i]) & 1) -> skip	/* after one of its stream not done */
		:: !(ordered && ((h_b >> wstr[h_i]) & 1)) ->
			if
			:: !wdone[h_i] -> h_b = h_b | (1 << wstr[h_i])
			:: wdone[h_i] && wrep[h_i] -> skip
			:: wdone[h_i] && !wrep[h_i] && wst[h_i] != ST_OK && !wserr[h_i] -> qp_fail(0, wst[h_i]); break
			/* its stream's failure: reported in the stream's order, the QP goes on */
			:: wdone[h_i] && !wrep[h_i] && wst[h_i] != ST_OK && wserr[h_i] -> spush(h_i, wst[h_i]); wrep[h_i] = 1
			:: wdone[h_i] && !wrep[h_i] && wst[h_i] == ST_OK -> spush(h_i, ST_OK); wrep[h_i] = 1
			fi
		fi;
		h_i++
	:: else -> break
	od;
	do
	:: sq_head < NW && wrep[sq_head] -> sq_head++
	:: else -> break
	od
}

inline complete_rq()
{
	do
	:: up[1] && rq_head < rq_tail ->
#ifndef BUG_RECV_ERR_EARLY
		if
		:: lenerr && lenerr_msn == rq_head ->
			/* its turn: the receiver sees the length error, the sender an invalid request */
			rpush(rq_head, ST_LOCLEN); rrep[rq_head] = 1;
			send_nack(1, NAK_INVREQ, WIRE(lenerr_psn), lenerr_psn, lenerr_msn);
			lenerr = 0;
			qp_fail(1, ST_FLUSH);
			break
		:: else -> skip
		fi;
#endif
		if
		:: !rrep[rq_head] && mst[rq_head] != MWHOLE -> break
		:: !rrep[rq_head] && mst[rq_head] == MWHOLE && ordered && !BEFORE(mmax[rq_head], rbase[1]) ->
			break
		:: !rrep[rq_head] && mst[rq_head] == MWHOLE && (!ordered || BEFORE(mmax[rq_head], rbase[1])) ->
			rpush(rq_head, ST_OK); rrep[rq_head] = 1
		:: rrep[rq_head] -> skip
		fi;
		mst[rq_head] = MFREE; mgot[rq_head] = 0; mlen[rq_head] = 0; mmax[rq_head] = 0;
		mep[rq_head] = 0; mgm[rq_head] = 0;
		rq_head++
	:: else -> break
	od
}

/* ---- receive: placement (place.c) --------------------------------------- */

inline place_write(q)
{
	if
	:: rp.bad -> h_res = NAK_ACCESS
	:: else -> h_res = PLACED
	fi
}

/*
 * place.c: msg_slot, then place_send. No receive posted for the message:
 * RNR (the PSN stays unmarked). Delivered already (reported, or its receive
 * recycled): MROCE_STALE, the PSN counts received, nothing is placed (as
 * PLACED here). A copy of an older attempt than the bytes kept: RNR too (its
 * sender gave that attempt up and answers with a VOID); of a newer one: the
 * slot starts over with it.
 */
inline place_send(q)
{
	h_k = rp.msn; h_res = PLACED;
	if
	:: h_k >= rq_tail -> h_res = RNR
#ifndef BUG_STALE_RNR
	:: h_k < rq_tail && (h_k < rq_head || rrep[h_k]) -> skip	/* MROCE_STALE */
#else
	:: h_k < rq_tail && (h_k < rq_head || rrep[h_k]) -> h_res = RNR	/* refused as not ready */
#endif
	:: h_k < rq_tail && !(h_k < rq_head || rrep[h_k]) ->
#ifndef BUG_NO_EPOCH
		if
		:: mst[h_k] != MFREE && rp.ep < mep[h_k] -> h_res = RNR	/* an older attempt */
		:: mst[h_k] != MFREE && rp.ep > mep[h_k] -> mst[h_k] = MFREE	/* a newer one */
		:: else -> skip
		fi;
#endif
		if
		:: h_res == RNR -> skip
		:: h_res != RNR ->
			if
			:: mst[h_k] == MFREE -> mst[h_k] = MACT; mlen[h_k] = rp.ln; mmax[h_k] = rp.psn;
				mgot[h_k] = 0; mep[h_k] = rp.ep; mgm[h_k] = 0
			:: else -> skip
			fi;
			if :: BEFORE(mmax[h_k], rp.psn) -> mmax[h_k] = rp.psn :: else -> skip fi;
			if
			:: rp.ln > rlen[h_k] ->
#ifdef BUG_RECV_ERR_EARLY
				/* the receive buffer is too small: its owner sees a length error now */
				if
				:: !rrep[h_k] -> rpush(h_k, ST_LOCLEN); rrep[h_k] = 1
				:: else -> skip
				fi;
				h_res = NAK_INVREQ
#else
				/* ... but only when it is next to complete (complete_rq) */
				if
				:: !lenerr -> lenerr = 1; lenerr_msn = h_k; lenerr_psn = rp.g; dirty[1] = 1
				:: else -> skip
				fi;
				h_res = NOT_NOW
#endif
			:: else ->
				/* P10: the bytes kept are of one attempt, each placed once */
				assert(rp.ep == mep[h_k] && !((mgm[h_k] >> rp.off) & 1));
				mgm[h_k] = mgm[h_k] | (1 << rp.off);
				mgot[h_k]++;
				if
				:: mgot[h_k] == mlen[h_k] && mst[h_k] == MACT ->
					mst[h_k] = MWHOLE;
					if
					:: !ordered -> rpush(h_k, ST_OK); rrep[h_k] = 1
					:: else -> skip
					fi
				:: else -> skip
				fi;
				h_res = PLACED
			fi
		fi
	fi
}

inline place_read_req(q)
{
	if
	:: rp.bad -> h_res = NAK_ACCESS
	:: else ->
		h_res = NOT_NOW;	/* no free job: dropped, unacknowledged */
#ifndef BUG_READ_SLOTS
		/*
		 * No free job although the requester keeps at most JOBS READs out:
		 * the oldest job's READ is complete there (its last ACK is late or
		 * lost), so the job is recycled and its records count as delivered.
		 */
		if
		:: jused[0] && (JOBS < 2 || jused[1]) ->
			assert(wdone[jmsn[0]]);		/* P9 */
			h_p = una[q];
			do
			:: h_p != nxt[q] ->
				h_k = R(q, h_p);
				if
				:: rec_wqe[h_k] == JOB && (rec_st[h_k] == INFL || rec_st[h_k] == LOST) ->
					rec_st[h_k] = SACKD
				:: else -> skip
				fi;
				h_p++
			:: else -> break
			od;
			jused[0] = 0; jmsn[0] = 0; jbase[0] = 0; jlen[0] = 0; jtot[0] = 0;
			jemit[0] = 0; jacked[0] = 0
		:: else -> skip
		fi;
#endif
		h_j = 0;
		do
		:: h_j < JOBS && !jused[h_j] ->
			jused[h_j] = 1; jmsn[h_j] = rp.msn; jbase[h_j] = rp.off;
			jlen[h_j] = rp.ln - rp.off; jtot[h_j] = rp.ln; jemit[h_j] = 0; jacked[h_j] = 0;
			h_res = PLACED; break
		:: h_j < JOBS && jused[h_j] -> h_j++
		:: else -> break
		od
	fi
}

inline place_read_resp(q)
{
	h_i = rp.msn;
	if
	:: h_i >= NW || h_i < sq_head || wop[h_i] != OP_RREQ || wdone[h_i] || rp.ln != wlen[h_i] ->
		h_res = NAK_INVREQ
	:: else ->
#ifndef BUG_READ_NO_TIMER
		if :: !((rdbits[h_i] >> rp.off) & 1) -> rdto[h_i] = 0 :: else -> skip fi;
#endif
		rdbits[h_i] = rdbits[h_i] | (1 << rp.off);
		rdseen[h_i] = 1;
		/* a response proves the request arrived */
#ifdef BUG_READ_ACK_SACKED
		h_p = wfirst[h_i];
#else
		h_p = rdreq[h_i];
#endif
		h_q = R(0, h_p);
		if
		:: !wacked[h_i] && wemit[h_i] && !BEFORE(h_p, una[0]) && BEFORE(h_p, nxt[0]) &&
		   (rec_st[h_q] == INFL || rec_st[h_q] == LOST) && rec_wqe[h_q] == h_i ->
			pkt_acked(0, h_q, 0);
#ifndef BUG_READ_ACK_SACKED
			tmo[0] = 0;	/* progress */
#endif
			skip
#ifndef BUG_READ_ACK_SACKED
		:: wacked[h_i] && !BEFORE(h_p, una[0]) && BEFORE(h_p, nxt[0]) &&
		   (rec_st[h_q] == INFL || rec_st[h_q] == LOST) && rec_wqe[h_q] == h_i ->
			rec_st[h_q] = SACKD	/* a re-request, answered */
#endif
		:: else -> skip
		fi;
		h_i = rp.msn;
		read_maybe_done(h_i);
		h_res = PLACED
	fi
}

/* ---- receive: acknowledgements (ack.c) ---------------------------------- */

#ifdef REO
/*
 * reorder.c: mroce_reo_check. The ACK's per-path SACK shows the copy an
 * early loss declared lost arrived after all: the window grows (to at most
 * PIPE - 1 packets, all that can overtake one in flight). BUG_REO_ANY_COPY:
 * any copy of the record counts, as an acknowledgement of its PSN would
 * (a resend's copy may be the one that arrived).
 */
#ifdef BUG_REO_ANY_COPY
#define REO_PROVEN(r)	(rec_sp[r] && rp.code)
#else
#define REO_PROVEN(r)	(rec_sp[r] && rp.code == rec_sp[r])
#endif
inline reo_check(q)
{
	if
	:: !BEFORE(rp.g, una[q]) && BEFORE(rp.g, nxt[q]) && REO_PROVEN(R(q, rp.g)) ->
		/* R1: a loss is proven spurious only if the copy declared lost did arrive */
		assert((garr[R(q, rp.g)] >> (rec_sp[R(q, rp.g)] - 1)) & 1);
		rec_sp[R(q, rp.g)] = 0;
		if :: reo_win[q] < PIPE - 1 -> reo_win[q]++ :: else -> skip fi
	:: else -> skip
	fi
}
#endif

#ifdef ASK
/* loss.c mroce_ask_heard: an ACK echoing the oldest ask out, or a later one, decides */
inline ask_heard(q)
{
	if
	:: ask_live[q] && rp.ln != 0 && rp.ln >= ask_first[q] ->
		ask_live[q] = 0;
		h_p = una[q];
		do
		:: h_p != nxt[q] ->
			h_q = R(q, h_p);
#ifndef BUG_ASK_NO_VERDICT
			if
			:: rec_ask[h_q] && rec_st[h_q] == INFL -> rec_st[h_q] = LOST; dirty[q] = 1
			:: else -> skip
			fi;
#endif
			rec_ask[h_q] = 0;
			h_p++
		:: else -> break
		od
	:: else -> skip
	fi
}

/* loss.c ask: an ACK of ours carrying the ask; the oldest ask out is what answers are judged by */
inline ask(q)
{
	ask_no[q]++;
	if
	:: !ask_live[q] ->
		ask_live[q] = 1; ask_first[q] = ask_no[q];
		h_p = una[q];
		do
		:: h_p != nxt[q] -> rec_ask[R(q, h_p)] = (rec_st[R(q, h_p)] == INFL); h_p++
		:: else -> break
		od
	:: else -> skip
	fi;
	tp.ep = ask_no[q];	/* an ACK of ours, with the ask (ACK_REQ) */
	send_ack(q)
}
#endif

inline handle_ack(q)
{
	if
	:: BEFORE(nxt[q], rp.cum) -> skip	/* acknowledges PSNs never sent */
	:: else ->
#ifdef REO
		reo_check(q);
#endif
		h_prog = 0;
		do
		:: BEFORE(una[q], rp.cum) ->
			h_q = R(q, una[q]);
			if
			:: rec_st[h_q] == INFL || rec_st[h_q] == LOST -> pkt_acked(q, h_q, 1)
			:: else -> skip
			fi;
#ifndef BUG_SEND_DONE_ON_SACK
			h_q = R(q, una[q]);
			if
			:: ordered && q == 0 && ISREQ(h_q) && wop[rec_wqe[h_q]] == OP_SEND &&
			   rec_off[h_q] + 1 == wlen[rec_wqe[h_q]] && wacked[rec_wqe[h_q]] == wlen[rec_wqe[h_q]] &&
			   !wdone[rec_wqe[h_q]] ->
				wdone[rec_wqe[h_q]] = 1; wst[rec_wqe[h_q]] = ST_OK
			:: else -> skip
			fi;
#endif
			rec_st[h_q] = FREE; rec_wqe[h_q] = 0; rec_off[h_q] = 0; rec_retx[h_q] = 0;
			rec_gbn[h_q] = 0; rec_early[h_q] = 0;
#ifdef ASK
			rec_ask[h_q] = 0;
#endif
#ifdef REO
			rec_cp[h_q] = 0; rec_sp[h_q] = 0; garr[h_q] = 0;
#endif
			if :: q == 0 -> rec_ga[h_q] = 0 :: else -> skip fi;
			una[q]++; h_prog = 1
		:: else -> break
		od;
		/* P6: the cumulative ACK never passes what the receiver placed */
		assert(una[q] <= rbase[1 - q]);
		h_k = 0;
		do
		:: h_k < 3 ->
			h_p = rp.cum + 1 + h_k;
			if
			:: !((rp.sack >> h_k) & 1) -> skip
			:: (rp.sack >> h_k) & 1 && !BEFORE(h_p, nxt[q]) -> break
			:: (rp.sack >> h_k) & 1 && BEFORE(h_p, nxt[q]) && BEFORE(h_p, una[q]) -> skip
			:: (rp.sack >> h_k) & 1 && BEFORE(h_p, nxt[q]) && !BEFORE(h_p, una[q]) ->
				h_q = R(q, h_p);
				if
				:: rec_st[h_q] == INFL || rec_st[h_q] == LOST -> pkt_acked(q, h_q, 0); h_prog = 1
				:: else -> skip
				fi
			fi;
			h_k++
		:: else -> break
		od;
		if
		:: h_prog -> tmo[q] = 0
		:: else -> skip
		fi;
#ifdef ASK
		ask_heard(q);
#endif
		skip
	fi
}

/* a receive-consuming request of stream 0, unfinished, message `from` or later */
#define RESTARTS(i, from)	(wstr[i] == 0 && !wdone[i] && wop[i] == OP_SEND && wmsn[i] >= (from))

/*
 * ack.c: stream_restart. The peer refused message `from` of stream 0 for
 * want of a receive: it and the stream's later messages start again. Their
 * records give up their PSNs (PKT_VOID, length 0: a lost or refused one is
 * resent as a VOID); the requests are rewound and go again in the stream's
 * next epoch, with new PSNs, after the RNR timer, the probe first.
 * BUG_VOID_NOT_SENT: the records stay the requests', so a lost or refused
 * one is resent by the loss recovery as data, with the new attempt's header.
 */
inline stream_restart(from)
{
	sep++;
	assert(sep < 8);	/* model bound: restarts are bounded by rnr_retry (or HOLDS) */
	shold = 1; sprobing = 1; sprobe_sent = 0; sprobe_psn = 0;
	h_p = una[0];
	do
	:: h_p != nxt[0] ->
		h_k = R(0, h_p);
		if
		:: rec_st[h_k] != FREE && ISREQ(h_k) && RESTARTS(rec_wqe[h_k], from) ->
#ifndef BUG_VOID_NOT_SENT
			rec_wqe[h_k] = VOIDW; rec_off[h_k] = 0; rec_ga[h_k] = 0
#else
			skip
#endif
		:: else -> skip
		fi;
		h_p++
	:: else -> break
	od;
	h_j = sq_head;
	do
	:: h_j < NW ->
		if
		:: RESTARTS(h_j, from) ->
			wemit[h_j] = 0; wacked[h_j] = 0; wep[h_j] = sep; wgm[h_j] = 0;
			if :: h_j < sq_next -> sq_next = h_j :: else -> skip fi
		:: else -> skip
		fi;
		h_j++
	:: else -> break
	od
}

/*
 * ack.c: stream_fail. Request i (already carrying ST_RNR) fails its stream
 * alone: the stream's later requests not yet started, or failed already
 * with it and not yet reported (a later message out of retries first), are
 * flushed; the stream is held no more. BUG_RNR_FAILS_QP: the old rule, the
 * QP fails.
 */
#ifdef BUG_RNR_FAILS_QP
#define STREAM_ALONE	0
#else
#define STREAM_ALONE	(nstr > 1)
#endif
inline stream_fail(i)
{
	wserr[i] = 1;
	shold = 0; sprobing = 0; sprobe_sent = 0; sprobe_psn = 0;
	h_j = i + 1;
	do
	:: h_j < NW ->
		if
		:: wstr[h_j] == wstr[i] && !wrep[h_j] && ((!wdone[h_j] && !wemit[h_j]) || (wdone[h_j] && wserr[h_j])) ->
			wdone[h_j] = 1; wst[h_j] = ST_FLUSH; wserr[h_j] = 1
		:: else -> skip
		fi;
		h_j++
	:: else -> break
	od
}

/*
 * A request charged with an RNR wait (swqe rnr_waits); past rnr_retry (7:
 * never) it fails with RNR retries exceeded: its stream (stream_fail), or
 * the QP if it has one stream.
 */
inline rnr_charge(i)
{
	if
	:: RNR_RETRY != 7 ->
		if :: !wrnr[i] -> wrnr0[i] = rnrwaits :: else -> skip fi;
		wrnr[i]++;
		if
		:: wrnr[i] > RNR_RETRY ->
			/* P8: rnr_retry RNR timer periods passed since its first wait */
			assert(rnrwaits - wrnr0[i] >= RNR_RETRY);
			wdone[i] = 1; wst[i] = ST_RNR;
			if
			:: STREAM_ALONE -> stream_fail(i)
			:: else -> qp_fail(0, ST_RNR)
			fi
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* ack.c: stream_request. h_i = the unfinished request that is message msn of stream 0, or NW */
inline stream_request(msn_)
{
	h_i = 0;
	do
	:: h_i < NW && !(wstr[h_i] == 0 && wop[h_i] == OP_SEND && wmsn[h_i] == (msn_) && !wdone[h_i]) -> h_i++
	:: else -> break
	od
}

/* an error NACK: of a PSN given up (VOID), it names its message by (stream, msn) */
inline nack_error(q, st)
{
	if
	:: q == 0 && rec_wqe[h_q] == VOIDW ->
		stream_request(rp.msn);
		if
		:: h_i < NW -> assert(!wdone[h_i]); wdone[h_i] = 1; wst[h_i] = st	/* P7 */
		:: else -> skip
		fi;
		qp_fail(0, st)
	:: else -> fail_wqe_of(q, h_q, st)
	fi
}

inline handle_nack(q)
{
	if
	:: BEFORE(rp.psn, una[q]) || !BEFORE(rp.psn, nxt[q]) -> skip	/* stale */
	:: else ->
		h_q = R(q, rp.psn);
		if
		:: rp.code == NAK_ACCESS -> nack_error(q, ST_RACCESS)
		:: rp.code == NAK_INVREQ -> nack_error(q, ST_RINV)
		:: rp.code == NAK_RNR && q == 0 ->
			/*
			 * ack.c nack_rnr. Of the current attempt at a message (the
			 * record is live and the NACK's stream, epoch and msn are its
			 * request's now): the stream restarts from it, and that is one
			 * RNR wait, charged to it. Every other packet of the stream in
			 * flight then is NACKed too, but finds its record given up:
			 * one wait counts once.
			 */
			h_i = rec_wqe[h_q];
#ifdef BUG_RNR_PER_PACKET
			h_b = (h_i == VOIDW);	/* a packet of the wait already counted */
#endif
			if
			:: h_i < NW && !wdone[h_i] && RESTARTS(h_i, 0) && wep[h_i] == rp.ep &&
			   wmsn[h_i] == rp.msn ->
				stream_restart(wmsn[h_i]);
				rnr_charge(h_i)
			:: else -> skip
			fi;
#ifdef BUG_RNR_PER_PACKET
			/* each NACKed packet a wait: the given-up PSN's message is charged again */
			if
			:: h_b -> stream_request(rp.msn);
				if :: h_i < NW -> rnr_charge(h_i) :: else -> skip fi
			:: else -> skip
			fi;
#endif
			/* of a PSN given up: refused, so not received: the VOID goes now */
			if
			:: up[0] && rec_wqe[h_q] == VOIDW && rec_st[h_q] == INFL -> rec_st[h_q] = LOST; rec_retx[h_q] = 0
			:: else -> skip
			fi
		:: else -> skip
		fi
	fi
}

/* rx.c: mroce_engine_rx for one packet rp arriving at QP q */
inline engine_rx(q)
{
	if
	:: rp.op == OP_ACK ->
		handle_ack(q);
#ifdef ASK
		if	/* an ask: our ACK at once, echoing it, as every ACK after it does (rx.c) */
		:: rp.ep != 0 ->
			if :: rp.ep > echo_no[q] -> echo_no[q] = rp.ep :: else -> skip fi;
			send_ack(q)
		:: else -> skip
		fi;
#endif
		skip
	:: rp.op == OP_NAK -> handle_nack(q)
	:: else ->
#ifdef REO
		last_g[q] = rp.g; last_cp[q] = rp.code;
		if	/* ghost: that copy of the sender's record arrived */
		:: !BEFORE(rp.g, una[1 - q]) && BEFORE(rp.g, nxt[1 - q]) ->
			garr[R(1 - q, rp.g)] = garr[R(1 - q, rp.g)] | (1 << (rp.code - 1))
		:: else -> skip
		fi;
#endif
		h_p = (rp.psn - WIRE(rbase[q])) & 15;
		if
		:: h_p >= 8 || (h_p < WIN && (rbits[q] >> rp.psn) & 1) ->
			send_ack(q)		/* duplicate: our ACK may have been lost */
		:: h_p >= WIN && h_p < 8 -> skip	/* out of window (NAK ignored by the sender) */
		:: h_p < WIN && !((rbits[q] >> rp.psn) & 1) ->
			if
			:: rp.op == OP_WRITE -> place_write(q)
			:: rp.op == OP_SEND -> place_send(q)
			:: rp.op == OP_RREQ -> place_read_req(q)
			:: rp.op == OP_RRESP -> place_read_resp(q)
			:: rp.op == OP_VOID -> h_res = PLACED	/* a PSN given up: marked, nothing placed */
			fi;
			if
			:: h_res == NOT_NOW -> skip
			:: h_res == RNR -> send_nack(q, NAK_RNR, rp.psn, rp.g, rp.msn)
			:: h_res != NOT_NOW && h_res != RNR && h_res > 0 ->
				/* refused for good: NACK it and stop this QP */
				send_nack(q, h_res, rp.psn, rp.g, rp.msn);
				qp_fail(q, ST_FLUSH)
			:: h_res == PLACED ->
				/* P5: no PSN placed twice */
				assert(rp.g < 31);	/* model bound: the ghost bitmask */
				assert(!((gplaced[q] >> rp.g) & 1));
				gplaced[q] = gplaced[q] | (1 << rp.g);
				rbits[q] = rbits[q] | (1 << rp.psn);
				do
				:: (rbits[q] >> WIRE(rbase[q])) & 1 ->
					rbits[q] = rbits[q] & ~(1 << WIRE(rbase[q])); rbase[q]++
				:: else -> break
				od;
				send_ack(q)
			fi
		fi
	fi
}

/* ---- timers, as events (loss.c) ----------------------------------------- */

/*
 * A timer of QP q may expire only once the network holds nothing (every
 * packet arrived or was lost) and q's own round ran: timeouts are longer
 * than any delay in the network. The peer may still hold work it has not
 * sent (a long READ response, a full window): that can take any number of
 * timer periods.
 */
#define QUIET(q)	(up[q] && alive[q] && !dirty[q] && nq[0] == 0 && nq[1] == 0)
#define ANYREC(q, s)	(rec_st[(q)*8] == s || rec_st[(q)*8+1] == s || rec_st[(q)*8+2] == s || \
			 rec_st[(q)*8+3] == s || rec_st[(q)*8+4] == s || rec_st[(q)*8+5] == s || \
			 rec_st[(q)*8+6] == s || rec_st[(q)*8+7] == s)
#ifdef BUG_READ_ACK_SACKED
#define RTO_DUE(q)	(QUIET(q) && !QPHELD(q) && una[q] != nxt[q])
#else
/*
 * A request proven delivered (SACKed, or answered) is acknowledged for the
 * timer; what still runs it is a record in flight, or (ordered) a SEND
 * whose packets are all SACKed but that waits for the cumulative ACK.
 */
#ifndef BUG_SEND_DONE_ON_SACK
#define SW(i)		(ordered && (i) < NW && wop[i] == OP_SEND && wacked[i] == wlen[i] && !wdone[i])
#else
#define SW(i)		0
#endif
#define RTO_DUE(q)	(QUIET(q) && !QPHELD(q) && una[q] != nxt[q] && \
			 (ANYREC(q, INFL) || ((q) == 0 && (SW(0) || SW(1) || SW(2)))))
#endif

inline rto_fire(q)
{
	ntimer++;
	assert(ntimer <= TMAX);			/* bounded number of timer events */
	tmo[q]++;
	if
	:: tmo[q] > RETRY ->
#ifdef BUG_READ_ACK_SACKED
		fail_wqe_of(q, R(q, una[q]), ST_RETRY)
#else
		/* the oldest record not yet acknowledged fails, never a finished one */
		h_p = una[q];
		do
		:: h_p != nxt[q] && rec_st[R(q, h_p)] != INFL -> h_p++
		:: else -> break
		od;
		if
		:: h_p != nxt[q] -> fail_wqe_of(q, R(q, h_p), ST_RETRY)
		:: else -> fail_oldest(ST_RETRY)	/* a SEND waiting for the cumulative ACK */
		fi
#endif
#ifdef ASK
	/* a host that runs late, nothing lost lately: ask (or, when not so, the else below) */
	:: tmo[q] <= RETRY && tmo[q] <= ASKS -> ask(q); dirty[q] = 1;
#ifdef BUG_ASK_UNCOUNTED
		tmo[q]--	/* an ask taken for no expiry: a dead peer is asked for ever */
#endif
		skip
	:: tmo[q] <= RETRY ->
#else
	:: else ->
#endif
		h_b = 1;
		h_p = una[q];
		do
		:: h_p != nxt[q] ->
			h_q = R(q, h_p);
			if
			:: rec_st[h_q] == INFL -> rec_st[h_q] = LOST; rec_gbn[h_q] = !h_b; h_b = 0
			:: else -> skip
			fi;
			h_p++
		:: else -> break
		od;
#if !defined(BUG_READ_ACK_SACKED) && !defined(BUG_SEND_DONE_ON_SACK)
		/* nothing in flight: probe with the last packet of the oldest waiting SEND,
		 * a duplicate the receiver answers with its cumulative ACK */
		if
		:: h_b && q == 0 && ordered ->
			h_p = una[q];
			do
			:: h_p != nxt[q] && !(ISREQ(R(q, h_p)) && SW(rec_wqe[R(q, h_p)]) &&
			    rec_off[R(q, h_p)] + 1 == wlen[rec_wqe[R(q, h_p)]]) -> h_p++
			:: else -> break
			od;
			if
			:: h_p != nxt[q] -> send_psn(q, h_p)
			:: else -> skip
			fi
		:: else -> skip
		fi;
#endif
		dirty[q] = 1
	fi
}

/*
 * A loss declared early (loss.c: a packet 3 places later on the same path
 * arrived, by the sender's records or the receiver's per-path SACK, psack.c;
 * or RACK's order and time; or the tail loss probe, which resends the
 * newest record in flight, up to 4 times a silence): any record in flight, at any time,
 * right or wrong. Wrong means the path reordered more than the rules allow
 * (or a timing assumption failed): the packet is resent although it
 * arrives, and the receiver takes the copy as a duplicate. Not a timer's
 * verdict, so it does not count toward retry_cnt.
 */
#define EARLY_DUE(q)	(up[q] && alive[q] && early_left > 0 && ANYREC(q, INFL))

#ifndef REO
inline early_loss(q)
{
	early_left--;
	h_p = una[q];
	do
	:: h_p != nxt[q] && rec_st[R(q, h_p)] == INFL ->
		if
		:: true -> rec_st[R(q, h_p)] = LOST; rec_early[R(q, h_p)] = 1; break
		:: true -> h_p++
		fi
	:: h_p != nxt[q] && rec_st[R(q, h_p)] != INFL -> h_p++
	:: h_p == nxt[q] -> break
	od;
	dirty[q] = 1
}
#else
/*
 * With the learned window (-DREO): only a record overtaken by more than
 * reo_win later ones already acknowledged may be declared lost early (the
 * per-path rule, lib/loss.c path_gap and lib/psack.c, whose reordering
 * allowance is at least the window); the declared copy is remembered
 * (reorder.c mroce_reo_declared).
 */
inline early_loss(q)
{
	early_left--;
	h_p = una[q];
	do
	:: h_p != nxt[q] && rec_st[R(q, h_p)] == INFL ->
		h_k = 0; h_j = h_p + 1;
		do
		:: h_j != nxt[q] -> if :: rec_st[R(q, h_j)] == SACKD -> h_k++ :: else -> skip fi; h_j++
		:: else -> break
		od;
		if
		:: h_k > reo_win[q] ->
			if
			:: true -> rec_st[R(q, h_p)] = LOST; rec_early[R(q, h_p)] = 1;
				rec_sp[R(q, h_p)] = rec_cp[R(q, h_p)]; break
			:: true -> h_p++
			fi
		:: else -> h_p++
		fi
	:: h_p != nxt[q] && rec_st[R(q, h_p)] != INFL -> h_p++
	:: h_p == nxt[q] -> break
	od;
	h_j = 0; h_k = 0;
	dirty[q] = 1
}
#endif

/*
 * The response-progress timer (fix of defect 2): a READ whose request is
 * acknowledged waits on its response. It expires once the response stream
 * is quiet and the responder holds no job for it (a live responder's own
 * RTO repairs its job's losses); it re-requests the missing range and,
 * after retry_cnt expiries without response progress, fails the READ.
 */
#define JOBFOR(i)	(jused[0] && jmsn[0] == (i))
#define RDWAIT(i)	((i) < NW && wop[i] == OP_RREQ && wacked[i] && !wdone[i] && !rereq[i] && \
			 rec_st[R(0, rdreq[i])] != INFL && rec_st[R(0, rdreq[i])] != LOST && \
			 !(alive[1] && up[1] && JOBFOR(i)))
#define RD_DUE		(up[0] && !dirty[0] && nq[0] == 0 && nq[1] == 0 && \
			 (RDWAIT(0) || RDWAIT(1) || RDWAIT(2)))

inline rd_fire()
{
	ntimer++;
	assert(ntimer <= TMAX);
	h_i = 0;
	do
	:: !RDWAIT(h_i) -> h_i++
	:: else -> break
	od;
	rdto[h_i]++;
	if
	:: rdto[h_i] > RETRY ->
		wdone[h_i] = 1; wst[h_i] = ST_RETRY;
		qp_fail(0, ST_RETRY)
	:: else ->
		rereq[h_i] = 1; dirty[0] = 1
	fi
}

/*
 * The RNR timer of the restarted stream (stream_held's hold_until_us): an
 * event like the others, once the network is quiet. HOLDS bounds how many
 * times it may run out (rnrwrite: the receive is never posted, rnr_retry 7
 * waits for ever; after HOLDS periods the stream is held for good, which
 * stands for the periods that would follow, each one like the last).
 * RNR_INTIME: the receive is posted in time, before the wait that would
 * exhaust rnr_retry ends.
 */
#ifdef RNR_INTIME
#define HOLD_ENDS	(rnrwaits < HOLDS && (rq_tail == NRPOST || rnrwaits + 1 < RNR_RETRY))
#else
#define HOLD_ENDS	(rnrwaits < HOLDS)
#endif

/* ---- the two QPs -------------------------------------------------------- */

proctype qp(byte me)
{
end:	do
	/* receive one packet (the head, or the one behind it: reordering) */
	:: atomic { nq[1 - me] > 0 && alive[me] ->
		if
		:: true -> net_take(1 - me, 0)
		:: REORDER && nq[1 - me] > 1 -> net_take(1 - me, 1)
		fi;
		if
		:: !up[me] -> skip		/* QP in error: dropped (bad_pkts) */
		/* older than any packet the network still delivers (maximum packet lifetime) */
		:: up[me] && rp.op < OP_ACK && rbase[me] > rp.g + 8 -> skip
		:: up[me] && rp.op == OP_ACK && una[me] > rp.gc + 7 -> skip
		:: up[me] && rp.op == OP_NAK && una[me] > rp.g + 7 -> skip
		:: else -> engine_rx(me); dirty[me] = 1
		fi;
		rp.op = 0; rp.psn = 0; rp.g = 0; rp.msn = 0; rp.off = 0; rp.ln = 0;
		rp.cum = 0; rp.gc = 0; rp.sack = 0; rp.code = 0; rp.bad = 0; rp.ep = 0 }
	/* a dead QP's packets go nowhere */
	:: atomic { nq[1 - me] > 0 && !alive[me] -> net_take(1 - me, 0);
		rp.op = 0; rp.psn = 0; rp.g = 0; rp.msn = 0; rp.off = 0; rp.ln = 0;
		rp.cum = 0; rp.gc = 0; rp.sack = 0; rp.code = 0; rp.bad = 0; rp.ep = 0 }
	/* the QP failed: report everything still queued (qp.c: flush_all) */
	:: atomic { fpend[me] -> fpend[me] = 0; flush_all(me, fwhy[me]); fwhy[me] = 0 }
	/* one progress round: transmit, then completions (engine.c) */
	:: atomic { dirty[me] && alive[me] ->
		dirty[me] = 0;
		qp_tx(me);
		if
		:: me == 0 && up[0] -> complete_sq()
		:: me == 1 && up[1] -> complete_rq()
		:: else -> skip
		fi }
	/* RTO */
	:: atomic { RTO_DUE(me) -> rto_fire(me) }
	/* a loss found early, right or wrong */
	:: atomic { EARLY_DUE(me) -> early_loss(me) }
	/* the peer's rate grant caps the window, or lifts the cap (wire v2) */
	:: atomic { grant_left > 0 && up[me] -> grant_left--;
		if :: pipe[me] = GRANT_MIN :: pipe[me] = PIPE fi; dirty[me] = 1 }
	/* the refused stream's RNR timer runs out: its probe may go */
	:: atomic { me == 0 && QUIET(0) && shold && HOLD_ENDS -> ntimer++; assert(ntimer <= TMAX);
		shold = 0; rnrwaits++; dirty[0] = 1 }
#ifndef BUG_READ_NO_TIMER
	:: atomic { me == 0 && RD_DUE -> rd_fire() }
#endif
	/* the application posts a receive (post.c: mroce_post_recv_on, stream 0) */
	:: atomic { me == 1 && alive[1] && up[1] && rq_tail < NRPOST -> rq_tail++; dirty[1] = 1 }
	:: atomic { me == 1 && dead == 2 && alive[1] -> alive[1] = 0 }
	od
}

/* ---- workloads ---------------------------------------------------------- */

inline wr(i, op, n, msn, bad)
{
	wop[i] = op; wlen[i] = n; wmsn[i] = msn; wbad[i] = bad
}

#ifdef NOPOST
#define NRPOST2	0	/* wl 2 and 10: the receives are never posted */
#else
#define NRPOST2	1
#endif

/* the whole run is over: every request completed (exactly once) */
#define ALL_DONE	(scomp[0] && (NW < 2 || scomp[1]) && (NW < 3 || scomp[2]))
/* ... or (NOPOST) the refused stream is still held when its RNR timer may run out no more */
#ifdef NOPOST
#define ENDED		(ALL_DONE || (shold && rnrwaits >= HOLDS))
#else
#define ENDED		ALL_DONE
#endif
/* wl 2: the WRITE of the other stream completed successfully */
#define WRITE_OK	(scomp[1] && scst[1] == ST_OK)
/* wl 10, receives never posted: the first SEND fails with RNR retries exceeded,
 * the second, of its stream, is flushed (unordered, it may have run out of
 * retries first and reported so), the WRITE of the other stream succeeds */
#define STREAMFAIL_OK	(scomp[0] && scst[0] == ST_RNR && WRITE_OK && scomp[2] && \
			 (scst[2] == ST_FLUSH || (!ordered && scst[2] == ST_RNR)))
#define ALL_OK		(ALL_DONE && scst[0] == ST_OK && (NW < 2 || scst[1] == ST_OK) && \
			 (NW < 3 || scst[2] == ST_OK) && \
			 (NR < 1 || (rcomp[0] && rcst[0] == ST_OK)) && (NR < 2 || (rcomp[1] && rcst[1] == ST_OK)))
#define NONE_OK		((NW < 1 || scst[0] != ST_OK) && (NW < 2 || scst[1] != ST_OK) && \
			 (NW < 3 || scst[2] != ST_OK))

init
{
	atomic {
		/* this run's configuration */
#if defined(WL)
		wl = WL; ordered = ORDERED; dead = DEAD;
#elif defined(CFG_HEALTHY)	/* no dead peer, no refused request, receives posted */
		if
		:: wl = 1; ordered = 1 :: wl = 5; ordered = 1 :: wl = 6; ordered = 1 :: wl = 7; ordered = 1
		:: wl = 6; ordered = 0 :: wl = 7; ordered = 0
		fi;
		dead = 0;
#elif defined(CFG_DEAD)		/* the responder dies at any step */
		if :: wl = 1 :: wl = 5 :: wl = 6 :: wl = 7 fi;
		ordered = 1; dead = 2;
#elif defined(CFG_DEADFAIL)	/* the responder is dead from the start */
		if :: wl = 1 :: wl = 2 :: wl = 5 :: wl = 7 fi;
		ordered = 1; dead = 1;
#elif defined(CFG_RNR)		/* receives posted late: RNR */
		if :: wl = 2 :: wl = 8 fi;
		if :: ordered = 1 :: ordered = 0 fi;
		dead = 0;
#elif defined(CFG_RNRWRITE)	/* wl 2 (with NOPOST: its receive is never posted) */
		wl = 2;
		if :: ordered = 1 :: ordered = 0 fi;
		dead = 0;
#elif defined(CFG_STREAMFAIL)	/* wl 10 (with NOPOST: its receives are never posted) */
		wl = 10;
		if :: ordered = 1 :: ordered = 0 fi;
		dead = 0;
#else				/* CFG_SAFETY: every workload and mode, and dying responders */
		if
		:: wl = 1 :: wl = 2 :: wl = 3 :: wl = 4 :: wl = 5 :: wl = 6 :: wl = 7 :: wl = 8 :: wl = 9
		fi;
		if :: ordered = 1 :: ordered = 0 fi;
		if
		:: dead = 0
		:: (wl == 1 || wl == 5 || wl == 6 || wl == 7) && ordered -> dead = 2
		fi;
#endif
		rlen[0] = 2; rlen[1] = 2;
		if
		:: wl == 1 ->	/* WRITE 2 packets, SEND 1, READ of 2 */
			NW = 3; wr(0, OP_WRITE, 2, 0, 0); wr(1, OP_SEND, 1, 0, 0); wr(2, OP_RREQ, 2, 2, 0);
			NR = 1; NRPOST = 1; rq_tail = 1
		:: wl == 2 ->	/* the receive is posted late: RNR; the WRITE on another stream */
			NW = 2; wr(0, OP_SEND, 2, 0, 0); wr(1, OP_WRITE, 1, 1, 0); wstr[1] = 1;
			NR = 1; NRPOST = NRPOST2; rq_tail = 0; nstr = 2
		:: wl == 3 ->	/* two SENDs, the second's receive too small */
			NW = 2; wr(0, OP_SEND, 2, 0, 0); wr(1, OP_SEND, 1, 1, 0);
			NR = 2; NRPOST = 2; rq_tail = 2; rlen[1] = 0
		:: wl == 4 ->	/* WRITE with a bad rkey, then a SEND */
			NW = 2; wr(0, OP_WRITE, 1, 0, 1); wr(1, OP_SEND, 1, 0, 0);
			NR = 1; NRPOST = 1; rq_tail = 1
		:: wl == 5 ->	/* two READs, the responder has one job slot */
			NW = 2; wr(0, OP_RREQ, 2, 0, 0); wr(1, OP_RREQ, 1, 1, 0);
			NR = 0; NRPOST = 0; rq_tail = 0
		:: wl == 6 ->	/* one READ of 2 packets */
			NW = 1; wr(0, OP_RREQ, 2, 0, 0);
			NR = 0; NRPOST = 0; rq_tail = 0
		:: wl == 7 ->	/* SEND, READ of 1 packet, SEND */
			NW = 3; wr(0, OP_SEND, 1, 0, 0); wr(1, OP_RREQ, 1, 1, 0); wr(2, OP_SEND, 1, 1, 0);
			NR = 2; NRPOST = 2; rq_tail = 2
		:: wl == 8 ->	/* two SENDs of one stream, both receives posted late: RNR */
			NW = 2; wr(0, OP_SEND, 1, 0, 0); wr(1, OP_SEND, 1, 1, 0);
			NR = 2; NRPOST = 2; rq_tail = 0
		:: wl == 9 ->	/* the same, the second receive too small (an error NACK of a given-up PSN) */
			NW = 2; wr(0, OP_SEND, 1, 0, 0); wr(1, OP_SEND, 1, 1, 0);
			NR = 2; NRPOST = 2; rq_tail = 0; rlen[1] = 0
		:: wl == 10 ->	/* SEND, WRITE on another stream, SEND; receives late or (NOPOST) never */
			NW = 3; wr(0, OP_SEND, 1, 0, 0); wr(1, OP_WRITE, 1, 1, 0); wstr[1] = 1;
			wr(2, OP_SEND, 1, 1, 0);
			NR = 2; NRPOST = 2 * NRPOST2; rq_tail = 0; nstr = 2
		fi;
		/* initial PSNs just before the 4-bit wrap, so that every run crosses it */
		una[0] = PSN0; nxt[0] = PSN0; rbase[1] = PSN0;
		una[1] = PSN1; nxt[1] = PSN1; rbase[0] = PSN1;
		up[0] = 1; up[1] = 1; alive[0] = 1; alive[1] = 1; dirty[0] = 1;
		if :: dead == 1 -> alive[1] = 0 :: else -> skip fi;
		run qp(0); run qp(1)
	}
	/* once nothing can move any more: every request completed exactly once */
	timeout -> assert(ENDED);
	assert(!(up[1] && alive[1]) || !send_ok[0] || (rcomp[0] && rcst[0] == ST_OK));
	assert(!(up[1] && alive[1]) || !send_ok[1] || (rcomp[1] && rcst[1] == ST_OK));
	/* the end as an explicit self-loop, so that acceptance cycles under weak
	 * fairness (-f) see runs that stop (pan's stutter extension does not) */
end_idle:
	do
	:: timeout -> skip
	od
}

/* with a network that loses at most LOSS (< retry_cnt) packets: all succeed, the QPs stay up */
ltl healthy { <> [] (ALL_OK && up[0] && up[1]) }
/* with a dead or dying responder: every request completes */
ltl dead { <> ALL_DONE }
/* with a responder dead from the start: every request fails */
ltl deadfail { <> (ALL_DONE && NONE_OK) }
/* wl 2 with the receive never posted: the WRITE of another stream completes all the same */
ltl rnrwrite { <> [] (WRITE_OK && up[0] && up[1]) }
/* wl 10 with the receives never posted, rnr_retry 1: the stream fails alone, the QPs stay up */
ltl streamfail { <> [] (STREAMFAIL_OK && up[0] && up[1]) }
