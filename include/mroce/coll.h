/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libmroce collectives: all-reduce, reduce-scatter, all-gather, broadcast,
 * all-to-all and barrier over a communicator of N ranks, each rank one
 * process with its own device. Shaped after NCCL/MPI: every rank calls the
 * same operations in the same order with matching arguments.
 * Include <mroce/mroce.h>, not this file. docs/collectives.md explains the
 * algorithms, the reduction order and the failure rules.
 */
#ifndef MROCE_COLL_H
#define MROCE_COLL_H

/* MROCE_API and the shared enums; mroce.h includes this file at its end. */
#include "mroce.h"

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MROCE_COLL_MAX_RANKS	256	/* ranks in one communicator: RANK < WORLD_SIZE <= this */

struct mroce_coll_comm;	/* a communicator: N ranks fully connected by QPs */
struct mroce_coll_req;	/* a started non-blocking operation */

enum mroce_coll_dtype {
	MROCE_COLL_FLOAT32,
	MROCE_COLL_FLOAT64,
	MROCE_COLL_INT32,
	MROCE_COLL_INT64,
	MROCE_COLL_UINT8,
	__MROCE_COLL_DTYPE_MAX
};

enum mroce_coll_redop {
	MROCE_COLL_SUM,
	MROCE_COLL_PROD,
	MROCE_COLL_MIN,
	MROCE_COLL_MAX,
	__MROCE_COLL_REDOP_MAX
};

/*
 * How to join a communicator. Unset fields come from the environment, the
 * way torchrun launches jobs:
 *   RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (29500)  rendezvous
 *   MROCE_IFNAME            interface (default: the one that routes to MASTER_ADDR)
 *   MROCE_COLL_TIMEOUT_MS   failure timeout (default 30000)
 * Rank 0 listens on MASTER_ADDR:MASTER_PORT (TCP), collects every rank's
 * queue-pair and buffer info and hands the whole table out; then every pair
 * of ranks is connected by one QP.
 */
struct mroce_coll_opts {
	size_t		sz;
	int		rank;		/* -1: $RANK */
	int		world_size;	/* 0: $WORLD_SIZE */
	const char	*master_addr;	/* NULL: $MASTER_ADDR (IPv4 literal) */
	__u16		master_port;	/* 0: $MASTER_PORT, else 29500 */
	const char	*ifname;	/* NULL: $MROCE_IFNAME, else the route to the master */
	struct mroce_dev *dev;		/* use this open device (with its progress thread)
					 * instead of opening ifname */
	__u32		timeout_ms;	/* 0: $MROCE_COLL_TIMEOUT_MS, else 30000; covers the
					 * rendezvous and, in operations, the longest wait
					 * without any completion */
	__u32		paths;		/* UDP source ports each QP sprays over; 0: 8 */
	__u32		chunk_bytes;	/* pipeline unit, multiple of 64, 4 KiB..1 MiB; 0: 256 KiB */
	size_t		small_bytes;	/* all-reduce/broadcast up to this size use the
					 * latency algorithms; 0: 16 KiB; SIZE_MAX: always */
	bool		ring_only;	/* never use the latency algorithms (tests) */
	const struct mroce_faults *test_faults;	/* fault injection on the opened device */
	size_t		:0;
};

/* Join: blocks until every rank has joined or the timeout passes. */
MROCE_API int mroce_coll_comm_create(const struct mroce_coll_opts *opts,
				     struct mroce_coll_comm **comm);
/* Waits for started operations, then closes QPs and the device it opened. */
MROCE_API void mroce_coll_comm_destroy(struct mroce_coll_comm *comm);
MROCE_API int mroce_coll_rank(const struct mroce_coll_comm *comm);
MROCE_API int mroce_coll_size(const struct mroce_coll_comm *comm);
/* 0, or the error that broke the communicator: every later operation returns it. */
MROCE_API int mroce_coll_error(const struct mroce_coll_comm *comm);
/* The device the communicator runs on (for stats). */
MROCE_API struct mroce_dev *mroce_coll_dev(const struct mroce_coll_comm *comm);

