// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: which algorithm runs an operation, from one table by kind,
 * size and rank count (docs/collectives.md, "Algorithms"). `bytes` is the
 * buffer of all-reduce and broadcast, all blocks together for the others
 * (all-to-all: size blocks of bytes / size).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "coll_internal.h"

/* One rank, or nothing to move: the result is the input. */
static int local_start(struct coll_op *op)
{
	const struct coll_args *a = &op->a;
	__u8 *mine = a->recvbuf;

	if (a->kind == MROCE_COLL_ALLGATHER)
		mine += (size_t)op->c->rank * op->bytes;
	if (a->kind != MROCE_COLL_BROADCAST && a->kind != MROCE_COLL_BARRIER && op->bytes &&
	    a->sendbuf != mine && !op->c->dry)
		memcpy(mine, a->sendbuf, op->bytes);
	return 0;
}

static int local_step(struct coll_op *op)
{
	(void)op;
	return 1;
}

const struct coll_algo coll_algo_local = { .name = "local", .start = local_start,
					   .step = local_step };

size_t coll_a2a_inbox_max(const struct mroce_coll_comm *c)
{
	/* Blocks up to this size go through the inboxes: no buffer offer to
	 * wait for, but a copy on each side. Beyond it the copies cost more
	 * than the offer's round trip. */
	return c->small_bytes < c->chunk ? c->small_bytes : c->chunk;
}

/*
 * The table's thresholds. Up to COLL_FEW_RANKS ranks the ring and the chain
 * stay (measured on 2 and 4 ranks, where they pipeline every chunk and their
 * N-1 round trips are few); beyond it the log-step algorithms, whose round
 * trips grow with log2 N. A chain still wins at any rank count once the
 * buffer is many chunks per rank: its N-1 hops are then a small part of the
 * pipeline, and it moves the buffer once where scatter + all-gather moves it
 * twice. Likewise the ring, once each rank's segment is at least a chunk:
 * every one of its steps is then a whole chunk behind the one before, and
 * its 2(N-1) round trips hide in the pipeline (mroce-sim, 256 hosts at 400
 * Gbit/s: 64 MiB, 256 KiB segments, 1.04x the ideal against 1.23x for the
 * log steps; 16 MiB, 64 KiB segments, 1.62x against 1.23x; docs/scale.md).
 */
#define COLL_FEW_RANKS		8
#define COLL_CHAIN_CHUNKS	4	/* chunks per rank from which the chain wins */

/* Every algorithm of each kind, for pinning one by name. */
#define COLL_CANDIDATES		4
static const struct coll_algo *const candidates[][COLL_CANDIDATES] = {
	[MROCE_COLL_ALLREDUCE]		= { &coll_algo_ring_allreduce, &coll_algo_rd,
					    &coll_algo_rhd_allreduce },
	[MROCE_COLL_REDUCE_SCATTER]	= { &coll_algo_ring_reduce_scatter,
					    &coll_algo_rhd_reduce_scatter },
	[MROCE_COLL_ALLGATHER]		= { &coll_algo_ring_allgather, &coll_algo_rd_allgather },
	[MROCE_COLL_BROADCAST]		= { &coll_algo_bcast_chain, &coll_algo_bcast_tree,
					    &coll_algo_bcast_sag },
	[MROCE_COLL_ALLTOALL]		= { &coll_algo_a2a_direct, &coll_algo_a2a_inbox },
	[MROCE_COLL_BARRIER]		= { &coll_algo_barrier },
	[MROCE_COLL_SEND]		= { &coll_algo_p2p_send },
	[MROCE_COLL_RECV]		= { &coll_algo_p2p_recv },
};

static const struct coll_algo *table(const struct mroce_coll_comm *c, enum mroce_coll_kind kind,
				     size_t bytes);

/* The pinned algorithm of this kind: the first name of the comma-separated
 * list force_algo that the kind has, else NULL. */
static const struct coll_algo *pinned(const char *list, enum mroce_coll_kind kind)
{
	const char *p = list;

	while (p && *p) {
		size_t len = strcspn(p, ",");

		for (size_t i = 0; i < COLL_CANDIDATES && candidates[kind][i]; i++)
			if (strlen(candidates[kind][i]->name) == len &&
			    !strncmp(candidates[kind][i]->name, p, len))
				return candidates[kind][i];
		p += len;
		if (*p)
			p++;
	}
	return NULL;
}

