// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Queueing rules of the fabric emulator. Each (path, egress port) pair is a
 * FIFO link: a frame starts serialising when the link is free, takes
 * len * 8 / rate to serialise and then `delay` to arrive. The backlog a new
 * frame sees is what the link still has to serialise, (busy_until - now) *
 * rate, which is what buffer limits and ECN thresholds are compared with:
 * congestion makes queues, and queues make delay, marks and drops.
 *
 * Each frame also carries the host receive queue it will be transmitted on,
 * chosen at ingress as the receiving NIC would (steering rule, else RSS).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "switch.h"

#define FAB_NIL	0xffffffffu

/* Frames sit at any offset (UMEM, 14-byte Ethernet header): no alignment assumed. */
typedef struct ethhdr	eth_u __attribute__((aligned(1)));
typedef struct iphdr	ip_u __attribute__((aligned(1)));
typedef struct ipv6hdr	ip6_u __attribute__((aligned(1)));

struct fab_slot {
	__u64	due_ns;
	__u32	next;
	__u16	len;
	__u8	port;
	__u8	queue;	/* the host's receive queue */
};

int fab_switch_init(struct fab_switch *sw, __u32 nports, __u32 npaths, __u32 nqueues, __u32 nslots,
		    __u64 seed, fab_tx_fn tx, void *tx_ctx)
{
	if (!nports || nports > FAB_MAX_PORTS || !npaths || npaths > FAB_MAX_PATHS || !nqueues ||
	    nqueues > FAB_MAX_QUEUES || !nslots || !tx)
		return -EINVAL;
	memset(sw, 0, sizeof(*sw));
	sw->slots = calloc(nslots, sizeof(*sw->slots));
	sw->data = malloc((size_t)nslots * FAB_MAX_FRAME);
	if (!sw->slots || !sw->data) {
		fab_switch_free(sw);
		return -ENOMEM;
	}
	sw->nports = nports;
	sw->npaths = npaths;
	sw->nqueues = nqueues;
	sw->nslots = sw->nfree = nslots;
	for (__u32 i = 0; i < nslots; i++)
		sw->slots[i].next = i + 1 < nslots ? i + 1 : FAB_NIL;
	for (__u32 p = 0; p < npaths; p++) {
		sw->cfg[p] = (struct fab_path_cfg){ .buffer = 1 << 20, .up = true };
		for (__u32 e = 0; e < nports; e++)
			sw->q[p][e].head = sw->q[p][e].tail = FAB_NIL;
	}
	for (__u32 e = 0; e < FAB_MAX_PORTS; e++)
		sw->pin[e] = -1;
	sw->rng = seed ? seed : 0x9e3779b97f4a7c15ULL;
	sw->tx = tx;
	sw->tx_ctx = tx_ctx;
	return 0;
}

void fab_switch_free(struct fab_switch *sw)
{
	free(sw->slots);
	free(sw->data);
	sw->slots = NULL;
	sw->data = NULL;
}

/* xorshift64*: reproducible dice for a given seed. */
static __u32 dice_ppm(struct fab_switch *sw)
{
	sw->rng ^= sw->rng >> 12;
	sw->rng ^= sw->rng << 25;
	sw->rng ^= sw->rng >> 27;
	return (__u32)(((sw->rng * 0x2545f4914f6cdd1dULL) >> 32) % 1000000);
}

/* FNV-1a over the flow's fields, then a finaliser so that neighbouring
 * source ports land on unrelated paths, as switch ASIC hashes do. */
