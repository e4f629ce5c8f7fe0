// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workloads.
 *
 * The collectives (all-to-all, all-reduce, reduce-scatter, all-gather,
 * broadcast) are libmroce-coll's own: every host holds a communicator driven
 * by the simulator (coll/driven.c) and runs the library's algorithms on it,
 * the ones its table picks for the size and rank count, or the one --algo
 * names. After each run of a host's engine its communicator takes the
 * completions and the operation steps (coll_op_progress); once it ends, the
 * host starts its next iteration. Connections are made when an algorithm
 * first sends to a peer (the connect hook below makes both QPs); beyond
 * --conns open at a host, idle ones close, least recently used first;
 * --window is the all-to-all's peers in flight (0: the library's).
 * Without --verify the communicators are dry: the messages and their sizes
 * are the algorithms', the bytes are not copied or reduced, and all hosts
 * share one buffer; with it each host has its own memory and every element
 * of every result is checked (int32 sums of known per-host patterns).
 *
 * The rest are flows of the simulator's own, one QP pair each:
 *   permutation      every host sends `size` to one other (a derangement)
 *   incast           `incast` hosts send `size` each to host 0
 *   background       endless flows between random pairs, beside any of them
 * Host memory: sim_mem_len().
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim.h"
#include "../coll/coll_internal.h"

#define FLOW_OUT	64	/* sends posted per bulk flow */
/* Collectives' connections open at once in the whole run, at most: some 60 KB
 * each (two QPs, receive buffers), so the run stays under 8 GiB */
#define CONNS_MAX	131072

/* ---- collectives: each host's communicator and operation */

struct chost {
	struct mroce_coll_comm	*c;
	struct mroce_cq		*cq;
	struct coll_op		op;
	bool			running;
	/* step the operation even without completions: it has just begun, its
	 * last step moved something (a step moves a chunk per transfer, so the
	 * next may move more), or it waits to retry a connection; else a step
	 * without new completions would find nothing to do */
	bool			kick;
	__u32			iter;
	__u8			*sbuf, *rbuf;
};

struct wstate {
	struct bulk	**bulks;	/* every bulk flow */
	size_t		nbulk, cap;
	__u64		want;		/* flows (or hosts done) that end the run */
	__u64		got;
	bool		stop_bg;
	/* collectives */
	struct chost	*ch;
	__u8		*dry_inbox;
	size_t		dry_len;
	enum mroce_coll_kind kind;
	size_t		count;		/* elements: the args' count */
	__u32		nconns;		/* connections open now */
};

static struct wstate *W(struct sim *s)
{
	return s->wstate;
}

/* ---- bulk flows: total bytes in messages of unit bytes */

struct bulk {
	struct sim_flow	f;
	__u64		total, loff, roff;
	__u32		unit, out;
	__u64		nmsgs, posted, sent, recvd, recvs_posted;
	bool		forever, done, counted;
};

static struct bulk *bulk_new(struct sim *s, __u32 src, __u32 dst, __u64 total, __u64 loff,
			     __u64 roff, bool forever)
{
	struct wstate *w = W(s);
	struct bulk *b = calloc(1, sizeof(*b));

	if (!b) {
		sim_fail(s, -ENOMEM, "flows: out of memory");
		return NULL;
	}
	if (w->nbulk == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 1024;
		struct bulk **v = realloc(w->bulks, cap * sizeof(*v));

		if (!v) {
			free(b);
			sim_fail(s, -ENOMEM, "flows: out of memory");
			return NULL;
		}
		w->bulks = v;
		w->cap = cap;
	}
	w->bulks[w->nbulk++] = b;
	b->total = total;
	b->loff = loff;
	b->roff = roff;
	b->forever = forever;
	b->f.background = forever;
	b->unit = forever || total > s->cfg.chunk ? s->cfg.chunk : (__u32)total;
	b->nmsgs = forever ? 0 : (total + b->unit - 1) / b->unit;
	b->f.ctx = b;
	if (sim_flow_open(s, &b->f, src, dst))
		return NULL;
	return b;
}

