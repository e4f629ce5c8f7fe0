// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fabric emulator's switch without a network: ECMP hashing, learning
 * and flooding, serialisation + delay timing, tail drop, ECN marking with
 * a still-valid IP checksum, path down, pinning, loss and duplication
 * dice, the control commands; the host receive queue each frame is sent
 * on (RSS, steering rules, queue 0 for the rest) and hairpin.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "../selftests/fabric/switch.h"

#define MAXTX 64

typedef struct ethhdr	eth_u __attribute__((aligned(1)));
typedef struct iphdr	ip_u __attribute__((aligned(1)));
typedef struct udphdr	udp_u __attribute__((aligned(1)));
typedef struct ipv6hdr	ip6_u __attribute__((aligned(1)));

struct txlog {
	int	n;
	__u32	port[MAXTX];
	__u32	queue[MAXTX];
	__u8	frame[MAXTX][256];
	__u32	len[MAXTX];
	bool	full;		/* pretend the ports' rings are full */
};

static int tx(void *ctx, __u32 port, __u32 queue, const void *frame, __u32 len)
{
	struct txlog *t = ctx;

	if (t->full)
		return -EAGAIN;
	assert_true(t->n < MAXTX);
	t->port[t->n] = port;
	t->queue[t->n] = queue;
	memcpy(t->frame[t->n], frame, len < 256 ? len : 256);
	t->len[t->n++] = len;
	return 0;
}

static const __u8 mac_of[4][6] = {
	{ 2, 0, 0xc6, 0x12, 1, 1 }, { 2, 0, 0xc6, 0x12, 1, 2 },
	{ 2, 0, 0xc6, 0x12, 1, 3 }, { 2, 0, 0xc6, 0x12, 1, 4 },
};

static __u16 ip_csum(const ip_u *ip)
{
	const __u8 *b = (const __u8 *)ip;
	__u32 sum = 0;

	for (int i = 0; i < ip->ihl * 4; i += 2)
		sum += (__u32)(b[i] | b[i + 1] << 8);	/* native order, as the stored field */
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* An IPv4/UDP frame of len bytes from host s to host d's UDP port dport. */
static __u32 frame_to(__u8 *f, __u32 len, int s, int d, __u16 sport, __u16 dport, __u8 tos)
{
	eth_u *eth = (void *)f;
	ip_u *ip = (void *)(f + sizeof(*eth));
	udp_u *udp = (void *)(f + sizeof(*eth) + sizeof(*ip));

	memset(f, 0, len);
	memcpy(eth->h_dest, mac_of[d], 6);
	memcpy(eth->h_source, mac_of[s], 6);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = tos;
	ip->tot_len = htons((__u16)(len - sizeof(*eth)));
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = htonl(0xc6120100 | (__u32)(s + 1));
	ip->daddr = htonl(0xc6120100 | (__u32)(d + 1));
	ip->check = ip_csum(ip);
	udp->source = htons(sport);
	udp->dest = htons(dport);
	return len;
}

static __u32 frame(__u8 *f, __u32 len, int s, int d, __u16 sport, __u8 tos)
{
	return frame_to(f, len, s, d, sport, 4792, tos);
}

/* A switch of 4 ports, 4 paths and nq queues per host link whose hosts 0 and 1 have been learnt. */
static void setup_q(struct fab_switch *sw, struct txlog *t, __u32 nq)
{
	__u8 f[128];

	memset(t, 0, sizeof(*t));
	assert_int_equal(fab_switch_init(sw, 4, 4, nq, 64, 7, tx, t), 0);
	assert_int_equal(sw->nqueues, nq);
	/* First frames: unknown destinations are flooded; sources are learnt. */
	fab_ingress(sw, 0, 0, f, frame(f, 100, 0, 1, 1, 0), 0);
	fab_ingress(sw, 1, 0, f, frame(f, 100, 1, 0, 1, 0), 0);
	assert_int_equal(sw->port[1].flooded + sw->port[2].flooded + sw->port[3].flooded, 3);
	t->n = 0;
	fab_egress(sw, ~0ULL >> 1);
	t->n = 0;
}

static void setup(struct fab_switch *sw, struct txlog *t)
{
	setup_q(sw, t, 1);
}

/* Which path a frame from host 0 to 1 with this source port takes. */
static __u32 path_of(const struct fab_switch *sw, __u16 sport)
{
	__u32 s = htonl(0xc6120101), d = htonl(0xc6120102);

	return fab_hash(&s, &d, 4, IPPROTO_UDP, sport, 4792) % sw->npaths;
}

static void test_hash_spreads_source_ports(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	int count[4] = {};

	(void)state;
	setup(&sw, &t);
	for (__u16 p = 49152; p < 49152 + 4000; p++)
		count[path_of(&sw, p)]++;
	for (int i = 0; i < 4; i++)
		assert_in_range(count[i], 850, 1150);	/* 1000 each, give or take */
	assert_int_equal(path_of(&sw, 50000), path_of(&sw, 50000));
	fab_switch_free(&sw);
}

static void test_learning_and_flooding(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	__u8 f[128];

	(void)state;
	setup(&sw, &t);
	/* To host 3, never heard from: flooded to 1, 2 and 3, not back to 0. */
	fab_ingress(&sw, 0, 0, f, frame(f, 100, 0, 3, 1, 0), 0);
	assert_int_equal(t.n, 3);
	for (int i = 0; i < 3; i++)
		assert_int_not_equal(t.port[i], 0);
	/* To host 1, learnt: one path, one copy, on port 1 only. */
	t.n = 0;
	fab_ingress(&sw, 0, 0, f, frame(f, 100, 0, 1, 9, 0), 10);
	assert_int_equal(fab_egress(&sw, 10), ~0ULL);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.port[0], 1);
	assert_int_equal(sw.st[path_of(&sw, 9)].fwd_pkts, 1);
	fab_switch_free(&sw);
}

