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

#include "coll_internal.h"

struct mroce_coll_req {
	struct coll_args	a;
	struct mroce_coll_req	*next;
	struct mroce_coll_comm	*comm;
	int			result;
	bool			done;
};

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

	if (err)
		return err;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->a = *a;
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
