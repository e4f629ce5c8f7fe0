// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cluster simulator (sim/, docs/scale.md) on small fabrics: the real
 * engine on every host, the collectives run by libmroce-coll's own
 * algorithms (each one pinned in turn, at rank counts that are not powers
 * of two too) with every element of every result checked, each workload's
 * bytes checked where they land,
 * frames conserved (every frame that entered was delivered, dropped for a
 * counted reason, or is still on a link), a seed replays exactly, and the
 * failures the studies use (loss, a spine, a flapping link, a plane) still
 * end with every byte delivered.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <unistd.h>

#include "../sim/sim.h"

/* A small fabric: 16 hosts under 4 leaves, 4 spines, 100 Gbit/s. */
static struct sim *small(enum sim_workload w, __u64 size)
{
	struct sim *s = calloc(1, sizeof(*s));
	char why[160];

	assert_non_null(s);
	sim_cfg_defaults(&s->cfg);
	s->cfg.hosts = 16;
	s->cfg.hosts_per_leaf = 4;
	s->cfg.spines = 4;
	s->cfg.host_gbps = 100;
	s->cfg.work = w;
	s->cfg.size = size;
	s->cfg.chunk = 64 << 10;
	s->cfg.verify = true;
	s->cfg.limit_us = 2000000;
	assert_int_equal(sim_cfg_check(&s->cfg, why, sizeof(why)), 0);
	return s;
}

/* Every frame taken is on a link or in a host's receive queue: none lost track of. */
static void frames_held(const struct sim *s)
{
	__u64 queued = 0;

	for (__u32 h = 0; h < s->cfg.hosts; h++)
		queued += s->hosts[h].rx_n;
	assert_int_equal(s->frames_live, sim_frames_in_flight(s) + queued);
	assert_int_equal(s->st.frames, s->st.delivered + s->st.drops_buf + s->st.drops_loss +
					s->st.drops_down + sim_frames_in_flight(s));
}

/* Run it; check completion, bytes, and that every frame is accounted for. */
static void run_ok(struct sim *s)
{
	struct sim_result r;
	int err = sim_run(s);

	if (err)
		fail_msg("sim: %s (%d)", s->errmsg, err);
	assert_int_equal(s->st.verify_bad, 0);
	assert_int_equal(s->st.errors, 0);
	frames_held(s);
	sim_result(s, 1, &r);
	assert_true(r.completion_us >= r.ideal_us * 0.98);	/* nothing beats the fabric's capacity */
	assert_int_equal(r.drops_full_spine + r.drops_full_host, s->st.drops_buf);	/* each at its link */
}

/*
 * --flows: one line per flow, every flow done; their resends add up to the
 * run's, their timeouts, probes and suspected paths to the run's.
 */
static void flows_file_ok(struct sim *s, __u64 flow_bytes)
{
	char path[] = "/tmp/mroce-sim-flows-XXXXXX", line[256];
	__u64 n = 0, retx = 0, rtos = 0, probes = 0, susp = 0;
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	assert_true(sim_write_flows(s, "/dev/full") < 0);	/* a write that fails is an error */
	assert_int_equal(sim_write_flows(s, path), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned src, dst;
		double start, fct;
		unsigned long long bytes, r, t, p, u, ret;

		if (line[0] == '#')
			continue;
		assert_int_equal(sscanf(line, "%u %u %lf %lf %llu %llu %llu %llu %llu %llu", &src, &dst,
					&start, &fct, &bytes, &r, &t, &p, &u, &ret), 10);
		assert_true(src < s->cfg.hosts && dst < s->cfg.hosts && src != dst);
		assert_true(fct > 0 && start >= 0);
		assert_int_equal(bytes, flow_bytes);
		n++;
		retx += r;
		rtos += t;
		probes += p;
		susp += u;
	}
	fclose(f);
	unlink(path);
	assert_int_equal(n, s->st.flows_done);
	assert_int_equal(retx, s->st.retx);
	assert_int_equal(rtos, s->st.rtos);
	assert_int_equal(probes, s->st.probes);
	assert_int_equal(susp, s->st.suspected);
}

static void done(struct sim *s)
{
	sim_free(s);
	assert_int_equal(s->frames_live, 0);	/* every frame given back */
	free(s);
}

/* hosts ranks, one per leaf, two spines: any rank count. */
static struct sim *ranks(enum sim_workload w, __u32 hosts, __u64 size, const char *algo)
{
	struct sim *s = small(w, size);
	char why[160];

