/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * mroce's libibverbs (verbs/): the objects behind the rdma-core 44 ABI.
 * Every ibv_* object an application sees is the first member of one of
 * these, so the library gets from the application's pointer to its own
 * state by a cast (container_of). Private to verbs/: nothing here is ABI.
 *
 * One device per interface named in MROCE_VERBS_DEVICES (comma separated;
 * unset: every interface with an IPv4 address and the mroce datapath
 * attachable, loopback excepted), listed as mroce_<ifname>. The mroce
 * device (AF_XDP socket, UMEM, transport) is opened lazily, at the first
 * object that needs it (PD, CQ), so ibv_devices / ibv_devinfo never touch
 * the datapath. Contexts of one interface in one process share one
 * mroce_dev (reference counted in the device).
 */
#ifndef MROCE_VERBS_MRV_H
#define MROCE_VERBS_MRV_H

#include <infiniband/verbs.h>
#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <mroce/mroce.h>
#include <mroce/proto.h>

#define MRV_EXPORT	__attribute__((visibility("default")))
#define mrv_of(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

/* Verbs QP numbers carry the receive queue the QP's device serves: the peer
 * derives the UDP port to send to (MROCE_DEFAULT_PORT + queue) from it. */
#define MRV_QPN_BITS		10	/* mroce QPNs are below MROCE_MAX_QPS (1024) */
#define mrv_qpn(queue, qpn)	(((uint32_t)(queue) << MRV_QPN_BITS) | (qpn))
#define mrv_qpn_queue(vqpn)	((vqpn) >> MRV_QPN_BITS)
#define mrv_qpn_local(vqpn)	((vqpn) & ((1u << MRV_QPN_BITS) - 1))

struct mrv_device {
	struct ibv_device	ibdev;		/* what the device list hands out */
	char			ifname[IF_NAMESIZE];
	unsigned int		ifindex;
	uint32_t		ipv4;		/* network order; GID 0 is ::ffff:ipv4 */
	uint8_t			mac[6];
	uint32_t		mtu;		/* the interface's IP MTU */
	/* the shared mroce device, opened at first need (mrv_dev_get) */
	pthread_mutex_t		lock;
	struct mroce_dev	*mdev;
	unsigned int		mdev_users;
	int			refcnt;		/* device list + open contexts */
	/* the planes mdev was opened over beyond ifname (mrocedv_open_device) */
	char			planes[MROCE_MAX_PLANES - 1][IF_NAMESIZE];
	uint32_t		n_planes;
};

struct mrv_context {
	struct verbs_context	vctx;		/* vctx.context is the application's */
	struct mrv_device	*dev;
	struct mroce_dev	*mdev;		/* NULL until the first PD or CQ */
	uint32_t		queue;		/* mdev's receive queue: verbs QPNs carry it */
	int			async_fd;	/* eventfd: QP errors (IBV_EVENT_QP_FATAL) */
	pthread_mutex_t		lock;		/* the lists below, the async queue */
	struct mrv_qp		*qps;		/* every QP of the context (next) */
	/* the same by mroce QPN, for each completion polled (qp.c) */
	struct mrv_qp		*qp_of[1u << MRV_QPN_BITS];
	/* async events not yet read, a small ring */
	struct ibv_async_event	aev[64];
	unsigned int		aev_head, aev_tail;
	/* planes asked for by mrocedv_open_device(), beyond the device's interface */
	char			planes[MROCE_MAX_PLANES - 1][IF_NAMESIZE];
	uint32_t		n_planes;
};

struct mrv_pd {
	struct ibv_pd		ibpd;
	struct mroce_pd		*pd;
};

struct mrv_mr {
	struct ibv_mr		ibmr;		/* lkey and rkey from mroce */
	struct mroce_mr		*mr;
};

/* A completion channel: an epoll fd over the CQ fds of the CQs armed on it. */
struct mrv_channel {
	struct ibv_comp_channel	ch;		/* ch.fd is the epoll fd */
	int			refcnt;		/* CQs using it */
};

