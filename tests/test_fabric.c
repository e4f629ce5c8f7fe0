// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fabric emulator's switch without a network: ECMP hashing, learning
 * and flooding, serialisation + delay timing, tail drop, ECN marking with
 * a still-valid IP checksum, path down, pinning, loss and duplication
 * dice, and the control commands.
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
#include <linux/udp.h>

#include "../selftests/fabric/switch.h"

#define MAXTX 64

typedef struct ethhdr	eth_u __attribute__((aligned(1)));
typedef struct iphdr	ip_u __attribute__((aligned(1)));
typedef struct udphdr	udp_u __attribute__((aligned(1)));

struct txlog {
	int	n;
	__u32	port[MAXTX];
	__u8	frame[MAXTX][256];
	__u32	len[MAXTX];
	bool	full;		/* pretend the ports' rings are full */
};

static int tx(void *ctx, __u32 port, const void *frame, __u32 len)
{
	struct txlog *t = ctx;

	if (t->full)
		return -EAGAIN;
	assert_true(t->n < MAXTX);
	t->port[t->n] = port;
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

/* An IPv4/UDP frame of len bytes from host s to host d. */
static __u32 frame(__u8 *f, __u32 len, int s, int d, __u16 sport, __u8 tos)
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
	udp->dest = htons(4792);
	return len;
}

/* A switch of 4 ports and 4 paths whose hosts 0 and 1 have been learnt. */
static void setup(struct fab_switch *sw, struct txlog *t)
{
	__u8 f[128];

	memset(t, 0, sizeof(*t));
	assert_int_equal(fab_switch_init(sw, 4, 4, 64, 7, tx, t), 0);
	/* First frames: unknown destinations are flooded; sources are learnt. */
	fab_ingress(sw, 0, f, frame(f, 100, 0, 1, 1, 0), 0);
	fab_ingress(sw, 1, f, frame(f, 100, 1, 0, 1, 0), 0);
	assert_int_equal(sw->port[1].flooded + sw->port[2].flooded + sw->port[3].flooded, 3);
	t->n = 0;
	fab_egress(sw, ~0ULL >> 1);
	t->n = 0;
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
	fab_ingress(&sw, 0, f, frame(f, 100, 0, 3, 1, 0), 0);
	assert_int_equal(t.n, 3);
	for (int i = 0; i < 3; i++)
		assert_int_not_equal(t.port[i], 0);
	/* To host 1, learnt: one path, one copy, on port 1 only. */
	t.n = 0;
	fab_ingress(&sw, 0, f, frame(f, 100, 0, 1, 9, 0), 10);
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
		fab_ingress(&sw, 0, f, frame(f, 1000, 0, 1, 77, 0), 1000000);
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
		fab_ingress(&sw, 0, f, frame(f, 1500, 0, 1, 5, 0), 0);
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
	fab_ingress(&sw, 0, f, frame(f, 1000, 0, 1, 6, 2), 0);	/* ECT(0), backlog 0 */
	fab_ingress(&sw, 0, f, frame(f, 1000, 0, 1, 6, 2), 0);	/* backlog 1000 */
	fab_ingress(&sw, 0, f, frame(f, 1000, 0, 1, 6, 2), 0);	/* backlog 2000: mark */
	fab_ingress(&sw, 0, f, frame(f, 1000, 0, 1, 6, 0), 0);	/* not ECN-capable */
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
	fab_ingress(&sw, 0, f, frame(f, 200, 0, 1, 8, 0), 0);
	assert_int_equal(sw.st[p].drop_down, 1);
	/* Pinning traffic for host 1 onto another path bypasses the hash. */
	other = p == 3 ? 2 : 3;
	before = sw.st[other].fwd_pkts;
	snprintf(cmd, sizeof(cmd), "pin 1 %u", other);
	assert_int_equal(fab_command(&sw, cmd, 0, out, sizeof(out)), 0);
	fab_ingress(&sw, 0, f, frame(f, 200, 0, 1, 8, 0), 0);
	fab_egress(&sw, 1);
	assert_int_equal(sw.st[p].drop_down, 1);
	assert_int_equal(sw.st[other].fwd_pkts, before + 1);
	/* Certain loss drops everything; certain duplication doubles everything. */
	assert_int_equal(fab_command(&sw, "pin 1 none", 0, out, sizeof(out)), 0);
	assert_int_equal(fab_command(&sw, "path all up loss=100%", 0, out, sizeof(out)), 0);
	for (int i = 0; i < 10; i++)
		fab_ingress(&sw, 0, f, frame(f, 200, 0, 1, (__u16)(100 + i), 0), 0);
	assert_int_equal(sw.st[0].drop_loss + sw.st[1].drop_loss + sw.st[2].drop_loss + sw.st[3].drop_loss, 10);
	assert_int_equal(fab_command(&sw, "path all loss=0 dup=1", 0, out, sizeof(out)), 0);
	t.n = 0;
	for (int i = 0; i < 10; i++)
		fab_ingress(&sw, 0, f, frame(f, 200, 0, 1, (__u16)(100 + i), 0), 0);
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
	};

	return cmocka_run_group_tests_name("fabric switch", tests, NULL, NULL);
}
