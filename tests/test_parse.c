// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every validation rule of the shared parser (include/mroce/parse.h), the
 * same code the XDP program runs, on crafted frames.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../tests/fixtures.h"
#include "../tests/malformed.h"

static const int families[] = { AF_INET, AF_INET6 };

static int parse(const struct fx_frame *f, int len, struct mroce_pkt *pkt)
{
	return mroce_parse(f->buf, f->buf + len, MROCE_DEFAULT_PORT, pkt);
}

static void test_valid_every_opcode(void **state)
{
	(void)state;
	for (size_t fi = 0; fi < 2; fi++) {
		for (size_t i = 0; i < FX_NOPCODES; i++) {
			struct fx_frame f;
			struct mroce_pkt pkt;
			struct mroce_hdr want, got;

			fx_hdr(&want, fx_opcodes[i], FX_PSN + (__u32)i);
			assert_int_equal(fx_build_hdr(&f, families[fi], &want), 0);
			assert_int_equal(parse(&f, f.len, &pkt), MROCE_STAT_RX);
			assert_int_equal(pkt.ip_ver, families[fi] == AF_INET ? 4 : 6);
			assert_int_equal(pkt.ecn, 2);
			assert_int_equal(pkt.frame_len, f.len);
			assert_int_equal(pkt.payload_len, want.payload_len);
			mroce_hdr_decode(&pkt, &got);
			assert_memory_equal(&got, &want, sizeof(got));
			if (want.payload_len)
				assert_int_equal(((const __u8 *)pkt.payload)[5], (__u8)(want.psn * 7 + 5));
		}
	}
}

/*
 * A frame cut anywhere: before the UDP header is whole nobody can tell it is
 * MetaRoCE, so it goes to the kernel; from there on it is a truncated MetaRoCE
 * packet and is dropped as such.
 */
static void test_truncated_at_every_byte(void **state)
{
	(void)state;
	for (size_t fi = 0; fi < 2; fi++) {
		for (size_t i = 0; i < FX_NOPCODES; i++) {
			struct fx_frame f;
			struct mroce_pkt pkt;
			int udp_end;

			assert_int_equal(fx_build(&f, families[fi], fx_opcodes[i], FX_PSN), 0);
			udp_end = fx_l4_off(&f) + (int)sizeof(struct udphdr);
			for (int cut = 0; cut < f.len; cut++) {
				int want = cut < udp_end ? MROCE_STAT_PASS : MROCE_STAT_TRUNCATED;

				if (parse(&f, cut, &pkt) != want)
					fail_msg("family %d opcode %#x cut at %d: got %d want %d",
						 families[fi], fx_opcodes[i], cut, parse(&f, cut, &pkt), want);
			}
		}
	}
}

static void test_malformed_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < FX_NMALFORMED; i++) {
		struct fx_frame f;
		struct mroce_pkt pkt;
		int got;

		assert_int_equal(fx_build(&f, fx_malformed[i].family, fx_malformed[i].opcode, FX_PSN), 0);
		fx_malformed[i].mutate(&f);
		got = parse(&f, f.len, &pkt);
		if (got != fx_malformed[i].want)
			fail_msg("%s: got %s, want %s", fx_malformed[i].name, mroce_stat_name(got),
				 mroce_stat_name(fx_malformed[i].want));
	}
}

static void test_other_traffic_passes(void **state)
{
	(void)state;
	for (int k = 0; k < FX_OTHER_MAX; k++) {
		struct fx_frame f;
		struct mroce_pkt pkt;

		fx_other(&f, (enum fx_other)k);
		assert_int_equal(parse(&f, f.len, &pkt), MROCE_STAT_PASS);
	}
}

static void test_configured_port(void **state)
{
	struct fx_frame f;
	struct mroce_pkt pkt;

	(void)state;
	assert_int_equal(fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN), 0);
	fx_udp(&f)->dest = htons(5000);
	assert_int_equal(mroce_parse(f.buf, f.buf + f.len, 5000, &pkt), MROCE_STAT_RX);
	assert_int_equal(mroce_parse(f.buf, f.buf + f.len, MROCE_DEFAULT_PORT, &pkt), MROCE_STAT_PASS);
}

/* Zero-length message: one packet, first and last, no payload. */
static void test_zero_length_message(void **state)
{
	struct mroce_hdr h;
	struct fx_frame f;
	struct mroce_pkt pkt;

	(void)state;
	fx_hdr(&h, MROCE_OP_WRITE_IMM, FX_PSN);
	h.payload_len = 0;
	h.msg_len = 0;
	h.offset = 0;
	h.flags = MROCE_F_FIRST | MROCE_F_LAST;
	assert_int_equal(fx_build_hdr(&f, AF_INET, &h), 0);
	assert_int_equal(parse(&f, f.len, &pkt), MROCE_STAT_RX);
	assert_int_equal(pkt.payload_len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_every_opcode),
		cmocka_unit_test(test_truncated_at_every_byte),
		cmocka_unit_test(test_malformed_table),
		cmocka_unit_test(test_other_traffic_passes),
		cmocka_unit_test(test_configured_port),
		cmocka_unit_test(test_zero_length_message),
	};

	return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