MROCE_API size_t mroce_coll_dtype_size(enum mroce_coll_dtype dtype);
MROCE_API const char *mroce_coll_dtype_str(enum mroce_coll_dtype dtype);
MROCE_API const char *mroce_coll_redop_str(enum mroce_coll_redop op);

/*
 * Blocking operations. Return 0 or a negative errno. Argument errors send
 * nothing and leave the communicator usable: -EINVAL for bad arguments,
 * -EOVERFLOW for a size that does not fit, -EMSGSIZE for an all-to-all
 * block of 4 GiB or more. Failures break the communicator on every rank
 * that notices them, and it must then be destroyed: -ETIMEDOUT when nothing
 * completed for the timeout, -ECONNABORTED when another rank reported a
 * failure, -EIO when a queue pair failed (a peer is gone), -EBADMSG when
 * two ranks' all-to-all(-v) blocks for each other differ in size (both of
 * them get it: in the call, or in the next one if theirs had already
 * returned; nothing is written outside the receiver's block).
 *
 * In place: all-reduce and broadcast with sendbuf == recvbuf; all-gather
 * with sendbuf == recvbuf + rank * count; reduce-scatter with recvbuf ==
 * sendbuf + rank * count; all-to-all and all-to-all-v with sendbuf ==
 * recvbuf, or any other overlap of send and receive blocks (the send
 * blocks are then copied first).
 * Counts are in elements; all-gather, reduce-scatter and all-to-all count
 * per rank (NCCL's convention).
 *
 * All-to-all-v (MPI_Alltoallv): rank r sends sendcounts[p] elements from
 * sendbuf + sdispls[p] elements to rank p, which receives them at recvbuf +
 * rdispls[r] (recvcounts[r] elements, the same number); indices are
 * communicator ranks. Blocks may lie anywhere, in any order, also in
 * separate allocations (with UINT8, displacements are byte offsets from
 * the buffer pointer to each block); zero counts are allowed (the buffer
 * may then be NULL). -EINVAL: a NULL array, a NULL buffer with a block,
 * sendcounts[rank] != recvcounts[rank], or receive blocks that overlap;
 * -EOVERFLOW: a block's end beyond SIZE_MAX or the address space; -EMSGSIZE:
 * a block of 4 GiB or more. The non-blocking start copies the four arrays.
 */
MROCE_API int mroce_coll_allreduce(struct mroce_coll_comm *comm, const void *sendbuf,
				   void *recvbuf, size_t count, enum mroce_coll_dtype dtype,
				   enum mroce_coll_redop op);
MROCE_API int mroce_coll_reduce_scatter(struct mroce_coll_comm *comm, const void *sendbuf,
					void *recvbuf, size_t recvcount,
					enum mroce_coll_dtype dtype, enum mroce_coll_redop op);
MROCE_API int mroce_coll_allgather(struct mroce_coll_comm *comm, const void *sendbuf,
				   void *recvbuf, size_t sendcount, enum mroce_coll_dtype dtype);
MROCE_API int mroce_coll_broadcast(struct mroce_coll_comm *comm, void *buf, size_t count,
				   enum mroce_coll_dtype dtype, int root);
MROCE_API int mroce_coll_alltoall(struct mroce_coll_comm *comm, const void *sendbuf,
				  void *recvbuf, size_t count, enum mroce_coll_dtype dtype);
MROCE_API int mroce_coll_alltoallv(struct mroce_coll_comm *comm, const void *sendbuf,
				   const size_t *sendcounts, const size_t *sdispls,
				   void *recvbuf, const size_t *recvcounts,
				   const size_t *rdispls, enum mroce_coll_dtype dtype);
MROCE_API int mroce_coll_barrier(struct mroce_coll_comm *comm);

/*
 * Point to point: count elements from this rank to peer, received there by
 * the matching mroce_coll_recv. Messages between two ranks are matched in
 * call order, as every operation is: the n-th send to a peer is that peer's
 * n-th receive from this rank. The receiver checks the sender's size and tag
 * against its own; a mismatch fails the receive with -EBADMSG and breaks the
 * communicator (the ranks are out of step): the sender's send, if it still
 * waits, or else its next call returns an error rather than waiting
 * (-ECONNABORTED). A send of up to 16 chunks (opts
 * chunk_bytes each) completes without the receiver; a larger one waits for
 * the receive, so two ranks that both send more than that before receiving
 * wait for the timeout (-ETIMEDOUT), as blocking sends do in MPI. peer must
 * be another rank (-EINVAL).
 */
