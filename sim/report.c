// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What a run found: against the ideal, per flow, per queue; as text, JSON and a time series. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sim.h"

/* Bytes per microsecond of a link of gbps. */
static double bpus(double gbps)
{
	return gbps * 1000.0 / 8.0;
}

/*
 * The ideal completion time: the payload over the narrowest capacity it
 * must cross, the hosts' links or the leaf-spine layer (every cross-leaf
 * byte crosses one uplink). All-reduce's bound is the ring's, 2(N-1)/N of
 * the data through every host's link, whichever algorithm runs.
 */
double sim_ideal_us(const struct sim *s)
{
	const struct sim_cfg *c = &s->cfg;
	double N = c->hosts, hpl = c->hosts_per_leaf, P = c->planes;
	double host = bpus(c->host_gbps) * P, core = bpus(c->spine_gbps) * s->leaves * c->spines * P;
	double t_host, t_core = 0;

	switch (c->work) {
	case SIM_ALLTOALL: {
		double blk = (double)(c->size / c->hosts);

		t_host = blk * (N - 1) / host;
		t_core = blk * N * (N - hpl) / core;
		break;
	}
	case SIM_ALLREDUCE:
		t_host = 2.0 * (N - 1) / N * (double)(c->size / c->hosts) * N / host;
		break;
	case SIM_REDUCE_SCATTER:
	case SIM_ALLGATHER:	/* every host sends, and receives, all blocks but its own */
		t_host = (N - 1) / N * (double)(c->size / c->hosts) * N / host;
		break;
	case SIM_BROADCAST:	/* every host but the root receives it all */
		t_host = (double)c->size / host;
		break;
	case SIM_PERMUTATION:
		t_host = (double)c->size / host;
		t_core = (double)c->size * N * (N - hpl) / (N - 1) / core;
		break;
	default:
		t_host = (double)c->size * c->incast / host;
		break;
	}
	return t_host > t_core ? t_host : t_core;
}

/*
 * Iteration i of an all-to-all: from the last host to finish the one
 * before (the first: from the start) to the last to finish this one. Hosts
 * start an iteration as they finish the one before, so iterations overlap;
 * end to end is what a job repeating the collective gets per iteration.
 */
double sim_iter_us(const struct sim *s, __u32 i)
{
	__u64 from = i ? s->iter_end_ps[i - 1] : s->iter_start_ps[0];

	if (!s->iter_end_ps || !s->iter_end_ps[i] || from > s->iter_end_ps[i])
		return 0;
	return (double)(s->iter_end_ps[i] - from) / PS_PER_US;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
	size_t i = (size_t)ceil(p * (double)n) - 1;

	return n ? v[i < n ? i : n - 1] : 0;
}

