// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --trace FILE --trace-hosts A,B: every frame between two hosts, one line
 * each time it leaves its host, reaches the other or is dropped, with the
 * transport header fields that tell what happened to a flow: where a
 * packet went (its entropy value, the spine ECMP chose, its path slot and
 * that slot's sequence), whether it was a resend, what an ACK reported.
 * Times are microseconds from the workload's start, as --flows gives them.
 */
#include <errno.h>
#include <stdio.h>

#include "sim.h"	/* first: its netinet headers before the uapi ones parse.h takes */

#include <mroce/parse.h>
#include <mroce/wire.h>

int sim_trace_open(struct sim *s)
{
	if (!s->cfg.trace_out)
		return 0;
	s->trace = fopen(s->cfg.trace_out, "w");
	if (!s->trace)
		return -errno;
	fprintf(s->trace, "# t_us event src dst sport spine opcode flags psn path pseq payload cum_psn "
		"sack0 (event: send, recv, or the drop's cause: dead, lost, full, noroute; spine -: "
		"none chosen yet, or the hosts share a leaf; opcode and flags as in include/mroce/proto.h, "
		"hex; cum_psn and sack0, the first SACK word, are an ACK's; opcode ?: not a transport "
		"frame)\n");
	return 0;
}

void sim_trace_frame(struct sim *s, const struct sim_frame *f, const char *ev)
{
	__u32 a = s->cfg.trace_host[0], b = s->cfg.trace_host[1];
	struct mroce_pkt pkt;
	struct mroce_hdr h;
	char spine[8] = "-";
	double t = ((double)s->now - (double)s->start_ps) / PS_PER_US;

	if (!((f->src == a && f->dst == b) || (f->src == b && f->dst == a)))
		return;
	if (f->spine != SIM_NO_SPINE)
		snprintf(spine, sizeof(spine), "%u", f->spine);
	if (mroce_parse(f->data, f->data + f->len, s->hosts[f->src].dev->udp_port, &pkt) !=
	    MROCE_STAT_RX) {
		fprintf(s->trace, "%.3f %s %u %u %u %s ? (%u bytes, not a transport frame)\n", t, ev,
			f->src, f->dst, f->sport, spine, f->len);
		return;
	}
	mroce_hdr_decode(&pkt, &h);
	fprintf(s->trace, "%.3f %s %u %u %u %s %02x %04x %u %u %u %u %u %llx\n", t, ev, f->src, f->dst,
		f->sport, spine, h.opcode, h.flags, h.psn, h.path, h.pseq, h.payload_len, h.cum_psn,
		(unsigned long long)h.sack[0]);
}

int sim_trace_close(struct sim *s)
{
	int err = s->trace ? sim_fclose(s->trace) : 0;

	s->trace = NULL;
	return err;
}
