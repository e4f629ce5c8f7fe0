/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A deterministic simulated wire between two libmroce devices, for unit
 * tests of the transport without root: virtual time, per-path delays (path
 * = UDP source port), jitter that reorders, and seeded loss, duplication
 * and corruption. Frames cross it exactly as they would cross a NIC.
 */
#ifndef MROCE_TEST_SIM_H
#define MROCE_TEST_SIM_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/engine.h"
#include "../lib/testhook.h"

#define SIM_QUEUE	2048

struct sim_frame {
	__u64	at;		/* delivery time */
	__u64	seq;		/* ties keep send order */
	__u32	len;
	__u8	data[MROCE_FRAME_MAX];
};

#define SIM_ROUTES_MAX	16	/* routes with a link of their own (route_rate_mbps) */

struct sim_link {
	__u32	delay_us;	/* base one-way delay */
	__u32	path_step_us;	/* extra delay per path (source port), makes spraying reorder */
	__u32	jitter_us;	/* random extra delay */
	__u32	loss_ppm, dup_ppm, corrupt_ppm;
	bool	down;		/* black hole */
	__u32	drop_psn;	/* drop the first transmission of this PSN ... */
	bool	drop_armed;	/* ... while armed */
	bool	drop_forever;	/* ... and every copy after it: a black hole for one PSN */
	__u32	drop_copies;	/* ... or this many copies of it (0, 1: the first only) */
	__u32	rate_mbps;	/* bottleneck rate; 0: unlimited (no queue) */
	__u32	queue_bytes;	/* buffer in front of it: tail drop beyond */
	__u32	ecn_bytes;	/* mark CE on ECN-capable packets above this queue depth */
	__u16	dead_sport;	/* a failed path: frames with this UDP source port vanish */
	__u16	dead_mod;	/* a failed route: frames whose source port % dead_mod == 0 vanish */
	__u16	routes;		/* an ECMP fabric: a frame takes route sim_route(source port); */
	__u32	route_rate_mbps;	/* ... each route a link of its own at this rate (a Clos
					 * fabric's links), with a queue of queue_bytes each */
	__u16	dead_route;	/* ... route dead_route - 1 is down (0: none); path_step_us is per route */
	__u16	slow_sport;	/* a slow path: frames with this source port take ... */
	__u32	slow_extra_us;	/* ... this much longer */
	__u16	mark_sport;	/* a congested path: ECT frames with this source port get CE */
	__u32	drop_acks;	/* drop this many of the next ACK frames */
	/*
	 * A peer that holds the token and says what it likes: each frame this
	 * port sends is first handed to rewrite (the UDP checksum redone after).
	 */
	void	(*rewrite)(void *ctx, __u8 *frame, __u32 len);
	void	*rewrite_ctx;
};

struct sim_net;

struct sim_port {
	struct sim_net		*net;
	struct sim_port		*peer;
	struct sim_frame	**heap;		/* frames on their way to this port */
	__u32			n;
	__u8			txbuf[MROCE_FRAME_MAX];
	struct sim_link		link;		/* of frames this port sends */
	__u64			sent, dropped, marked, queue_peak, dead_drops, slow_frames;
	__u64			xdp_drops;	/* frames a datapath would have dropped here (a flood) */
	__u64			free_at_ns;	/* when the bottleneck has sent what is queued */
	__u64			route_free_at_ns[SIM_ROUTES_MAX];	/* ... each route's link */
};

struct sim_net {
	__u64		now;
	__u64		seq;
	__u64		rng;
	struct sim_port	a, b;
	struct sim_port	*extra[4];	/* more wires on this clock and pool (planes), or NULL */
	/*
	 * A busy host: device b is not run for nap_us of every nap_period_us
	 * (a receiver the scheduler left off the CPU), then takes what came
	 * meanwhile in one burst.
	 */
	__u32		nap_period_us, nap_us;
	struct sim_frame *pool;
	__u32		pool_free[2 * SIM_QUEUE];
	__u32		nfree;
};