static void test_rate_and_delay(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	__u8 f[1000];
	__u32 p;

	(void)state;
	setup(&sw, &t);
	p = path_of(&sw, 77);
	sw.cfg[p].rate_bps = 1000000000;	/* 1000 bytes: 8 us each */
	sw.cfg[p].delay_us = 10;
	for (int i = 0; i < 3; i++)
		fab_ingress(&sw, 0, 0, f, frame(f, 1000, 0, 1, 77, 0), 1000000);
	/* Due at 1 ms + k * 8 us + 10 us. */
	assert_int_equal(fab_egress(&sw, 1000000), 1000000 + 8000 + 10000);
	assert_int_equal(t.n, 0);
	assert_int_equal(fab_egress(&sw, 1018000), 1000000 + 16000 + 10000);
	assert_int_equal(t.n, 1);
	assert_int_equal(fab_egress(&sw, 1034000), ~0ULL);
	assert_int_equal(t.n, 3);
	assert_int_equal(sw.st[p].queue_peak, 3000 - 0);
	fab_switch_free(&sw);
}

static void test_tail_drop_and_full_ring(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	__u8 f[1500];
	__u32 p;

	(void)state;
	setup(&sw, &t);
	p = path_of(&sw, 5);
	sw.cfg[p].rate_bps = 1000000;	/* slow: the backlog stays */
	sw.cfg[p].buffer = 4096;
	for (int i = 0; i < 4; i++)
		fab_ingress(&sw, 0, 0, f, frame(f, 1500, 0, 1, 5, 0), 0);
	/* 1500 + 1500 fit in 4096, a third would not. */
	assert_int_equal(sw.st[p].drop_buffer, 2);
	/* A full transmit ring keeps frames queued instead of losing them. */
	t.full = true;
	assert_int_equal(fab_egress(&sw, 1000000000), 1000000000);
	assert_int_equal(sw.st[p].fwd_pkts, 0);
	t.full = false;
	fab_egress(&sw, 1000000000);
	assert_int_equal(sw.st[p].fwd_pkts, 2);
	assert_int_equal(t.n, 2);
	fab_switch_free(&sw);
}

