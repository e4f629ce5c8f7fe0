// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: argument checks, blocking calls and non-blocking requests.
 * Operations run one at a time, in the order they were called: blocking
 * ones on the caller's thread, started ones on the communicator's worker
 * thread (created on first use). A blocking call first waits for the
 * started ones, so every rank still sees the same sequence.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

struct mroce_coll_req {
	struct coll_args	a;
	struct mroce_coll_req	*next;
	struct mroce_coll_comm	*comm;
	int			result;
	bool			done;
	size_t			v[];	/* all-to-all-v: the arrays, copied */
};

/*
 * All-to-all-v: every block within the address space, none of 4 GiB or
 * more (one WRITE), our own block the same size both ways, and no two
 * receive blocks overlapping (their bytes would depend on arrival order).
 */
static int check_alltoallv(struct mroce_coll_comm *c, const struct coll_args *a, size_t esz)
{
	const size_t *cnt[2] = { a->scounts, a->rcounts }, *dsp[2] = { a->sdispls, a->rdispls };
	const void *buf[2] = { a->sendbuf, a->recvbuf };
	int n = c->size;

	if (!a->scounts || !a->sdispls || !a->rcounts || !a->rdispls)
		return -EINVAL;
	for (int k = 0; k < 2; k++)
		for (int p = 0; p < n; p++) {
			size_t len, off;

			if (cnt[k][p] > SIZE_MAX / esz || dsp[k][p] > SIZE_MAX / esz)
				return -EOVERFLOW;
			len = cnt[k][p] * esz;
			off = dsp[k][p] * esz;
			if (off > SIZE_MAX - len ||
			    (uintptr_t)buf[k] > UINTPTR_MAX - (off + len))
				return -EOVERFLOW;
			if (len && !buf[k])
				return -EINVAL;
			if (len > UINT32_MAX)
				return -EMSGSIZE;
		}
	if (a->scounts[c->rank] != a->rcounts[c->rank])
		return -EINVAL;
	for (int p = 0; p < n; p++)
		for (int q = p + 1; q < n; q++) {
			size_t lp = a->rcounts[p] * esz, lq = a->rcounts[q] * esz;
			size_t op = a->rdispls[p] * esz, oq = a->rdispls[q] * esz;

			if (lp && lq && op < oq + lq && oq < op + lp)
				return -EINVAL;
		}
	return 0;
}

