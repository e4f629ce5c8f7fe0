/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Collectives internals: the communicator, the per-peer channels every
 * algorithm moves data through, and the algorithms themselves.
 *
 * Channel: each rank owns, for every peer, an inbox of COLL_SLOTS slots of
 * chunk bytes that the peer WRITEs into with an immediate (type DATA, slot
 * sequence number). The sender may have at most COLL_SLOTS chunks
 * unconsumed; the receiver returns credits for the slots it has consumed
 * in batches of COLL_CREDIT_BATCH (a zero-length SEND with immediate).
 * Messages between two ranks are
 * matched by sequence alone: every rank runs the same operations in the
 * same order, so the n-th chunk from a peer is the n-th chunk it sent.
 */
#ifndef MROCE_COLL_INTERNAL_H
#define MROCE_COLL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "mroce/mroce.h"
#include "mroce/coll.h"
#include "../lib/opts.h"

#define COLL_SLOTS		16	/* inbox slots per peer: chunks in flight per pair */
#define COLL_CREDIT_BATCH	(COLL_SLOTS / 2)
#define COLL_POOL		64	/* staging buffers for sends whose source changes */
#define COLL_CTRL_BUFS		128	/* receives posted per QP */
#define COLL_CTRL_LEN		32
#define COLL_ADV_RING		4	/* all-to-all buffer offers a peer may have ahead */
#define COLL_MAX_RANKS		MROCE_COLL_MAX_RANKS
#define COLL_A2A_WINDOW		32	/* all-to-all peers in flight at once, at least */
#define COLL_A2A_WINDOW_BYTES	(4u << 20)	/* ... and as many as make this many bytes */
/* A driven communicator connects only the peers in use (driven.c): its
 * bound is the receive's peer field (16 bits of wr_id) */
#define COLL_DRIVEN_MAX_RANKS	4096
#define COLL_SPIN_US		50	/* busy-poll this long after an event, then sleep */

/* Immediate: top two bits say what arrived, the rest is a number. */
#define IMM_TYPE(imm)		((imm) >> 30)
#define IMM_VAL(imm)		((imm) & 0x3fffffffu)
#define IMM(type, val)		(((__u32)(type) << 30) | ((__u32)(val) & 0x3fffffffu))
enum { IMM_DATA = 0, IMM_CREDIT = 1, IMM_DIRECT = 2, IMM_CTRL = 3 };
enum { CTRL_ADVERT = 1, CTRL_ABORT = 2, CTRL_BADMSG = 3 };

/* wr_id of a send: kind in the top byte, a number below. */
#define WR(kind, val)		(((__u64)(kind) << 56) | ((__u64)(val) & ((1ull << 56) - 1)))
#define WR_KIND(id)		((unsigned int)((id) >> 56))
#define WR_VAL(id)		((id) & ((1ull << 56) - 1))
enum { WR_NONE = 0, WR_POOL = 1, WR_OP = 2, WR_RECV = 3 };

/*
 * All-to-all's control message from a peer for operation `op` (coll_algo.c):
 * its block for us (slen, and whether it comes as a direct WRITE) and, with
 * A2A_OFFER, where we may WRITE our block for it (exactly rlen bytes at
 * addr, a region of its own). On the wire: op, rkey, addr, rlen, slen,
 * flags (little-endian, COLL_A2A_MSG_LEN bytes).
 */
#define A2A_OFFER		1u	/* addr/rkey/rlen: the peer takes our block directly */
#define A2A_DIRECT		2u	/* the peer writes its block to us directly */
#define COLL_A2A_MSG_LEN	28
struct coll_advert {
	__u32	op;
	__u32	rkey;
	__u64	addr;
	__u32	rlen, slen;
	__u32	flags;
	bool	valid;
};