struct mrv_cq {
	union {					/* ibv_cq_ex begins as ibv_cq does */
		struct ibv_cq		ibcq;
		struct ibv_cq_ex	cqx;
	};
	struct mroce_cq		*cq;
	struct mrv_channel	*channel;	/* NULL: no channel */
	bool			armed;		/* ibv_req_notify_cq() since the last event */
	/* ibv_cq_ex reads: the completion the start_poll/next_poll cursor is on */
	struct mroce_wc		cur;
	struct mrv_qp		*cur_qp;
	/* (core, additive) completion events ibv_get_cq_event() handed out:
	 * ibv_destroy_cq() waits until ibv_ack_cq_events() acknowledged them all */
	uint32_t		comp_events_reported;
	struct mrv_context	*ctx;		/* (core, additive) the context the CQ is of */
	uint32_t		mroce_cqe;	/* (core, additive) the mroce CQ's entries (cq.c) */
	/*
	 * Send queue entries of the QPs sending into it (qp.c, under the
	 * context's lock): their unsignaled completions wait in the mroce CQ
	 * until a poll hides them, beside the cqe the application sized for.
	 */
	uint64_t		sq_room;
	bool			overflowed;	/* (core, additive) IBV_EVENT_CQ_ERR queued once */
};

/* Where a verbs QP is in ibv_modify_qp's state machine; the mroce QP knows only INIT/RTS/ERR. */
struct mrv_qp {
	struct ibv_qp_ex	qpx;		/* qpx.qp_base is the application's ibv_qp */
	struct mrv_context	*ctx;
	struct mroce_qp		*qp;		/* created at ibv_create_qp */
	struct mrv_qp		*next;		/* in ctx->qps */
	struct ibv_qp_cap	cap;
	uint32_t		sq_psn, rq_psn;	/* the 24-bit verbs PSNs */
	uint32_t		dest_qpn;
	union ibv_gid		dgid;
	enum ibv_mtu		path_mtu;
	uint8_t			max_rd_atomic, max_dest_rd_atomic;
	uint8_t			timeout, retry_cnt, rnr_retry, min_rnr_timer;
	unsigned int		access;		/* qp_access_flags */
	bool			sq_sig_all;
	/* ibv_wr_* between ibv_wr_start and ibv_wr_complete: staged, posted at complete */
	int			wr_err;
	unsigned int		wr_n;
};

/* Limits the verbs device reports (ibv_query_device), from what libmroce accepts. */
#define MRV_MAX_QP		1023	/* mroce QPNs 1 .. MROCE_MAX_QPS - 1 */
#define MRV_MAX_QP_WR		65536	/* mroce_qp_attr sq_depth / rq_depth */
#define MRV_MAX_CQE		(1 << 24)	/* mroce_create_cq */
#define MRV_MAX_RD_ATOM		16	/* mroce_qp_attr.max_rd_atomic's default */
#define MRV_MAX_MSG		(1u << 31)	/* one work request's bytes */

/* context.c: the mrv_context of an application's ibv_context */
static inline struct mrv_context *mrv_ctx(struct ibv_context *ibctx)
{
	return mrv_of(ibctx, struct mrv_context, vctx.context);
}

/* An errno for libmroce's negative error codes (mroce_errno too): positive. */
int mrv_errno(int err);

/* device.c */
struct mrv_device *mrv_dev_of(struct ibv_device *ibdev);
/* The interface's mroce_dev, opened at the first call; 0 or a negative errno. */
int mrv_dev_get(struct mrv_context *ctx);
void mrv_dev_put(struct mrv_device *dev);

/* context.c: the ops tables and fds of a new context (0 or a positive errno), and their end */
int mrv_ctx_init(struct mrv_context *ctx);
void mrv_ctx_fini(struct mrv_context *ctx);

/*
 * faults.c: MROCE_VERBS_TEST_FAULTS ("seed=N,rx_drop_ppm=N,...", the fields of
 * struct mroce_faults) into f: 1 if it asks for faults, 0 if s is NULL or
 * empty, -EINVAL if malformed (unknown or repeated field, not a number,
 * a ppm above 1000000).
 */