static void test_ecn_marks_keep_checksum(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	__u8 f[1000];
	__u32 p;

	(void)state;
	setup(&sw, &t);
	p = path_of(&sw, 6);
	sw.cfg[p].rate_bps = 1000000;
	sw.cfg[p].ecn_bytes = 1500;
	fab_ingress(&sw, 0, 0, f, frame(f, 1000, 0, 1, 6, 2), 0);	/* ECT(0), backlog 0 */
	fab_ingress(&sw, 0, 0, f, frame(f, 1000, 0, 1, 6, 2), 0);	/* backlog 1000 */
	fab_ingress(&sw, 0, 0, f, frame(f, 1000, 0, 1, 6, 2), 0);	/* backlog 2000: mark */
	fab_ingress(&sw, 0, 0, f, frame(f, 1000, 0, 1, 6, 0), 0);	/* not ECN-capable */
	assert_int_equal(sw.st[p].ecn_marked, 1);
	fab_egress(&sw, 1000000000);
	assert_int_equal(t.n, 4);
	for (int i = 0; i < 4; i++) {
		const ip_u *ip = (const void *)(t.frame[i] + sizeof(struct ethhdr));

		assert_int_equal(ip->tos & 3, i == 2 ? 3 : i == 3 ? 0 : 2);
		assert_int_equal(ip_csum(ip), 0);	/* still valid */
	}
	fab_switch_free(&sw);
}

static void test_down_pin_loss_dup(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	char out[4096], cmd[32];
	__u64 before;
	__u8 f[200];
	__u32 p, other;

	(void)state;
	setup(&sw, &t);
	p = path_of(&sw, 8);
	sw.cfg[p].up = false;
	fab_ingress(&sw, 0, 0, f, frame(f, 200, 0, 1, 8, 0), 0);
	assert_int_equal(sw.st[p].drop_down, 1);
	/* Pinning traffic for host 1 onto another path bypasses the hash. */
	other = p == 3 ? 2 : 3;
	before = sw.st[other].fwd_pkts;
	snprintf(cmd, sizeof(cmd), "pin 1 %u", other);
	assert_int_equal(fab_command(&sw, cmd, 0, out, sizeof(out)), 0);
	fab_ingress(&sw, 0, 0, f, frame(f, 200, 0, 1, 8, 0), 0);
	fab_egress(&sw, 1);
	assert_int_equal(sw.st[p].drop_down, 1);
	assert_int_equal(sw.st[other].fwd_pkts, before + 1);
	/* Certain loss drops everything; certain duplication doubles everything. */
	assert_int_equal(fab_command(&sw, "pin 1 none", 0, out, sizeof(out)), 0);
	assert_int_equal(fab_command(&sw, "path all up loss=100%", 0, out, sizeof(out)), 0);
	for (int i = 0; i < 10; i++)
		fab_ingress(&sw, 0, 0, f, frame(f, 200, 0, 1, (__u16)(100 + i), 0), 0);
	assert_int_equal(sw.st[0].drop_loss + sw.st[1].drop_loss + sw.st[2].drop_loss + sw.st[3].drop_loss, 10);
	assert_int_equal(fab_command(&sw, "path all loss=0 dup=1", 0, out, sizeof(out)), 0);
	t.n = 0;
	for (int i = 0; i < 10; i++)
		fab_ingress(&sw, 0, 0, f, frame(f, 200, 0, 1, (__u16)(100 + i), 0), 0);
	fab_egress(&sw, 1);
	assert_int_equal(t.n, 20);
	fab_switch_free(&sw);
}