struct coll_peer {
	struct mroce_qp	*qp;
	/* our inbox for this peer's chunks */
	__u8		*inbox;
	__u32		rx_seq;			/* next chunk expected */
	__u32		rx_len[COLL_SLOTS];
	bool		rx_ready[COLL_SLOTS];
	__u32		credits_owed;		/* slots consumed, credit not yet sent */
	/* the peer's inbox for our chunks */
	__u64		r_inbox;
	__u32		r_rkey;
	__u32		tx_seq;
	__u32		credits;		/* free slots at the peer */
	/* all-to-all */
	struct coll_advert adv[COLL_ADV_RING];
	__u32		direct_op;		/* op of the last direct write received */
	__u32		direct_got;		/* direct writes received for direct_op */
	__u32		direct_len;		/* bytes of the last one */
	struct mroce_mr	*inbox_mr;		/* this peer may write its inbox only */
	/* receive buffers to post again: the QP's receive ring frees slots in
	 * message order, so behind a message still missing a packet it is full */
	__u16		repost[COLL_CTRL_BUFS];
	__u32		nrepost;
	/* control sends (adverts) need a source that lives until completion */
	__u8		*ctrl_tx;
	/* the receive buffers posted on this peer's QP, and their key */
	__u8		*ctrl_rx;		/* [COLL_CTRL_BUFS][COLL_CTRL_LEN] */
	__u32		ctrl_lkey;
	/* peers with credits or receives still to post (coll_step's list) */
	int		pend_next;
	bool		pend;
	/* ---- a driven communicator's connection (driven.c) */
	__u32		gen;			/* connections so far: late flushes name an old one */
	int		lru_prev, lru_next;	/* open connections, most recently used first */
	__u64		tx_msgs, rx_msgs;	/* messages posted to it, received from it (channel) */
	__u32		offer_op;		/* all-to-all: op we offered it a direct block for */
	bool		offer_out;		/* ... and its write has not arrived yet */
	struct mroce_mr	*inbox_own;		/* the inbox's region when it is its own */
};

/*
 * A communicator driven from outside (driven.c): mroce-sim runs every rank
 * of a job in one process over one device per host. No rendezvous, no
 * threads, no sleeping, no clock: the driver polls (coll_driven_poll) and
 * steps the operation (coll_op_progress) after each run of its engine.
 * Peers connect when an algorithm first sends to them, through the
 * driver's hook; beyond max_open connections, the least recently used idle
 * ones close (both ends: the driver's disconnect hook), so ranks x peers
 * never all hold a QP, an inbox and receive buffers at once.
 */
struct coll_driven_opts {
	int		rank, size;
	__u32		chunk;
	size_t		small_bytes;
	bool		dry;		/* bytes modelled, not moved */
	const char	*force_algo;	/* NULL: the table */
	struct mroce_dev *dev;
	struct mroce_cq	*cq;		/* the QPs the hook creates complete here */
	/* dry: every inbox is this one region of COLL_SLOTS x chunk bytes
	 * (nobody reads a payload); each connection still registers its own */
	__u8		*dry_inbox;
	unsigned int	max_open;	/* connections beyond which idle ones close (0: never) */
	int		a2a_window;	/* all-to-all peers in flight (0: by block size) */
	/*
	 * Connect c's rank with peer, both ends: create and connect a QP on each
	 * host, coll_peer_prepare both communicators, then coll_peer_attach
	 * both (each with the other's inbox). 0 or -errno; with may_wait it may
	 * say -EAGAIN (no room now: the post is tried again on a later step,
	 * so the driver must run c's host again).
	 */
	int		(*connect)(void *ctx, struct mroce_coll_comm *c, int peer, bool may_wait);
	/*
	 * Close c's connection with peer if both ends are idle (coll_pair_idle
	 * and no send of either QP outstanding): coll_peer_detach both, then
	 * destroy the QPs. 0: closed, -EBUSY: not idle.
	 */
	int		(*disconnect)(void *ctx, struct mroce_coll_comm *c, int peer);
	void		*ctx;
};

int coll_driven_create(const struct coll_driven_opts *o, struct mroce_coll_comm **cp);
/* Every connection must be closed (or its QP destroyed by the driver) first. */
void coll_driven_destroy(struct mroce_coll_comm *c);
/* Completions handled (>= 0), or the communicator's error. Never waits. */
int coll_driven_poll(struct mroce_coll_comm *c);
/* For the hooks: our inbox for peer (allocated now), to give the peer. */
int coll_peer_prepare(struct mroce_coll_comm *c, int peer, __u64 *inbox, __u32 *rkey);
/* The connection to peer is up over qp: a fresh channel, receives posted. */
int coll_peer_attach(struct mroce_coll_comm *c, int peer, struct mroce_qp *qp, __u64 r_inbox,
		     __u32 r_rkey);