static __u32 bulk_len(const struct bulk *b, __u64 i)
{
	if (b->forever)
		return b->unit;
	return (__u32)(i + 1 < b->nmsgs ? b->unit : b->total - i * b->unit);
}

static void bulk_pump(struct sim *s, struct bulk *b)
{
	while (!b->done && b->out < FLOW_OUT && (b->forever ? !W(s)->stop_bg : b->posted < b->nmsgs)) {
		__u64 i = b->posted;
		__u32 len = bulk_len(b, i);
		__u64 off = b->forever ? 0 : i * b->unit;
		int err;

		if (b->recvs_posted <= i) {
			if ((err = sim_flow_post_recv(s, &b->f, true, i))) {
				sim_fail(s, err, "flow %u: post receive", b->f.id);
				return;
			}
			b->recvs_posted++;
		}
		err = sim_flow_write(s, &b->f, true, b->loff + off, b->roff + off, len, (__u32)i, i);
		if (err == -ENOMEM || err == -EAGAIN)
			return;	/* the SQ is full: completions will pump again */
		if (err) {
			sim_fail(s, err, "flow %u: post", b->f.id);
			return;
		}
		b->posted++;
		b->out++;
	}
}

static void bulk_finish(struct sim *s, struct bulk *b)
{
	struct wstate *w = W(s);

	b->done = true;
	b->f.done_ps = s->now;
	b->f.bytes = b->total;
	sim_flow_close(s, &b->f);
	if (b->forever)
		return;
	s->st.flows_done++;
	s->st.bytes_done += b->total;
	w->got++;
}

static void bulk_wc(struct sim *s, struct bulk *b, bool at_src, const struct mroce_wc *wc)
{
	if (at_src) {
		b->out--;
		b->sent++;
		if (b->forever)
			b->f.bytes += b->unit;
	} else {
		b->recvd++;
	}
	if (b->forever) {
		if (at_src && W(s)->stop_bg && !b->out)
			bulk_finish(s, b);
		else
			bulk_pump(s, b);
		return;
	}
	(void)wc;
	if (b->sent == b->nmsgs && b->recvd == b->nmsgs)
		bulk_finish(s, b);
	else if (at_src)
		bulk_pump(s, b);
}

/* ---- permutation and incast */

static int perm_start(struct sim *s)
{
	struct wstate *w = W(s);
	__u32 N = s->cfg.hosts, *p = malloc(N * sizeof(*p));

	if (!p)
		return -ENOMEM;
	for (__u32 i = 0; i < N; i++)
		p[i] = i;
	for (__u32 i = N - 1; i > 0; i--) {	/* Sattolo: one cycle, so nobody sends to itself */
		__u32 j = sim_rand(s) % i, t = p[i];

		p[i] = p[j];
		p[j] = t;
	}
	w->want = N;
	for (__u32 r = 0; r < N && !s->err; r++) {
		struct bulk *b = bulk_new(s, r, p[r], s->cfg.size, 0, s->cfg.size, false);

		if (b)
			bulk_pump(s, b);
	}
	free(p);
	return s->err;
}

static int incast_start(struct sim *s)
{
	struct wstate *w = W(s);

	w->want = s->cfg.incast;
	for (__u32 r = 1; r <= s->cfg.incast && !s->err; r++) {
		struct bulk *b = bulk_new(s, r, 0, s->cfg.size, 0, s->cfg.size, false);

		if (b)
			bulk_pump(s, b);
	}
	return s->err;
}

/* ---- collectives */

/* Element i of host h's input, with --verify: small, so that sums of 4096 fit. */
static __s32 coll_val(__u32 h, __u64 i)
{
	return (__s32)((h * 131 + i * 7 + (i >> 12)) % 100003);
}

/*
 * The connect hook: a QP pair between the two hosts, both communicators
 * attached. In a single run of a collective (every chunk a host receives is
 * then one it can take at once, so a connection goes idle without another
 * being made) a host that already holds 2 x --conns connections after
 * closing idle ones waits for room before it sends a chunk over a new one:
 * it tries again 10 us later. Control messages never wait.
 */