static void test_commands(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	char out[8192];

	(void)state;
	setup(&sw, &t);
	assert_int_equal(fab_command(&sw, "path 1 rate=2.5g delay=50 buffer=256k loss=1% dup=0.002 ecn=64k down",
				     123, out, sizeof(out)), 0);
	assert_string_equal(out, "ok t_ns=123\n");
	assert_int_equal(sw.cfg[1].rate_bps, 2500000000ULL);
	assert_int_equal(sw.cfg[1].delay_us, 50);
	assert_int_equal(sw.cfg[1].buffer, 256 * 1024);
	assert_int_equal(sw.cfg[1].loss_ppm, 10000);
	assert_int_equal(sw.cfg[1].dup_ppm, 2000);
	assert_int_equal(sw.cfg[1].ecn_bytes, 64 * 1024);
	assert_false(sw.cfg[1].up);
	assert_true(sw.cfg[0].up);
	/* Bad input: an error that says why, and nothing changed. */
	static const char *bad[] = {
		"path 4 up", "path 1 rate=fast", "path 1 loss=2", "path 1 colour=red", "path",
		"path 1 buffer=100", "pin 7 0", "pin 0 9", "hash 1.2.3.4 nowhere udp 1 2", "reboot", "",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(fab_command(&sw, bad[i], 0, out, sizeof(out)), -EINVAL);
		assert_memory_equal(out, "error: ", 7);
	}
	assert_int_equal(sw.cfg[1].rate_bps, 2500000000ULL);
	assert_int_equal(fab_command(&sw, "hash 198.18.1.1 198.18.1.2 udp 49155 4792", 0, out, sizeof(out)), 0);
	{
		char want[32];

		snprintf(want, sizeof(want), "path %u\n", path_of(&sw, 49155));
		assert_string_equal(out, want);
	}
	assert_int_equal(fab_command(&sw, "stats json", 0, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"drop_down\":0"));
	assert_int_equal(fab_command(&sw, "stop", 0, out, sizeof(out)), 1);
	fab_switch_free(&sw);
}

/* The RSS hash is the NICs' Toeplitz: the published verification vectors. */
static void test_rss_toeplitz_vectors(void **state)
{
	static const struct {
		const char	*dst, *src;
		__u16		dport, sport;
		__u32		ip, tcp;
	} v[] = {
		{ "161.142.100.80", "66.9.149.187", 1766, 2794, 0x323e8fc2, 0x51ccc178 },
		{ "65.69.140.83", "199.92.111.2", 4739, 14230, 0xd718262a, 0xc626b0ea },
		{ "12.22.207.184", "24.19.198.95", 38024, 12898, 0xd2d0a5de, 0x5c2b394a },
		{ "209.142.163.6", "38.27.205.30", 2217, 48228, 0x82989176, 0xafc7327f },
		{ "202.188.127.2", "153.39.163.191", 1303, 44251, 0x5d1809c5, 0x10e828a2 },
		{ "3ffe:2501:200:3::1", "3ffe:2501:200:1fff::7", 1766, 2794, 0x2cc18cd5, 0x40207d3d },
		{ "ff02::1", "3ffe:501:8::260:97ff:fe40:efab", 4739, 14230, 0x0f0c461c, 0xdde51bbf },
		{ "fe80::200:f8ff:fe21:67cf", "3ffe:1900:4545:3:200:f8ff:fe21:67cf", 38024, 44251, 0x4b61e985,
		  0x02d1feef },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		__u8 s[16], d[16];
		__u32 alen = strchr(v[i].dst, ':') ? 16 : 4;

		assert_int_equal(inet_pton(alen == 4 ? AF_INET : AF_INET6, v[i].src, s), 1);
		assert_int_equal(inet_pton(alen == 4 ? AF_INET : AF_INET6, v[i].dst, d), 1);
		assert_int_equal(fab_rss_hash(s, d, alen, false, 0, 0), v[i].ip);
		assert_int_equal(fab_rss_hash(s, d, alen, true, v[i].sport, v[i].dport), v[i].tcp);
	}
}

/* The receive queue of host 1 that a flow from host 0 lands on. */
static __u32 queue_of(const struct fab_switch *sw, __u32 proto, __u16 sport, __u16 dport)
{
	__u32 s = htonl(0xc6120101), d = htonl(0xc6120102);

	return fab_queue_of(sw, 1, &s, &d, 4, proto, sport, dport);
}

/* Frames from host 0 to host 1's UDP port dport from `flows` source ports
 * from 49152; per-queue counts of port 1 (transmitted) added to count. */
