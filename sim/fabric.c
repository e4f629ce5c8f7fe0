// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fabric: per plane, a two-tier Clos. Host h hangs off leaf
 * h / hosts_per_leaf; every leaf links to every spine. Each link is an
 * output queue: a rate, a propagation delay, a buffer with tail drop
 * beyond it, CE marking above a threshold, optional random loss. A frame
 * is one event per link it crosses. Leaves pick a spine by ECMP: a hash of
 * addresses and UDP ports (the source port is the entropy) over the spines
 * that still route to the destination's leaf. A failed link black-holes
 * what is queued on it until the switches withdraw it (detect_us).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define IP_BASE		0xc6120000u	/* 198.18.0.0/15 */
#define PLANE_STRIDE	8192u

__u32 sim_ip(__u32 plane, __u32 host)
{
	return IP_BASE + plane * PLANE_STRIDE + host + 1;
}

static void link_init(struct sim_link *l, __u32 gbps, const struct sim_cfg *c, __u32 buf,
		      double loss)
{
	memset(l, 0, sizeof(*l));
	l->ps_per_byte = 8000 / gbps;
	l->prop_ps = c->prop_ns * 1000;
	l->buf = buf;
	l->ecn = c->ecn_bytes;
	l->loss_ppm = (__u32)(loss * 1e6 + 0.5);
	l->routed = true;
}

int sim_fabric_init(struct sim *s)
{
	const struct sim_cfg *c = &s->cfg;
	__u32 H = c->hosts, L = H / c->hosts_per_leaf, S = c->spines;

	s->leaves = L;
	s->planes = calloc(c->planes, sizeof(*s->planes));
	if (!s->planes)
		return -ENOMEM;
	for (__u32 p = 0; p < c->planes; p++) {
		struct sim_plane *pl = &s->planes[p];

		pl->up_h = calloc(H, sizeof(struct sim_link));
		pl->dn_h = calloc(H, sizeof(struct sim_link));
		pl->up_s = calloc((size_t)L * S, sizeof(struct sim_link));
		pl->dn_s = calloc((size_t)L * S, sizeof(struct sim_link));
		pl->ecmp_ok = calloc((size_t)L * L * S, 1);
		pl->ecmp_n = calloc((size_t)L * L, sizeof(*pl->ecmp_n));
		pl->ecmp_gen = calloc((size_t)L * L, sizeof(*pl->ecmp_gen));	/* 0: never worked out */
		pl->route_gen = 1;
		if (!pl->up_h || !pl->dn_h || !pl->up_s || !pl->dn_s || !pl->ecmp_ok || !pl->ecmp_n ||
		    !pl->ecmp_gen)
			return -ENOMEM;
		for (__u32 h = 0; h < H; h++) {
			/* end-to-end loss is drawn once per frame, where it leaves its host */
			link_init(&pl->up_h[h], c->host_gbps, c, c->nic_bytes, c->loss);
			pl->up_h[h].ecn = 0;	/* the NIC ring never marks */
			link_init(&pl->dn_h[h], c->host_gbps, c, c->buf_bytes, c->link_loss);
		}
		for (__u32 i = 0; i < L * S; i++) {
			link_init(&pl->up_s[i], c->spine_gbps, c, c->buf_bytes, c->link_loss);
			link_init(&pl->dn_s[i], c->spine_gbps, c, c->buf_bytes, c->link_loss);
		}
	}
	return 0;
}

void sim_fabric_free(struct sim *s)
{
	for (__u32 p = 0; s->planes && p < s->cfg.planes; p++) {
		free(s->planes[p].up_h);
		free(s->planes[p].dn_h);
		free(s->planes[p].up_s);
		free(s->planes[p].dn_s);
		free(s->planes[p].ecmp_ok);
		free(s->planes[p].ecmp_n);
		free(s->planes[p].ecmp_gen);
	}
	free(s->planes);
	s->planes = NULL;
}

