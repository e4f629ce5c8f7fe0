// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The simulator's configuration: every default, and what makes one invalid. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"

void sim_cfg_defaults(struct sim_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->hosts = 32;
	c->hosts_per_leaf = 8;
	c->spines = 4;
	c->planes = 1;
	c->host_gbps = 400;
	c->oversub = 1.0;
	c->prop_ns = 500;		/* ~100 m of fibre */
	c->buf_bytes = 1 << 20;		/* a port's share of a switch's buffer */
	c->ecn_bytes = 128 << 10;
	c->nic_bytes = 64 << 10;
	c->detect_us = 1000;		/* a switch withdraws a dead link from ECMP in 1 ms */
	c->mtu = 4096;
	c->seed = 1;
	c->mode = SIM_SPRAY;
	c->paths = 16;
	c->work = SIM_ALLTOALL;
	c->size = 1 << 20;
	c->chunk = 256 << 10;		/* libmroce-coll's default chunk_bytes */
	c->conns = 64;		/* the simulator's memory bound, not the library's */
	c->iterations = 1;
	c->incast = 8;
	c->limit_us = 10 * 1000000ull;
	c->sample_us = 10;
}

const char *sim_mode_name(enum sim_mode m)
{
	return m == SIM_SPRAY ? "sprayed" : m == SIM_ECMP ? "ecmp" : "gbn";
}

const char *sim_work_name(enum sim_workload w)
{
	static const char *const n[] = {
		[SIM_ALLTOALL] = "alltoall", [SIM_ALLREDUCE] = "allreduce",
		[SIM_REDUCE_SCATTER] = "reduce-scatter", [SIM_ALLGATHER] = "allgather",
		[SIM_BROADCAST] = "broadcast", [SIM_PERMUTATION] = "permutation",
		[SIM_INCAST] = "incast",
	};

	return n[w];
}

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

int sim_cfg_check(struct sim_cfg *c, char *err, size_t errlen)
{
	if (c->hosts < 2 || c->hosts > 4096)
		return BAD("--hosts must be 2..4096");
	if (!c->hosts_per_leaf || c->hosts % c->hosts_per_leaf)
		return BAD("--hosts-per-leaf must divide --hosts");
	if (!c->spines || c->spines > 256)
		return BAD("--spines must be 1..256");
	if (!c->planes || c->planes > MROCE_MAX_PLANES)
		return BAD("--planes must be 1..%d", MROCE_MAX_PLANES);
	if (c->host_gbps < 1 || c->host_gbps > 1600 || c->spine_gbps > 1600)
		return BAD("link rates must be 1..1600 Gbit/s");
	if (!(c->oversub >= 0.1 && c->oversub <= 64))	/* NaN too */
		return BAD("--oversub must be 0.1..64");
	if (!c->spine_gbps) {
		double g = (double)c->hosts_per_leaf * c->host_gbps / (c->spines * c->oversub);

		c->spine_gbps = g < 1 ? 1 : (__u32)(g + 0.5);
	}
	if (8000 / c->host_gbps == 0 || 8000 / c->spine_gbps == 0)
		return BAD("link rates above 8000 Gbit/s are not modelled");
	if (c->prop_ns > 1000000)	/* a link's delay is kept in picoseconds, 32 bits */
		return BAD("--prop-ns must be 0..1000000 (1 ms)");
	if (c->mtu < 1024 || c->mtu > 9000)
		return BAD("--mtu must be 1024..9000");
	if (c->buf_bytes < 2 * c->mtu || c->nic_bytes < 2 * c->mtu)
		return BAD("buffers must hold two frames");
	if (!(c->loss >= 0 && c->loss < 1) || !(c->link_loss >= 0 && c->link_loss < 1))	/* NaN too */
		return BAD("loss must be in [0, 1)");
	if ((c->rto_low_us || c->rto_high_us) &&
	    (!c->rto_low_us || !c->rto_high_us || c->rto_low_us > c->rto_high_us))
		return BAD("--rto-low-us and --rto-high-us go together, low <= high");
	if (!c->paths || c->paths > 256)
		return BAD("--paths must be 1..256");
	if (!c->size || c->size > (1ull << 34))
		return BAD("--size must be 1 B..16 GiB");
	if (c->chunk < 4096 || c->chunk > (1u << 30))
		return BAD("--chunk must be 4 KiB..1 GiB");
	if (c->window > 4096)
		return BAD("--window must be 0..4096 (0: the library's)");
	if (!c->conns || c->conns >= MROCE_MAX_QPS)
		return BAD("--conns must be 1..%d (a device's QPs)", MROCE_MAX_QPS - 1);
	if (c->chunk % 64)
		return BAD("--chunk must be a multiple of 64 bytes (the collectives' chunk_bytes)");
	if (!c->iterations || c->iterations > 1000)
		return BAD("--iterations must be 1..1000");
	if ((c->iterations > 1 || c->keep_conns || c->algo) && !sim_work_coll(c->work))
		return BAD("--iterations, --keep-connections and --algo are for the collectives");
	if (c->keep_conns && (c->hosts - 1) + 2 * c->background >= MROCE_MAX_QPS)
		return BAD("--keep-connections: a host could hold hosts-1 QPs, at most %d",
			   MROCE_MAX_QPS - 1);
	if (c->work == SIM_INCAST && (c->incast < 1 || c->incast >= c->hosts))
		return BAD("--incast must be 1..hosts-1");
	if (c->work != SIM_ALLREDUCE && c->work != SIM_BROADCAST && sim_work_coll(c->work) &&
	    c->size / c->hosts / 4 == 0)
		return BAD("--size must give every host's block at least one 4-byte element");
	if (c->background > c->hosts)
		return BAD("--background must be 0..hosts");
	if (c->verify && (__u64)c->hosts * c->size * 2 > (8ull << 30))
		return BAD("--verify needs hosts x size x 2 <= 8 GiB of memory");
	if (!c->sample_us)
		return BAD("--sample-us must be positive");
	if (!c->trace_out != !c->trace_hosts_set)
		return BAD("--trace and --trace-hosts go together");
	if (c->trace_out && (c->trace_host[0] >= c->hosts || c->trace_host[1] >= c->hosts ||
			     c->trace_host[0] == c->trace_host[1]))
		return BAD("--trace-hosts must name two different hosts below --hosts");
	for (__u32 i = 0; i < c->nfaults; i++) {
		const struct sim_fault *f = &c->faults[i];

		if (f->plane >= c->planes || f->spine >= c->spines ||
		    f->leaf >= c->hosts / c->hosts_per_leaf)
			return BAD("fault %u names a plane, leaf or spine the fabric lacks", i + 1);
		if (f->count && !f->period_ps)
			return BAD("fault %u: a flap needs a period", i + 1);
	}
	return 0;
}
