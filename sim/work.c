// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workloads, posted as libmroce-coll's algorithms post them (lib/coll_algo.c):
 * WRITE_WITH_IMM straight into the peer's memory, one receive consumed per
 * message, completions driving what comes next.
 *   all-to-all       pairwise: at step k host r sends its block for r+k;
 *                    `window` steps in flight per host; `iterations` of
 *                    them, a host starting the next once its own sends
 *                    and receives are done, a step of it once its peer has
 *                    started it too (as the library's write waits for the
 *                    peer's buffer offer: coll_algo.c alltoall_direct)
 *   all-reduce ring  reduce-scatter then all-gather, 2(N-1) steps, each
 *                    chunk forwarded once the same chunk of the step before
 *                    arrived (pipelined by chunk)
 *   all-reduce tree  binary tree in rank order: chunks reduced up, then
 *                    broadcast down, pipelined by chunk
 *   permutation      every host sends `size` to one other (a derangement)
 *   incast           `incast` hosts send `size` each to host 0
 *   background       endless flows between random pairs, beside any of them
 * Reductions cost no time: the model moves the bytes, it does not add them.
 * Host memory: sim_mem_len().
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define HOST_OUT	128	/* sends a host keeps posted (below a QP's 256-deep SQ) */
#define FLOW_OUT	64	/* ... per bulk flow */
#define RECVS		256	/* receives kept posted per receiving QP */

/* ---- bulk flows: total bytes in messages of unit bytes */

struct bulk {
	struct sim_flow	f;
	__u64		total, loff, roff;
	__u32		unit, out;
	__u64		nmsgs, posted, sent, recvd, recvs_posted;
	bool		forever, done, counted;
};

struct wstate {
	struct bulk	**bulks;	/* every bulk flow */
	size_t		nbulk, cap;
	__u64		want;		/* flows (or host completions) that end the run */
	__u64		got;
	/* all-to-all */
	__u32		*next_step;
	__u64		block;
	__u32		*iter;		/* the iteration each host is in */
	__u32		*done;		/* its flows (sent and received) done in it */
	struct waiters {		/* hosts with a step for this one, which is behind */
		__u32	*v;
		size_t	n, cap;
	}		*wait;
	/* ring and tree */
	struct sim_flow	**edge;		/* ring: r -> r+1; tree: r -> parent(r) */
	__u32		nchunks;
	__u64		seg;
	struct hstate	*hs;
	bool		stop_bg;
};

struct pend {
	struct sim_flow	*f;
	bool		to_dst;
	__u32		len, imm;
	__u64		loff, roff;
};

struct hstate {
	struct pend	*q;
	size_t		head, n, cap;
	__u32		out;
	__u64		sent, want_sent, recvd, want_recvd;
	__u8		*up_count;	/* tree: children's chunks in */
	bool		done;
};

static struct wstate *W(struct sim *s)
{
	return s->wstate;
}

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

static void a2a_flow_done(struct sim *s, __u32 src, __u32 dst);

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
	if (s->cfg.work == SIM_ALLTOALL)
		a2a_flow_done(s, b->f.src, b->f.dst);
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

/* ---- all-to-all */

/* One of r's window slots takes its next step, or waits for the peer to start the iteration. */
static void a2a_next(struct sim *s, __u32 r)
{
	struct wstate *w = W(s);
	__u32 N = s->cfg.hosts, k, to;
	struct waiters *q;
	struct bulk *b;

	if (w->next_step[r] >= N)
		return;
	k = w->next_step[r];
	to = (r + k) % N;
	if (w->iter[to] < w->iter[r]) {	/* the slot waits: released when `to` starts it */
		q = &w->wait[to];
		if (q->n == q->cap) {
			size_t cap = q->cap ? 2 * q->cap : 16;
			__u32 *v = realloc(q->v, cap * sizeof(*v));

			if (!v) {
				sim_fail(s, -ENOMEM, "all-to-all: out of memory");
				return;
			}
			q->v = v;
			q->cap = cap;
		}
		q->v[q->n++] = r;
		return;
	}
	w->next_step[r]++;
	b = bulk_new(s, r, to, w->block, (__u64)to * w->block, s->cfg.size + (__u64)r * w->block,
		     false);
	if (b)
		bulk_pump(s, b);
}

/* Host r starts iteration it (after the first): its window, then the slots that waited for it. */
static void a2a_begin(struct sim *s, __u32 r, __u32 it)
{
	struct wstate *w = W(s);
	struct waiters *q = &w->wait[r];
	size_t n = q->n;

	w->iter[r] = it;
	w->done[r] = 0;
	w->next_step[r] = 1;
	if (s->now < s->iter_start_ps[it])
		s->iter_start_ps[it] = s->now;
	for (__u32 k = 0; k < s->cfg.window && !s->err; k++)
		a2a_next(s, r);
	if (n > s->st.a2a_released_max)
		s->st.a2a_released_max = n;
	q->n = 0;
	for (size_t i = 0; i < n && !s->err; i++)
		a2a_next(s, q->v[i]);	/* may queue again: never onto this host's list */
}

static void a2a_host_done(struct sim *s, __u32 r)
{
	struct wstate *w = W(s);
	__u32 it = w->iter[r];

	if (s->now > s->iter_end_ps[it])
		s->iter_end_ps[it] = s->now;
	if (it + 1 < s->cfg.iterations)
		a2a_begin(s, r, it + 1);
}

/* A flow of the current iterations of both ends is done: each end may be done with it. */
static void a2a_flow_done(struct sim *s, __u32 src, __u32 dst)
{
	struct wstate *w = W(s);
	__u32 N = s->cfg.hosts;

	if (++w->done[dst] == 2 * (N - 1))
		a2a_host_done(s, dst);
	if (++w->done[src] == 2 * (N - 1))
		a2a_host_done(s, src);
	else
		a2a_next(s, src);
}

static int a2a_start(struct sim *s)
{
	struct wstate *w = W(s);
	__u32 N = s->cfg.hosts;

	w->block = s->cfg.size / N;
	w->want = (__u64)N * (N - 1) * s->cfg.iterations;
	w->next_step = calloc(N, sizeof(*w->next_step));
	w->iter = calloc(N, sizeof(*w->iter));
	w->done = calloc(N, sizeof(*w->done));
	w->wait = calloc(N, sizeof(*w->wait));
	s->iter_start_ps = calloc(s->cfg.iterations, sizeof(*s->iter_start_ps));
	s->iter_end_ps = calloc(s->cfg.iterations, sizeof(*s->iter_end_ps));
	if (!w->next_step || !w->iter || !w->done || !w->wait || !s->iter_start_ps ||
	    !s->iter_end_ps)
		return -ENOMEM;
	for (__u32 i = 0; i < s->cfg.iterations; i++)
		s->iter_start_ps[i] = UINT64_MAX;
	s->iter_start_ps[0] = s->now;
	for (__u32 r = 0; r < N; r++)
		w->next_step[r] = 1;
	/* every host's first step, then every host's second, ...: the order frames start in */
	for (__u32 k = 0; k < s->cfg.window; k++)
		for (__u32 r = 0; r < N && !s->err; r++)
			a2a_next(s, r);
	return s->err;
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

/* ---- ring and tree: per-host queues of chunk sends */

static void hq_push(struct sim *s, struct hstate *h, const struct pend *p)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct pend *q = malloc(cap * sizeof(*q));

		if (!q) {
			sim_fail(s, -ENOMEM, "out of memory");
			return;
		}
		for (size_t i = 0; i < h->n; i++)
			q[i] = h->q[(h->head + i) % h->cap];
		free(h->q);
		h->q = q;
		h->head = 0;
		h->cap = cap;
	}
	h->q[(h->head + h->n++) % h->cap] = *p;
}