	s->cfg.hosts = hosts;
	s->cfg.hosts_per_leaf = 1;
	s->cfg.spines = 2;
	s->cfg.chunk = 16 << 10;
	s->cfg.algo = algo;
	assert_int_equal(sim_cfg_check(&s->cfg, why, sizeof(why)), 0);
	return s;
}

/* The run used the algorithm asked for (NULL: the table's), every element
 * right (run_ok), and --verify can tell. */
static void coll_ok(struct sim *s, const char *algo)
{
	run_ok(s);
	assert_non_null(s->st.algo);
	if (algo)
		assert_string_equal(s->st.algo, algo);
	else
		printf("  the table's choice at %u ranks: %s\n", s->cfg.hosts, s->st.algo);
	assert_true(s->st.conns_opened > 0);
	/* one element of one host's result wrong: the check finds its 4 bytes */
	s->hosts[s->cfg.hosts - 1].buf[s->cfg.work == SIM_BROADCAST ? 0 : s->cfg.size] ^= 1;
	assert_int_equal(s->work->verify(s), 4);
	done(s);
}

/*
 * Every collective through libmroce-coll's own algorithms, each algorithm
 * pinned, at 3, 5 (not powers of two) and 8 ranks: every element of every
 * host's result is what the operation defines (all-reduce: the sum of
 * every host's known pattern; all-to-all: each peer's block for us).
 */
static void test_collectives(void **state)
{
	static const struct {
		enum sim_workload w;
		const char *algo;
		__u64 size;
	} runs[] = {
		{ SIM_ALLREDUCE, "ring", 200 << 10 }, { SIM_ALLREDUCE, "rd", 40 << 10 },
		{ SIM_ALLREDUCE, "rhd", 200 << 10 },
		{ SIM_REDUCE_SCATTER, "ring", 240 << 10 }, { SIM_REDUCE_SCATTER, "rhd", 240 << 10 },
		{ SIM_ALLGATHER, "ring", 240 << 10 }, { SIM_ALLGATHER, "rd", 240 << 10 },
		{ SIM_BROADCAST, "chain", 100 << 10 }, { SIM_BROADCAST, "tree", 100 << 10 },
		{ SIM_BROADCAST, "scatter-ag", 100 << 10 },
		{ SIM_ALLTOALL, "pairwise-inbox", 40 << 10 },
		{ SIM_ALLTOALL, "pairwise-direct", 480 << 10 },
	};
	static const __u32 n[] = { 3, 5, 8 };

	(void)state;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		for (size_t k = 0; k < sizeof(n) / sizeof(n[0]); k++) {
			printf("  %s, %s, %u ranks\n", sim_work_name(runs[i].w), runs[i].algo, n[k]);
			coll_ok(ranks(runs[i].w, n[k], runs[i].size, runs[i].algo), runs[i].algo);
		}
	/* the table's own choice, on the 16-host fabric */
	coll_ok(small(SIM_ALLREDUCE, 1 << 20), NULL);
	coll_ok(small(SIM_ALLTOALL, 1 << 20), NULL);
}

/* An algorithm the operation does not have: the run fails, saying so. */
static void test_algo_unknown(void **state)
{
	struct sim *s = ranks(SIM_ALLREDUCE, 4, 64 << 10, "pairwise-direct");

	(void)state;
	assert_int_equal(sim_run(s), -EINVAL);
	assert_non_null(strstr(s->errmsg, "pairwise-direct"));
	done(s);
}

static void test_permutation_and_incast(void **state)
{
	struct sim *s = small(SIM_PERMUTATION, 1 << 20);
	struct sim_result r;

	(void)state;
	run_ok(s);
	assert_int_equal(s->st.flows_done, 16);
	/*
	 * A connection end grows with use (lib/ring.c, psack.c): a 1 MiB flow's
	 * window took its packet records past the 16 it starts with, and the
	 * peer's 16 slots gave it their per-path SACK records.
	 */
	printf("  a connection end: %llu B created, %llu B once its flow is done\n",
	       (unsigned long long)s->st.qp_new_heap, (unsigned long long)s->st.qp_used_bytes);
	assert_true(s->st.qp_used_bytes >= s->st.qp_new_heap + 16 * sizeof(struct mroce_rxpath) +
						   16 * sizeof(struct mroce_txpkt));
	done(s);
	s = small(SIM_INCAST, 1 << 20);
	s->cfg.incast = 12;
	run_ok(s);
	sim_result(s, 1, &r);
	assert_int_equal(s->st.flows_done, 12);
	assert_true(r.jain > 0.9);	/* the receiver's grants share its link */
	assert_true(r.peak_q_host > 0);
	assert_true(s->hosts[0].dev->grant.grant_kbps > 0);
	done(s);
	s = small(SIM_INCAST, 1 << 20);	/* --no-grants reaches the receiver's device */
	s->cfg.incast = 12;
	s->cfg.no_grants = true;
	run_ok(s);
	assert_int_equal(s->st.flows_done, 12);
	assert_true(s->hosts[0].dev->grant.off);
	assert_int_equal(s->hosts[0].dev->grant.grant_kbps, 0);
	done(s);
}