static int conn_connect(void *ctx, struct mroce_coll_comm *c, int peer, bool may_wait)
{
	struct sim *s = ctx;
	struct wstate *w = W(s);
	__u32 a = (__u32)c->rank, b = (__u32)peer;
	struct chost *ca = &w->ch[a], *cb = &w->ch[b];
	unsigned int hard = 2 * s->cfg.conns < 64 ? 64 : 2 * s->cfg.conns;
	struct sim_flow *f;
	__u64 ia, ib;
	__u32 ka, kb;
	int err;

	if (may_wait && s->cfg.iterations == 1 && !s->cfg.keep_conns &&
	    coll_open_peers(ca->c) >= hard) {
		s->st.conns_waited++;
		ca->kick = true;
		sim_host_wake(&s->hosts[a], s->now + 10 * PS_PER_US);
		return -EAGAIN;
	}
	if (w->nconns >= CONNS_MAX)
		return sim_fail(s, -ENOMEM, "%u connections open at once: the algorithm (%s) keeps "
				"more peers in flight than one process holds", w->nconns,
				ca->op.algo ? ca->op.algo->name : "?");

	if ((err = coll_peer_prepare(ca->c, (int)b, &ia, &ka)) ||
	    (err = coll_peer_prepare(cb->c, (int)a, &ib, &kb)))
		return err;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	if ((err = sim_conn_open(s, f, a, b, ca->cq, cb->cq))) {
		sim_conn_close(s, f);
		free(f);
		return err;
	}
	/* from here on work_free finds it (by_qpn) whatever fails */
	w->nconns++;
	if ((err = coll_peer_attach(ca->c, (int)b, f->qs, ib, kb)) ||
	    (err = coll_peer_attach(cb->c, (int)a, f->qd, ia, ka)))
		return err;
	s->st.conns_opened++;
	if (coll_open_peers(ca->c) > s->st.conns_max)
		s->st.conns_max = coll_open_peers(ca->c);
	if (coll_open_peers(cb->c) > s->st.conns_max)
		s->st.conns_max = coll_open_peers(cb->c);
	return 0;
}

/* Every send of the QP completed: destroying it flushes none. */
static bool sq_idle(const struct mroce_qp *qp)
{
	return qp->sq_head == qp->sq_tail;
}

static void conn_free(struct sim *s, struct sim_flow *f)
{
	struct wstate *w = W(s);

	if (w->ch[f->src].c)
		coll_peer_detach(w->ch[f->src].c, (int)f->dst);
	if (w->ch[f->dst].c)
		coll_peer_detach(w->ch[f->dst].c, (int)f->src);
	sim_conn_close(s, f);
	w->nconns--;
	free(f);
}

/* The disconnect hook: close the pair if nothing is in flight at either end. */
static int conn_disconnect(void *ctx, struct mroce_coll_comm *c, int peer)
{
	struct sim *s = ctx;
	struct wstate *w = W(s);
	__u32 a = (__u32)c->rank, b = (__u32)peer;
	struct mroce_coll_comm *cb = w->ch[b].c;
	struct mroce_qp *qa = c->peers[b].qp, *qb = cb->peers[a].qp;

	if (!qa || !qb || !coll_pair_idle(c, (int)b, cb, (int)a) || !sq_idle(qa) || !sq_idle(qb))
		return -EBUSY;
	conn_free(s, s->hosts[a].by_qpn[mroce_qp_num(qa)]);
	return 0;
}