static void send_flows(struct fab_switch *sw, struct txlog *t, int flows, __u16 dport, __u64 *count)
{
	__u64 before[FAB_MAX_QUEUES];
	__u8 f[128];

	memcpy(before, sw->port[1].tx_queue, sizeof(before));
	for (int i = 0; i < flows; i++) {
		t->n = 0;
		fab_ingress(sw, 0, (__u32)i % sw->nqueues, f, frame_to(f, 100, 0, 1, (__u16)(49152 + i), dport, 0), 0);
		fab_egress(sw, 1);
		assert_int_equal(t->n, 1);
		assert_int_equal(t->port[0], 1);
		/* The queue it went out on is the one the switch says the flow takes. */
		assert_int_equal(t->queue[0], queue_of(sw, IPPROTO_UDP, (__u16)(49152 + i), dport));
	}
	for (__u32 q = 0; q < FAB_MAX_QUEUES; q++)
		count[q] = sw->port[1].tx_queue[q] - before[q];
}

static void test_rss_spreads_flows(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	__u64 count[FAB_MAX_QUEUES];
	__u8 f[128];

	(void)state;
	/* One queue (the default): everything on queue 0, as before. */
	setup_q(&sw, &t, 1);
	send_flows(&sw, &t, 50, 4792, count);
	assert_int_equal(count[0], 50);
	fab_switch_free(&sw);

	for (__u32 nq = 2; nq <= 8; nq *= 2) {
		setup_q(&sw, &t, nq);
		send_flows(&sw, &t, 400, 4792, count);
		for (__u32 q = 0; q < nq; q++)
			assert_in_range(count[q], 400 / nq / 2, 400 / nq * 3 / 2);	/* spread over all */
		for (__u32 q = nq; q < FAB_MAX_QUEUES; q++)
			assert_int_equal(count[q], 0);
		/* The source port matters, and so does the destination port. */
		{
			int differ_s = 0, differ_d = 0;

			for (__u16 p = 0; p < 64; p++) {
				differ_s += queue_of(&sw, IPPROTO_UDP, (__u16)(50000 + p), 4792) !=
					    queue_of(&sw, IPPROTO_UDP, 50000, 4792);
				differ_d += queue_of(&sw, IPPROTO_UDP, 50000, (__u16)(4792 + p)) !=
					    queue_of(&sw, IPPROTO_UDP, 50000, 4792);
			}
			assert_true(differ_s > 0 && differ_d > 0);
		}
		/* Each host transmit queue it came in on is counted. */
		for (__u32 q = 0; q < nq; q++)
			assert_int_equal(sw.port[0].rx_queue[q], 400 / nq + (q == 0));
		/* Same flow, same queue: every packet of a flow in order on one queue. */
		t.n = 0;
		for (int i = 0; i < 8; i++)
			fab_ingress(&sw, 0, 0, f, frame_to(f, 100, 0, 1, 50001, 4792, 0), 0);
		fab_egress(&sw, 1);
		assert_int_equal(t.n, 8);
		for (int i = 0; i < 8; i++)
			assert_int_equal(t.queue[i], t.queue[0]);
		fab_switch_free(&sw);
	}
}