/* Set CE on an ECN-capable IPv4 frame, and redo the header checksum. */
static bool mark_ce(struct sim_frame *f)
{
	__u8 *ip = f->data + 14;
	__u32 sum = 0;

	if (!(ip[1] & 3) || (ip[1] & 3) == 3)
		return false;
	ip[1] |= 3;
	ip[10] = ip[11] = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (__u32)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	ip[10] = (__u8)(sum >> 8);
	ip[11] = (__u8)sum;
	return true;
}

/* Queue f on l; it arrives at its next hop when serialised and propagated. */
static void link_queue(struct sim *s, struct sim_link *l, struct sim_frame *f, enum sim_hop next)
{
	__u64 start = l->free_ps > s->now ? l->free_ps : s->now;
	__u32 depth = (__u32)((start - s->now) / l->ps_per_byte);

	if (l->down) {
		sim_trace(s, f, "dead");
		s->st.drops_down++;
		sim_frame_free(s, f);
		return;
	}
	if (l->loss_ppm && sim_rand(s) % 1000000 < l->loss_ppm) {
		sim_trace(s, f, "lost");
		s->st.drops_loss++;
		sim_frame_free(s, f);
		return;
	}
	if (depth + f->len > l->buf) {
		sim_trace(s, f, "full");
		s->st.drops_buf++;
		l->drops_full++;
		sim_frame_free(s, f);
		return;
	}
	if (l->ecn && depth > l->ecn && mark_ce(f)) {
		s->st.marks++;
		l->marks++;
	}
	if (depth > l->peak)
		l->peak = depth;
	if (depth > l->peak_sample)
		l->peak_sample = depth;
	l->free_ps = start + (__u64)f->len * l->ps_per_byte;
	l->tx_bytes += f->len;
	l->tx_frames++;
	s->st.hops++;
	f->hop = (__u8)next;
	if (sim_evq_push(&s->q, l->free_ps + l->prop_ps, EV_FRAME, f, 0)) {
		sim_fail(s, -ENOMEM, "event queue: out of memory");
		sim_frame_free(s, f);
	}
}

