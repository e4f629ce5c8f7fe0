// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The event queue, in (time, creation order) order, so a seed replays
 * exactly. Nearly every event falls a few microseconds ahead (a frame's next
 * hop, a host's next tick), so most go on a timing wheel of 1 ns buckets
 * 33 us long; the rest (timeouts, faults) wait in a binary heap beside it.
 * A binary heap alone cost 15-18% of a 256-host run, most of it in
 * mispredicted comparisons and cache misses 16 levels deep.
 *
 * Invariants (b(t) is t's bucket number, t >> EVQ_SHIFT):
 *  - cur[cur_i, cur_n): every event with b(t) <= cursor, sorted;
 *  - the wheel: events with cursor < b(t) < cursor + EVQ_BUCKETS, one list
 *    per bucket in creation order (a bucket's times are sorted when the
 *    cursor reaches it);
 *  - the heap: events pushed beyond the wheel, every one with b(t) >= cursor.
 * The cursor moves to the next bucket only once cur is empty and the heap
 * has nothing before that bucket.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define EVQ_SHIFT	10			/* a bucket: 1.024 ns */
#define EVQ_BUCKETS	(1u << 15)		/* the wheel: 33.5 us */
#define EVQ_NIL		UINT32_MAX

struct sim_evnode {
	struct sim_event e;
	__u32	next;
};

static bool before(const struct sim_event *a, const struct sim_event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* Room for one more in *v of *cap esz-byte entries, n of them used: doubled when full. */
static int grow(void **v, size_t *cap, size_t n, size_t esz)
{
	size_t to = *cap ? 2 * *cap : 256;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, to * esz);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = to;
	return 0;
}

/* ---- the heap, for what lies beyond the wheel */

static int heap_push(struct sim_evq *q, const struct sim_event *e)
{
	size_t i;

	if (grow((void **)&q->h, &q->cap, q->n, sizeof(*q->h)))
		return -ENOMEM;
	for (i = q->n++; i && before(e, &q->h[(i - 1) / 2]); i = (i - 1) / 2)
		q->h[i] = q->h[(i - 1) / 2];
	q->h[i] = *e;
	return 0;
}

static void heap_pop(struct sim_evq *q, struct sim_event *out)
{
	struct sim_event last;
	size_t i = 0;

	*out = q->h[0];
	last = q->h[--q->n];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= q->n)
			break;
		if (c + 1 < q->n && before(&q->h[c + 1], &q->h[c]))
			c++;
		if (!before(&q->h[c], &last))
			break;
		q->h[i] = q->h[c];
		i = c;
	}
	if (q->n)
		q->h[i] = last;
}

/* ---- the current bucket: a sorted array */

static int cur_insert(struct sim_evq *q, const struct sim_event *e)
{
	size_t j;

	if (q->cur_n == q->cur_cap) {
		if (q->cur_i) {
			memmove(q->cur, q->cur + q->cur_i, (q->cur_n - q->cur_i) * sizeof(*q->cur));
			q->cur_n -= q->cur_i;
			q->cur_i = 0;
		} else if (grow((void **)&q->cur, &q->cur_cap, q->cur_n, sizeof(*q->cur))) {
			return -ENOMEM;
		}
	}
	/* after everything not later: what was popped is never later than e */
	for (j = q->cur_n; j > q->cur_i && before(e, &q->cur[j - 1]); j--)
		q->cur[j] = q->cur[j - 1];
	q->cur[j] = *e;
	q->cur_n++;
	return 0;
}

/* ---- the wheel */

static int wheel_init(struct sim_evq *q)
{
	q->head = malloc(EVQ_BUCKETS * sizeof(*q->head));
	q->tail = malloc(EVQ_BUCKETS * sizeof(*q->tail));
	q->bits = calloc(EVQ_BUCKETS / 64, sizeof(*q->bits));
	if (!q->head || !q->tail || !q->bits) {
		free(q->head);	/* all or nothing: a later push tries again */
		free(q->tail);
		free(q->bits);
		q->head = q->tail = NULL;
		q->bits = NULL;
		return -ENOMEM;
	}
	memset(q->head, 0xff, EVQ_BUCKETS * sizeof(*q->head));	/* EVQ_NIL */
	q->free_node = EVQ_NIL;
	return 0;
}

