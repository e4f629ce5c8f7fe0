// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * MROCE_VERBS_TEST_FAULTS: fault injection for tests that run unmodified
 * Verbs programs (they have no other way to ask for it). Strict: a typo
 * must fail the device open (EINVAL), not silently test without faults.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "mrv.h"

static const struct {
	const char *name;
	size_t off;
	bool ppm;
} fields[] = {
	{ "seed", offsetof(struct mroce_faults, seed), false },
	{ "tx_drop_ppm", offsetof(struct mroce_faults, tx_drop_ppm), true },
	{ "tx_dup_ppm", offsetof(struct mroce_faults, tx_dup_ppm), true },
	{ "tx_reorder_ppm", offsetof(struct mroce_faults, tx_reorder_ppm), true },
	{ "tx_corrupt_ppm", offsetof(struct mroce_faults, tx_corrupt_ppm), true },
	{ "rx_drop_ppm", offsetof(struct mroce_faults, rx_drop_ppm), true },
	{ "rx_dup_ppm", offsetof(struct mroce_faults, rx_dup_ppm), true },
	{ "rx_reorder_ppm", offsetof(struct mroce_faults, rx_reorder_ppm), true },
	{ "rx_corrupt_ppm", offsetof(struct mroce_faults, rx_corrupt_ppm), true },
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* Decimal digits only (no sign, no space, no hex), within 32 bits. */
static int parse_u32(const char *p, size_t len, __u32 *out)
{
	__u64 v = 0;

	if (!len || len > 10)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (__u64)(p[i] - '0');
	}
	if (v > 0xffffffffull)
		return -EINVAL;
	*out = (__u32)v;
	return 0;
}

int mrv_parse_faults(const char *s, struct mroce_faults *f)
{
	bool seen[NFIELDS] = { false };

	memset(f, 0, sizeof(*f));
	if (!s || !*s)
		return 0;
	for (;;) {
		size_t item = strcspn(s, ","), key;
		const char *eq = memchr(s, '=', item);
		unsigned int i;
		__u32 v;

		if (!eq)
			return -EINVAL;
		key = (size_t)(eq - s);
		for (i = 0; i < NFIELDS; i++)
			if (strlen(fields[i].name) == key && !memcmp(fields[i].name, s, key))
				break;
		if (i == NFIELDS || seen[i] || parse_u32(eq + 1, item - key - 1, &v))
			return -EINVAL;
		if (fields[i].ppm && v > 1000000)
			return -EINVAL;
		seen[i] = true;
		memcpy((char *)f + fields[i].off, &v, sizeof(v));
		if (!s[item])
			return 1;
		s += item + 1;	/* past the comma: a trailing one leaves an empty item, refused */
	}
}