static int check(struct mroce_coll_comm *c, const struct coll_args *a)
{
	size_t esz = mroce_coll_dtype_size(a->dtype), n;
	bool needs_op = a->kind == MROCE_COLL_ALLREDUCE || a->kind == MROCE_COLL_REDUCE_SCATTER;
	/* the buffers the operation uses: broadcast has one, send and receive one each */
	bool reads = a->kind != MROCE_COLL_BROADCAST && a->kind != MROCE_COLL_RECV;
	bool writes = a->kind != MROCE_COLL_SEND;

	if (!c)
		return -EINVAL;
	n = (size_t)c->size;
	if (a->kind != MROCE_COLL_BARRIER) {
		if (!esz || (needs_op && (unsigned int)a->op >= __MROCE_COLL_REDOP_MAX))
			return -EINVAL;
		if (a->kind == MROCE_COLL_ALLTOALL && a->v) {
			int err = check_alltoallv(c, a, esz);

			if (err)
				return err;
		}
		/* the biggest buffer is count x size elements (or count for all-reduce) */
		if (a->count > SIZE_MAX / esz / n)
			return -EOVERFLOW;
		if (a->count && ((reads && !a->sendbuf) || (writes && !a->recvbuf)))
			return -EINVAL;
		if (a->kind == MROCE_COLL_BROADCAST && (a->root < 0 || a->root >= c->size))
			return -EINVAL;
		/* a peer of point to point is another rank */
		if ((a->kind == MROCE_COLL_SEND || a->kind == MROCE_COLL_RECV) &&
		    (a->root < 0 || a->root >= c->size || a->root == c->rank))
			return -EINVAL;
		/* one all-to-all block is one WRITE, whose length is 32 bits */
		if (a->kind == MROCE_COLL_ALLTOALL && a->count * esz > UINT32_MAX)
			return -EMSGSIZE;
	}
	return __atomic_load_n(&c->err, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	struct mroce_coll_comm *c = arg;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct mroce_coll_req *r;

		while (!c->head && !c->stopping)
			pthread_cond_wait(&c->cond, &c->lock);
		if (!c->head)
			break;	/* stopping, and nothing left to run */
		while (c->busy)
			pthread_cond_wait(&c->cond, &c->lock);
		r = c->head;
		c->head = r->next;
		if (!c->head)
			c->tail = NULL;
		c->busy = 1;
		pthread_mutex_unlock(&c->lock);
		r->result = coll_run(c, &r->a);
		pthread_mutex_lock(&c->lock);
		c->busy = 0;
		r->done = true;
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static int run_blocking(struct mroce_coll_comm *c, const struct coll_args *a)
{
	int err = check(c, a);

	if (err)
		return err;
	pthread_mutex_lock(&c->lock);
	while (c->head || c->busy)
		pthread_cond_wait(&c->cond, &c->lock);
	c->busy = 1;
	pthread_mutex_unlock(&c->lock);
	err = coll_run(c, a);
	pthread_mutex_lock(&c->lock);
	c->busy = 0;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return err;
}

static int start(struct mroce_coll_comm *c, const struct coll_args *a,
		 struct mroce_coll_req **reqp)
{
	struct mroce_coll_req *r;
	int err = reqp ? check(c, a) : -EINVAL;
	size_t n = a->v ? (size_t)c->size : 0;

	if (err)
		return err;
	/* all-to-all-v's counts and displacements are copied: the caller's
	 * arrays are free again when the start returns */
	r = calloc(1, sizeof(*r) + 4 * n * sizeof(size_t));
	if (!r)
		return -ENOMEM;
	r->a = *a;
	if (n) {
		size_t *v = r->v;

		memcpy(v, a->scounts, n * sizeof(*v));
		memcpy(v + n, a->sdispls, n * sizeof(*v));
		memcpy(v + 2 * n, a->rcounts, n * sizeof(*v));
		memcpy(v + 3 * n, a->rdispls, n * sizeof(*v));
		r->a.scounts = v;
		r->a.sdispls = v + n;
		r->a.rcounts = v + 2 * n;
		r->a.rdispls = v + 3 * n;
	}
	r->comm = c;
	pthread_mutex_lock(&c->lock);
	if (c->stopping) {
		err = -ESHUTDOWN;
	} else if (!c->worker_running) {
		err = -pthread_create(&c->worker, NULL, worker, c);
		c->worker_running = !err;
	}
	if (err) {
		pthread_mutex_unlock(&c->lock);
		free(r);
		return err;
	}
	if (c->tail)
		c->tail->next = r;
	else
		c->head = r;
	c->tail = r;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	*reqp = r;
	return 0;
}

int mroce_coll_wait(struct mroce_coll_req *r)
{
	struct mroce_coll_comm *c;
	int res;

	if (!r)
		return -EINVAL;
	c = r->comm;
	pthread_mutex_lock(&c->lock);
	while (!r->done)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
	res = r->result;
	free(r);
	return res;
}

int mroce_coll_test(struct mroce_coll_req *r)
{
	bool done;

	if (!r)
		return -EINVAL;
	pthread_mutex_lock(&r->comm->lock);
	done = r->done;
	pthread_mutex_unlock(&r->comm->lock);
	return done ? mroce_coll_wait(r) : -EINPROGRESS;
}

#define ARGS(KIND, S, R, N, T, OP, ROOT)						\
	(&(struct coll_args){ .kind = (KIND), .sendbuf = (S), .recvbuf = (R), .count = (N),	\
			      .dtype = (T), .op = (OP), .root = (ROOT) })
#define P2P(KIND, S, R, N, T, PEER, TAG)						\
	(&(struct coll_args){ .kind = (KIND), .sendbuf = (S), .recvbuf = (R), .count = (N),	\
			      .dtype = (T), .root = (PEER), .tag = (TAG) })

int mroce_coll_allreduce(struct mroce_coll_comm *c, const void *s, void *r, size_t n,
			 enum mroce_coll_dtype t, enum mroce_coll_redop op)
{
	return run_blocking(c, ARGS(MROCE_COLL_ALLREDUCE, s, r, n, t, op, 0));
}

int mroce_coll_reduce_scatter(struct mroce_coll_comm *c, const void *s, void *r, size_t n,
			      enum mroce_coll_dtype t, enum mroce_coll_redop op)
{
	return run_blocking(c, ARGS(MROCE_COLL_REDUCE_SCATTER, s, r, n, t, op, 0));
}

int mroce_coll_allgather(struct mroce_coll_comm *c, const void *s, void *r, size_t n,
			 enum mroce_coll_dtype t)
{
	return run_blocking(c, ARGS(MROCE_COLL_ALLGATHER, s, r, n, t, 0, 0));
}

int mroce_coll_broadcast(struct mroce_coll_comm *c, void *buf, size_t n,
			 enum mroce_coll_dtype t, int root)
{
	return run_blocking(c, ARGS(MROCE_COLL_BROADCAST, buf, buf, n, t, 0, root));
}

int mroce_coll_alltoall(struct mroce_coll_comm *c, const void *s, void *r, size_t n,
			enum mroce_coll_dtype t)
{
	return run_blocking(c, ARGS(MROCE_COLL_ALLTOALL, s, r, n, t, 0, 0));
}

#define ARGSV(S, SC, SD, R, RC, RD, T)							\
	(&(struct coll_args){ .kind = MROCE_COLL_ALLTOALL, .sendbuf = (S), .recvbuf = (R),	\
			      .dtype = (T), .v = true, .scounts = (SC), .sdispls = (SD), .rcounts = (RC),	\
			      .rdispls = (RD) })

int mroce_coll_alltoallv(struct mroce_coll_comm *c, const void *s, const size_t *sc,
			 const size_t *sd, void *r, const size_t *rc, const size_t *rd,
			 enum mroce_coll_dtype t)
{
	return run_blocking(c, ARGSV(s, sc, sd, r, rc, rd, t));
}

int mroce_coll_ialltoallv(struct mroce_coll_comm *c, const void *s, const size_t *sc,
			  const size_t *sd, void *r, const size_t *rc, const size_t *rd,
			  enum mroce_coll_dtype t, struct mroce_coll_req **req)
{
	return start(c, ARGSV(s, sc, sd, r, rc, rd, t), req);
}

int mroce_coll_barrier(struct mroce_coll_comm *c)
{
	return run_blocking(c, ARGS(MROCE_COLL_BARRIER, NULL, NULL, 0, 0, 0, 0));
}

int mroce_coll_send(struct mroce_coll_comm *c, const void *buf, size_t n,
		    enum mroce_coll_dtype t, int peer, __u32 tag)
{
	return run_blocking(c, P2P(MROCE_COLL_SEND, buf, NULL, n, t, peer, tag));
}

int mroce_coll_recv(struct mroce_coll_comm *c, void *buf, size_t n,
		    enum mroce_coll_dtype t, int peer, __u32 tag)
{
	return run_blocking(c, P2P(MROCE_COLL_RECV, NULL, buf, n, t, peer, tag));
}

int mroce_coll_iallreduce(struct mroce_coll_comm *c, const void *s, void *r, size_t n,
			  enum mroce_coll_dtype t, enum mroce_coll_redop op,
			  struct mroce_coll_req **req)
{
	return start(c, ARGS(MROCE_COLL_ALLREDUCE, s, r, n, t, op, 0), req);
}

int mroce_coll_ireduce_scatter(struct mroce_coll_comm *c, const void *s, void *r, size_t n,
			       enum mroce_coll_dtype t, enum mroce_coll_redop op,
			       struct mroce_coll_req **req)
{
	return start(c, ARGS(MROCE_COLL_REDUCE_SCATTER, s, r, n, t, op, 0), req);
}

int mroce_coll_iallgather(struct mroce_coll_comm *c, const void *s, void *r, size_t n,
			  enum mroce_coll_dtype t, struct mroce_coll_req **req)
{
	return start(c, ARGS(MROCE_COLL_ALLGATHER, s, r, n, t, 0, 0), req);
}

int mroce_coll_ibroadcast(struct mroce_coll_comm *c, void *buf, size_t n,
			  enum mroce_coll_dtype t, int root, struct mroce_coll_req **req)
{
	return start(c, ARGS(MROCE_COLL_BROADCAST, buf, buf, n, t, 0, root), req);
}

int mroce_coll_ialltoall(struct mroce_coll_comm *c, const void *s, void *r, size_t n,
			 enum mroce_coll_dtype t, struct mroce_coll_req **req)
{
	return start(c, ARGS(MROCE_COLL_ALLTOALL, s, r, n, t, 0, 0), req);
}

int mroce_coll_ibarrier(struct mroce_coll_comm *c, struct mroce_coll_req **req)
{
	return start(c, ARGS(MROCE_COLL_BARRIER, NULL, NULL, 0, 0, 0, 0), req);
}

int mroce_coll_isend(struct mroce_coll_comm *c, const void *buf, size_t n,
		     enum mroce_coll_dtype t, int peer, __u32 tag, struct mroce_coll_req **req)
{
	return start(c, P2P(MROCE_COLL_SEND, buf, NULL, n, t, peer, tag), req);
}

int mroce_coll_irecv(struct mroce_coll_comm *c, void *buf, size_t n,
		     enum mroce_coll_dtype t, int peer, __u32 tag, struct mroce_coll_req **req)
{
	return start(c, P2P(MROCE_COLL_RECV, NULL, buf, n, t, peer, tag), req);
}
