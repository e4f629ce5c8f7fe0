/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Transport engine internals: the device, and the engine's entry points.
 * The objects it works on have headers of their own (port.h, mr.h, cq.h,
 * qp.h). Not installed.
 *
 * Threading: every engine structure of a device is guarded by dev->lock.
 * API calls take it; so does the progress thread (or the application's
 * mroce_dev_progress() in no_thread mode) while it runs the transport.
 */
#ifndef MROCE_ENGINE_H
#define MROCE_ENGINE_H

#include <pthread.h>
#include <stdbool.h>

#include "mroce/mroce.h"
#include "mroce/wire.h"

#include "cq.h"
#include "mr.h"
#include "port.h"
#include "qp.h"

/*
 * The receiver's grants (rate.c): its inbound link shared among the peers
 * sending to it, measured in epochs of MROCE_GRANT_EPOCH_US.
 */
#define MROCE_GRANT_WINDOW	32	/* epochs the link's rate is measured over */

struct mroce_grant {
	__u64	epoch_us;	/* start of the current epoch */
	__u64	bytes;		/* payload bytes that arrived in it */
	__u64	queue_sum_us;	/* queueing delay of its packets, summed */
	__u32	pkts, ce;	/* its data packets, and how many were CE-marked */
	__u32	epoch;		/* epochs so far */
	__u32	active;		/* senders the grant is shared among (0: no grant) */
	__u32	cap_kbps;	/* inbound rate measured while congested: the link's */
	/*
	 * The epochs of this congestion episode, the last MROCE_GRANT_WINDOW:
	 * the link's rate is their bytes over their time, not one epoch's
	 * (a receiver takes its packets in batches, not as the link brings them).
	 */
	__u64	win_bytes[MROCE_GRANT_WINDOW];
	__u32	win_us[MROCE_GRANT_WINDOW];
	__u32	win_n;		/* epochs in it (up to MROCE_GRANT_WINDOW) */
	__u32	win_next;	/* where the next one goes */
	__u32	grant_kbps;	/* each active sender's share (0: no grant) */
	__u64	calm_us;	/* calm time since the last congested epoch */
	bool	off;		/* mroce_dev_opts.no_rate_grants */
	__u64	ts_odd;		/* data timestamps too far from their QP's baseline: not used */
};

struct mroce_dev {
	pthread_mutex_t		lock;
	const struct mroce_port_ops *ops;	/* the port, or the fault injector wrapping it */
	void			*port;
	struct mroce_dp		*dp;		/* NULL without an XDP datapath (tests) */
	struct mroce_dev_attr	attr;
	struct mroce_route	local;		/* our MAC, IP, UDP port */
	__u16			udp_port;
	__u32			dev_id;		/* its queues' and flows' owner in the datapath (0: none) */
	struct mroce_qp		*qps[MROCE_MAX_QPS];
	struct mroce_mr		mrs[MROCE_MAX_MRS];
	struct mroce_pd		pd0;		/* the default PD (mroce_reg_mr, attr.pd NULL) */
	struct mroce_dm		*dms;		/* device memory allocated (dm.c) */
	struct mroce_dev_stats	stats;
	__u64			tx_ref_pkts;	/* sent from where the payload is (port.h tx_send_ref) */
	pthread_t		thread;
	bool			thread_running;
	volatile bool		stop;
	int			wake_fd;	/* eventfd: new work for a sleeping progress thread */
	int			timer_fd;	/* timerfd: its deadline, moved earlier by inline sends */
	int			wait_fd;	/* epoll over both, what the progress thread sleeps on */
	bool			sleeping;	/* the progress thread is (about to be) waiting */
	bool			sleep_on_timer;	/* ... on wait_fd: an inline send can move its deadline */
	__u64			sleep_until;	/* when the sleeping thread wakes anyway (port clock, us) */
	__u32			rr_qp;		/* QPN the next progress round starts at */
	/*
	 * When each QP next needs a progress round's visit (engine.c; port
	 * clock, us; 0: the next round): a round visits only the QPs that
	 * received, were posted to, or have a timer due, so its cost follows
	 * the QPs with work, not the QPs that exist.
	 */
	__u64			qp_due[MROCE_MAX_QPS];
	__u64			qp_timer[MROCE_MAX_QPS];	/* ... and its earliest timer then */
	__u64			qp_live[MROCE_MAX_QPS / 64];	/* bit q: qps[q] is set */
	__u64			qp_poked[MROCE_MAX_QPS / 64];	/* bit q: received or posted to
								 * since its last visit */
	bool			tx_refused;	/* the port had no transmit buffer (this QP's turn) */
	__u64			test_rng;	/* nonzero: a test's repeatable random stream (testhook.c) */
	struct mroce_grant	grant;		/* rate grants to the peers sending to us */
	__u64			echo_odd;	/* ACK echoes that were no time of ours: ignored (ack.c) */
	__u32			spread_hint_us;	/* the latest spread of any QP's paths' base
						 * RTTs: a QP's, before it knows its own (loss.c) */
	/*
	 * Scheduling stalls this host's transport was seen to suffer: a round
	 * that ran this long after the one before wanted to run again (the
	 * thread or the application was given no CPU). A decaying maximum
	 * (loss.c mroce_stall_note); every "nothing heard" timer waits at
	 * least that long on top of the round trip.
	 */
	__u32			stall_us;
	__u64			stall_at_us;
	__u32			peer_stall_us;	/* ... and the latest a QP's peer showed: a new QP's */
	__u64			peer_stall_at_us;
	__u64			round_due_us;	/* when the last round wanted the next (0: none yet) */
	bool			wall_clock;	/* the port's clock is real time (not a simulation's,
						 * which jumps between events) */
	__u32			rtt_hint_us;	/* the latest smoothed RTT of any QP: a QP's
						 * tail probe before it has a sample (loss.c) */
	/*
	 * Planes (protocol.md, "Planes"): the port sends on the one selected
	 * (ops->select_plane), receives on all. Plane 0 is local and dp.
	 */
	__u8			nplanes;
	struct mroce_route	plane_local[MROCE_MAX_PLANES];
	struct mroce_dp		*plane_dp[MROCE_MAX_PLANES];
	__u32			plane_ifindex[MROCE_MAX_PLANES];
	/*
	 * A QP's probe of this plane failed lately: a new connection does not
	 * probe it before then (planes.c). Only ever delays a probe: a plane
	 * a peer answers on is still proven per connection.
	 */
	__u64			plane_shun_until_us[MROCE_MAX_PLANES];
};