static __u32 mix(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* The ECMP hash a leaf computes over the frame's addresses and ports. */
static __u32 ecmp_hash(const struct sim_frame *f, __u32 leaf)
{
	return mix(mix((__u32)f->src << 16 ^ f->dst) ^ mix((__u32)f->sport * 0x9e3779b1u ^ leaf));
}

void sim_fabric_send(struct sim *s, struct sim_frame *f)
{
	__u32 daddr;

	if (f->len < 14 + 20 + 8) {	/* not even Ethernet, IPv4 and UDP headers: nowhere to go */
		s->st.frames++;
		s->st.drops_down++;
		sim_frame_free(s, f);
		return;
	}
	memcpy(&daddr, f->data + 14 + 16, 4);
	daddr = ntohl(daddr) - IP_BASE;
	memcpy(&f->sport, f->data + 14 + 20, 2);
	f->sport = ntohs(f->sport);
	f->plane = (__u8)(daddr / PLANE_STRIDE);
	f->dst = (__u16)(daddr % PLANE_STRIDE - 1);
	f->sent_ps = s->now;
	f->spine = SIM_NO_SPINE;
	s->st.frames++;
	if (f->plane >= s->cfg.planes || f->dst >= s->cfg.hosts || daddr % PLANE_STRIDE == 0) {
		s->st.drops_down++;	/* an address the fabric has no route for */
		sim_frame_free(s, f);
		return;
	}
	sim_trace(s, f, "send");
	link_queue(s, &s->planes[f->plane].up_h[f->src], f, HOP_LEAF_UP);
}

void sim_fabric_arrive(struct sim *s, struct sim_frame *f)
{
	struct sim_plane *pl = &s->planes[f->plane];
	__u32 S = s->cfg.spines, L = s->leaves, hpl = s->cfg.hosts_per_leaf;
	__u32 src_leaf = f->src / hpl, dst_leaf = f->dst / hpl;

	switch (f->hop) {
	case HOP_LEAF_UP: {
		__u32 pair = src_leaf * L + dst_leaf, n;
		__u8 *ok = &pl->ecmp_ok[(size_t)pair * S];

		if (src_leaf == dst_leaf) {
			link_queue(s, &pl->dn_h[f->dst], f, HOP_HOST);
			return;
		}
		if (pl->ecmp_gen[pair] != pl->route_gen) {	/* the routes changed since */
			n = 0;
			for (__u32 sp = 0; sp < S; sp++)
				if (pl->up_s[src_leaf * S + sp].routed && pl->dn_s[sp * L + dst_leaf].routed)
					ok[n++] = (__u8)sp;
			pl->ecmp_n[pair] = (__u16)n;
			pl->ecmp_gen[pair] = pl->route_gen;
		}
		n = pl->ecmp_n[pair];
		if (!n) {
			sim_trace(s, f, "noroute");
			s->st.drops_down++;
			sim_frame_free(s, f);
			return;
		}
		f->spine = (__u16)ok[ecmp_hash(f, src_leaf) % n];
		link_queue(s, &pl->up_s[src_leaf * S + f->spine], f, HOP_SPINE);
		return;
	}
	case HOP_SPINE:
		link_queue(s, &pl->dn_s[f->spine * L + dst_leaf], f, HOP_LEAF_DOWN);
		return;
	case HOP_LEAF_DOWN:
		link_queue(s, &pl->dn_h[f->dst], f, HOP_HOST);
		return;
	default:
		sim_trace(s, f, "recv");
		sim_host_deliver(s, f);
		return;
	}
}

/* ---- failures */

enum { F_DOWN, F_UP, F_ROUTE };

static void set_link(struct sim_link *l, int action)
{
	if (action == F_DOWN)
		l->down = true;
	else if (action == F_UP)
		l->down = false, l->routed = true;
	else
		l->routed = !l->down;
}

static void apply(struct sim *s, const struct sim_fault *f, int action)
{
	struct sim_plane *pl = &s->planes[f->plane];
	__u32 S = s->cfg.spines, L = s->leaves;

	pl->route_gen++;	/* every pair's spines are worked out again */
	switch (f->kind) {
	case SIM_F_SPINE:
		for (__u32 l = 0; l < L; l++) {
			set_link(&pl->up_s[l * S + f->spine], action);
			set_link(&pl->dn_s[f->spine * L + l], action);
		}
		break;
	case SIM_F_LINK:
		set_link(&pl->up_s[f->leaf * S + f->spine], action);
		set_link(&pl->dn_s[f->spine * L + f->leaf], action);
		break;
	case SIM_F_PLANE:
		for (__u32 h = 0; h < s->cfg.hosts; h++) {
			set_link(&pl->up_h[h], action);
			set_link(&pl->dn_h[h], action);
		}
		for (__u32 i = 0; i < L * S; i++) {
			set_link(&pl->up_s[i], action);
			set_link(&pl->dn_s[i], action);
		}
		break;
	}
}

void sim_fabric_fault(struct sim *s, __u32 arg)
{
	const struct sim_fault *f = &s->cfg.faults[arg >> 2];
	int action = (int)(arg & 3);

	apply(s, f, action);
	if (action == F_DOWN &&
	    sim_evq_push(&s->q, s->now + (__u64)s->cfg.detect_us * PS_PER_US, EV_FAULT, NULL,
			 (arg & ~3u) | F_ROUTE))
		sim_fail(s, -ENOMEM, "event queue: out of memory");
}

void sim_fabric_schedule_faults(struct sim *s)
{
	for (__u32 i = 0; i < s->cfg.nfaults; i++) {
		const struct sim_fault *f = &s->cfg.faults[i];
		__u32 n = f->count ? f->count : 1;

		for (__u32 k = 0; k < n; k++) {
			__u64 down = s->start_ps + f->at_ps + k * f->period_ps;
			__u64 up = f->count ? down + f->period_ps / 2 :
				   f->up_ps == SIM_NEVER ? SIM_NEVER : s->start_ps + f->up_ps;

			sim_evq_push(&s->q, down, EV_FAULT, NULL, i << 2 | F_DOWN);
			if (up != SIM_NEVER)
				sim_evq_push(&s->q, up, EV_FAULT, NULL, i << 2 | F_UP);
		}
	}
}