/* A seed replays exactly; another seed is another run. */
static void test_deterministic(void **state)
{
	__u64 t[3], frames[3];

	(void)state;
	for (int i = 0; i < 3; i++) {
		struct sim *s = small(SIM_ALLTOALL, 1 << 20);

		s->cfg.loss = 0.01;
		s->cfg.seed = i < 2 ? 7 : 8;
		run_ok(s);
		t[i] = s->end_ps;
		frames[i] = s->st.frames;
		done(s);
	}
	assert_int_equal(t[0], t[1]);
	assert_int_equal(frames[0], frames[1]);
	assert_true(t[0] != t[2] || frames[0] != frames[2]);
}

static void test_loss_and_gbn(void **state)
{
	(void)state;
	for (int m = SIM_SPRAY; m <= SIM_GBN; m++) {
		struct sim *s = small(SIM_ALLTOALL, 1 << 20);

		s->cfg.mode = m;
		s->cfg.loss = 0.01;
		run_ok(s);
		assert_true(s->st.drops_loss > 0);
		assert_true(s->st.retx >= s->st.drops_loss / 4);	/* the lost were resent */
		done(s);
	}
}

static struct sim *spine_down(enum sim_workload w)
{
	struct sim *s = small(w, 4 << 20);

	s->cfg.faults[0] = (struct sim_fault){ .kind = SIM_F_SPINE, .spine = 1, .at_ps = 50 * PS_PER_US,
					       .up_ps = SIM_NEVER };
	s->cfg.nfaults = 1;
	return s;
}

/*
 * --trace on a pair whose flow resent packets after a spine died: the run
 * is the same to the picosecond (a trace only reads frames), every data
 * packet either QP of the pair sent is on a "send" line and each resend
 * has MROCE_F_RETX there, the frames the dead spine took are on "dead"
 * lines, and nothing arrives that was not sent.
 */