static void hq_pump(struct sim *s, struct hstate *h)
{
	while (h->n && h->out < HOST_OUT) {
		struct pend *p = &h->q[h->head];
		int err = sim_flow_write(s, p->f, p->to_dst, p->loff, p->roff, p->len, p->imm, 0);

		if (err == -ENOMEM || err == -EAGAIN)
			return;
		if (err) {
			sim_fail(s, err, "post");
			return;
		}
		h->head = (h->head + 1) % h->cap;
		h->n--;
		h->out++;
	}
}

static int post_recvs(struct sim *s, struct sim_flow *f, bool at_dst, int n)
{
	for (int i = 0; i < n; i++) {
		int err = sim_flow_post_recv(s, f, at_dst, 0);

		if (err)
			return sim_fail(s, err, "post receive");
	}
	return 0;
}

static void host_check_done(struct sim *s, struct hstate *h)
{
	if (!h->done && h->sent == h->want_sent && h->recvd == h->want_recvd) {
		h->done = true;
		W(s)->got++;
	}
}

static __u32 chunk_len(const struct wstate *w, const struct sim *s, __u32 c)
{
	__u64 off = (__u64)c * s->cfg.chunk;

	return (__u32)(w->seg - off < s->cfg.chunk ? w->seg - off : s->cfg.chunk);
}