/* Host r's next iteration (or its first). */
static int coll_begin(struct sim *s, __u32 r)
{
	struct wstate *w = W(s);
	struct chost *ch = &w->ch[r];
	struct coll_args a = {
		.kind = w->kind, .sendbuf = ch->sbuf, .recvbuf = ch->rbuf, .count = w->count,
		.dtype = MROCE_COLL_INT32, .op = MROCE_COLL_SUM, .root = 0,
	};
	int err = coll_op_start(ch->c, &a, &ch->op);

	if (err)
		return sim_fail(s, err, "host %u: starting the collective", r);
	if (!s->st.algo)
		s->st.algo = ch->op.algo->name;
	if (s->cfg.algo && strcmp(ch->op.algo->name, s->cfg.algo) && ch->op.algo != &coll_algo_local) {
		coll_op_end(&ch->op, 0);
		return sim_fail(s, -EINVAL, "--algo %s: not an algorithm of %s (the table's: %s)",
				s->cfg.algo, sim_work_name(s->cfg.work), ch->op.algo->name);
	}
	ch->running = true;
	ch->kick = true;
	if (s->now < s->iter_start_ps[ch->iter])
		s->iter_start_ps[ch->iter] = s->now;
	return 0;
}

/* After host h's engine ran: its completions, then its operation's steps. */
static int coll_host_step(struct sim *s, struct sim_host *h)
{
	struct wstate *w = W(s);
	struct chost *ch;
	int n, k, moved = 0;

	if (!w || !w->ch || s->err)
		return 0;
	ch = &w->ch[h->id];
	n = coll_driven_poll(ch->c);
	if (n < 0)
		return sim_fail(s, n, "host %u: the collective failed", h->id), 0;
	if (!n && !ch->kick)
		return 0;
	ch->kick = false;
	while (ch->running) {
		k = coll_op_progress(&ch->op);
		moved |= ch->op.moved;
		if (k < 0) {
			coll_op_end(&ch->op, k);
			ch->running = false;
			return sim_fail(s, k, "host %u: the collective (%s) failed", h->id,
					ch->op.algo->name), 0;
		}
		if (!k)
			break;
		coll_op_end(&ch->op, 0);
		ch->running = false;
		moved = 1;
		if (s->now > s->iter_end_ps[ch->iter])
			s->iter_end_ps[ch->iter] = s->now;
		if (++ch->iter == s->cfg.iterations) {
			w->got++;
			break;
		}
		if (coll_begin(s, h->id))
			return 0;
	}
	if (moved)
		ch->kick = true;
	return n + moved;
}