static void test_trace_pair(void **state)
{
	char path[] = "/tmp/mroce-sim-trace-XXXXXX", line[512];
	struct sim *s = spine_down(SIM_PERMUTATION);
	__u32 pair[2] = { 0, 0 }, hpl;
	__u64 end, frames, retx = 0, tx[2] = { 0, 0 }, sent[2] = { 0, 0 }, resent = 0;
	__u64 recvd = 0, dead = 0, drops = 0, sends = 0;
	double last = -1e9;
	bool found = false;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	run_ok(s);
	hpl = s->cfg.hosts_per_leaf;
	for (size_t i = 0; i < s->nflows && !found; i++) {
		const struct sim_flow *w = s->flows[i];

		if (w->retx && w->src / hpl != w->dst / hpl) {
			pair[0] = w->src;
			pair[1] = w->dst;
			found = true;
		}
	}
	assert_true(found);
	end = s->end_ps;
	frames = s->st.frames;
	done(s);

	s = spine_down(SIM_PERMUTATION);
	s->cfg.trace_out = path;
	s->cfg.trace_host[0] = pair[0];
	s->cfg.trace_host[1] = pair[1];
	s->cfg.trace_hosts_set = true;
	run_ok(s);
	assert_int_equal(s->end_ps, end);
	assert_int_equal(s->st.frames, frames);
	for (size_t i = 0; i < s->nflows; i++) {
		const struct sim_flow *w = s->flows[i];

		for (int d = 0; d < 2; d++)
			if (w->src == pair[d] && w->dst == pair[!d]) {
				tx[d] += w->tx_pkts;
				retx += w->retx;
			}
	}
	assert_int_equal(sim_trace_close(s), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char ev[16], spine[8];
		unsigned src, dst, sport, op, flags, psn, slot, pseq, payload, cum;
		unsigned long long sack;
		double t;

		if (line[0] == '#')
			continue;
		assert_int_equal(sscanf(line, "%lf %15s %u %u %u %7s %x %x %u %u %u %u %u %llx", &t, ev,
					&src, &dst, &sport, spine, &op, &flags, &psn, &slot, &pseq,
					&payload, &cum, &sack), 14);
		assert_true(t >= last);
		last = t;
		assert_true((src == pair[0] && dst == pair[1]) || (src == pair[1] && dst == pair[0]));
		if (!strcmp(ev, "recv")) {
			recvd++;
		} else if (!strcmp(ev, "dead")) {
			dead++;
			assert_string_equal(spine, "1");	/* the spine that died */
		} else if (!strcmp(ev, "send")) {
			sends++;
			assert_string_equal(spine, "-");	/* none chosen before the leaf */
			if (op >= MROCE_OP_WRITE && op <= MROCE_OP_READ_RESP && payload) {
				sent[src == pair[1]]++;
				resent += !!(flags & MROCE_F_RETX);
			}
		} else if (!strcmp(ev, "full") || !strcmp(ev, "lost") || !strcmp(ev, "noroute")) {
			drops++;
		} else {
			fail_msg("unexpected event '%s'", ev);
		}
	}
	fclose(f);
	unlink(path);
	assert_int_equal(sent[0], tx[0]);
	assert_int_equal(sent[1], tx[1]);
	assert_int_equal(resent, retx);
	assert_true(dead > 0);
	assert_true(recvd + dead + drops <= sends);	/* nothing unsent arrives */
	s->cfg.trace_out = "/dev/full";	/* a trace that cannot be written is an error */
	assert_int_equal(sim_trace_open(s), 0);
	assert_true(sim_trace_close(s) < 0);
	done(s);
}

/* A spine dies mid-run, a link flaps, a plane of two dies: all bytes still arrive. */
static void test_failures(void **state)
{
	struct sim *s = spine_down(SIM_ALLTOALL);

	(void)state;
	run_ok(s);
	assert_true(s->st.drops_down > 0);
	assert_true(s->st.retx > 0);
	done(s);
	s = spine_down(SIM_PERMUTATION);
	run_ok(s);
	assert_true(s->st.drops_down > 0);
	assert_int_equal(s->st.flows_done, 16);
	flows_file_ok(s, 4 << 20);
	done(s);

	s = small(SIM_ALLTOALL, 4 << 20);
	s->cfg.faults[0] = (struct sim_fault){ .kind = SIM_F_LINK, .leaf = 2, .spine = 3,
					       .at_ps = 20 * PS_PER_US, .period_ps = 200 * PS_PER_US,
					       .count = 5, .up_ps = SIM_NEVER };
	s->cfg.nfaults = 1;
	s->cfg.detect_us = 50;
	run_ok(s);
	done(s);

	s = small(SIM_ALLTOALL, 4 << 20);
	s->cfg.planes = 2;
	s->cfg.background = 4;	/* endless flows beside: they write where no workload reads */
	s->cfg.faults[0] = (struct sim_fault){ .kind = SIM_F_PLANE, .plane = 1, .at_ps = 50 * PS_PER_US,
					       .up_ps = SIM_NEVER };
	s->cfg.nfaults = 1;
	run_ok(s);
	assert_true(s->st.drops_down > 0);
	done(s);

	/*
	 * The first plane: connections are set up on it and every other is
	 * proven by a probe. Its failure used to fail flows with retries
	 * exceeded (receivers ACKed only there). A plane of two down costs a
	 * few times the clean run here (502 us of virtual time), not hundreds:
	 * a probe copy that found no transmit buffer, dropped, cost 10 ms.
	 */
	s = small(SIM_ALLTOALL, 4 << 20);
	s->cfg.planes = 2;
	s->cfg.faults[0] = (struct sim_fault){ .kind = SIM_F_PLANE, .plane = 0, .at_ps = 50 * PS_PER_US,
					       .up_ps = SIM_NEVER };
	s->cfg.nfaults = 1;
	run_ok(s);
	assert_true(s->st.drops_down > 0);
	assert_true(s->end_ps - s->start_ps < 2000 * PS_PER_US);
	done(s);
}