int mrv_parse_faults(const char *s, struct mroce_faults *f);

/* context.c: queue an async event and make async_fd readable */
void mrv_async_event(struct mrv_context *ctx, struct ibv_qp *qp, enum ibv_event_type type);
/* (core, additive) the same for a CQ's event (IBV_EVENT_CQ_ERR: it overflowed) */
void mrv_async_event_cq(struct mrv_context *ctx, struct ibv_cq *cq, enum ibv_event_type type);

/*
 * port.c: the interface's live state, read on every query (never /sys, which
 * `ip netns exec`-less namespaces do not show right). 0 or a negative errno.
 */
struct mrv_ifstate {
	bool		up;		/* IFF_UP and IFF_RUNNING */
	uint32_t	mtu;		/* IP MTU */
	uint32_t	ipv4;		/* network order, 0 if none */
	uint32_t	speed_mbps;	/* 0: unknown */
};
int mrv_ifstate(const struct mrv_device *dev, struct mrv_ifstate *st);
/* The headers of mroce's largest data packet over IPv4 (BTH, RETH, DETH, IMMETH): what an MTU leaves no payload for. */
#define MRV_HDR_ROOM	(20u + 8u + sizeof(struct mroce_bth) + sizeof(struct mroce_reth) + \
			 sizeof(struct mroce_deth) + sizeof(struct mroce_immeth))
/* The largest IBV_MTU_* whose payload fits a packet of an interface of IP MTU mtu. */
enum ibv_mtu mrv_mtu_of(uint32_t ip_mtu);

/* The ops context.c installs (port.c, query.c, cq.c). */
int mrv_query_port_op(struct ibv_context *context, uint8_t port_num,
		      struct ibv_port_attr *port_attr, size_t port_attr_len);
int mrv_query_device_ex_op(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size);
int mrv_poll_cq_op(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int mrv_req_notify_cq_op(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *mrv_create_cq_ex_op(struct ibv_context *context,
				      struct ibv_cq_init_attr_ex *init_attr);

/* channel.c: a CQ joins / leaves its channel's epoll set; arm (ibcq.mutex held). errno or 0. */
int mrv_channel_add(struct mrv_cq *cq);
void mrv_channel_del(struct mrv_cq *cq);
int mrv_channel_arm(struct mrv_cq *cq);


/* Map between mroce's and ibverbs' completion codes and opcodes (wc.c). */
enum ibv_wc_status mrv_wc_status(enum mroce_wc_status s);
enum ibv_wc_opcode mrv_wc_opcode(enum mroce_wc_opcode op);

/* qp.c: the verbs QP whose mroce QP number is qpn on ctx's device (for ibv_wc.qp_num) */
struct mrv_qp *mrv_qp_by_mroce_qpn(struct mrv_context *ctx, uint32_t qpn);

/*
 * qp.c, post.c (i44-qp): ibv_context.ops.post_send / post_recv, and
 * verbs_context.create_qp_ex. The CQ poll calls mrv_qp_wc_hidden() once for
 * EVERY completion of a QP it polls (it keeps the QP's send queue count):
 * true means an unsignaled send WR's success, which ibverbs does not report:
 * skip it. A completion whose mrv_qp_by_mroce_qpn() is NULL belongs to a
 * destroyed QP: drop it. Unpolled mroce completions per QP can reach its
 * max_send_wr (rounded up to a power of two) + max_recv_wr, hidden ones
 * included: size the mroce CQ with room for that. (context.c keeps weak
 * fallbacks of the first three, EOPNOTSUPP, for a build without qp.c.)
 */
struct ibv_qp *mrv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
int mrv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int mrv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
bool mrv_qp_wc_hidden(struct mrv_qp *qp, const struct mroce_wc *wc);

/* Fill an ibv_wc from a mroce_wc (wc.c). */
void mrv_wc_fill(struct mrv_cq *cq, const struct mroce_wc *in, struct ibv_wc *out);

#endif /* MROCE_VERBS_MRV_H */