static inline __u32 sim_rand(struct sim_net *net)
{
	net->rng ^= net->rng >> 12;
	net->rng ^= net->rng << 25;
	net->rng ^= net->rng >> 27;
	return (__u32)((net->rng * 2685821657736338717ULL) >> 32);
}

static inline bool sim_roll(struct sim_net *net, __u32 ppm)
{
	return ppm && sim_rand(net) % 1000000 < ppm;
}

static inline bool sim_less(const struct sim_frame *x, const struct sim_frame *y)
{
	return x->at < y->at || (x->at == y->at && x->seq < y->seq);
}

static inline void sim_push(struct sim_port *p, struct sim_frame *f)
{
	__u32 i = p->n++;

	while (i && sim_less(f, p->heap[(i - 1) / 2])) {
		p->heap[i] = p->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	p->heap[i] = f;
}

static inline struct sim_frame *sim_pop(struct sim_port *p)
{
	struct sim_frame *top = p->heap[0], *last = p->heap[--p->n];
	__u32 i = 0;

	for (;;) {
		__u32 c = 2 * i + 1;

		if (c >= p->n)
			break;
		if (c + 1 < p->n && sim_less(p->heap[c + 1], p->heap[c]))
			c++;
		if (!sim_less(p->heap[c], last))
			break;
		p->heap[i] = p->heap[c];
		i = c;
	}
	if (p->n)
		p->heap[i] = last;
	return top;
}

static inline struct sim_frame *sim_alloc(struct sim_net *net)
{
	return net->nfree ? &net->pool[net->pool_free[--net->nfree]] : NULL;
}

static inline void sim_free(struct sim_net *net, struct sim_frame *f)
{
	net->pool_free[net->nfree++] = (__u32)(f - net->pool);
}

/* Put a copy of a frame on the wire toward p->peer. */
/* The route an ECMP switch hashes a source port onto (a 16-bit mix, as a switch's CRC). */
static inline __u32 sim_route(const struct sim_link *l, __u16 sport)
{
	__u32 h = sport;	/* murmur3's finaliser */

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h % l->routes;
}

static inline void sim_wire(struct sim_port *p, void *data, __u32 len)
{
	struct sim_net *net = p->net;
	const struct sim_link *l = &p->link;
	__u64 route_at_ns = 0;	/* when the frame's route has serialised it (route_rate_mbps) */
	int copies = 1;

	p->sent++;
	if (l->rewrite && len > mroce_l2l4_len(AF_INET)) {
		l->rewrite(l->rewrite_ctx, data, len);
		mroce_frame_finish(data, len, AF_INET);
	}
	if (l->drop_armed && len >= mroce_l2l4_len(AF_INET) + sizeof(struct mroce_bth)) {
		const struct mroce_bth *bth = (const void *)((const __u8 *)data + mroce_l2l4_len(AF_INET));

		if (mroce_be32(bth->psn) == l->drop_psn && bth->opcode != MROCE_OP_ACK &&
		    bth->opcode != MROCE_OP_NACK) {
			if (p->link.drop_copies > 1)
				p->link.drop_copies--;
			else
				p->link.drop_armed = l->drop_forever;
			p->dropped++;
			return;
		}
	}
	if (l->drop_acks && len >= mroce_l2l4_len(AF_INET) + sizeof(struct mroce_bth) &&
	    ((const struct mroce_bth *)((const __u8 *)data + mroce_l2l4_len(AF_INET)))->opcode ==
	    MROCE_OP_ACK) {
		p->link.drop_acks--;
		p->dropped++;
		return;
	}
	if ((l->dead_sport || l->dead_mod || l->dead_route) && len > mroce_l2l4_len(AF_INET)) {
		__u16 sp;

		memcpy(&sp, (const __u8 *)data + mroce_l2l4_len(AF_INET) - 8, 2);
		sp = mroce_be16(sp);
		if (sp == l->dead_sport || (l->dead_mod && sp % l->dead_mod == 0) ||
		    (l->dead_route && sim_route(l, sp) == l->dead_route - 1u)) {
			p->dead_drops++;
			p->dropped++;
			return;
		}
	}
	if (l->down || sim_roll(net, l->loss_ppm)) {
		p->dropped++;
		return;
	}
	if (sim_roll(net, l->dup_ppm))
		copies = 2;
	if (l->route_rate_mbps && l->routes && l->routes <= SIM_ROUTES_MAX &&
	    len > mroce_l2l4_len(AF_INET)) {
		/* the route's own link: serialise there, tail drop beyond its queue */
		__u64 now_ns = net->now * 1000, *free_at;
		__u16 sp;

		memcpy(&sp, (const __u8 *)data + mroce_l2l4_len(AF_INET) - 8, 2);
		free_at = &p->route_free_at_ns[sim_route(l, mroce_be16(sp))];
		if (*free_at < now_ns)
			*free_at = now_ns;
		if ((*free_at - now_ns) * l->route_rate_mbps / 8000 > p->queue_peak)
			p->queue_peak = (*free_at - now_ns) * l->route_rate_mbps / 8000;
		if ((*free_at - now_ns) * l->route_rate_mbps / 8000 + len > l->queue_bytes) {
			p->dropped++;
			return;
		}
		*free_at += (__u64)len * 8000 / l->route_rate_mbps;
		route_at_ns = *free_at;
	}
	if (l->rate_mbps) {
		/* A rate-limited queue: tail drop when full, CE above the threshold. */
		__u64 now_ns = net->now * 1000, depth;
		mroce_iphdr_t *ip = (void *)((__u8 *)data + sizeof(struct ethhdr));

		if (p->free_at_ns < now_ns)
			p->free_at_ns = now_ns;
		depth = (p->free_at_ns - now_ns) * l->rate_mbps / 8000;
		if (depth > p->queue_peak)
			p->queue_peak = depth;
		if (depth + len > l->queue_bytes) {
			p->dropped++;
			return;
		}
		if (l->ecn_bytes && depth > l->ecn_bytes && (ip->tos & 3)) {
			ip->tos |= 3;	/* CE; the IPv4 checksum covers TOS, so redo it */
			ip->check = 0;
			{
				__u32 sum = 0;
				const __u8 *b = (const __u8 *)ip;

				for (int i = 0; i < 20; i += 2)
					sum += (__u32)b[i] << 8 | b[i + 1];
				while (sum >> 16)
					sum = (sum & 0xffff) + (sum >> 16);
				ip->check = htons((__u16)~sum);
			}
			p->marked++;
		}
		p->free_at_ns += (__u64)len * 8000 / l->rate_mbps;
	}
	if (l->mark_sport && len > mroce_l2l4_len(AF_INET)) {
		mroce_iphdr_t *ip = (void *)((__u8 *)data + sizeof(struct ethhdr));
		__u16 sp;

		memcpy(&sp, (const __u8 *)data + mroce_l2l4_len(AF_INET) - 8, 2);
		if (mroce_be16(sp) == l->mark_sport && (ip->tos & 3) && (ip->tos & 3) != 3) {
			__u32 sum;

			ip->tos |= 3;
			ip->check = 0;
			sum = 0;
			for (int i = 0; i < 20; i += 2)
				sum += (__u32)((const __u8 *)ip)[i] << 8 | ((const __u8 *)ip)[i + 1];
			while (sum >> 16)
				sum = (sum & 0xffff) + (sum >> 16);
			ip->check = htons((__u16)~sum);
			p->marked++;
		}
	}
	for (int i = 0; i < copies; i++) {
		struct sim_frame *f = sim_alloc(net);
		__u16 sport;

		if (!f) {	/* queue full: tail drop, as a switch would */
			p->dropped++;
			return;
		}
		memcpy(f->data, data, len);
		f->len = len;
		memcpy(&sport, f->data + mroce_l2l4_len(AF_INET) - 8, 2);
		f->at = (route_at_ns ? route_at_ns / 1000 : l->rate_mbps ? p->free_at_ns / 1000 : net->now) +
			l->delay_us +
			(l->routes ? sim_route(l, mroce_be16(sport)) : mroce_be16(sport) % 16u) * l->path_step_us +
			(l->jitter_us ? sim_rand(net) % l->jitter_us : 0);
		if (l->slow_sport && mroce_be16(sport) == l->slow_sport) {
			f->at += l->slow_extra_us;
			p->slow_frames++;
		}
		f->seq = net->seq++;
		if (sim_roll(net, l->corrupt_ppm) && len > 20)
			f->data[14 + sim_rand(net) % (len - 14)] ^= 0x40;
		sim_push(p->peer, f);
	}
}

static void *sim_tx_buf(void *port, __u32 *cap)
{
	*cap = MROCE_FRAME_MAX;
	return ((struct sim_port *)port)->txbuf;
}

static void sim_tx_send(void *port, void *buf, __u32 len)
{
	if (len)
		sim_wire(port, buf, len);
}

static void sim_tx_flush(void *port) { (void)port; }

static int sim_rx_burst(void *port, mroce_rx_cb cb, void *ctx, int budget)
{
	struct sim_port *p = port;
	int n = 0;

	while (n < budget && p->n && p->heap[0]->at <= p->net->now) {
		struct sim_frame *f = sim_pop(p);

		if (!mroce_dev_test_xdp_drops(ctx, f->data, f->len))
			cb(ctx, f->data, f->len, 0);
		sim_free(p->net, f);
		n++;
	}
	return n;
}

static void sim_wait(void *port, int us, int wake_fd) { (void)port; (void)us; (void)wake_fd; }

static __u64 sim_now(void *port) { return ((struct sim_port *)port)->net->now; }

static __u64 sim_plane_drops(void *port, __u32 plane)
{
	(void)plane;
	return ((struct sim_port *)port)->xdp_drops;
}

static const struct mroce_port_ops sim_ops = {
	.tx_buf = sim_tx_buf, .tx_send = sim_tx_send, .tx_flush = sim_tx_flush,
	.rx_burst = sim_rx_burst, .wait = sim_wait, .now_us = sim_now,
	.plane_drops = sim_plane_drops,
};

/* An empty wire from a seed, keeping the frame pool and heaps it already has. */
static inline void sim_reset(struct sim_net *net, __u64 seed)
{
	struct sim_frame *pool = net->pool, **ha = net->a.heap, **hb = net->b.heap;

	memset(net, 0, sizeof(*net));
	net->pool = pool;
	net->a.heap = ha;
	net->b.heap = hb;
	for (__u32 i = 0; i < 2 * SIM_QUEUE; i++)
		net->pool_free[net->nfree++] = i;
	net->rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	net->now = 1000000;
	net->a.net = net->b.net = net;
	net->a.peer = &net->b;
	net->b.peer = &net->a;
}

static inline struct sim_net *sim_new(__u64 seed)
{
	struct sim_net *net = calloc(1, sizeof(*net));

	net->pool = calloc(2 * SIM_QUEUE, sizeof(*net->pool));
	net->a.heap = calloc(2 * SIM_QUEUE, sizeof(*net->a.heap));
	net->b.heap = calloc(2 * SIM_QUEUE, sizeof(*net->b.heap));
	sim_reset(net, seed);
	return net;
}

static inline void sim_free_net(struct sim_net *net)
{
	free(net->pool);
	free(net->a.heap);
	free(net->b.heap);
	free(net);
}

/* A device on one side of the wire (progress driven by the test). */
static inline struct mroce_dev *sim_dev(struct sim_net *net, bool side_b,
					const struct mroce_faults *faults)
{
	MROCE_OPTS(mroce_dev_opts, o, .no_thread = true, .test_faults = faults);
	struct mroce_route local = {};
	struct mroce_dev *dev = NULL;

	local.family = AF_INET;
	local.src_mac[0] = 0x02;
	local.src_mac[5] = side_b ? 0x0b : 0x0a;
	local.src.v4.s_addr = htonl(side_b ? 0xc6120002 : 0xc6120001);	/* 198.18.0.x */
	if (mroce_dev_create(&sim_ops, side_b ? &net->b : &net->a, NULL, &local, &o, &dev))
		return NULL;
	dev->attr.mtu = 1500;
	/* QPNs, PSNs and keys from the wire's seed: a seed replays exactly */
	mroce_dev_test_seed_random(dev, net->rng ^ (side_b ? 0xb0b : 0xa0a));
	return dev;
}

/* Connect two QPs on the two devices directly (the manual path). */
static inline int sim_connect(struct mroce_qp *qa, struct mroce_qp *qb)
{
	struct mroce_qp_info ia, ib;
	struct in6_addr a6 = {}, b6 = {};
	int err;

	a6.s6_addr[10] = a6.s6_addr[11] = 0xff;
	b6 = a6;
	memcpy(&a6.s6_addr[12], &qa->dev->local.src.v4, 4);
	memcpy(&b6.s6_addr[12], &qb->dev->local.src.v4, 4);
	mroce_qp_local_info(qa, &a6, AF_INET, &ia);
	mroce_qp_local_info(qb, &b6, AF_INET, &ib);
	err = mroce_qp_connect(qa, &ib, ib.mac);
	return err ? err : mroce_qp_connect(qb, &ia, ia.mac);
}

/* When device b's nap ends, if it is napping now; 0 if it is not. */
static inline __u64 sim_nap_end(const struct sim_net *net)
{
	__u64 into;

	if (!net->nap_period_us)
		return 0;
	into = net->now % net->nap_period_us;
	return into < net->nap_us ? net->now - into + net->nap_us : 0;
}

/* Run both devices until done(ctx) or limit_us of virtual time; 0 if done. */
static inline int sim_run(struct sim_net *net, struct mroce_dev *a, struct mroce_dev *b,
			  bool (*done)(void *), void *ctx, __u64 limit_us)
{
	__u64 end = net->now + limit_us;

	while (net->now < end) {
		__u64 nap_end = sim_nap_end(net);
		int work = mroce_dev_progress(a, 0) + (nap_end ? 0 : mroce_dev_progress(b, 0));
		__u64 next;

		if (done(ctx))
			return 0;
		if (work)
			continue;
		next = end;
		if (net->a.n && net->a.heap[0]->at < next)
			next = net->a.heap[0]->at;
		if (net->b.n && (nap_end ? nap_end : net->b.heap[0]->at) < next)
			next = nap_end ? nap_end : net->b.heap[0]->at;
		for (int i = 0; i < 4; i++)
			if (net->extra[i] && net->extra[i]->n && net->extra[i]->heap[0]->at < next)
				next = net->extra[i]->heap[0]->at;
		pthread_mutex_lock(&a->lock);
		if (mroce_engine_next_timer(a) < next)
			next = mroce_engine_next_timer(a);
		pthread_mutex_unlock(&a->lock);
		pthread_mutex_lock(&b->lock);
		if (mroce_engine_next_timer(b) < next)
			next = nap_end > mroce_engine_next_timer(b) ? nap_end : mroce_engine_next_timer(b);
		pthread_mutex_unlock(&b->lock);
		net->now = next > net->now ? next : net->now + 1;
	}
	return done(ctx) ? 0 : -ETIMEDOUT;
}

#endif /* MROCE_TEST_SIM_H */