/* Nothing in flight between a's rank and b's, on the channel, either way
 * (a and b are the two ends: a's peer b, b's peer a). */
bool coll_pair_idle(const struct mroce_coll_comm *a, int b_rank, const struct mroce_coll_comm *b,
		    int a_rank);
/* Forget the connection (a fresh channel next time): its QP, for the driver to destroy. */
struct mroce_qp *coll_peer_detach(struct mroce_coll_comm *c, int peer);
/* Open connections now. */
unsigned int coll_open_peers(const struct mroce_coll_comm *c);

struct mroce_coll_comm {
	int			rank, size;
	__u32			timeout_ms;
	__u32			chunk;
	size_t			small_bytes;
	bool			ring_only;
	/* this algorithm's name wherever the kind has one of that name
	 * (NULL: the table decides); studies and tests pin one this way */
	char			*force_algo;
	/* all-to-all: peers in flight at once (algo_a2a.c); 0: by block size */
	int			a2a_window;
	/* mroce-sim without --verify: the bytes are modelled, not moved (no
	 * copy, no reduction); the messages and their sizes are the same */
	bool			dry;
	struct mroce_dev	*dev;
	bool			own_dev;
	struct mroce_cq		*cq;
	struct coll_peer	*peers;		/* [size]; peers[rank] unused */
	/* inboxes (one MR per peer), then local-only: receive buffers, control
	 * sends, staging pool (one MR) */
	__u8			*mem;
	size_t			mem_len;
	struct mroce_mr		*mr_local;
	__u8			*ctrl_rx;	/* [size][COLL_CTRL_BUFS][COLL_CTRL_LEN] */
	int			pend_head;	/* peers owing credits or receives (-1: none) */
	/* driven from outside (driven.c): its hooks, open connections */
	bool			driven;
	struct coll_driven_opts	drv;
	int			lru_head, lru_tail;
	unsigned int		nopen;
	__u8			**rx_free;	/* receive buffer blocks not in use */
	__u32			*rx_free_lkey;
	size_t			nrx_free, cap_rx_free;
	struct mroce_mr		**rx_mrs;	/* every block slab's region */
	__u8			**rx_slabs;
	int			last_polled;	/* completions coll_step took last */
	bool			conn_wait;	/* the driver refused a connection since the last poll */
	size_t			nrx_mrs;
	__u8			*pool;		/* COLL_POOL x chunk */
	__u64			pool_free;	/* bit i: pool buffer i is free */
	__u32			op_seq;		/* operations run, for all-to-all offers */
	__u64			op_sends;	/* sends of the running operation not completed */
	__u32			*op_busy;	/* per location: sends reading it (ring) */
	int			err;		/* sticky */
	__u64			last_event_ns;
	/* With its own device the communicator runs the transport itself: the
	 * thread running an operation busy-polls the device (no thread hop
	 * between a packet and its completion); once no operation has run
	 * for a millisecond, a background thread keeps acknowledging and
	 * retransmitting. */
	bool			self_progress;
	bool			op_active;
	__u64			op_end_ns;
	pthread_t		progress;
	bool			progress_running, progress_quit;
	/* worker for non-blocking operations */
	pthread_mutex_t		lock;
	pthread_cond_t		cond;
	pthread_t		worker;
	bool			worker_running, stopping;
	struct mroce_coll_req	*head, *tail;	/* queued, not yet run */
	int			busy;		/* an operation is running (worker or caller) */
};

/* coll_chan.c */
__u64 coll_now_ns(void);
int coll_fail(struct mroce_coll_comm *c, int err);
int coll_step(struct mroce_coll_comm *c, bool may_block);
int coll_post_chunk(struct mroce_coll_comm *c, int peer, const void *src, __u32 lkey,
		    __u32 len, __u64 wr_id);