/*
 * Spraying against single-path ECMP on a permutation: hashed flows collide
 * on uplinks, sprayed ones spread. Sprayed finishes closer to the ideal.
 */
static void test_spray_beats_ecmp(void **state)
{
	struct sim_result r[2];

	(void)state;
	for (int m = 0; m < 2; m++) {
		struct sim *s = small(SIM_PERMUTATION, 4 << 20);

		s->cfg.mode = m ? SIM_ECMP : SIM_SPRAY;
		run_ok(s);
		sim_result(s, 1, &r[m]);
		done(s);
	}
	assert_true(r[0].ratio < r[1].ratio);
	assert_true(r[0].ratio < 1.5);
}

/*
 * A loss-free fabric at datacenter RTTs (a few microseconds), a permutation
 * (no incast): nothing is resent but a rare tail probe. Sprayed, a message's last packet may arrive first; the packet
 * that completes the message is acknowledged at once (rx.c), else the
 * sender waits out the delayed ACK (50 us, ten RTTs) for the rest and its
 * reordering allowance (20 us and the RTT) declares them lost.
 */
static void test_no_spurious_resends(void **state)
{
	struct sim *s = small(SIM_PERMUTATION, 4 << 20);

	(void)state;
	s->cfg.host_gbps = s->cfg.spine_gbps = 400;	/* not oversubscribed */
	run_ok(s);
	assert_int_equal(s->st.drops_buf + s->st.drops_loss + s->st.drops_down, 0);
	printf("  loss-free: %llu frames, %llu resent, %llu of them tail probes\n",
	       (unsigned long long)s->st.frames, (unsigned long long)s->st.retx,
	       (unsigned long long)s->st.probes);
	/*
	 * Nothing resent but tail probes, and few of those: a probe is sent on
	 * purpose when a tail goes unacknowledged two RTTs, and while queues
	 * build an RTT stretches faster than its average follows (RFC 8985
	 * accepts the odd spurious probe, one packet each).
	 */
	assert_int_equal(s->st.retx, s->st.probes);
	assert_true(s->st.probes * 1000 <= s->st.frames);
	assert_int_equal(s->st.suspected, 0);
	assert_int_equal(s->st.rtos, 0);
	done(s);
}

/*
 * A permutation on a fabric oversubscribed 4:1 (400 Gbit/s hosts, 100
 * Gbit/s to the spines), buffers deep enough not to overflow: sprayed flows
 * collide on leaf-spine links whose queues grow past 100 us, where the QP's
 * RTT, sampled on other routes, does not show them, and a packet on a fresh
 * route can be judged lost by time while it waits. Across seeds such
 * verdicts stay rare, nothing times out and every byte lands
 * (`mroce-sim --hosts 16 --hosts-per-leaf 4 --spines 4 --rate 400
 * --spine-rate 100 --workload permutation --cc none --buffer 4194304
 * --verify --size 4194304 --seed 1..3`: 2, 90 and 72 resends of some
 * 27,000 frames).
 */
static void test_oversubscribed_few_resends(void **state)
{
	(void)state;
	for (__u64 seed = 1; seed <= 3; seed++) {
		struct sim *s = small(SIM_PERMUTATION, 4 << 20);

		s->cfg.host_gbps = 400;
		s->cfg.spine_gbps = 100;
		s->cfg.buf_bytes = 4 << 20;	/* queues that build without overflowing */
		s->cfg.seed = seed;
		s->cfg.no_cc = true;	/* queues that build: the default CC keeps them under 20 us */
		run_ok(s);
		printf("  4:1 oversubscribed, seed %llu: %llu frames, %llu resent (%llu tail probes), "
		       "%llu paths suspected, longest frame latency %.1f us\n",
		       (unsigned long long)seed, (unsigned long long)s->st.frames,
		       (unsigned long long)s->st.retx, (unsigned long long)s->st.probes,
		       (unsigned long long)s->st.suspected,
		       (double)s->st.latency_max_ps / PS_PER_US);
		assert_int_equal(s->st.drops_buf + s->st.drops_loss + s->st.drops_down, 0);
		assert_true(s->st.latency_max_ps > 20 * PS_PER_US);	/* the queues did build */
		assert_true(s->st.retx * 200 <= s->st.frames);	/* <= 0.5% */
		assert_int_equal(s->st.rtos, 0);
		done(s);
	}
}

/*
 * Without --verify a frame keeps only its headers' bytes (frame.c): the
 * engines must not notice. The same run with every byte carried and checked
 * ends at the same picosecond with the same frames, resends and probes.
 */