void sim_result(const struct sim *s, double wall_s, struct sim_result *r)
{
	double *gp = NULL, *fct = NULL, sum = 0, sq = 0;
	size_t n = 0;
	struct rusage ru;

	memset(r, 0, sizeof(*r));
	r->completion_us = s->end_ps ? (double)(s->end_ps - s->start_ps) / PS_PER_US : 0;
	if (s->end_ps && s->cfg.iterations > 1)	/* the last iteration's */
		r->completion_us = sim_iter_us(s, s->cfg.iterations - 1);
	r->ideal_us = sim_ideal_us(s);
	r->ratio = r->completion_us && r->ideal_us ? r->completion_us / r->ideal_us : 0;
	gp = calloc(s->nflows + 1, sizeof(*gp));
	fct = calloc(s->nflows + 1, sizeof(*fct));
	for (size_t i = 0; gp && fct && i < s->nflows; i++) {
		const struct sim_flow *f = s->flows[i];
		double t;

		if (f->background || !f->done_ps || f->done_ps <= f->start_ps)
			continue;
		t = (double)(f->done_ps - f->start_ps) / PS_PER_US;
		if (!r->slowest || f->done_ps - f->start_ps >
				   r->slowest->done_ps - r->slowest->start_ps)
			r->slowest = f;
		fct[n] = t;
		gp[n] = (double)f->bytes * 8 / (t * 1000);	/* Gbit/s */
		sum += gp[n];
		sq += gp[n] * gp[n];
		n++;
	}
	if (n) {
		r->goodput_gbps_mean = sum / (double)n;
		r->jain = sum * sum / ((double)n * sq);
		qsort(gp, n, sizeof(*gp), cmp_double);
		qsort(fct, n, sizeof(*fct), cmp_double);
		r->goodput_gbps_min = gp[0];
		r->fct_p50_us = pct(fct, n, 0.5);
		r->fct_p99_us = pct(fct, n, 0.99);
		r->fct_max_us = fct[n - 1];
	}
	free(gp);
	free(fct);
	for (__u32 p = 0; s->planes && p < s->cfg.planes; p++) {
		const struct sim_plane *pl = &s->planes[p];

		for (__u32 i = 0; i < s->leaves * s->cfg.spines; i++) {
			r->drops_full_spine += pl->up_s[i].drops_full + pl->dn_s[i].drops_full;
			if (pl->up_s[i].peak > r->peak_q_spine)
				r->peak_q_spine = pl->up_s[i].peak;
			if (pl->dn_s[i].peak > r->peak_q_spine)
				r->peak_q_spine = pl->dn_s[i].peak;
		}
		for (__u32 h = 0; h < s->cfg.hosts; h++) {
			r->drops_full_host += pl->up_h[h].drops_full + pl->dn_h[h].drops_full;
			if (pl->dn_h[h].peak > r->peak_q_host)
				r->peak_q_host = pl->dn_h[h].peak;
		}
	}
	r->wall_s = wall_s;
	r->pkts_per_min = wall_s > 0 ? (double)s->st.frames / wall_s * 60 : 0;
	r->cpu_ns_per_pkt = s->st.frames ? wall_s * 1e9 / (double)s->st.frames : 0;
	if (!getrusage(RUSAGE_SELF, &ru))
		r->rss_kib = ru.ru_maxrss;
	r->state_host_bytes = s->st.host_bytes;
	r->state_conn_bytes = s->st.qp_bytes;
	r->state_conn_used_bytes = s->st.qp_used_bytes;
}

