// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The q-quantile: the sample at rank ceil(q n), as perftest picks it. */
static double quantile(const double *v, size_t n, double q)
{
	size_t i = (size_t)ceil(q * (double)n);

	return v[i ? i - 1 : 0];
}

void perf_lat_summarize(double *v, size_t n, struct perf_lat_summary *s)
{
	double sum = 0, sq = 0;

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s->avg = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (v[i] - s->avg) * (v[i] - s->avg);
	s->stdev = sqrt(sq / (double)n);
	s->min = v[0];
	s->max = v[n - 1];
	s->typical = v[n / 2];
	s->p99 = quantile(v, n, 0.99);
	s->p999 = quantile(v, n, 0.999);
}

void perf_meter_start(struct perf_meter *m, double now, __u32 size)
{
	free(m->iv);
	memset(m, 0, sizeof(*m));
	m->t0 = m->tick = m->win = now;
	m->size = size;
}

static const struct perf_interval *close_interval(struct perf_meter *m, double now, __u64 ops)
{
	struct perf_interval *iv;

	if (m->niv == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct perf_interval *n = realloc(m->iv, cap * sizeof(*n));

		if (!n) {
			m->oom = true;
			return NULL;
		}
		m->iv = n;
		m->cap = cap;
	}
	iv = &m->iv[m->niv++];
	iv->start = m->tick - m->t0;
	iv->end = now - m->t0;
	iv->ops = ops - m->tick_ops;
	iv->bytes = iv->ops * m->size;
	m->tick = now;
	m->tick_ops = ops;
	return iv;
}

const struct perf_interval *perf_meter_tick(struct perf_meter *m, double now, __u64 ops)
{
	if (now - m->win >= PERF_PEAK_WINDOW) {
		double r = (double)(ops - m->win_ops) / (now - m->win);

		if (r > m->peak_ops_s)
			m->peak_ops_s = r;
		m->win = now;
		m->win_ops = ops;
	}
	return now - m->tick >= 1.0 ? close_interval(m, now, ops) : NULL;
}

void perf_meter_finish(struct perf_meter *m, double now, __u64 ops)
{
	if (m->niv && now - m->tick < PERF_TAIL) {	/* a sliver: part of the last second */
		struct perf_interval *iv = &m->iv[m->niv - 1];

		iv->end = now - m->t0;
		iv->ops += ops - m->tick_ops;
		iv->bytes = iv->ops * m->size;
		m->tick = now;
		m->tick_ops = ops;
	} else if (now > m->tick || ops > m->tick_ops) {
		close_interval(m, now, ops);
	}
}

double perf_meter_peak(const struct perf_meter *m, __u64 ops, double secs)
{
	double avg = secs > 0 ? (double)ops / secs : 0;

	return m->peak_ops_s > avg ? m->peak_ops_s : avg;
}

void perf_meter_free(struct perf_meter *m)
{
	free(m->iv);
	m->iv = NULL;
	m->niv = m->cap = 0;
}

void perf_print_columns(FILE *out, bool bw, bool gbits)
{
	fputs("---------------------------------------------------------------------------------------\n", out);
	if (bw)
		fprintf(out, " #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
			gbits ? "Gb/sec" : "MB/sec", gbits ? "Gb/sec" : "MB/sec");
	else
		fputs(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
		      "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n", out);
}

static double unit(double Bps, bool gbits)
{
	return gbits ? Bps * 8 / 1e9 : Bps / PERF_MB;
}

void perf_print_bw_row(FILE *out, __u32 size, __u64 iters, double peak_Bps, double avg_Bps,
		       double mpps, bool gbits)
{
	fprintf(out, " %-10u %-14llu %-18.2f %-20.2f %.6f\n", size, (unsigned long long)iters,
		unit(peak_Bps, gbits), unit(avg_Bps, gbits), mpps);
}

void perf_print_lat_row(FILE *out, __u32 size, __u64 iters, const struct perf_lat_summary *s)
{
	fprintf(out, " %-6u %-14llu %-14.2f %-12.2f %-18.2f %-14.2f %-15.2f %-22.2f %.2f\n", size,
		(unsigned long long)iters, s->min, s->max, s->typical, s->avg, s->stdev, s->p99, s->p999);
}

void perf_print_interval(FILE *out, const struct perf_interval *iv, bool gbits)
{
	double secs = iv->end - iv->start, Bps = secs > 0 ? (double)iv->bytes / secs : 0;

	fprintf(out, "   [%7.2f-%7.2f s] %12llu bytes  %10.2f %s  %.6f Mpps\n", iv->start, iv->end,
		(unsigned long long)iv->bytes, unit(Bps, gbits), gbits ? "Gb/sec" : "MB/sec",
		secs > 0 ? (double)iv->ops / secs / 1e6 : 0);
}