bool coll_algo_names_valid(const char *list)
{
	const char *p = list;

	if (!p || !*p)
		return false;
	for (;;) {
		size_t len = strcspn(p, ",");
		bool known = false;

		for (size_t k = 0; !known && k < sizeof(candidates) / sizeof(candidates[0]); k++)
			for (size_t i = 0; i < COLL_CANDIDATES && candidates[k][i]; i++)
				if (strlen(candidates[k][i]->name) == len &&
				    !strncmp(candidates[k][i]->name, p, len))
					known = true;
		if (!known)
			return false;
		p += len;
		if (!*p)
			return true;
		p++;
	}
}

const struct coll_algo *coll_select(const struct mroce_coll_comm *c, enum mroce_coll_kind kind,
				    size_t bytes)
{
	const struct coll_algo *al = table(c, kind, bytes), *pin;

	if (c->force_algo && al != &coll_algo_local && (pin = pinned(c->force_algo, kind)))
		return pin;
	return al;
}

static const struct coll_algo *table(const struct mroce_coll_comm *c, enum mroce_coll_kind kind,
				     size_t bytes)
{
	bool small = !c->ring_only && bytes <= c->small_bytes;
	bool one = c->size == 1;
	/* the ring and the chain: few ranks, or the tests' ring_only */
	bool few = c->ring_only || c->size <= COLL_FEW_RANKS;
	/* ... or segments of a chunk or more (bytes / size: each rank's) */
	bool ring = few || bytes / (size_t)c->size >= c->chunk;

	switch (kind) {
	case MROCE_COLL_ALLREDUCE:
		return one || !bytes ? &coll_algo_local : small ? &coll_algo_rd :
		       ring ? &coll_algo_ring_allreduce : &coll_algo_rhd_allreduce;
	case MROCE_COLL_REDUCE_SCATTER:
		return one || !bytes ? &coll_algo_local : ring ? &coll_algo_ring_reduce_scatter :
		       &coll_algo_rhd_reduce_scatter;
	case MROCE_COLL_ALLGATHER:
		return one || !bytes ? &coll_algo_local : ring ? &coll_algo_ring_allgather :
		       &coll_algo_rd_allgather;
	case MROCE_COLL_BROADCAST:
		if (one || !bytes)
			return &coll_algo_local;
		if (small)
			return &coll_algo_bcast_tree;
		if (few || bytes / c->chunk >= (size_t)COLL_CHAIN_CHUNKS * (size_t)c->size)
			return &coll_algo_bcast_chain;
		return &coll_algo_bcast_sag;
	case MROCE_COLL_ALLTOALL:
		/* all-to-all-v always runs: only the pairs' messages show that
		 * every rank agrees on the sizes (bytes 0 then); either way at
		 * most COLL_A2A_WINDOW peers at once (algo_a2a.c) */
		return bytes / (size_t)c->size <= coll_a2a_inbox_max(c) ? &coll_algo_a2a_inbox :
		       &coll_algo_a2a_direct;
	case MROCE_COLL_BARRIER:
		return &coll_algo_barrier;
	case MROCE_COLL_SEND:
		return &coll_algo_p2p_send;
	case MROCE_COLL_RECV:
		return &coll_algo_p2p_recv;
	}
	return NULL;
}

const char *mroce_coll_algo(const struct mroce_coll_comm *c, enum mroce_coll_kind kind,
			    size_t bytes)
{
	const struct coll_algo *al;

	if (!c || (unsigned int)kind > MROCE_COLL_RECV)
		return NULL;
	if (c->size == 1 && kind != MROCE_COLL_BARRIER && kind != MROCE_COLL_SEND &&
	    kind != MROCE_COLL_RECV)
		return coll_algo_local.name;
	al = coll_select(c, kind, bytes);
	if (!al)
		return NULL;
	/* the name of what the size alone picks, whatever the buffer's content */
	if (al == &coll_algo_local && c->size > 1)
		return coll_select(c, kind, bytes ? bytes : 1)->name;
	return al->name;
}