void sim_print(const struct sim *s, const struct sim_result *r, FILE *out)
{
	const struct sim_cfg *c = &s->cfg;

	fprintf(out, "mroce-sim: %u hosts (%u leaves x %u, %u spines, %u plane%s, %u/%u Gbit/s), %s %s, "
		"%llu bytes, seed %llu\n", c->hosts, s->leaves, c->hosts_per_leaf, c->spines,
		c->planes, c->planes > 1 ? "s" : "", c->host_gbps, c->spine_gbps,
		sim_work_name(c->work), sim_mode_name(c->mode), (unsigned long long)c->size,
		(unsigned long long)c->seed);
	if (s->err) {
		char why[96];

		mroce_strerror(s->err, why, sizeof(why));
		fprintf(out, "  FAILED: %s: %s\n", s->errmsg, why);
	}
	fprintf(out, "  completion %.1f us, ideal %.1f us, ratio %.3f\n", r->completion_us,
		r->ideal_us, r->ratio);
	if (c->iterations > 1) {
		fprintf(out, "  iterations, each from the one before's end (us; the last is the completion):");
		for (__u32 i = 0; i < c->iterations; i++)
			fprintf(out, " %.1f", sim_iter_us(s, i));
		fprintf(out, "\n  iterations started at (us):");
		for (__u32 i = 0; i < c->iterations; i++)
			fprintf(out, " %.1f", s->iter_start_ps[i] == UINT64_MAX ? 0 :
				(double)(s->iter_start_ps[i] - s->start_ps) / PS_PER_US);
		fprintf(out, "\n");
	}
	if (s->st.algo)
		fprintf(out, "  algorithm %s (libmroce-coll); connections made %llu, at most %u open "
			"at a host, waits for room %llu\n", s->st.algo,
			(unsigned long long)s->st.conns_opened, s->st.conns_max,
			(unsigned long long)s->st.conns_waited);
	if (r->fct_max_us)
		fprintf(out, "  flows: goodput mean %.1f min %.1f Gbit/s, fct p50 %.1f p99 %.1f max %.1f us, "
			"jain %.3f\n", r->goodput_gbps_mean, r->goodput_gbps_min, r->fct_p50_us,
			r->fct_p99_us, r->fct_max_us, r->jain);
	if (r->slowest)
		fprintf(out, "  slowest flow: %u -> %u from %.1f us, %.1f us, resent %llu, timeouts %llu, "
			"paths retired %llu\n", r->slowest->src, r->slowest->dst,
			(double)(r->slowest->start_ps - s->start_ps) / PS_PER_US,
			(double)(r->slowest->done_ps - r->slowest->start_ps) / PS_PER_US,
			(unsigned long long)r->slowest->retx, (unsigned long long)r->slowest->rtos,
			(unsigned long long)r->slowest->retired);
	fprintf(out, "  frames %llu, resent %llu, timeouts %llu, tail probes %llu, paths retired %llu, "
		"CE %llu; drops: buffer %llu, loss %llu, failed links %llu\n",
		(unsigned long long)s->st.frames, (unsigned long long)s->st.retx,
		(unsigned long long)s->st.rtos, (unsigned long long)s->st.probes,
		(unsigned long long)s->st.retired,
		(unsigned long long)s->st.marks, (unsigned long long)s->st.drops_buf,
		(unsigned long long)s->st.drops_loss, (unsigned long long)s->st.drops_down);
	fprintf(out, "  losses the per-path SACKs proved %llu, paths suspected %llu, planes given up "
		"%llu; longest frame latency %.2f us\n", (unsigned long long)s->st.psack_lost,
		(unsigned long long)s->st.suspected, (unsigned long long)s->st.plane_downs,
		(double)s->st.latency_max_ps / PS_PER_US);
	fprintf(out, "  peak queue: leaf-spine %u B, leaf-host %u B; dropped at a full buffer: "
		"leaf-spine %llu, host links %llu\n", r->peak_q_spine, r->peak_q_host,
		(unsigned long long)r->drops_full_spine, (unsigned long long)r->drops_full_host);
	fprintf(out, "  events %llu, host wake-ups %llu, progress calls %llu\n",
		(unsigned long long)s->st.events, (unsigned long long)s->st.host_runs,
		(unsigned long long)s->st.progress_calls);
	if (c->verify)
		fprintf(out, "  verify: %llu bytes wrong\n", (unsigned long long)s->st.verify_bad);
	fprintf(out, "  state: %llu B per host, %llu B per connection end (%llu B once its flow is done); "
		"memory %ld MiB; %.2f s wall, %.3g frames/min, %.0f ns per frame\n",
		(unsigned long long)r->state_host_bytes, (unsigned long long)r->state_conn_bytes,
		(unsigned long long)r->state_conn_used_bytes,
		r->rss_kib / 1024, r->wall_s, r->pkts_per_min, r->cpu_ns_per_pkt);
}

/*
 * Close a file written with stdio: 0, or -EIO if any write failed (a full
 * disk shows on an fprintf whose buffer went out, not only on the close).
 */
int sim_fclose(FILE *f)
{
	bool bad = ferror(f);

	if (fclose(f))
		return -errno;
	return bad ? -EIO : 0;
}

