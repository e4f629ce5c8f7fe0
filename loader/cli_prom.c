// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `mroce status DEV --prometheus`: the Prometheus text exposition format,
 * version 0.0.4, for node_exporter's textfile collector or any scraper.
 * The names come from the same tables as the text and JSON forms.
 */
#include <stdio.h>

#include "cli.h"

/* Label value: backslash, double quote and newline escaped, as the format says. */
static void put_label(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

/* HELP text: backslash and newline escaped (a quote stays as it is). */
static void put_help(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", out);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

/* One metric family of one sample: # HELP, # TYPE, name{dev="..."} value. */
static void metric(FILE *out, const char *dev, const char *prefix, const char *name,
		   const char *suffix, const char *type, const char *help, const char *help_more,
		   unsigned long long v)
{
	fprintf(out, "# HELP %s%s%s ", prefix, name, suffix);
	put_help(out, help);
	put_help(out, help_more);
	fprintf(out, "\n# TYPE %s%s%s %s\n%s%s%s{dev=\"", prefix, name, suffix, type,
		prefix, name, suffix);
	put_label(out, dev);
	fprintf(out, "\"} %llu\n", v);
}

int mroce_cli_status_prom(FILE *out, const struct mroce_cli_status *st)
{
	const char *dev = st->info.ifname;

	fputs("# HELP mroce_xdp_attached_info The mroce XDP program on the interface: mode, program id, UDP port\n"
	      "# TYPE mroce_xdp_attached_info gauge\nmroce_xdp_attached_info{dev=\"", out);
	put_label(out, dev);
	fprintf(out, "\",mode=\"%s\",prog_id=\"%u\",udp_port=\"%u\"} 1\n",
		st->info.mode == MROCE_XDP_SKB ? "skb" : "native", st->info.prog_id,
		st->info.udp_port);
	metric(out, dev, "mroce_", "flows", "", "gauge", "active flows (QPs) on the interface", "",
	       st->info.flows);
	metric(out, dev, "mroce_", "xdp_places", "", "gauge",
	       "1: XDP places WRITE payloads into device memory, 0: user space does", "",
	       st->info.xdp_places);
	/* The XDP program's counters: monotonic while it stays attached. */
	for (int s = 0; s < MROCE_STAT_MAX; s++)
		metric(out, dev, "mroce_xdp_", mroce_stat_name(s), "_total", "counter",
		       mroce_stat_desc(s), "", (unsigned long long)st->stats[s]);
	/* Sums over what exists now: they fall when a flow ends or a socket closes. */
#define X(n, d) metric(out, dev, "mroce_transport_", #n, "", "gauge", d,		\
		       ", summed over the active flows", (unsigned long long)st->tt.n);
	MROCE_CLI_TOTALS(X)
#undef X
	if (st->xsk_sockets >= 0) {
		metric(out, dev, "mroce_", "xsk_sockets", "", "gauge",
		       "AF_XDP sockets in the interface's network namespace", "",
		       (unsigned long long)st->xsk_sockets);
#define X(f, d) metric(out, dev, "mroce_", #f, "", "gauge", d,				\
		       ", kernel counter summed over the namespace's AF_XDP sockets",	\
		       (unsigned long long)st->xsk.f);
		MROCE_CLI_XSK(X)
#undef X
	}
	return fflush(out) || ferror(out) ? MROCE_EXIT_FAIL : MROCE_EXIT_OK;
}