__u32 fab_hash(const void *src, const void *dst, __u32 addr_len, __u8 proto, __u16 sport,
	       __u16 dport)
{
	__u8 key[2 * 16 + 5];
	__u32 h = 2166136261u, n = 0;

	memcpy(key, src, addr_len);
	memcpy(key + addr_len, dst, addr_len);
	n = 2 * addr_len;
	key[n++] = proto;
	key[n++] = (__u8)(sport >> 8);
	key[n++] = (__u8)sport;
	key[n++] = (__u8)(dport >> 8);
	key[n++] = (__u8)dport;
	for (__u32 i = 0; i < n; i++)
		h = (h ^ key[i]) * 16777619u;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* The RSS key of Microsoft's specification, many NICs' default: its
 * published test vectors are checked by tests/test_fabric.c. */
static const __u8 rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

__u32 fab_rss_hash(const void *src, const void *dst, __u32 addr_len, bool l4, __u16 sport,
		   __u16 dport)
{
	__u8 in[2 * 16 + 4];
	__u32 n = 2 * addr_len, h = 0, v;

	memcpy(in, src, addr_len);
	memcpy(in + addr_len, dst, addr_len);
	if (l4) {
		in[n++] = (__u8)(sport >> 8);
		in[n++] = (__u8)sport;
		in[n++] = (__u8)(dport >> 8);
		in[n++] = (__u8)dport;
	}
	/* For each input bit set, XOR in the 32 key bits starting at its position. */
	v = (__u32)rss_key[0] << 24 | (__u32)rss_key[1] << 16 | (__u32)rss_key[2] << 8 | rss_key[3];
	for (__u32 i = 0; i < n; i++) {
		for (int b = 7; b >= 0; b--) {
			if (in[i] >> b & 1)
				h ^= v;
			v = v << 1 | (rss_key[i + 4] >> b & 1);
		}
	}
	return h;
}

__u32 fab_queue_of(const struct fab_switch *sw, __u32 port, const void *src, const void *dst,
		   __u32 addr_len, __u32 proto, __u16 sport, __u16 dport)
{
	bool l4 = proto == IPPROTO_TCP || proto == IPPROTO_UDP;
	__u32 first = 0, n = sw->nqueues, h;

	if (proto > 255 || n <= 1 || port >= sw->nports)
		return 0;
	if (proto == IPPROTO_UDP) {
		for (__u32 r = 0; r < sw->nsteer[port]; r++) {
			if (sw->steer[port][r].dport == dport) {
				first = sw->steer[port][r].first;
				n = sw->steer[port][r].n;
				break;
			}
		}
	}
	if (n == 1)
		return first;
	h = fab_rss_hash(src, dst, addr_len, l4, l4 ? sport : 0, l4 ? dport : 0);
	/* An indirection table filled as ethtool's default: entry i -> i % n. */
	return first + h % FAB_RSS_TABLE % n;
}

/*
 * As a NIC parses for RSS: ports only when the whole datagram is here (a
 * fragment hashes on its addresses alone, so all fragments meet on one
 * queue), IPv6 with no extension header before TCP/UDP.
 */
__u32 fab_frame_queue(const struct fab_switch *sw, __u32 port, const __u8 *f, __u32 len)
{
	const eth_u *eth = (const void *)f;
	__u32 proto = 256, hdr;
	__u16 sport = 0, dport = 0;
	const void *src, *dst;
	__u32 alen;

	if (sw->nqueues <= 1 || len < sizeof(*eth))
		return 0;
	if (eth->h_proto == htons(ETH_P_IP)) {
		const ip_u *ip = (const void *)(f + sizeof(*eth));

		if (len < sizeof(*eth) + sizeof(*ip) || ip->version != 4 || ip->ihl < 5)
			return 0;
		hdr = sizeof(*eth) + ip->ihl * 4u;
		proto = ip->protocol;
		if (ntohs(ip->frag_off) & 0x3fff)	/* MF or an offset: a fragment */
			proto = 0;
		src = &ip->saddr;
		dst = &ip->daddr;
		alen = 4;
	} else if (eth->h_proto == htons(ETH_P_IPV6)) {
		const ip6_u *ip6 = (const void *)(f + sizeof(*eth));

		if (len < sizeof(*eth) + sizeof(*ip6) || ip6->version != 6)
			return 0;
		hdr = sizeof(*eth) + sizeof(*ip6);
		proto = ip6->nexthdr;
		src = &ip6->saddr;
		dst = &ip6->daddr;
		alen = 16;
	} else {
		return 0;
	}
	if (proto == IPPROTO_UDP || proto == IPPROTO_TCP) {
		if (len < hdr + 4)
			proto = 0;	/* truncated: no ports to read */
		else {
			sport = (__u16)(f[hdr] << 8 | f[hdr + 1]);
			dport = (__u16)(f[hdr + 2] << 8 | f[hdr + 3]);
		}
	}
	return fab_queue_of(sw, port, src, dst, alen, proto, sport, dport);
}

int fab_steer_add(struct fab_switch *sw, __u32 port, __u32 dport, __u32 first, __u32 n)
{
	__u32 r;

	if (port >= sw->nports || dport > 65535 || !n || first >= sw->nqueues || n > sw->nqueues - first)
		return -EINVAL;
	for (r = 0; r < sw->nsteer[port] && sw->steer[port][r].dport != dport; r++)
		;
	if (r == FAB_MAX_RULES)
		return -ENOSPC;
	if (r == sw->nsteer[port])
		sw->nsteer[port]++;
	sw->steer[port][r] = (struct fab_steer){ (__u16)dport, (__u8)first, (__u8)n };
	return 0;
}

int fab_steer_del(struct fab_switch *sw, __u32 port, __u32 dport)
{
	if (port >= sw->nports)
		return -EINVAL;
	for (__u32 r = 0; r < sw->nsteer[port]; r++) {
		if (sw->steer[port][r].dport == dport) {
			sw->steer[port][r] = sw->steer[port][--sw->nsteer[port]];
			return 0;
		}
	}
	return -ENOENT;
}

void fab_steer_clear(struct fab_switch *sw, __u32 port)
{
	if (port < sw->nports)
		sw->nsteer[port] = 0;
}

int fab_steer_base(struct fab_switch *sw, __u32 base)
{
	int err;

	if (base > 65535 || sw->nqueues - 1 > 65535 - base)
		return -EINVAL;
	for (__u32 e = 0; e < sw->nports; e++)
		for (__u32 q = 0; q < sw->nqueues; q++)
			if ((err = fab_steer_add(sw, e, base + q, q, 1)))
				return err;
	return 0;
}

static int mac_lookup(const struct fab_switch *sw, const __u8 *mac)
{
	for (__u32 i = 0; i < FAB_MACS; i++)
		if (sw->macs[i].used && !memcmp(sw->macs[i].mac, mac, 6))
			return sw->macs[i].port;
	return -1;
}

static void mac_learn(struct fab_switch *sw, const __u8 *mac, __u32 port)
{
	int free_i = -1;

	if (mac[0] & 1)
		return;		/* a group address is never a source */
	for (__u32 i = 0; i < FAB_MACS; i++) {
		if (sw->macs[i].used && !memcmp(sw->macs[i].mac, mac, 6)) {
			sw->macs[i].port = (__u8)port;	/* a host that moved */
			return;
		}
		if (!sw->macs[i].used && free_i < 0)
			free_i = (int)i;
	}
	if (free_i >= 0) {
		memcpy(sw->macs[free_i].mac, mac, 6);
		sw->macs[free_i].port = (__u8)port;
		sw->macs[free_i].used = true;
	}
}

static void flood(struct fab_switch *sw, __u32 in, const __u8 *frame, __u32 len)
{
	for (__u32 e = 0; e < sw->nports; e++) {
		if (e == in)
			continue;	/* hairpin is for unicast: a host never hears its own broadcast */
		if (sw->tx(sw->tx_ctx, e, 0, frame, len)) {
			sw->port[e].tx_drop++;
		} else {
			sw->port[e].flooded++;
			sw->port[e].tx_queue[0]++;
		}
	}
}

/*
 * Path of an IP frame, or -1 when it is not one the paths carry. Also
 * returns where the ECN bits live so a congested queue can mark them.
 */
static int classify(const struct fab_switch *sw, const __u8 *f, __u32 len, __u32 egress,
		    __u8 **tos)
{
	const eth_u *eth = (const void *)f;
	__u16 sport = 0, dport = 0;
	const __u8 *l4;
	__u8 proto;
	__u32 h;

	if (len < sizeof(*eth))
		return -1;
	if (eth->h_proto == htons(ETH_P_IP)) {
		const ip_u *ip = (const void *)(f + sizeof(*eth));
		__u32 ihl;

		if (len < sizeof(*eth) + sizeof(*ip) || ip->version != 4 || ip->ihl < 5)
			return -1;
		ihl = ip->ihl * 4u;
		proto = ip->protocol;
		l4 = (const __u8 *)ip + ihl;
		/* Ports only in first fragments, as a hashing switch does. */
		if ((proto == IPPROTO_UDP || proto == IPPROTO_TCP) && !(ntohs(ip->frag_off) & 0x1fff) &&
		    len >= sizeof(*eth) + ihl + 4) {
			sport = (__u16)(l4[0] << 8 | l4[1]);
			dport = (__u16)(l4[2] << 8 | l4[3]);
		}
		h = fab_hash(&ip->saddr, &ip->daddr, 4, proto, sport, dport);
		*tos = (__u8 *)&ip->tos;
	} else if (eth->h_proto == htons(ETH_P_IPV6)) {
		const ip6_u *ip6 = (const void *)(f + sizeof(*eth));

		if (len < sizeof(*eth) + sizeof(*ip6) || ip6->version != 6)
			return -1;
		proto = ip6->nexthdr;
		l4 = (const __u8 *)(ip6 + 1);
		if ((proto == IPPROTO_UDP || proto == IPPROTO_TCP) &&
		    len >= sizeof(*eth) + sizeof(*ip6) + 4) {
			sport = (__u16)(l4[0] << 8 | l4[1]);
			dport = (__u16)(l4[2] << 8 | l4[3]);
		}
		h = fab_hash(&ip6->saddr, &ip6->daddr, 16, proto, sport, dport);
		*tos = (__u8 *)ip6;	/* traffic class straddles bytes 0-1 */
	} else {
		return -1;
	}
	return sw->pin[egress] >= 0 ? sw->pin[egress] : (int)(h % sw->npaths);
}

/* Set CE if the packet is ECN-capable. Returns true if it was marked. */
static bool mark_ce(__u8 *f, __u8 *tos)
{
	const eth_u *eth = (const void *)f;

	if (eth->h_proto == htons(ETH_P_IP)) {
		ip_u *ip = (ip_u *)(f + sizeof(*eth));
		__u16 old = htons((__u16)(ip->version << 12 | ip->ihl << 8 | ip->tos)), new;
		__u32 sum;

		if (!(ip->tos & 3) || (ip->tos & 3) == 3)
			return false;
		ip->tos |= 3;
		new = htons((__u16)(ip->version << 12 | ip->ihl << 8 | ip->tos));
		/* RFC 1624 incremental update: HC' = ~(~HC + ~m + m') */
		sum = (__u16)~ntohs(ip->check) + (__u16)~ntohs(old) + ntohs(new);
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		ip->check = htons((__u16)~sum);
		return true;
	}
	/* IPv6: traffic class is bits 4..11 of the first word, ECN its low two. */
	if (!(tos[1] & 0x30) || (tos[1] & 0x30) == 0x30)
		return false;
	tos[1] |= 0x30;
	return true;
}

static __u64 backlog_bytes(const struct fab_queue *q, const struct fab_path_cfg *c, __u64 now)
{
	if (!c->rate_bps || q->busy_until_ns <= now)
		return 0;
	return (q->busy_until_ns - now) * c->rate_bps / 8000000000ULL;
}

static void enqueue(struct fab_switch *sw, __u32 path, __u32 egress, __u32 queue, const __u8 *f,
		    __u32 len, __u64 now)
{
	struct fab_queue *q = &sw->q[path][egress];
	const struct fab_path_cfg *c = &sw->cfg[path];
	__u32 i = sw->free_head;
	struct fab_slot *s;
	__u64 start;

	if (!sw->nfree) {
		sw->nomem++;
		return;
	}
	s = &sw->slots[i];
	sw->free_head = s->next;
	sw->nfree--;
	memcpy(sw->data + (size_t)i * FAB_MAX_FRAME, f, len);
	start = q->busy_until_ns > now ? q->busy_until_ns : now;
	q->busy_until_ns = start + (c->rate_bps ? (__u64)len * 8000000000ULL / c->rate_bps : 0);
	s->due_ns = q->busy_until_ns + (__u64)c->delay_us * 1000;
	s->len = (__u16)len;
	s->port = (__u8)egress;
	s->queue = (__u8)queue;
	s->next = FAB_NIL;
	if (q->tail == FAB_NIL)
		q->head = i;
	else
		sw->slots[q->tail].next = i;
	q->tail = i;
	q->count++;
}

void fab_ingress(struct fab_switch *sw, __u32 in, __u32 rxq, const __u8 *frame, __u32 len,
		 __u64 now)
{
	const eth_u *eth = (const void *)frame;
	struct fab_path_stats *st;
	struct fab_path_cfg *c;
	__u8 buf[FAB_MAX_FRAME], *tos = NULL;
	__u64 backlog;
	int egress, path;
	__u32 queue;

	if (in >= sw->nports || len < sizeof(*eth) || len > FAB_MAX_FRAME)
		return;
	sw->port[in].rx_pkts++;
	if (rxq < FAB_MAX_QUEUES)
		sw->port[in].rx_queue[rxq]++;
	mac_learn(sw, eth->h_source, in);
	egress = mac_lookup(sw, eth->h_dest);
	if (egress < 0) {
		flood(sw, in, frame, len);
		return;
	}
	/* egress == in: hairpin (reflective relay), e.g. two processes of one
	 * host talking through the switch; it goes the same way as any frame. */
	queue = fab_frame_queue(sw, (__u32)egress, frame, len);
	memcpy(buf, frame, len);
	path = classify(sw, buf, len, (__u32)egress, &tos);
	if (path < 0) {		/* not IP: straight across, no path */
		if (sw->tx(sw->tx_ctx, (__u32)egress, queue, frame, len)) {
			sw->port[egress].tx_drop++;
		} else {
			sw->port[egress].tx_pkts++;
			sw->port[egress].tx_queue[queue]++;
		}
		return;
	}
	c = &sw->cfg[path];
	st = &sw->st[path];
	if (!c->up) {
		st->drop_down++;
		return;
	}
	if (c->loss_ppm && dice_ppm(sw) < c->loss_ppm) {
		st->drop_loss++;
		return;
	}
	backlog = backlog_bytes(&sw->q[path][egress], c, now);
	if (backlog + len > c->buffer) {
		st->drop_buffer++;
		return;
	}
	if (c->ecn_bytes && backlog > c->ecn_bytes && mark_ce(buf, tos))
		st->ecn_marked++;
	enqueue(sw, (__u32)path, (__u32)egress, queue, buf, len, now);
	if (c->dup_ppm && dice_ppm(sw) < c->dup_ppm) {
		enqueue(sw, (__u32)path, (__u32)egress, queue, buf, len, now);
		st->duplicated++;
	}
	backlog = backlog_bytes(&sw->q[path][egress], c, now);
	if (backlog > st->queue_peak)
		st->queue_peak = backlog;
}

__u64 fab_egress(struct fab_switch *sw, __u64 now)
{
	__u64 next = ~0ULL;

	for (__u32 p = 0; p < sw->npaths; p++) {
		for (__u32 e = 0; e < sw->nports; e++) {
			struct fab_queue *q = &sw->q[p][e];

			while (q->head != FAB_NIL) {
				__u32 i = q->head;
				struct fab_slot *s = &sw->slots[i];

				if (s->due_ns > now) {
					if (s->due_ns < next)
						next = s->due_ns;
					break;
				}
				if (sw->tx(sw->tx_ctx, e, s->queue, sw->data + (size_t)i * FAB_MAX_FRAME,
					   s->len)) {
					sw->port[e].tx_busy++;
					next = now;	/* ring full: retry once the port drains */
					break;
				}
				sw->port[e].tx_pkts++;
				sw->port[e].tx_queue[s->queue]++;
				sw->st[p].fwd_pkts++;
				sw->st[p].fwd_bytes += s->len;
				q->head = s->next;
				if (q->head == FAB_NIL)
					q->tail = FAB_NIL;
				q->count--;
				s->next = sw->free_head;
				sw->free_head = i;
				sw->nfree++;
			}
		}
	}
	return next;
}
