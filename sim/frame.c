// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Frames: every packet a host sends is one, from its sending to its
 * delivery or drop. Millions come and go a second, most of two sizes (ACKs
 * and full data packets), so freed ones wait on a list per size for the
 * next: glibc's malloc of a 4 KiB block, per packet, was a few percent of a
 * run's profile (perf, 128 hosts x 8 MiB all-to-all).
 *
 * Without --verify a frame keeps only its first SIM_FRAME_KEPT bytes
 * (sim.h): the payloads nobody reads were 110 MB of frames in flight at 256
 * hosts, each copied in cold at one end and read cold at the other.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define FRAME_SMALL	SIM_FRAME_KEPT	/* an ACK, a NACK, a short message's packet */

enum { POOL_NONE, POOL_SMALL, POOL_BIG };

/* Ethernet, IPv6, UDP and the largest MetaRoCE header stack: all kept. */
_Static_assert(SIM_FRAME_KEPT >= 14 + 40 + 8 + MROCE_HDR_MAX, "a kept frame holds its headers");

static __u32 big_len(const struct sim *s)
{
	return s->cfg.mtu + 512;	/* every header the engine puts before a full payload */
}

__u32 sim_frame_kept(const struct sim *s, __u32 len)
{
	return s->cfg.verify || len <= SIM_FRAME_KEPT ? len : SIM_FRAME_KEPT;
}

struct sim_frame *sim_frame_new(struct sim *s, __u32 len)
{
	__u32 kept = sim_frame_kept(s, len);
	struct sim_frame **list = kept <= FRAME_SMALL ? &s->free_small :
				  kept <= big_len(s) ? &s->free_big : NULL;
	struct sim_frame *f = list ? *list : NULL;
	__u8 pool = !list ? POOL_NONE : kept <= FRAME_SMALL ? POOL_SMALL : POOL_BIG;

	if (f)
		memcpy(list, f->data, sizeof(*list));	/* the next one, kept where data goes */
	else
		f = malloc(sizeof(*f) + (pool == POOL_SMALL ? FRAME_SMALL :
					 pool == POOL_BIG ? big_len(s) : kept));
	if (!f)
		return NULL;
	memset(f, 0, sizeof(*f));
	s->frames_live++;
	f->pool = pool;
	f->len = len;
	return f;
}

void sim_frame_free(struct sim *s, struct sim_frame *f)
{
	struct sim_frame **list = f->pool == POOL_SMALL ? &s->free_small :
				  f->pool == POOL_BIG ? &s->free_big : NULL;

	s->frames_live--;
	if (!list) {
		free(f);
		return;
	}
	memcpy(f->data, list, sizeof(*list));
	*list = f;
}

void sim_frames_release(struct sim *s)
{
	struct sim_frame **lists[] = { &s->free_small, &s->free_big };

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		while (*lists[i]) {
			struct sim_frame *f = *lists[i];

			memcpy(lists[i], f->data, sizeof(*lists[i]));
			free(f);
		}
}
