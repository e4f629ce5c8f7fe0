// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The event queue: a binary heap on (time, creation order), so a seed replays exactly. */
#include <errno.h>
#include <stdlib.h>

#include "sim.h"

static bool before(const struct sim_event *a, const struct sim_event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int sim_evq_push(struct sim_evq *q, __u64 t, __u32 type, void *p, __u32 arg)
{
	struct sim_event e = { .t = t, .seq = q->seq++, .p = p, .type = type, .arg = arg };
	size_t i;

	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 4096;
		struct sim_event *h = realloc(q->h, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		q->h = h;
		q->cap = cap;
	}
	for (i = q->n++; i && before(&e, &q->h[(i - 1) / 2]); i = (i - 1) / 2)
		q->h[i] = q->h[(i - 1) / 2];
	q->h[i] = e;
	return 0;
}

bool sim_evq_pop(struct sim_evq *q, struct sim_event *out)
{
	struct sim_event last;
	size_t i = 0;

	if (!q->n)
		return false;
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
	if (q->n) {
		q->h[i] = last;
		/*
		 * The next event's frame or host was last touched long ago: fetch
		 * it while this one is handled (a cache miss on each frame's
		 * header was a tenth of the run).
		 */
		__builtin_prefetch(q->h[0].p);
	}
	return true;
}

void sim_evq_free(struct sim_evq *q)
{
	free(q->h);
	q->h = NULL;
	q->n = q->cap = 0;
}
