/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The QP files' own state (qp.c, post.c, wr.c, token.c), beside the contract's
 * struct mrv_qp: the rest of verbs/ sees only that, first member of this.
 */
#ifndef MROCE_VERBS_QPINT_H
#define MROCE_VERBS_QPINT_H

#include "mrv.h"

#define MRV_MAX_INLINE	256		/* bytes of inline data per send WR */
#define MRV_MAX_WR	65536		/* mroce's deepest queues */
#define MRV_READ_OFFER	32		/* READs a mroce responder serves at once (lib/qp.h) */

/* lib/qp.c hooks for verbs/ (not in the public header, not exported from libmroce.so) */
int mroce_qp_set_start(struct mroce_qp *qp, uint32_t psn);
int mroce_qp_set_rd_limit(struct mroce_qp *qp, uint32_t n);

/* A WR staged between ibv_wr_start and ibv_wr_complete (wr.c). */
struct mrv_wr_stage {
	struct ibv_send_wr	wr;
	struct ibv_sge		sge[MROCE_MAX_SGE];
	uint8_t			inl[MRV_MAX_INLINE];
	bool			has_data;
	bool			inl_data;	/* set_inline_data: sge[0] is inl */
};

struct mrv_qpi {
	struct mrv_qp		q;		/* first: the contract's view */
	struct mroce_qp_attr	mattr;		/* to make the mroce QP again at RESET */
	struct mrv_pd		*pd;
	uint32_t		mqpn;		/* mroce QPN */
	enum ibv_qp_state	state;		/* the verbs state (mroce's may have failed since) */
	uint8_t			key[16];	/* the fabric key (token.c) */
	uint8_t			port_num;
	/* the peer's planes beyond its first (mrocedv_set_remote_planes), used at RTR */
	uint8_t			rplanes;	/* 0: one plane */
	struct in6_addr		rplane_addr[MROCE_MAX_PLANES - 1];
	uint16_t		pkey_index;
	struct ibv_ah_attr	ah;
	uint32_t		mtu_bytes;	/* the mroce MTU at connect */
	pthread_mutex_t		post_lock;	/* posting threads, one at a time */
	/*
	 * One entry per send WR posted and not yet polled, in posting order
	 * (mroce completes a QP's sends in that order): whether it was
	 * signaled, and its inline slot. head moves at poll, tail at post.
	 */
	uint8_t			*sig;
	uint32_t		sig_cap;	/* at most this many (max_send_wr) */
	uint32_t		sig_mask;	/* ring size - 1, a power of two */
	uint32_t		sig_head, sig_tail;	/* atomics; free-running */
	uint8_t			*inl;		/* sig_mask + 1 slots of MRV_MAX_INLINE, registered */
	struct mroce_mr		*inl_mr;
	/* ibv_wr_* staging (wr.c) */
	struct mrv_wr_stage	*stage;
	uint32_t		stage_cap;
};

static inline struct mrv_qpi *mrv_qpi(struct ibv_qp *qp)
{
	return (struct mrv_qpi *)qp;
}

/* qp.c: ibv_create_qp_ex with mroce's own QP attributes (dv.c); tune NULL: the defaults */
struct ibv_qp *mrv_create_qp_tuned(struct ibv_context *context, struct ibv_qp_init_attr_ex *a,
				   const struct mroce_qp_attr *tune);

/* token.c */
uint64_t mrv_siphash(const uint8_t key[16], const void *data, size_t len);
int mrv_fabric_key(uint8_t key[16]);	/* 0 or -EPERM (a bad key file) */
uint64_t mrv_conn_token(const uint8_t key[16], const union ibv_gid *lgid, uint32_t lqpn,
			const union ibv_gid *rgid, uint32_t rqpn);
uint32_t mrv_start_psn(const uint8_t key[16], const union ibv_gid *sgid, uint32_t sqpn,
		       const union ibv_gid *rgid, uint32_t rqpn);

/* post.c: post_lock held */
int mrv_post_send_locked(struct mrv_qpi *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);

/* wr.c: the ibv_qp_ex function pointers */
void mrv_wr_init(struct mrv_qpi *q);

#endif /* MROCE_VERBS_QPINT_H */