static void test_payload_not_kept_same_run(void **state)
{
	__u64 end[2], frames[2], retx[2], probes[2], delivered[2];

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct sim *s = small(SIM_ALLTOALL, 1 << 20);

		s->cfg.loss = 0.01;
		s->cfg.verify = i == 0;
		run_ok(s);
		end[i] = s->end_ps;
		frames[i] = s->st.frames;
		retx[i] = s->st.retx;
		probes[i] = s->st.probes;
		delivered[i] = s->st.delivered;
		done(s);
	}
	assert_true(retx[0] > 0);	/* loss was found and repaired */
	assert_int_equal(end[0], end[1]);
	assert_int_equal(frames[0], frames[1]);
	assert_int_equal(retx[0], retx[1]);
	assert_int_equal(probes[0], probes[1]);
	assert_int_equal(delivered[0], delivered[1]);
}

/* The earliest of ref[0, n): (time, creation order). */
static size_t ref_min(const struct sim_event *ref, size_t n)
{
	size_t m = 0;

	for (size_t i = 1; i < n; i++)
		if (ref[i].t < ref[m].t || (ref[i].t == ref[m].t && ref[i].seq < ref[m].seq))
			m = i;
	return m;
}

/* Pop one from q; it must be ref's earliest, which leaves ref. */
static void pop_checked(struct sim_evq *q, struct sim_event *ref, size_t *n, __u64 *now)
{
	size_t m = ref_min(ref, *n);
	struct sim_event e;

	assert_true(sim_evq_pop(q, &e));
	assert_int_equal(e.t, ref[m].t);
	assert_int_equal(e.arg, (__u32)ref[m].seq);
	assert_int_equal(e.type, ref[m].type);
	*now = e.t;
	ref[m] = ref[--*n];
}

/*
 * The event queue (evq.c: a timing wheel, a heap beyond it) pops in (time,
 * creation order), against a list searched from end to end: ties, events
 * due now, events beyond the wheel that come due, an empty wheel restarted
 * far ahead.
 */
static void test_event_order(void **state)
{
	enum { N = 200000 };
	struct sim_evq q = {};
	struct sim_event *ref = calloc(N, sizeof(*ref)), e;
	__u64 rng = 12345, now = 1000000000ull, seq = 0, popped = 0;
	size_t n = 0, frames = 0;

	(void)state;
	assert_non_null(ref);
	for (size_t step = 0; step < 3 * N; step++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		__u32 r = (__u32)(rng >> 33);

		if (n < N && (r % 8 < 4 || !n)) {
			__u64 t = r % 16 == 0 ? now :		/* due now */
				  r % 16 == 1 ? now + 1000000000ull * (1 + r % 3) :	/* far off */
				  r % 16 == 2 ? now + (r % 4) * 1024 :	/* a few buckets on, ties */
				  now + (r >> 8) % 50000000;	/* within 50 us */

			assert_int_equal(sim_evq_push(&q, t, r % 4, NULL, (__u32)seq), 0);
			ref[n++] = (struct sim_event){ .t = t, .seq = seq++, .type = r % 4 };
		} else {
			pop_checked(&q, ref, &n, &now);
			popped++;
		}
		for (; n > 2000; popped++)	/* keep the reference's search short */
			pop_checked(&q, ref, &n, &now);
	}
	for (size_t i = 0; i < n; i++)
		frames += ref[i].type == EV_FRAME;
	assert_int_equal(sim_evq_count(&q, EV_FRAME), frames);
	while (n)
		pop_checked(&q, ref, &n, &now);
	assert_false(sim_evq_pop(&q, &e));
	assert_true(popped > N / 2);
	sim_evq_free(&q);
	free(ref);
}

/*
 * An all-to-all three times over connections kept open (as the library's
 * own communicator keeps one per peer): every element of the last
 * iteration is right, each pair connected once, and the completion time is
 * the last iteration's.
 */