static int coll_start(struct sim *s)
{
	static const enum mroce_coll_kind kinds[] = {
		[SIM_ALLTOALL] = MROCE_COLL_ALLTOALL, [SIM_ALLREDUCE] = MROCE_COLL_ALLREDUCE,
		[SIM_REDUCE_SCATTER] = MROCE_COLL_REDUCE_SCATTER,
		[SIM_ALLGATHER] = MROCE_COLL_ALLGATHER, [SIM_BROADCAST] = MROCE_COLL_BROADCAST,
	};
	const struct sim_cfg *c = &s->cfg;
	struct wstate *w = W(s);
	__u32 N = c->hosts;
	int err;

	w->kind = kinds[c->work];
	w->count = c->work == SIM_ALLREDUCE || c->work == SIM_BROADCAST ? c->size / 4 :
		   c->size / N / 4;
	w->want = N;
	w->ch = calloc(N, sizeof(*w->ch));
	s->iter_start_ps = calloc(c->iterations, sizeof(*s->iter_start_ps));
	s->iter_end_ps = calloc(c->iterations, sizeof(*s->iter_end_ps));
	if (!w->ch || !s->iter_start_ps || !s->iter_end_ps)
		return -ENOMEM;
	for (__u32 i = 0; i < c->iterations; i++)
		s->iter_start_ps[i] = UINT64_MAX;
	if (!c->verify) {	/* dry: one inbox for all, nobody reads it */
		w->dry_len = (size_t)COLL_SLOTS * c->chunk;
		w->dry_inbox = mmap(NULL, w->dry_len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (w->dry_inbox == MAP_FAILED) {
			w->dry_inbox = NULL;
			return -ENOMEM;
		}
	}
	for (__u32 r = 0; r < N; r++) {
		struct chost *ch = &w->ch[r];
		struct sim_host *h = &s->hosts[r];
		struct coll_driven_opts o = {
			.rank = (int)r, .size = (int)N, .chunk = c->chunk, .dry = !c->verify,
			.force_algo = c->algo, .dev = h->dev, .dry_inbox = w->dry_inbox,
			.max_open = c->keep_conns ? 0 : c->conns, .a2a_window = (int)c->window,
			.connect = conn_connect, .disconnect = conn_disconnect, .ctx = s,
		};

		/* the open connections' completions; beyond --conns, closing ones' flushes */
		if ((err = mroce_create_cq(h->dev, 16384, &ch->cq)))
			return sim_fail(s, err, "host %u: CQ", r);
		o.cq = ch->cq;
		if ((err = coll_driven_create(&o, &ch->c)))
			return sim_fail(s, err, "host %u: communicator", r);
		ch->sbuf = h->buf;
		ch->rbuf = c->work == SIM_BROADCAST ? h->buf : h->buf + c->size;
		if (c->verify) {
			__s32 *in = (__s32 *)ch->sbuf;

			for (__u64 i = 0; i < c->size / 4; i++)
				in[i] = coll_val(r, i);
			if (ch->rbuf != ch->sbuf)
				memset(ch->rbuf, 0xa5, c->size);	/* what no result is */
		}
	}
	for (__u32 r = 0; r < N && !s->err; r++)
		coll_begin(s, r);	/* the steps run when each host's engine first runs */
	return s->err;
}

static void coll_free(struct sim *s)
{
	struct wstate *w = W(s);

	if (!w->ch)
		return;
	for (__u32 r = 0; r < s->cfg.hosts; r++) {
		struct sim_host *h = &s->hosts[r];

		if (w->ch[r].running)
			coll_op_end(&w->ch[r].op, 0);
		w->ch[r].running = false;
		for (__u32 q = 0; q < MROCE_MAX_QPS; q++) {
			struct sim_flow *f = h->by_qpn[q];

			if (f && f->conn)
				conn_free(s, f);
		}
	}
	for (__u32 r = 0; r < s->cfg.hosts; r++) {
		struct chost *ch = &w->ch[r];

		coll_driven_destroy(ch->c);
		if (ch->cq)
			mroce_destroy_cq(ch->cq);
	}
	free(w->ch);
	w->ch = NULL;
	if (w->dry_inbox)
		munmap(w->dry_inbox, w->dry_len);
}

/* With --verify: every element of every host's result. Returns the bytes wrong. */
static __u64 coll_verify(struct sim *s)
{
	const struct sim_cfg *c = &s->cfg;
	struct wstate *w = W(s);
	__u32 N = c->hosts;
	size_t n = w->count;
	__u64 bad = 0;

	for (__u32 r = 0; r < N; r++) {
		const __s32 *out = (const __s32 *)w->ch[r].rbuf;

		switch (c->work) {
		case SIM_ALLREDUCE:
			for (size_t i = 0; i < n; i++) {
				__s32 want = 0;

				for (__u32 h = 0; h < N; h++)
					want += coll_val(h, i);
				bad += out[i] != want;
			}
			break;
		case SIM_REDUCE_SCATTER:
			for (size_t i = 0; i < n; i++) {
				__s32 want = 0;

				for (__u32 h = 0; h < N; h++)
					want += coll_val(h, (__u64)r * n + i);
				bad += out[i] != want;
			}
			break;
		case SIM_ALLGATHER:
			for (__u32 q = 0; q < N; q++)
				for (size_t i = 0; i < n; i++)
					bad += out[(size_t)q * n + i] != coll_val(q, i);
			break;
		case SIM_BROADCAST:
			for (size_t i = 0; i < n; i++)
				bad += out[i] != coll_val(0, i);
			break;
		default:	/* all-to-all: block q from host q, its block for r */
			for (__u32 q = 0; q < N; q++)
				for (size_t i = 0; i < n; i++)
					bad += out[(size_t)q * n + i] != coll_val(q, (__u64)r * n + i);
			break;
		}
	}
	return bad * 4;
}

/* ---- dispatch */

static int background_start(struct sim *s)
{
	for (__u32 i = 0; i < s->cfg.background && !s->err; i++) {
		__u32 a = sim_rand(s) % s->cfg.hosts, b = sim_rand(s) % (s->cfg.hosts - 1);
		struct bulk *bk;

		b += b >= a;
		bk = bulk_new(s, a, b, 0, 0, sim_bg_off(&s->cfg), true);
		if (bk)
			bulk_pump(s, bk);
	}
	return s->err;
}

static int work_start(struct sim *s)
{
	int err;

	s->wstate = calloc(1, sizeof(struct wstate));
	if (!s->wstate)
		return -ENOMEM;
	if (sim_work_coll(s->cfg.work))
		err = coll_start(s);
	else if (s->cfg.work == SIM_PERMUTATION)
		err = perm_start(s);
	else
		err = incast_start(s);
	return err ? err : background_start(s);
}

static void work_wc(struct sim *s, struct sim_host *h, const struct mroce_wc *wc)
{
	struct sim_flow *f = wc->qp_num < MROCE_MAX_QPS ? h->by_qpn[wc->qp_num] : NULL;

	if (!f && wc->status == MROCE_WC_WR_FLUSH_ERR)
		return;	/* a receive left posted on a connection the workload closed */
	if (!f || !f->ctx) {
		sim_fail(s, -EPROTO, "host %u: a completion for QP %u, which serves no flow",
			 h->id, wc->qp_num);
		return;
	}
	if (wc->status != MROCE_WC_SUCCESS) {
		s->st.errors++;
		sim_fail(s, -EIO, "host %u: flow %u -> %u: completion status %d", h->id, f->src,
			 f->dst, wc->status);
		return;
	}
	bulk_wc(s, f->ctx, h->id == f->src && wc->opcode == MROCE_WC_RDMA_WRITE, wc);
}

static bool work_done(struct sim *s)
{
	struct wstate *w = W(s);

	if (w->got < w->want)
		return false;
	if (!w->stop_bg && w->ch)	/* the run's counters: connections still open count too */
		for (__u32 r = 0; r < s->cfg.hosts; r++)
			for (__u32 q = 0; q < MROCE_MAX_QPS; q++) {
				struct sim_flow *f = s->hosts[r].by_qpn[q];

				if (f && f->conn && f->src == r)
					sim_flow_account(s, f);
			}
	w->stop_bg = true;
	return true;
}

static void work_free(struct sim *s)
{
	struct wstate *w = W(s);

	if (!w)
		return;
	coll_free(s);
	for (size_t i = 0; i < w->nbulk; i++) {
		sim_flow_close(s, &w->bulks[i]->f);
		free(w->bulks[i]);
	}
	free(w->bulks);
	free(w);
	s->wstate = NULL;
}

static __u64 check(const struct sim *s, __u32 h, __u64 roff, __u32 from, __u64 loff, __u64 len)
{
	const __u8 *p = s->hosts[h].buf + roff;
	__u64 bad = 0;

	for (__u64 i = 0; i < len; i++)
		bad += p[i] != sim_pattern(from, loff + i);
	return bad;
}

/* With --verify: every byte where the workload put it. Returns the bytes wrong. */
static __u64 work_verify(struct sim *s)
{
	const struct sim_cfg *c = &s->cfg;
	__u64 bad = 0;

	if (sim_work_coll(c->work))
		return coll_verify(s);
	if (c->work == SIM_PERMUTATION)
		for (size_t i = 0; i < W(s)->nbulk; i++) {
			const struct bulk *b = W(s)->bulks[i];

			if (!b->forever)
				bad += check(s, b->f.dst, c->size, b->f.src, 0, c->size);
		}
	return bad;	/* incast writes one place many times: counts only */
}

static const struct sim_work_ops work_ops = {
	.name = "workloads", .start = work_start, .on_wc = work_wc, .step = coll_host_step,
	.done = work_done, .verify = work_verify, .free = work_free,
};

const struct sim_work_ops *sim_work_ops(enum sim_workload wl)
{
	(void)wl;
	return &work_ops;
}