int sim_write_json(const struct sim *s, const struct sim_result *r, const char *path)
{
	const struct sim_cfg *c = &s->cfg;
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "{\n  \"config\": {\"hosts\": %u, \"hosts_per_leaf\": %u, \"leaves\": %u, "
		"\"spines\": %u, \"planes\": %u, \"host_gbps\": %u, \"spine_gbps\": %u, "
		"\"prop_ns\": %u, \"buf_bytes\": %u, \"ecn_bytes\": %u, \"mtu\": %u, "
		"\"loss\": %g, \"link_loss\": %g, \"mode\": \"%s\", \"paths\": %u, "
		"\"workload\": \"%s\", \"size\": %llu, \"chunk\": %u, \"window\": %u, \"conns\": %u, "
		"\"keep_connections\": %s, \"iterations\": %u, \"no_grants\": %s, "
		"\"incast\": %u, \"background\": %u, \"faults\": %u, \"seed\": %llu},\n",
		c->hosts, c->hosts_per_leaf, s->leaves, c->spines, c->planes, c->host_gbps,
		c->spine_gbps, c->prop_ns, c->buf_bytes, c->ecn_bytes, c->mtu, c->loss, c->link_loss,
		sim_mode_name(c->mode), c->paths, sim_work_name(c->work),
		(unsigned long long)c->size, c->chunk, c->window, c->conns, c->keep_conns ? "true" : "false",
		c->iterations, c->no_grants ? "true" : "false", c->incast, c->background,
		c->nfaults, (unsigned long long)c->seed);
	fprintf(f, "  \"ok\": %s,\n  \"error\": \"%s\",\n", s->err ? "false" : "true",
		s->err ? s->errmsg : "");
	fprintf(f, "  \"completion_us\": %.3f,\n  \"ideal_us\": %.3f,\n  \"ratio\": %.4f,\n",
		r->completion_us, r->ideal_us, r->ratio);
	fprintf(f, "  \"iterations_us\": [");
	for (__u32 i = 0; i < c->iterations; i++)
		fprintf(f, "%s%.3f", i ? ", " : "", c->iterations > 1 ? sim_iter_us(s, i) : r->completion_us);
	fprintf(f, "],\n  \"algo\": \"%s\",\n  \"conns_opened\": %llu,\n  \"conns_open_max\": %u,\n",
		s->st.algo ? s->st.algo : "", (unsigned long long)s->st.conns_opened, s->st.conns_max);
	fprintf(f, "  \"flows\": {\"done\": %llu, \"goodput_gbps_mean\": %.3f, "
		"\"goodput_gbps_min\": %.3f, \"fct_p50_us\": %.3f, \"fct_p99_us\": %.3f, "
		"\"fct_max_us\": %.3f, \"jain\": %.4f},\n",
		(unsigned long long)s->st.flows_done, r->goodput_gbps_mean, r->goodput_gbps_min,
		r->fct_p50_us, r->fct_p99_us, r->fct_max_us, r->jain);
	fprintf(f, "  \"frames\": %llu,\n  \"hops\": %llu,\n  \"events\": %llu,\n"
		"  \"retransmissions\": %llu,\n  \"data_packets\": %llu,\n  \"timeouts\": %llu,\n"
		"  \"tail_probes\": %llu,\n"
		"  \"paths_retired\": %llu,\n  \"ce_marks\": %llu,\n  \"ce_echoed\": %llu,\n"
		"  \"psack_lost\": %llu,\n  \"paths_suspected\": %llu,\n  \"plane_downs\": %llu,\n"
		"  \"drops\": {\"buffer\": %llu, \"loss\": %llu, \"failed_links\": %llu},\n",
		(unsigned long long)s->st.frames, (unsigned long long)s->st.hops,
		(unsigned long long)s->st.events, (unsigned long long)s->st.retx,
		(unsigned long long)s->st.tx_pkts, (unsigned long long)s->st.rtos,
		(unsigned long long)s->st.probes,
		(unsigned long long)s->st.retired, (unsigned long long)s->st.marks,
		(unsigned long long)s->st.ce, (unsigned long long)s->st.psack_lost,
		(unsigned long long)s->st.suspected, (unsigned long long)s->st.plane_downs,
		(unsigned long long)s->st.drops_buf,
		(unsigned long long)s->st.drops_loss, (unsigned long long)s->st.drops_down);
	fprintf(f, "  \"peak_queue_bytes\": {\"leaf_spine\": %u, \"leaf_host\": %u},\n",
		r->peak_q_spine, r->peak_q_host);
	fprintf(f, "  \"drops_full\": {\"leaf_spine\": %llu, \"host_links\": %llu},\n",
		(unsigned long long)r->drops_full_spine, (unsigned long long)r->drops_full_host);
	if (r->slowest) {
		const struct sim_flow *w = r->slowest;

		fprintf(f, "  \"slowest_flow\": {\"src\": %u, \"dst\": %u, \"start_us\": %.3f, "
			"\"fct_us\": %.3f, \"bytes\": %llu, \"resent\": %llu, \"timeouts\": %llu, "
			"\"paths_retired\": %llu},\n", w->src, w->dst,
			(double)(w->start_ps - s->start_ps) / PS_PER_US,
			(double)(w->done_ps - w->start_ps) / PS_PER_US, (unsigned long long)w->bytes,
			(unsigned long long)w->retx, (unsigned long long)w->rtos,
			(unsigned long long)w->retired);
	}
	fprintf(f, "  \"verify_bad_bytes\": %llu,\n", (unsigned long long)s->st.verify_bad);
	fprintf(f, "  \"state_bytes\": {\"per_host\": %llu, \"per_connection_end\": %llu, "
		"\"per_connection_end_used\": %llu},\n",
		(unsigned long long)r->state_host_bytes, (unsigned long long)r->state_conn_bytes,
		(unsigned long long)r->state_conn_used_bytes);
	fprintf(f, "  \"simulator\": {\"wall_s\": %.3f, \"frames_per_min\": %.0f, "
		"\"ns_per_frame\": %.1f, \"max_rss_kib\": %ld}\n}\n",
		r->wall_s, r->pkts_per_min, r->cpu_ns_per_pkt, r->rss_kib);
	return sim_fclose(f);
}

