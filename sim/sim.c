// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The simulation loop: events in time order until the workload is done. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

__u32 sim_rand(struct sim *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return (__u32)((s->rng * 2685821657736338717ull) >> 32);
}

int sim_fail(struct sim *s, int err, const char *fmt, ...)
{
	va_list ap;

	if (s->err)
		return s->err;
	s->err = err < 0 ? err : -EIO;
	va_start(ap, fmt);
	vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
	return s->err;
}

static void sample(struct sim *s)
{
	struct sim_sample *x;
	__u64 rx = 0, busiest = 0;
	__u32 qs = 0, qh = 0;

	if (s->nsamples == s->cap_samples) {
		size_t cap = s->cap_samples ? 2 * s->cap_samples : 1024;
		struct sim_sample *v = realloc(s->samples, cap * sizeof(*v));

		if (!v) {
			sim_fail(s, -ENOMEM, "samples: out of memory");
			return;
		}
		s->samples = v;
		s->cap_samples = cap;
	}
	for (__u32 h = 0; h < s->cfg.hosts; h++) {
		struct sim_host *hs = &s->hosts[h];

		rx += hs->rx_bytes;
		if (hs->rx_bytes - hs->rx_sampled > busiest)
			busiest = hs->rx_bytes - hs->rx_sampled;
		hs->rx_sampled = hs->rx_bytes;
	}
	for (__u32 p = 0; p < s->cfg.planes; p++) {
		struct sim_plane *pl = &s->planes[p];

		for (__u32 i = 0; i < s->leaves * s->cfg.spines; i++) {
			if (pl->up_s[i].peak_sample > qs)
				qs = pl->up_s[i].peak_sample;
			if (pl->dn_s[i].peak_sample > qs)
				qs = pl->dn_s[i].peak_sample;
			pl->up_s[i].peak_sample = pl->dn_s[i].peak_sample = 0;
		}
		for (__u32 h = 0; h < s->cfg.hosts; h++) {
			if (pl->dn_h[h].peak_sample > qh)
				qh = pl->dn_h[h].peak_sample;
			pl->dn_h[h].peak_sample = 0;
		}
	}
	x = &s->samples[s->nsamples++];
	x->t_ps = s->now - s->start_ps;
	x->rx_bytes = rx;
	x->rx_busiest = busiest;
	x->q_spine_max = qs;
	x->q_host_max = qh;
}

int sim_run(struct sim *s)
{
	__u64 limit;
	struct sim_event e;
	int err;

	s->rng = s->cfg.seed * 0x9e3779b97f4a7c15ull + 1;
	s->now = s->start_ps = PS_PER_US * 1000;	/* engines' clocks start at 1 ms */
	if ((err = sim_fabric_init(s)))
		return sim_fail(s, err, "fabric: out of memory");
	if ((err = sim_hosts_init(s)))
		return err;
	if ((err = sim_trace_open(s)))
		return sim_fail(s, err, "%s: cannot write the trace", s->cfg.trace_out);
	s->work = sim_work_ops(s->cfg.work);
	if ((err = s->work->start(s)))
		return sim_fail(s, err, "workload");
	sim_fabric_schedule_faults(s);
	sim_evq_push(&s->q, s->now, EV_SAMPLE, NULL, 0);
	for (__u32 h = 0; h < s->cfg.hosts; h++)
		sim_host_wake(&s->hosts[h], s->now);
	limit = s->start_ps + s->cfg.limit_us * PS_PER_US;
	while (!s->err && sim_evq_pop(&s->q, &e)) {
		if (e.t > limit) {
			/* still on its link: back in the queue, for the counts and sim_free */
			if (sim_evq_push(&s->q, e.t, e.type, e.p, e.arg) && e.type == EV_FRAME)
				sim_frame_free(s, e.p);
			s->now = limit;
			return sim_fail(s, -ETIMEDOUT, "not done after %llu us of virtual time",
					(unsigned long long)s->cfg.limit_us);
		}
		s->now = e.t;
		s->st.events++;
		switch (e.type) {
		case EV_FRAME:
			sim_fabric_arrive(s, e.p);
			break;
		case EV_HOST: {
			struct sim_host *h = e.p;

			if (h->wake_ps == e.t)	/* else an earlier wake replaced it */
				sim_host_run(h);
			break;
		}
		case EV_FAULT:
			sim_fabric_fault(s, e.arg);
			break;
		case EV_SAMPLE:
			sample(s);
			sim_evq_push(&s->q, s->now + (__u64)s->cfg.sample_us * PS_PER_US, EV_SAMPLE,
				     NULL, 0);
			break;
		}
		if (!s->end_ps && s->work->done(s)) {
			s->end_ps = s->now;
			sample(s);
			break;
		}
	}
	if (!s->err && s->q.err)
		return sim_fail(s, s->q.err, "event queue: out of memory");
	if (!s->err && !s->end_ps)
		return sim_fail(s, -EPIPE, "the fabric went quiet before the workload was done");
	if (!s->err && s->cfg.verify)
		s->st.verify_bad = s->work->verify(s);
	return s->err;
}

__u64 sim_frames_in_flight(const struct sim *s)
{
	return sim_evq_count(&s->q, EV_FRAME);
}

void sim_free(struct sim *s)
{
	struct sim_event e;

	if (s->work)
		s->work->free(s);
	sim_trace_close(s);	/* one the caller did not close (an error's) */
	while (sim_evq_pop(&s->q, &e))
		if (e.type == EV_FRAME)
			sim_frame_free(s, e.p);
	sim_evq_free(&s->q);
	sim_hosts_free(s);
	sim_frames_release(s);
	sim_fabric_free(s);
	free(s->flows);
	free(s->samples);
	free(s->iter_start_ps);
	free(s->iter_end_ps);
	s->iter_start_ps = s->iter_end_ps = NULL;
	s->flows = NULL;
	s->samples = NULL;
}