static int wheel_add(struct sim_evq *q, __u64 b, const struct sim_event *e)
{
	__u32 i = (__u32)(b & (EVQ_BUCKETS - 1)), n;

	if (q->free_node != EVQ_NIL) {
		n = q->free_node;
		q->free_node = q->nodes[n].next;
	} else {
		if (q->nodes_n == EVQ_NIL ||
		    grow((void **)&q->nodes, &q->nodes_cap, q->nodes_n, sizeof(*q->nodes)))
			return -ENOMEM;
		n = q->nodes_n++;
	}
	q->nodes[n].e = *e;
	q->nodes[n].next = EVQ_NIL;
	if (q->head[i] == EVQ_NIL) {
		q->head[i] = n;
		q->bits[i / 64] |= 1ull << (i % 64);
	} else {
		q->nodes[q->tail[i]].next = n;
	}
	q->tail[i] = n;
	q->wheel_n++;
	return 0;
}

/* The first bucket after the cursor with events; the wheel is not empty. */
static __u64 wheel_next(const struct sim_evq *q)
{
	__u32 from = (__u32)((q->cursor + 1) & (EVQ_BUCKETS - 1));
	__u32 w = from / 64;
	__u64 m = q->bits[w] & (~0ull << (from % 64));

	while (!m) {
		w = (w + 1) % (EVQ_BUCKETS / 64);
		m = q->bits[w];
	}
	return q->cursor + 1 + ((w * 64 + (__u32)__builtin_ctzll(m) - from) & (EVQ_BUCKETS - 1));
}

/* Bucket b becomes the current one, its events sorted into cur (empty before). */
static int wheel_load(struct sim_evq *q, __u64 b)
{
	__u32 i = (__u32)(b & (EVQ_BUCKETS - 1));

	q->cur_i = q->cur_n = 0;
	for (__u32 n = q->head[i], next; n != EVQ_NIL; n = next) {
		int err = cur_insert(q, &q->nodes[n].e);

		if (err)
			return err;
		next = q->nodes[n].next;
		q->nodes[n].next = q->free_node;
		q->free_node = n;
		q->wheel_n--;
	}
	q->head[i] = EVQ_NIL;
	q->bits[i / 64] &= ~(1ull << (i % 64));
	q->cursor = b;
	return 0;
}

int sim_evq_push(struct sim_evq *q, __u64 t, __u32 type, void *p, __u32 arg)
{
	struct sim_event e = { .t = t, .seq = q->seq, .p = p, .type = type, .arg = arg };
	__u64 b = t >> EVQ_SHIFT;
	int err;

	if (!q->head && (err = wheel_init(q)))
		return err;
	if (b <= q->cursor)
		err = cur_insert(q, &e);
	else if (b - q->cursor < EVQ_BUCKETS)
		err = wheel_add(q, b, &e);
	else
		err = heap_push(q, &e);
	if (err)
		return err;
	q->seq++;
	q->count[type & 3]++;
	return 0;
}

bool sim_evq_pop(struct sim_evq *q, struct sim_event *out)
{
	for (;;) {
		if (q->cur_i < q->cur_n) {
			if (q->n && before(&q->h[0], &q->cur[q->cur_i]))
				heap_pop(q, out);
			else
				*out = q->cur[q->cur_i++];
			break;
		}
		if (!q->wheel_n) {
			if (!q->n)
				return false;
			heap_pop(q, out);
			q->cur_i = q->cur_n = 0;
			q->cursor = out->t >> EVQ_SHIFT;	/* an empty wheel starts again here */
			break;
		}
		__u64 b = wheel_next(q);

		if (q->n && (q->h[0].t >> EVQ_SHIFT) < b) {
			heap_pop(q, out);
			break;
		}
		if ((q->err = wheel_load(q, b)))
			return false;	/* out of memory: the run ends (sim.c says so) */
	}
	q->count[out->type & 3]--;
	/*
	 * The next event's frame or host was last touched long ago: fetch it
	 * while this one is handled (a cache miss on each frame's header was a
	 * tenth of the run).
	 */
	if (q->cur_i < q->cur_n)
		__builtin_prefetch(q->cur[q->cur_i].p);
	return true;
}

size_t sim_evq_count(const struct sim_evq *q, __u32 type)
{
	return q->count[type & 3];
}

void sim_evq_free(struct sim_evq *q)
{
	free(q->h);
	free(q->cur);
	free(q->head);
	free(q->tail);
	free(q->bits);
	free(q->nodes);
	memset(q, 0, sizeof(*q));
}
