// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Work queue rings that grow on use. A QP's send ring and each stream's
 * receive ring start with MROCE_RING_FIRST entries and double when a post
 * needs more, up to the ring their depth asks for: a host with a thousand
 * connections holds what it has posted, not what it may post (at the
 * defaults, 65 KB of a connection end's 118 KB were rings nobody used;
 * docs/scale.md, "State").
 *
 * Entries are found by sequence number (seq & mask, qp.h): growing places
 * every live entry, [head, tail), where the larger mask puts it. Entries
 * outside that range are never read (post.c clears what it fills).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qp.h"

/* mroce_ring_reserve's slow half (qp.h): the ring holds fewer than need. */
int mroce_ring_grow(void **ring, __u32 *mask, __u32 max_mask, size_t esz, __u32 head,
		    __u32 tail, __u32 need)
{
	__u32 grown = *mask;
	__u8 *old = *ring, *to;

	if ((__u64)need > (__u64)max_mask + 1)
		return -ENOSPC;
	while ((__u64)grown + 1 < need)
		grown = 2 * grown + 1;
	to = calloc((size_t)grown + 1, esz);
	if (!to)
		return -ENOMEM;
	for (__u32 seq = head; seq != tail; seq++)
		memcpy(to + (size_t)(seq & grown) * esz, old + (size_t)(seq & *mask) * esz, esz);
	free(old);
	*ring = to;
	*mask = grown;
	return 0;
}