int sim_write_dat(const struct sim *s, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "# t_us delivered_gbps busiest_host_gbps peak_queue_leaf_spine_bytes "
		"peak_queue_leaf_host_bytes (wire bytes, every frame; queues: deepest in the period)\n");
	for (size_t i = 1; i < s->nsamples; i++) {
		const struct sim_sample *a = &s->samples[i - 1], *b = &s->samples[i];
		double dt = (double)(b->t_ps - a->t_ps) / PS_PER_US;

		fprintf(f, "%.3f %.3f %.3f %u %u\n", (double)b->t_ps / PS_PER_US,
			dt > 0 ? (double)(b->rx_bytes - a->rx_bytes) * 8 / (dt * 1000) : 0,
			dt > 0 ? (double)b->rx_busiest * 8 / (dt * 1000) : 0,
			b->q_spine_max, b->q_host_max);
	}
	return sim_fclose(f);
}

/* One line per flow, in the order they were opened: where the mean and the tail come from. */
int sim_write_flows(const struct sim *s, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "# src dst start_us fct_us bytes resent timeouts tail_probes paths_suspected "
		"paths_retired (fct 0: not done; background flows are not listed)\n");
	for (size_t i = 0; i < s->nflows; i++) {
		const struct sim_flow *w = s->flows[i];

		if (w->background)
			continue;
		fprintf(f, "%u %u %.3f %.3f %llu %llu %llu %llu %llu %llu\n", w->src, w->dst,
			(double)(w->start_ps - s->start_ps) / PS_PER_US,
			w->done_ps > w->start_ps ? (double)(w->done_ps - w->start_ps) / PS_PER_US : 0,
			(unsigned long long)w->bytes, (unsigned long long)w->retx,
			(unsigned long long)w->rtos, (unsigned long long)w->probes,
			(unsigned long long)w->suspected, (unsigned long long)w->retired);
	}
	return sim_fclose(f);
}