static void test_steering_rules(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	__u64 count[FAB_MAX_QUEUES];
	char out[8192];

	(void)state;
	setup_q(&sw, &t, 4);
	/* One queue: every flow to that UDP port, whatever its source port. */
	assert_int_equal(fab_command(&sw, "steer 1 4792 2", 5, out, sizeof(out)), 0);
	assert_string_equal(out, "ok t_ns=5\n");
	send_flows(&sw, &t, 100, 4792, count);
	assert_int_equal(count[2], 100);
	/* Other UDP ports, TCP to that port, and other hosts: RSS as before. */
	send_flows(&sw, &t, 200, 4793, count);
	for (int q = 0; q < 4; q++)
		assert_in_range(count[q], 20, 80);
	{
		int spread[4] = {};

		for (__u16 p = 0; p < 64; p++)
			spread[queue_of(&sw, IPPROTO_TCP, (__u16)(50000 + p), 4792)]++;
		assert_true(spread[0] && spread[1] && spread[3]);
	}
	{
		__u32 s = htonl(0xc6120101), d = htonl(0xc6120103);
		int spread[4] = {};

		for (__u16 p = 0; p < 64; p++)
			spread[fab_queue_of(&sw, 2, &s, &d, 4, IPPROTO_UDP, (__u16)(50000 + p), 4792)]++;
		assert_true(spread[0] && spread[1] && spread[3]);
	}
	/* A range: hashed within queues 1..3 only, each of them used. */
	assert_int_equal(fab_command(&sw, "steer 1 4792 1 3", 0, out, sizeof(out)), 0);
	send_flows(&sw, &t, 300, 4792, count);
	assert_int_equal(count[0], 0);
	for (int q = 1; q < 4; q++)
		assert_in_range(count[q], 50, 150);
	assert_int_equal(sw.nsteer[1], 1);	/* replaced, not added */
	/* show lists the rules. */
	assert_int_equal(fab_command(&sw, "steer 1 4800 0", 0, out, sizeof(out)), 0);
	assert_int_equal(fab_command(&sw, "show", 0, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "steer port 1: udp 4792->1-3 udp 4800->0\n"));
	assert_non_null(strstr(out, "queues: 4 per host link"));
	/* The rx queue command agrees with where frames go. */
	assert_int_equal(fab_command(&sw, "rxq 1 198.18.1.1 198.18.1.2 udp 50000 4800", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "queue 0\n");
	/* Removing one rule, then all: RSS over all four again. */
	assert_int_equal(fab_command(&sw, "steer 1 4800 none", 0, out, sizeof(out)), 0);
	assert_int_equal(sw.nsteer[1], 1);
	assert_int_equal(fab_command(&sw, "steer 1 clear", 0, out, sizeof(out)), 0);
	assert_int_equal(sw.nsteer[1], 0);
	send_flows(&sw, &t, 200, 4792, count);
	for (int q = 0; q < 4; q++)
		assert_in_range(count[q], 20, 80);
	assert_int_equal(fab_command(&sw, "show", 0, out, sizeof(out)), 0);
	assert_null(strstr(out, "steer port"));
	/* Bad rules: an error that says why, and no rule made. */
	static const char *bad[] = {
		"steer 1 4792 4", "steer 1 4792 3 2", "steer 1 4792 0 0", "steer 4 4792 0", "steer 1 70000 0",
		"steer 1 4792 none", "steer 1", "steer 1 clearx", "steer 1 4792 x", "steer 1 4792 0 1 9",
		"rxq 1 198.18.1.1 198.18.1.2 udp 1", "rxq 9 198.18.1.1 198.18.1.2 udp 1 2",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(fab_command(&sw, bad[i], 0, out, sizeof(out)), -EINVAL);
		assert_memory_equal(out, "error: ", 7);
	}
	for (int e = 0; e < 4; e++)
		assert_int_equal(sw.nsteer[e], 0);
	/* The rule set mroce uses by convention: UDP port base + q to queue q, every host. */
	assert_int_equal(fab_steer_base(&sw, 4792), 0);
	for (__u16 q = 0; q < 4; q++) {
		send_flows(&sw, &t, 40, (__u16)(4792 + q), count);
		assert_int_equal(count[q], 40);
	}
	assert_int_equal(sw.nsteer[3], 4);
	assert_int_equal(fab_steer_base(&sw, 65533), -EINVAL);	/* 65533..65536: past the last port */
	/* A full rule table says so. */
	for (__u32 p = 0; p < FAB_MAX_RULES - 4; p++)
		assert_int_equal(fab_steer_add(&sw, 0, 10000 + p, 0, 1), 0);
	assert_int_equal(fab_steer_add(&sw, 0, 9999, 0, 1), -ENOSPC);
	assert_int_equal(fab_steer_add(&sw, 0, 10000, 1, 2), 0);	/* replacing still works */
	fab_switch_free(&sw);
}

/* Not IP, flooded, fragments: queue 0, or the addresses alone as a NIC does. */
static void test_queue_of_the_rest(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	__u8 f[128];
	ip_u *ip = (void *)(f + sizeof(struct ethhdr));
	__u32 s = htonl(0xc6120101), d = htonl(0xc6120102), q2;

	(void)state;
	setup_q(&sw, &t, 4);
	/* Flooded (to host 3, never heard from): queue 0 everywhere. */
	fab_ingress(&sw, 0, 2, f, frame(f, 100, 0, 3, 1, 0), 0);
	assert_int_equal(t.n, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(t.queue[i], 0);
	/* Not IP (ARP) to a learnt host: queue 0. */
	t.n = 0;
	frame(f, 100, 0, 1, 1, 0);
	((eth_u *)f)->h_proto = htons(ETH_P_ARP);
	fab_ingress(&sw, 0, 3, f, 100, 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.queue[0], 0);
	/* Fragments hash on their addresses alone, rules for ports do not see them. */
	assert_int_equal(fab_command(&sw, "steer 1 4792 0", 0, (char *)f, 0), 0);
	q2 = fab_queue_of(&sw, 1, &s, &d, 4, 0, 0, 0);
	for (int i = 0; i < 4; i++) {
		t.n = 0;
		frame(f, 100, 0, 1, (__u16)(49152 + i * 17), 0);
		ip->frag_off = htons(i & 1 ? 0x2000 : 0x0010);	/* a first fragment (MF), a later one */
		fab_ingress(&sw, 0, 0, f, 100, 0);
		fab_egress(&sw, 1);
		assert_int_equal(t.n, 1);
		assert_int_equal(t.queue[0], q2);
	}
	assert_int_equal(fab_frame_queue(&sw, 1, f, 10), 0);	/* truncated */
	/* IPv6 UDP: steered by the same rules, else RSS over its 16-byte addresses and ports. */
	{
		ip6_u *ip6 = (void *)(f + sizeof(struct ethhdr));
		__u8 *l4 = (__u8 *)(ip6 + 1);
		int seen[4] = {};

		memset(f, 0, sizeof(f));
		((eth_u *)f)->h_proto = htons(ETH_P_IPV6);
		ip6->version = 6;
		ip6->nexthdr = IPPROTO_UDP;
		inet_pton(AF_INET6, "fd00::1", &ip6->saddr);
		inet_pton(AF_INET6, "fd00::2", &ip6->daddr);
		l4[2] = 4792 >> 8;
		l4[3] = 4792 & 0xff;
		for (int p = 0; p < 64; p++) {
			l4[0] = 0xc0;
			l4[1] = (__u8)p;
			assert_int_equal(fab_frame_queue(&sw, 1, f, 100), 0);	/* steer 1 4792 0 */
			assert_int_equal(fab_frame_queue(&sw, 2, f, 100),
					 fab_queue_of(&sw, 2, &ip6->saddr, &ip6->daddr, 16, IPPROTO_UDP,
						      (__u16)(0xc000 | p), 4792));
			seen[fab_frame_queue(&sw, 2, f, 100)]++;
		}
		assert_true(seen[0] && seen[1] && seen[2] && seen[3]);
		assert_int_equal(fab_frame_queue(&sw, 2, f, sizeof(struct ethhdr) + sizeof(*ip6) + 2),
				 fab_queue_of(&sw, 2, &ip6->saddr, &ip6->daddr, 16, 0, 0, 0));	/* no ports */
	}
	fab_switch_free(&sw);
}

/* Hairpin: a frame to the host's own address goes back out of its port,
 * through a path, on the queue its NIC would pick; broadcasts are not reflected. */
static void test_hairpin(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	char out[256];
	__u64 before;
	__u8 f[128];
	__u32 p;

	(void)state;
	setup_q(&sw, &t, 4);
	before = sw.port[0].tx_pkts;
	assert_int_equal(fab_command(&sw, "steer 0 7000 3", 0, out, sizeof(out)), 0);
	fab_ingress(&sw, 0, 1, f, frame_to(f, 100, 0, 0, 40000, 7000, 0), 0);
	fab_egress(&sw, 1);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.port[0], 0);
	assert_int_equal(t.queue[0], 3);
	assert_memory_equal(t.frame[0] + 6, mac_of[0], 6);
	assert_int_equal(sw.port[0].tx_pkts, before + 1);
	assert_int_equal(sw.port[0].tx_queue[3], 1);
	{
		__u32 s = htonl(0xc6120101);

		p = fab_hash(&s, &s, 4, IPPROTO_UDP, 40000, 7000) % sw.npaths;
	}
	assert_int_equal(sw.st[p].fwd_pkts, 1);	/* it took its path, like any frame */
	/* The paths act on it: a down path drops it. */
	sw.cfg[p].up = false;
	fab_ingress(&sw, 0, 1, f, frame_to(f, 100, 0, 0, 40000, 7000, 0), 0);
	fab_egress(&sw, 1);
	assert_int_equal(t.n, 1);
	assert_int_equal(sw.st[p].drop_down, 1);
	/* Broadcast: to everyone else only. */
	t.n = 0;
	frame(f, 100, 0, 1, 1, 0);
	memset(f, 0xff, 6);
	fab_ingress(&sw, 0, 0, f, 100, 0);
	assert_int_equal(t.n, 3);
	for (int i = 0; i < 3; i++)
		assert_int_not_equal(t.port[i], 0);
	fab_switch_free(&sw);
}

static void test_queue_stats(void **state)
{
	struct fab_switch sw;
	struct txlog t;
	char out[8192];
	__u8 f[128];

	(void)state;
	setup_q(&sw, &t, 2);
	assert_int_equal(fab_command(&sw, "steer 1 4792 1", 0, out, sizeof(out)), 0);
	fab_ingress(&sw, 0, 1, f, frame(f, 100, 0, 1, 5, 0), 0);
	fab_egress(&sw, 1);
	assert_int_equal(fab_command(&sw, "stats json", 0, out, sizeof(out)), 0);
	/* port 0: the setup frame from its host's queue 0, this one from 1; port 1:
	 * the setup frame flooded to its queue 0, this one steered to 1 */
	{
		__u32 s = htonl(0xc6120102), d = htonl(0xc6120101);
		char want[256];

		snprintf(want, sizeof(want), "\"port\":0,\"rx_pkts\":2,\"flooded\":0,\"tx_pkts\":1,\"tx_drop\":0,"
			 "\"tx_busy\":0,\"tx_queue\":[%s],\"rx_queue\":[1,1]}",
			 fab_queue_of(&sw, 0, &s, &d, 4, IPPROTO_UDP, 1, 4792) ? "0,1" : "1,0");
		assert_non_null(strstr(out, want));
	}
	assert_non_null(strstr(out, "\"port\":1,\"rx_pkts\":1,\"flooded\":1,\"tx_pkts\":1,\"tx_drop\":0,"
				    "\"tx_busy\":0,\"tx_queue\":[1,1],\"rx_queue\":[1,0]}"));
	assert_non_null(strstr(out, "\"queues\":2"));
	assert_int_equal(fab_command(&sw, "stats", 0, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "1    tx             1            1\n"));
	assert_int_equal(fab_command(&sw, "reset", 0, out, sizeof(out)), 0);
	assert_int_equal(sw.port[1].tx_queue[1], 0);
	assert_int_equal(sw.nsteer[1], 1);	/* reset clears counters, not rules */
	/* One queue: the text stats are as they always were, no queue table. */
	fab_switch_free(&sw);
	setup_q(&sw, &t, 1);
	assert_int_equal(fab_command(&sw, "stats", 0, out, sizeof(out)), 0);
	assert_null(strstr(out, " q0"));
	assert_int_equal(fab_command(&sw, "steer 1 4792 1", 0, out, sizeof(out)), -EINVAL);
	fab_switch_free(&sw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_spreads_source_ports),
		cmocka_unit_test(test_learning_and_flooding),
		cmocka_unit_test(test_rate_and_delay),
		cmocka_unit_test(test_tail_drop_and_full_ring),
		cmocka_unit_test(test_ecn_marks_keep_checksum),
		cmocka_unit_test(test_down_pin_loss_dup),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_rss_toeplitz_vectors),
		cmocka_unit_test(test_rss_spreads_flows),
		cmocka_unit_test(test_steering_rules),
		cmocka_unit_test(test_queue_of_the_rest),
		cmocka_unit_test(test_hairpin),
		cmocka_unit_test(test_queue_stats),
	};

	return cmocka_run_group_tests_name("fabric switch", tests, NULL, NULL);
}