/* Ring: host r sends (step k, chunk c) of segment (r - k) mod N to r + 1. */
static void ring_send(struct sim *s, __u32 r, __u32 k, __u32 c)
{
	struct wstate *w = W(s);
	__u32 N = s->cfg.hosts, seg = (r + N - k % N) % N;
	__u64 off = (__u64)seg * w->seg + (__u64)c * s->cfg.chunk;
	struct pend p = { .f = w->edge[r], .to_dst = true, .len = chunk_len(w, s, c),
			  .imm = k << 16 | c, .loff = off, .roff = s->cfg.size + off };

	hq_push(s, &w->hs[r], &p);
}

static int ring_start(struct sim *s)
{
	struct wstate *w = W(s);
	__u32 N = s->cfg.hosts, steps = 2 * (N - 1);

	w->seg = s->cfg.size / N;
	w->nchunks = (__u32)((w->seg + s->cfg.chunk - 1) / s->cfg.chunk);
	if (w->nchunks > 65535 || steps > 65535)
		return sim_fail(s, -EINVAL, "ring: too many chunks per segment (raise --chunk)");
	w->want = N;
	w->edge = calloc(N, sizeof(*w->edge));
	w->hs = calloc(N, sizeof(*w->hs));
	if (!w->edge || !w->hs)
		return -ENOMEM;
	for (__u32 r = 0; r < N && !s->err; r++) {
		struct bulk *b = calloc(1, sizeof(*b));

		if (!b)
			return -ENOMEM;
		b->f.ctx = NULL;
		w->edge[r] = &b->f;
		if (sim_flow_open(s, &b->f, r, (r + 1) % N))
			return s->err;
		post_recvs(s, &b->f, true, RECVS);
		w->hs[r].want_sent = w->hs[r].want_recvd = (__u64)steps * w->nchunks;
	}
	for (__u32 r = 0; r < N && !s->err; r++) {
		for (__u32 c = 0; c < w->nchunks; c++)
			ring_send(s, r, 0, c);
		hq_pump(s, &w->hs[r]);
	}
	return s->err;
}

static void ring_wc(struct sim *s, struct sim_host *h, struct sim_flow *f,
		    const struct mroce_wc *wc)
{
	struct wstate *w = W(s);
	struct hstate *hs = &w->hs[h->id];

	if (wc->opcode == MROCE_WC_RDMA_WRITE) {
		hs->out--;
		hs->sent++;
	} else {
		__u32 k = wc->imm_data >> 16, c = wc->imm_data & 0xffff;

		hs->recvd++;
		post_recvs(s, f, true, 1);
		if (k + 1 < 2 * (s->cfg.hosts - 1))
			ring_send(s, h->id, k + 1, c);
	}
	hq_pump(s, hs);
	host_check_done(s, hs);
}