int coll_post_staged(struct mroce_coll_comm *c, int peer, const void *src, __u32 len);
const __u8 *coll_peek(struct mroce_coll_comm *c, int peer, __u32 *len);
void coll_consume(struct mroce_coll_comm *c, int peer);
int coll_wait_sends(struct mroce_coll_comm *c);
int coll_drain_pool(struct mroce_coll_comm *c);
int coll_post_ctrl(struct mroce_coll_comm *c, int peer, __u32 imm, const void *payload,
		   __u32 len);
int coll_post_recvs(struct mroce_coll_comm *c, int peer);
/* Driven: connect peer if it is not (driven.c), and mark it used. may_wait:
 * the caller takes -EAGAIN (no room yet) and posts again later, as a chunk
 * does; control messages never wait (an all-to-all's offers for its window). */
int coll_peer_use(struct mroce_coll_comm *c, int peer, bool may_wait);

/* coll_comm.c */
void coll_progress_own(struct mroce_coll_comm *c, bool own);
/* the rendezvous's socket helpers, exposed for tests: each retries on EINTR
 * and returns only once everything moved, or at the deadline (coll_now_ns) */
struct sockaddr_in;
int coll_io_all(int fd, void *buf, size_t len, bool out, __u64 deadline);
int coll_tcp_dial(const struct sockaddr_in *sa, __u64 deadline);
int coll_tcp_accept(int lfd, __u64 deadline);

/* coll_reduce.c */
void coll_reduce(enum mroce_coll_dtype t, enum mroce_coll_redop op, void *inout,
		 const void *in, size_t n);
/* inout = in OP inout: the operand that arrived first (a lower rank's) */
void coll_reduce_first(enum mroce_coll_dtype t, enum mroce_coll_redop op, void *inout,
		       const void *in, size_t n);
/* out = a OP b element-wise, a the local operand (out may be a): one pass */
void coll_reduce_to(enum mroce_coll_dtype t, enum mroce_coll_redop op, void *out,
		    const void *a, const void *b, size_t n);

/* The arguments of one operation, as checked by ops.c. */
struct coll_args {
	enum mroce_coll_kind	kind;
	const void		*sendbuf;
	void			*recvbuf;
	size_t			count;
	enum mroce_coll_dtype	dtype;
	enum mroce_coll_redop	op;
	int			root;	/* broadcast: the root; send, recv: the peer */
	__u32			tag;	/* send, recv */
	/* all-to-all-v (v set): per communicator rank, in elements; else
	 * all-to-all, count per rank */
	bool			v;
	const size_t		*scounts, *sdispls, *rcounts, *rdispls;
};

/*
 * ---- operations as state machines (op.c)
 *
 * An algorithm never waits: its step moves what the completions so far
 * allow and returns. Whoever drives the communicator calls the step again
 * after more completions: the library's blocking call (coll_run, between
 * coll_step()s on its thread) and mroce-sim's event loop (after each run of
 * a host's engine) alike, so both run this code.
 */
struct coll_op;

struct coll_algo {
	const char	*name;
	/* Set up (buffers, regions, the first stage): 0 or -errno. */
	int	(*start)(struct coll_op *op);
	/* 1: finished (its sends may still be in flight), 0: not yet, < 0:
	 * failed. Sets op->moved when anything moved. */
	int	(*step)(struct coll_op *op);
	/* Release what start took: after the last step, or a failure. */
	void	(*fini)(struct coll_op *op);
};

struct coll_op {
	struct mroce_coll_comm	*c;
	struct coll_args	a;
	const struct coll_algo	*algo;
	void			*priv;		/* the algorithm's state */
	size_t			esz, bytes;	/* element size; count x esz */
	bool			moved;		/* the last step moved something */
	bool			finished;	/* the algorithm is done: sends drain */
	bool			started;
};

/* Start an operation (args checked): 0 or -errno; op is then ended by coll_op_end. */
int coll_op_start(struct mroce_coll_comm *c, const struct coll_args *a, struct coll_op *op);
/* 1: done (every send completed), 0: not yet, < 0: failed. Never waits. */
int coll_op_progress(struct coll_op *op);
/* Release the operation; err (its result) breaks the communicator if set. */
int coll_op_end(struct coll_op *op, int err);

