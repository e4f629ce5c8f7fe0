// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * enum ibv_rate against Mbit/s and multiples of 2.5 Gbit/s: pure
 * conversions every device shares, real ones (strong: a second definition
 * elsewhere in verbs/ is a link error, not a silent override).
 * The figures are the InfiniBand link rates; the FDR/EDR/HDR/NDR ones are
 * the signalling rates after 64b/66b encoding, as libibverbs reports them.
 * Multiples are what rdma-core 44 answers, checked against it: none for the
 * FDR/EDR-era rates (14, 25, 56, 100 ... Gbit/s), rounded down for 28.
 */
#include <infiniband/verbs.h>

#include "mrv.h"

static const struct {
	enum ibv_rate	rate;
	int		mbps;
	int		mult;	/* of 2.5 Gbit/s, rounded down; -1: none given */
} mrv_rates[] = {
	{ IBV_RATE_2_5_GBPS,	2500,	1 },
	{ IBV_RATE_5_GBPS,	5000,	2 },
	{ IBV_RATE_10_GBPS,	10000,	4 },
	{ IBV_RATE_20_GBPS,	20000,	8 },
	{ IBV_RATE_30_GBPS,	30000,	12 },
	{ IBV_RATE_40_GBPS,	40000,	16 },
	{ IBV_RATE_60_GBPS,	60000,	24 },
	{ IBV_RATE_80_GBPS,	80000,	32 },
	{ IBV_RATE_120_GBPS,	120000,	48 },
	{ IBV_RATE_14_GBPS,	14062,	-1 },
	{ IBV_RATE_56_GBPS,	56250,	-1 },
	{ IBV_RATE_112_GBPS,	112500,	-1 },
	{ IBV_RATE_168_GBPS,	168750,	-1 },
	{ IBV_RATE_25_GBPS,	25781,	-1 },
	{ IBV_RATE_100_GBPS,	103125,	-1 },
	{ IBV_RATE_200_GBPS,	206250,	-1 },
	{ IBV_RATE_300_GBPS,	309375,	-1 },
	{ IBV_RATE_28_GBPS,	28125,	11 },
	{ IBV_RATE_50_GBPS,	53125,	20 },
	{ IBV_RATE_400_GBPS,	425000,	160 },
	{ IBV_RATE_600_GBPS,	637500,	240 },
	{ IBV_RATE_800_GBPS,	850000,	320 },
	{ IBV_RATE_1200_GBPS,	1275000, 480 },
};

#define MRV_NRATES (sizeof(mrv_rates) / sizeof(mrv_rates[0]))

MRV_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (unsigned int i = 0; i < MRV_NRATES; i++)
		if (mrv_rates[i].rate == rate)
			return mrv_rates[i].mult;
	return -1;
}

MRV_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (unsigned int i = 0; i < MRV_NRATES; i++)
		if (mrv_rates[i].mult > 0 && mrv_rates[i].mult == mult)
			return mrv_rates[i].rate;
	return IBV_RATE_MAX;
}

MRV_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (unsigned int i = 0; i < MRV_NRATES; i++)
		if (mrv_rates[i].rate == rate)
			return mrv_rates[i].mbps;
	return -1;
}

MRV_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (unsigned int i = 0; i < MRV_NRATES; i++)
		if (mrv_rates[i].mbps == mbps)
			return mrv_rates[i].rate;
	return IBV_RATE_MAX;
}