MROCE_API int mroce_coll_send(struct mroce_coll_comm *comm, const void *buf, size_t count,
			      enum mroce_coll_dtype dtype, int peer, __u32 tag);
MROCE_API int mroce_coll_recv(struct mroce_coll_comm *comm, void *buf, size_t count,
			      enum mroce_coll_dtype dtype, int peer, __u32 tag);

/*
 * Non-blocking: start returns at once (argument errors are returned here);
 * the operation runs on the communicator's worker thread, in start order,
 * while the caller computes. Buffers stay the caller's to keep untouched
 * until the operation finishes. wait blocks and frees req; test returns
 * -EINPROGRESS while it runs, else the result, and then frees req.
 */
MROCE_API int mroce_coll_iallreduce(struct mroce_coll_comm *comm, const void *sendbuf,
				    void *recvbuf, size_t count, enum mroce_coll_dtype dtype,
				    enum mroce_coll_redop op, struct mroce_coll_req **req);
MROCE_API int mroce_coll_ireduce_scatter(struct mroce_coll_comm *comm, const void *sendbuf,
					 void *recvbuf, size_t recvcount,
					 enum mroce_coll_dtype dtype, enum mroce_coll_redop op,
					 struct mroce_coll_req **req);
MROCE_API int mroce_coll_iallgather(struct mroce_coll_comm *comm, const void *sendbuf,
				    void *recvbuf, size_t sendcount,
				    enum mroce_coll_dtype dtype, struct mroce_coll_req **req);
MROCE_API int mroce_coll_ibroadcast(struct mroce_coll_comm *comm, void *buf, size_t count,
				    enum mroce_coll_dtype dtype, int root,
				    struct mroce_coll_req **req);
MROCE_API int mroce_coll_ialltoall(struct mroce_coll_comm *comm, const void *sendbuf,
				   void *recvbuf, size_t count, enum mroce_coll_dtype dtype,
				   struct mroce_coll_req **req);
MROCE_API int mroce_coll_ialltoallv(struct mroce_coll_comm *comm, const void *sendbuf,
				    const size_t *sendcounts, const size_t *sdispls,
				    void *recvbuf, const size_t *recvcounts,
				    const size_t *rdispls, enum mroce_coll_dtype dtype,
				    struct mroce_coll_req **req);
MROCE_API int mroce_coll_ibarrier(struct mroce_coll_comm *comm, struct mroce_coll_req **req);
MROCE_API int mroce_coll_isend(struct mroce_coll_comm *comm, const void *buf, size_t count,
			       enum mroce_coll_dtype dtype, int peer, __u32 tag,
			       struct mroce_coll_req **req);
MROCE_API int mroce_coll_irecv(struct mroce_coll_comm *comm, void *buf, size_t count,
			       enum mroce_coll_dtype dtype, int peer, __u32 tag,
			       struct mroce_coll_req **req);
MROCE_API int mroce_coll_wait(struct mroce_coll_req *req);
MROCE_API int mroce_coll_test(struct mroce_coll_req *req);

/* Which algorithm an operation of this many bytes (per rank's full vector) uses.
 * All-to-all: that of bytes / size per block; all-to-all-v picks per block
 * and direction, the same way ("pairwise-inbox" up to 16 KiB). */
enum mroce_coll_kind {
	MROCE_COLL_ALLREDUCE,
	MROCE_COLL_REDUCE_SCATTER,
	MROCE_COLL_ALLGATHER,
	MROCE_COLL_BROADCAST,
	MROCE_COLL_ALLTOALL,
	MROCE_COLL_BARRIER,
	MROCE_COLL_SEND,
	MROCE_COLL_RECV,
};
MROCE_API const char *mroce_coll_algo(const struct mroce_coll_comm *comm,
				      enum mroce_coll_kind kind, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* MROCE_COLL_H */