/* Tree: parent(r) = (r - 1) / 2; edge[r] is r -> parent, used both ways. */
#define TREE_DOWN	0x80000000u

static __u32 tree_children(__u32 r, __u32 N)
{
	return (2 * r + 1 < N) + (2 * r + 2 < N);
}

static void tree_send(struct sim *s, __u32 r, __u32 c, bool down)
{
	struct wstate *w = W(s);
	__u32 N = s->cfg.hosts;
	__u64 off = (__u64)c * s->cfg.chunk;
	struct pend p = { .len = chunk_len(w, s, c), .loff = off, .roff = s->cfg.size + off };

	if (!down) {
		p.f = w->edge[r];
		p.to_dst = true;
		p.imm = c;
		hq_push(s, &w->hs[r], &p);
		return;
	}
	for (__u32 ch = 2 * r + 1; ch <= 2 * r + 2 && ch < N; ch++) {
		p.f = w->edge[ch];
		p.to_dst = false;
		p.imm = TREE_DOWN | c;
		hq_push(s, &w->hs[r], &p);
	}
}

static int tree_start(struct sim *s)
{
	struct wstate *w = W(s);
	__u32 N = s->cfg.hosts;

	w->seg = s->cfg.size;
	w->nchunks = (__u32)((w->seg + s->cfg.chunk - 1) / s->cfg.chunk);
	w->want = N;
	w->edge = calloc(N, sizeof(*w->edge));
	w->hs = calloc(N, sizeof(*w->hs));
	if (!w->edge || !w->hs)
		return -ENOMEM;
	for (__u32 r = 0; r < N; r++) {
		struct hstate *hs = &w->hs[r];
		__u32 ch = tree_children(r, N);

		hs->up_count = calloc(w->nchunks, 1);
		if (!hs->up_count)
			return -ENOMEM;
		/* sends: up once (not the root), down once per child; receives: up from each child, down once */
		hs->want_sent = (__u64)w->nchunks * ((r ? 1 : 0) + ch);
		hs->want_recvd = (__u64)w->nchunks * (ch + (r ? 1 : 0));
		if (!r)
			continue;
		{
			struct bulk *b = calloc(1, sizeof(*b));

			if (!b)
				return -ENOMEM;
			w->edge[r] = &b->f;
			if (sim_flow_open(s, &b->f, r, (r - 1) / 2))
				return s->err;
			post_recvs(s, &b->f, true, RECVS);	/* the parent's, for chunks coming up */
			post_recvs(s, &b->f, false, RECVS);	/* the child's, for chunks coming down */
		}
	}
	for (__u32 r = 1; r < N && !s->err; r++) {
		if (tree_children(r, N))
			continue;
		for (__u32 c = 0; c < w->nchunks; c++)
			tree_send(s, r, c, false);
		hq_pump(s, &w->hs[r]);
	}
	if (N == 1)
		w->got = 1;
	return s->err;
}

static void tree_wc(struct sim *s, struct sim_host *h, struct sim_flow *f,
		    const struct mroce_wc *wc)
{
	struct wstate *w = W(s);
	struct hstate *hs = &w->hs[h->id];
	__u32 r = h->id;

	if (wc->opcode == MROCE_WC_RDMA_WRITE) {
		hs->out--;
		hs->sent++;
	} else {
		__u32 c = wc->imm_data & ~TREE_DOWN;
		bool down = wc->imm_data & TREE_DOWN;

		hs->recvd++;
		post_recvs(s, f, !down, 1);
		if (down) {
			tree_send(s, r, c, true);
		} else if (++hs->up_count[c] == tree_children(r, s->cfg.hosts)) {
			tree_send(s, r, c, r == 0);	/* reduced: up, or from the root down */
		}
	}
	hq_pump(s, hs);
	host_check_done(s, hs);
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
	switch (s->cfg.work) {
	case SIM_ALLTOALL:
		err = a2a_start(s);
		break;
	case SIM_ALLREDUCE_RING:
		err = ring_start(s);
		break;
	case SIM_ALLREDUCE_TREE:
		err = tree_start(s);
		break;
	case SIM_PERMUTATION:
		err = perm_start(s);
		break;
	default:
		err = incast_start(s);
		break;
	}
	return err ? err : background_start(s);
}