/* Create a device over any port (the AF_XDP one, or a simulated wire). */
int mroce_dev_create(const struct mroce_port_ops *ops, void *port, struct mroce_dp *dp,
		     const struct mroce_route *local, const struct mroce_dev_opts *opts,
		     struct mroce_dev **devp);
/* The body of one progress round; dev->lock held. Returns work done. */
int mroce_engine_run_round(struct mroce_dev *dev, mroce_rx_cb rx, bool kick);
int mroce_engine_run(struct mroce_dev *dev, mroce_rx_cb rx);
/* Earliest timer of any QP, in absolute microseconds (UINT64_MAX: none). */
__u64 mroce_engine_next_timer(struct mroce_dev *dev);
void mroce_engine_rx(void *dev, const void *frame, __u32 len, __u32 placed_len);

/* qp has work for the next progress round (engine.c). dev->lock held. */
static inline void mroce_qp_due_now(struct mroce_qp *qp)
{
	qp->dev->qp_due[qp->qpn] = 0;
	qp->dev->qp_poked[qp->qpn / 64] |= 1ull << (qp->qpn % 64);
}

/* New work was posted: wake the progress thread if it sleeps. dev->lock held. */
void mroce_dev_kick(struct mroce_dev *dev);
/* New requests on qp: sent from this thread if the progress thread sleeps (dev.c). dev->lock held. */
void mroce_dev_post_kick(struct mroce_dev *dev, struct mroce_qp *qp);
/* Random bits for QPNs, PSNs, secrets and keys: getrandom(), or a test's repeatable stream. */
__u64 mroce_dev_random64(struct mroce_dev *dev);
/* A QP's entropy base: its source ports' offset in the ephemeral range (paths.c). */
__u16 mroce_entropy_base(const struct mroce_dev *dev, __u32 qpn);
/*
 * Next-hop MAC for an address (IPv4 as ::ffff:a.b.c.d) from the kernel's
 * route and neighbour tables; the route must leave through ifindex (0: any).
 */
int mroce_resolve_mac_on(struct mroce_dev *dev, int family, const struct in6_addr *addr,
			 __u32 ifindex, __u8 mac[6]);
/* ... for a remote QP, through the device's first plane. */
static inline int mroce_resolve_mac(struct mroce_dev *dev, const struct mroce_qp_info *r, __u8 mac[6])
{
	return mroce_resolve_mac_on(dev, r->family, &r->addr, dev->attr.ifindex, mac);
}

/* Frame building in place: headers first, payload written by the caller at
 * buf + returned length, then the checksum. */
int mroce_frame_hdrs(void *buf, size_t size, const struct mroce_route *rt, const struct mroce_hdr *h);
void mroce_frame_finish(void *buf, __u32 len, int family);
/* The same for a frame whose payload (len bytes) is not behind its headers (hdr_len bytes in buf). */
void mroce_frame_finish_ref(void *buf, __u32 hdr_len, const void *payload, __u32 len, int family);

/* UDP checksum over a frame mroce_parse() accepted: true when it verifies. */
bool mroce_frame_csum_ok(const void *frame, const struct mroce_pkt *pkt);

#endif /* MROCE_ENGINE_H */
