// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The UDP checksum summed while the payload is copied (wire.c
 * mroce_csum_copy, place.c mroce_sg_copy_sum, tx.c): the frame it gives
 * is byte for byte the frame of the two-pass way (copy, then
 * mroce_frame_finish over it all), for IPv4 and IPv6, every payload length
 * from 0 to a jumbo frame's, payloads split over SG entries of odd and even
 * lengths at odd and even offsets, from unaligned sources; the receiver's
 * check (mroce_frame_csum_ok) accepts it, and rejects it with any one bit
 * of the payload flipped.
 */
#include <stdarg.h>
#include "../lib/eng_int.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "sim.h"

#define PAYLOAD_MAX	9000

static __u64 rng = 0x9e3779b97f4a7c15ull;

static __u32 rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (__u32)((rng * 2685821657736338717ull) >> 32);
}

static void route_of(struct mroce_route *rt, int family)
{
	memset(rt, 0, sizeof(*rt));
	rt->family = family;
	memcpy(rt->src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(rt->dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	if (family == AF_INET) {
		rt->src.v4.s_addr = mroce_be32(0xc6120001);	/* 198.18.0.1 */
		rt->dst.v4.s_addr = mroce_be32(0xc6120002);
	} else {
		rt->src.v6.s6_addr[0] = 0xfd;
		rt->src.v6.s6_addr[15] = 1;
		rt->dst.v6.s6_addr[0] = 0xfd;
		rt->dst.v6.s6_addr[15] = 2;
	}
	rt->sport = 49152 + 7;
	rt->dport = MROCE_DEFAULT_PORT;
}

/* A WRITE's headers for len payload bytes into buf: their length. */
static int headers(__u8 *buf, size_t size, const struct mroce_route *rt, __u32 len)
{
	struct mroce_hdr h = { .opcode = MROCE_OP_WRITE, .flags = MROCE_F_FIRST | MROCE_F_LAST,
			       .dqpn = 5, .psn = 77, .token = 0x1122334455667788ull, .ts = 12345,
			       .raddr = 0x10000, .rkey = 9, .msg_len = len,
			       .payload_len = (__u16)len };
	int hdr = mroce_frame_hdrs(buf, size, rt, &h);

	assert_true(hdr > 0);
	return hdr;
}

/* Both ways for one payload, cut into n pieces (n 1: a linear source): the frames agree. */
static void one(int family, const __u8 *src, __u32 len, int n)
{
	static __u8 a[PAYLOAD_MAX + 256], b[PAYLOAD_MAX + 256];
	struct mroce_route rt;
	struct mroce_pkt pkt;
	__u32 at = 0, sum = 0;
	int hdr;

	route_of(&rt, family);
	hdr = headers(a, sizeof(a), &rt, len);
	memcpy(a + hdr, src, len);
	mroce_frame_finish(a, (__u32)hdr + len, family);

	assert_int_equal(headers(b, sizeof(b), &rt, len), hdr);
	memset(b + hdr, 0xee, len);
	for (int i = 0; i < n; i++) {
		__u32 piece = i == n - 1 ? len - at : (len - at) ? rnd() % (len - at + 1) : 0;

		sum += mroce_csum_shift(mroce_csum_copy(b + hdr + at, src + at, piece), at);
		at += piece;
	}
	assert_int_equal(at, len);
	mroce_frame_finish_sum(b, (__u32)hdr, (__u32)hdr + len, family, sum);
	assert_memory_equal(a, b, (size_t)hdr + len);

	assert_int_equal(mroce_parse(b, b + hdr + len, MROCE_DEFAULT_PORT, &pkt), MROCE_STAT_RX);
	assert_true(mroce_frame_csum_ok(b, &pkt));
	if (len) {
		__u32 bit = rnd() % (len * 8);

		b[hdr + bit / 8] ^= (__u8)(1u << (bit % 8));
		assert_false(mroce_frame_csum_ok(b, &pkt));
	}
}

static void test_fused_frame_equals_two_pass(void **state)
{
	__u8 *src = malloc(PAYLOAD_MAX + 64);
	int frames = 0;

	(void)state;
	for (int i = 0; i < PAYLOAD_MAX + 64; i++)
		src[i] = (__u8)rnd();
	for (int family = 0; family < 2; family++) {
		int fam = family ? AF_INET6 : AF_INET;

		/* every length up to 300, linear and in pieces, from every source alignment */
		for (__u32 len = 0; len <= 300; len++)
			for (int off = 0; off < 8; off++) {
				one(fam, src + off, len, 1);
				one(fam, src + off, len, 1 + (int)(rnd() % 5));
				frames += 2;
			}
		/* then the sizes frames have: up to the MTU 3498 frame's payload, and a jumbo one's */
		for (int k = 0; k < 2000; k++) {
			__u32 len = rnd() % (PAYLOAD_MAX + 1);

			one(fam, src + rnd() % 64, len, 1 + (int)(rnd() % 6));
			frames++;
		}
	}
	printf("  %d frames, IPv4 and IPv6, 0 to %d payload bytes in 1 to 6 pieces: "
	       "the same bytes as copy-then-sum, each accepted, each with a bit flipped refused\n",
	       frames, PAYLOAD_MAX);
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fused_frame_equals_two_pass),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