static void test_kept_connections_iterations(void **state)
{
	struct sim *s = small(SIM_ALLTOALL, 1 << 20);
	struct sim_result r;
	char why[160];

	(void)state;
	s->cfg.keep_conns = true;
	s->cfg.iterations = 3;
	assert_int_equal(sim_cfg_check(&s->cfg, why, sizeof(why)), 0);
	run_ok(s);
	assert_int_equal(s->st.conns_opened, 16 * 15 / 2);
	assert_int_equal(s->st.conns_max, 15);
	sim_result(s, 1, &r);
	for (__u32 i = 0; i < 3; i++) {
		assert_true(sim_iter_us(s, i) > 0);
		assert_true(s->iter_start_ps[i] <= s->iter_end_ps[i]);
	}
	assert_true(s->iter_end_ps[0] < s->iter_end_ps[1] && s->iter_end_ps[1] < s->iter_end_ps[2]);
	assert_true(r.completion_us == sim_iter_us(s, 2));
	assert_int_equal(s->end_ps, s->iter_end_ps[2]);
	done(s);
}

/*
 * Beyond --conns open connections, idle ones close (both ends) and open
 * again when an algorithm next sends: three all-to-alls, with loss, over
 * at most 4 kept per host (one with 2 peers in flight), still right to the
 * element; the pairs were
 * connected again and again, and every QP was given back.
 */
static void test_connections_close(void **state)
{
	for (int direct = 0; direct < 2; direct++) {
		struct sim *s = small(SIM_ALLTOALL, direct ? 2 << 20 : 128 << 10);

		(void)state;
		s->cfg.conns = 4;
		s->cfg.window = direct ? 2 : 0;	/* the all-to-all's peers in flight: 2, the library's */
		s->cfg.iterations = 3;
		s->cfg.loss = 0.002;
		run_ok(s);
		assert_string_equal(s->st.algo, direct ? "pairwise-direct" : "pairwise-inbox");
		assert_true(s->st.conns_opened > 16 * 15 / 2);
		assert_true(s->st.drops_loss > 0);
		done(s);
	}
}

static void test_bad_config(void **state)
{
	struct sim_cfg c;
	char why[160];

	(void)state;
	sim_cfg_defaults(&c);
	c.hosts = 30;	/* not a multiple of hosts_per_leaf */
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
	sim_cfg_defaults(&c);
	c.planes = 9;
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
	sim_cfg_defaults(&c);
	c.faults[0] = (struct sim_fault){ .kind = SIM_F_SPINE, .spine = 4 };	/* 4 spines: 0..3 */
	c.nfaults = 1;
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
	sim_cfg_defaults(&c);
	c.loss = 1;
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
	sim_cfg_defaults(&c);
	c.work = SIM_ALLTOALL;
	c.size = 4 * c.hosts - 1;	/* blocks without a single element */
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
	sim_cfg_defaults(&c);
	c.iterations = 2;	/* collectives only */
	c.work = SIM_PERMUTATION;
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
	sim_cfg_defaults(&c);
	c.keep_conns = true;
	c.hosts = 1040;	/* 1039 QPs a host: a device holds 1023 */
	c.hosts_per_leaf = 16;
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
	c.hosts = 256;
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), 0);
	/* NaN compares false with every bound: refused, not taken for 0 */
	c.oversub = NAN;
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
	sim_cfg_defaults(&c);
	c.loss = NAN;
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
	sim_cfg_defaults(&c);
	c.link_loss = NAN;
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
	sim_cfg_defaults(&c);
	c.prop_ns = 4294968;	/* 2^32 ps and more: would wrap */
	assert_int_equal(sim_cfg_check(&c, why, sizeof(why)), -EINVAL);
}

/*
 * A run stopped by its virtual-time limit fails with -ETIMEDOUT, and the
 * frame whose event lay beyond the limit stays counted as on its link, so
 * sim_free gives it back like the rest.
 */
static void test_limit_keeps_frames(void **state)
{
	struct sim *s = small(SIM_ALLTOALL, 1 << 20);

	(void)state;
	s->cfg.limit_us = 5;
	assert_int_equal(sim_run(s), -ETIMEDOUT);
	assert_true(s->frames_live > 0);
	frames_held(s);
	done(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collectives),
		cmocka_unit_test(test_algo_unknown),
		cmocka_unit_test(test_permutation_and_incast),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_loss_and_gbn),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_trace_pair),
		cmocka_unit_test(test_spray_beats_ecmp),
		cmocka_unit_test(test_no_spurious_resends),
		cmocka_unit_test(test_oversubscribed_few_resends),
		cmocka_unit_test(test_payload_not_kept_same_run),
		cmocka_unit_test(test_event_order),
		cmocka_unit_test(test_kept_connections_iterations),
		cmocka_unit_test(test_connections_close),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_limit_keeps_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