static void work_wc(struct sim *s, struct sim_host *h, const struct mroce_wc *wc)
{
	struct sim_flow *f = wc->qp_num < MROCE_MAX_QPS ? h->by_qpn[wc->qp_num] : NULL;

	if (!f && wc->status == MROCE_WC_WR_FLUSH_ERR)
		return;	/* a receive left posted on a connection the workload closed */
	if (!f) {
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
	if (f->ctx) {
		bulk_wc(s, f->ctx, h->id == f->src && wc->opcode == MROCE_WC_RDMA_WRITE, wc);
		return;
	}
	if (s->cfg.work == SIM_ALLREDUCE_RING)
		ring_wc(s, h, f, wc);
	else
		tree_wc(s, h, f, wc);
}

static bool work_done(struct sim *s)
{
	struct wstate *w = W(s);

	if (w->got < w->want)
		return false;
	w->stop_bg = true;
	return true;
}

static void work_free(struct sim *s)
{
	struct wstate *w = W(s);

	if (!w)
		return;
	for (size_t i = 0; i < w->nbulk; i++) {
		sim_flow_close(s, &w->bulks[i]->f);
		free(w->bulks[i]);
	}
	free(w->bulks);
	for (__u32 r = 0; w->edge && r < s->cfg.hosts; r++) {
		if (w->edge[r]) {
			sim_flow_close(s, w->edge[r]);
			free(w->edge[r]);	/* the bulk it is the first member of */
		}
	}
	free(w->edge);
	for (__u32 r = 0; w->hs && r < s->cfg.hosts; r++) {
		free(w->hs[r].q);
		free(w->hs[r].up_count);
	}
	free(w->hs);
	free(w->next_step);
	free(w->iter);
	free(w->done);
	for (__u32 r = 0; w->wait && r < s->cfg.hosts; r++)
		free(w->wait[r].v);
	free(w->wait);
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
	__u32 N = c->hosts;
	__u64 bad = 0;

	switch (c->work) {
	case SIM_ALLTOALL: {
		__u64 blk = c->size / N;

		for (__u32 r = 0; r < N; r++)
			for (__u32 q = 0; q < N; q++)
				if (q != r)
					bad += check(s, r, c->size + q * blk, q, r * blk, blk);
		break;
	}
	case SIM_ALLREDUCE_RING:
		/* every segment last written by the left neighbour, from its own data */
		for (__u32 r = 0; r < N; r++)
			bad += check(s, r, c->size, (r + N - 1) % N, 0, (c->size / N) * N);
		break;
	case SIM_PERMUTATION:
		for (size_t i = 0; i < W(s)->nbulk; i++) {
			const struct bulk *b = W(s)->bulks[i];

			if (!b->forever)
				bad += check(s, b->f.dst, c->size, b->f.src, 0, c->size);
		}
		break;
	default:
		break;	/* incast and tree write one place many times: counts only */
	}
	return bad;
}

static const struct sim_work_ops work_ops = {
	.name = "mroce-coll schedules", .start = work_start, .on_wc = work_wc,
	.done = work_done, .verify = work_verify, .free = work_free,
};

const struct sim_work_ops *sim_work_ops(enum sim_workload wl)
{
	(void)wl;
	return &work_ops;
}
