/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mroce-coll-perf's command line: nccl-tests' flags (all_reduce_perf and
 * friends) with their meanings, plus mroce's own. Parsed without side
 * effects so it can be unit-tested.
 */
#ifndef MROCE_PERF_COLL_ARGS_H
#define MROCE_PERF_COLL_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <mroce/mroce.h>

#define COLL_MAX_BYTES	(1ULL << 40)

struct coll_args {
	enum mroce_coll_kind	kind;
	size_t			minb, maxb;
	double			factor;		/* -f; 0 when -i steps by stepbytes */
	size_t			stepbytes;	/* -i */
	int			iters, warmup;
	bool			check;		/* -c 1: count wrong elements (a separate run) */
	bool			blocking;	/* -z 1: blocking calls; 0: start every iteration, then wait */
	enum mroce_coll_dtype	dtype;
	enum mroce_coll_redop	op;
	int			root;		/* -r: broadcast's root */
	bool			json;
	bool			stats;
	int			warmup_ms;
	size_t			chunk;
};

extern const char *const coll_kind_names[];	/* indexed by enum mroce_coll_kind */
extern const char coll_usage[];

#define COLL_ARGS_HELP		1
#define COLL_ARGS_VERSION	2

/*
 * Fill *a from argv. argv[0]'s base name may pick the collective as
 * nccl-tests' binaries do (all_reduce_perf, all_gather_perf, alltoall_perf,
 * reduce_scatter_perf, broadcast_perf). Returns 0, COLL_ARGS_HELP,
 * COLL_ARGS_VERSION, or -1 with a one-line reason in err (exit 2).
 */
int coll_parse_args(int argc, char **argv, struct coll_args *a, char *err, size_t errlen);

/*
 * The environment the communicator is joined through (RANK, WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT): 0, or -1 with a line naming the variable that is
 * missing or malformed in err (exit 2). The library reports these as -EINVAL
 * or -EDESTADDRREQ, which cannot say which.
 */
int coll_env_check(char *err, size_t errlen);

/* The size after `size` in the sweep; 0 past maxb or on overflow. */
size_t coll_next_size(const struct coll_args *a, size_t size);

#endif