/* ---- transfers (xfer.c): send a buffer to one peer while receiving one from another */
struct xfer {
	int		to;		/* -1: nothing to send */
	const __u8	*src;
	__u32		lkey;		/* 0: stage each chunk through the pool */
	size_t		slen;
	__u32		sc;		/* chunks posted */
	bool		forward;	/* send only what has been received (chain) */
	bool		after_tx;	/* receive a chunk only once the same chunk is
					 * staged (src and dst are one buffer) */
	int		from;		/* -1: nothing to receive */
	__u8		*dst;
	size_t		rlen;
	__u32		rc;		/* chunks received */
	bool		reduce;		/* dst = dst OP incoming */
	/* an exchange with one peer: send at most COLL_XFER_LEAD chunks ahead
	 * of what came from it, so that a rank a stage ahead does not pour
	 * its whole credit into a peer still receiving the stage before (an
	 * incast at every stage boundary of a log-step algorithm) */
	bool		paced;
};
#define COLL_XFER_LEAD		4

/* One transfer: both directions, or either (to/from -1). */
struct xfer xfer_make(int to, const void *src, size_t slen, int from, void *dst, size_t rlen,
		      bool reduce);
/* Move what can move in all of x: 1 all done, 0 not yet, < 0 failed. */
int xfer_step(struct coll_op *op, struct xfer *x, int n);
/*
 * A staged algorithm: stages run one after another, each a few transfers
 * run together. stage() fills x with stage k's (up to COLL_STAGE_XFERS) and
 * returns how many, or -1 past the last stage; coll_staged_step runs them.
 */
#define COLL_STAGE_XFERS	2
struct coll_staged {
	int		(*stage)(struct coll_op *op, int k, struct xfer *x);
	struct xfer	x[COLL_STAGE_XFERS];
	int		nx, k;
	bool		begun;
};
int coll_staged_step(struct coll_op *op, struct coll_staged *s);
/* The usual case, as an algorithm's start (after its own set-up), step and fini. */
int coll_staged_new(struct coll_op *op, int (*stage)(struct coll_op *, int, struct xfer *));
int coll_staged_run(struct coll_op *op);
void coll_staged_free(struct coll_op *op);
__u32 coll_nchunks(const struct mroce_coll_comm *c, size_t len);
int coll_mod(int a, int n);
/* Register buf for local access (sends from it): 0 or -errno. */
int coll_reg_local(struct mroce_coll_comm *c, const void *buf, size_t len, struct mroce_mr **mr);

/* ---- the algorithms (algo_*.c) and the one table that picks them (select.c) */
extern const struct coll_algo coll_algo_ring_allreduce, coll_algo_ring_reduce_scatter,
	coll_algo_ring_allgather, coll_algo_rd, coll_algo_bcast_tree, coll_algo_bcast_chain,
	coll_algo_a2a_inbox, coll_algo_a2a_direct, coll_algo_barrier, coll_algo_p2p_send, coll_algo_p2p_recv, coll_algo_local,
	coll_algo_rhd_allreduce, coll_algo_rhd_reduce_scatter, coll_algo_rd_allgather,
	coll_algo_bcast_sag;
const struct coll_algo *coll_select(const struct mroce_coll_comm *c, enum mroce_coll_kind kind,
				    size_t bytes);
/* force_algo: a comma-separated list of names each some algorithm has (select.c) */
bool coll_algo_names_valid(const char *list);
/* All-to-all: distances open at once for `moved` bytes to and from the peers (algo_a2a.c). */
int coll_a2a_window(const struct mroce_coll_comm *c, size_t moved);
/* All-to-all blocks up to this size go through the inboxes (select.c). */
size_t coll_a2a_inbox_max(const struct mroce_coll_comm *c);

/* Run one whole operation on the calling thread (op.c). */
int coll_run(struct mroce_coll_comm *c, const struct coll_args *a);
int coll_ping_all(struct mroce_coll_comm *c);

#endif /* MROCE_COLL_INTERNAL_H */
