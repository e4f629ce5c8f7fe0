// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Header encode/decode round trips, frame building and checksums, error texts. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../tests/fixtures.h"
#include "../lib/engine.h"

static __u64 rnd64(void)
{
	return (__u64)rand() << 42 ^ (__u64)rand() << 21 ^ (__u64)rand();
}

/* Random field values, shaped to be valid for the opcode. */
static void random_hdr(struct mroce_hdr *h, __u8 opcode)
{
	int layout = mroce_op_layout(opcode);

	memset(h, 0, sizeof(*h));
	h->opcode = opcode;
	h->path = (__u8)rand();
	h->dqpn = (__u32)rnd64();
	h->psn = (__u32)rnd64();
	h->msn = (__u32)rnd64();
	h->token = rnd64();
	h->ts = (__u32)rnd64();
	h->pseq = (__u16)rand();
	if (layout & MROCE_EXT_RETH) {
		h->raddr = rnd64();
		h->rkey = (__u32)rnd64();
	}
	if (layout & (MROCE_EXT_DETH)) {
		h->msg_len = (__u32)rnd64();
		h->offset = (__u32)rnd64();
	}
	if (layout & MROCE_EXT_PAYLOAD)
		h->payload_len = (__u32)(rand() % 1400);
	if (layout & MROCE_EXT_IMM)
		h->imm = (__u32)rnd64();
	if (layout & MROCE_EXT_RREQ)
		h->rd_len = (__u32)rnd64();
	if (layout & MROCE_EXT_AETH) {
		h->cum_psn = (__u32)rnd64();
		h->ts_echo = (__u32)rnd64();
		h->sack[0] = rnd64();
		h->sack[1] = rnd64();
		h->ecn_ce = (__u16)rand();
		h->ecn_pkts = (__u16)rand();
		h->ack_msn = (__u32)rnd64();
		h->rwnd = (__u32)rnd64();
		h->rate_kbps = (__u32)rnd64();
		h->pflags = (__u8)rand();
		h->ppath = (__u8)rand();
		h->ppsn_next = (__u16)rand();
		for (int i = 0; i < MROCE_PSACK_WORDS; i++)
			h->psack[i] = rnd64();
	}
	if (layout & MROCE_EXT_NAK) {
		h->nak_psn = (__u32)rnd64();
		h->nak_msn = (__u32)rnd64();
		h->nak_code = (__u8)rand();
	}
	h->flags = (__u16)(rand() & MROCE_F_KNOWN);
}

/* Headers only (parse rules aside): encode then decode gives back every field. */
static void test_hdr_round_trip(void **state)
{
	(void)state;
	srand(7);
	for (int n = 0; n < 2000; n++) {
		__u8 buf[MROCE_HDR_MAX];
		struct mroce_hdr in, out;
		struct mroce_pkt pkt = {};
		int len, layout;
		__u8 *p;

		random_hdr(&in, fx_opcodes[n % FX_NOPCODES]);
		len = mroce_hdr_encode(buf, sizeof(buf), &in);
		layout = mroce_op_layout(in.opcode);
		assert_int_equal(len, sizeof(struct mroce_bth) + mroce_ext_len(layout));
		assert_int_equal(buf[0], MROCE_VERSION);
		assert_int_equal(buf[1], in.opcode);
		p = buf + sizeof(struct mroce_bth);
		pkt.bth = (const void *)buf;
		if (layout & MROCE_EXT_RETH) { pkt.reth = (const void *)p; p += sizeof(*pkt.reth); }
		if (layout & MROCE_EXT_DETH) { pkt.deth = (const void *)p; p += sizeof(*pkt.deth); }
		if (layout & MROCE_EXT_IMM) { pkt.imm = (const void *)p; p += sizeof(*pkt.imm); }
		if (layout & MROCE_EXT_RREQ) { pkt.rreq = (const void *)p; p += sizeof(*pkt.rreq); }
		if (layout & MROCE_EXT_AETH) { pkt.aeth = (const void *)p; p += sizeof(*pkt.aeth); }
		if (layout & MROCE_EXT_NAK) { pkt.nak = (const void *)p; p += sizeof(*pkt.nak); }
		assert_int_equal(p - buf, len);
		mroce_hdr_decode(&pkt, &out);
		assert_memory_equal(&in, &out, sizeof(in));
	}
}

/* Fields land in network byte order where the protocol header says. */
static void test_wire_layout(void **state)
{
	struct mroce_hdr h;
	__u8 buf[MROCE_HDR_MAX];

	(void)state;
	fx_hdr(&h, MROCE_OP_WRITE, 0x01020304);
	h.dqpn = 0x0a0b0c0d;
	h.token = 0x1112131415161718ULL;
	h.raddr = 0x2122232425262728ULL;
	assert_int_equal(mroce_hdr_encode(buf, sizeof(buf), &h), 32 + 16 + 12);
	assert_int_equal(buf[4], 0x0a);
	assert_int_equal(buf[7], 0x0d);
	assert_int_equal(buf[8], 0x01);
	assert_int_equal(buf[11], 0x04);
	assert_int_equal(buf[16], 0x11);
	assert_int_equal(buf[23], 0x18);
	assert_int_equal(buf[28], 0);
	assert_int_equal(buf[29], FX_PAYLOAD);
	assert_int_equal(buf[32], 0x21);
	assert_int_equal(buf[39], 0x28);
}

static void test_encode_errors(void **state)
{
	struct mroce_hdr h;
	__u8 buf[MROCE_HDR_MAX];

	(void)state;
	fx_hdr(&h, MROCE_OP_WRITE, 1);
	h.opcode = 0x20;
	assert_int_equal(mroce_hdr_encode(buf, sizeof(buf), &h), -EINVAL);
	fx_hdr(&h, MROCE_OP_WRITE, 1);
	assert_int_equal(mroce_hdr_encode(buf, 40, &h), -ENOSPC);
	fx_hdr(&h, MROCE_OP_ACK, 1);
	h.payload_len = 1;
	assert_int_equal(mroce_hdr_encode(buf, sizeof(buf), &h), -EINVAL);
	assert_int_equal(mroce_hdr_encode(NULL, sizeof(buf), &h), -EINVAL);
}

static __u32 sum16(const __u8 *p, size_t len, __u32 sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (__u32)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (__u32)p[len - 1] << 8;
	return sum;
}

static __u16 fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

static void test_frame_checksums(void **state)
{
	(void)state;
	for (int fam = 0; fam < 2; fam++) {
		for (size_t i = 0; i < FX_NOPCODES + 5; i++) {
			struct fx_frame f;
			struct mroce_hdr h;
			int l4, udp_len;
			__u32 sum;

			/* every opcode, then odd and even payload lengths (1 .. 1900 bytes) */
			fx_hdr(&h, i < FX_NOPCODES ? fx_opcodes[i] : MROCE_OP_WRITE, 77);
			if (i >= FX_NOPCODES) {
				static const __u32 odd[] = { 1, 63, 1001, 1024, 1900 };

				h.payload_len = odd[i - FX_NOPCODES];
				h.msg_len = 4000;
			}
			assert_int_equal(fx_build_hdr(&f, fam ? AF_INET6 : AF_INET, &h), 0);
			l4 = fx_l4_off(&f);
			udp_len = f.len - l4;
			if (!fam) {
				assert_int_equal(fold(sum16(f.buf + 14, 20, 0)), 0xffff);
				sum = sum16(f.buf + 14 + 12, 8, 0);
			} else {
				sum = sum16(f.buf + 14 + 8, 32, 0);
			}
			sum += IPPROTO_UDP + (__u32)udp_len;
			assert_int_equal(fold(sum16(f.buf + l4, (size_t)udp_len, sum)), 0xffff);
		}
	}
}

/*
 * A frame sent with its payload elsewhere (the transmit pool) carries the
 * same UDP checksum as the frame built whole: every opcode with a payload,
 * both families, lengths odd and even up to a jumbo frame's, bytes that
 * carry a lot (0xff runs) and that do not.
 */
static void test_frame_checksum_apart(void **state)
{
	static __u8 whole[MROCE_FRAME_MAX], apart[MROCE_FRAME_MAX], payload[9000];
	static const __u32 lens[] = { 1, 2, 3, 63, 64, 255, 256, 1001, 3456, 4097, 8999, 9000 };

	(void)state;
	for (int fam = 0; fam < 2; fam++) {
		struct mroce_route rt;

		fx_route(&rt, fam ? AF_INET6 : AF_INET);
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			for (int fill = 0; fill < 2; fill++) {
				struct mroce_hdr h;
				int n, hdr;

				for (__u32 k = 0; k < lens[i]; k++)
					payload[k] = fill ? 0xff : (__u8)(k * 37 + i);
				fx_hdr(&h, i & 1 ? MROCE_OP_SEND : MROCE_OP_WRITE, 1000 + (__u32)i);
				h.payload_len = lens[i];
				h.msg_len = 9000;
				h.offset = 0;
				n = mroce_frame_build(whole, sizeof(whole), &rt, &h, payload);
				assert_true(n > 0);
				hdr = mroce_frame_hdrs(apart, sizeof(apart), &rt, &h);
				assert_int_equal(hdr + (int)lens[i], n);
				mroce_frame_finish_ref(apart, (__u32)hdr, payload, lens[i], rt.family);
				/* headers (with the UDP checksum) equal, byte for byte */
				assert_memory_equal(whole, apart, (size_t)hdr);
			}
		}
	}
}

static void test_frame_errors(void **state)
{
	struct mroce_route rt;
	struct mroce_hdr h;
	__u8 buf[128];

	(void)state;
	fx_route(&rt, AF_INET);
	fx_hdr(&h, MROCE_OP_WRITE, 1);
	assert_int_equal(mroce_frame_build(buf, sizeof(buf), &rt, &h, buf), -ENOSPC);
	assert_int_equal(mroce_frame_build(buf, sizeof(buf), &rt, &h, NULL), -EINVAL);
	rt.family = AF_UNIX;
	assert_int_equal(mroce_frame_build(buf, sizeof(buf), &rt, &h, buf), -EINVAL);
	assert_int_equal(mroce_l2l4_len(AF_INET), 42);
	assert_int_equal(mroce_l2l4_len(AF_INET6), 62);
}

static void test_strerror_and_names(void **state)
{
	char buf[128];

	(void)state;
	assert_int_equal(mroce_strerror(-MROCE_ERR_FOREIGN_PROG, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "another XDP program"));
	assert_int_equal(mroce_strerror(MROCE_ERR_NOT_ATTACHED, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "not attached"));
	assert_int_equal(mroce_strerror(-ENODEV, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "No such device");
	assert_int_equal(mroce_strerror(-EPERM, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "CAPABILITIES"));
	/* each capability code names its capability, and only that one */
	{
		static const struct { int err; const char *cap; } caps[] = {
			{ MROCE_ERR_CAP_NET_ADMIN, "CAP_NET_ADMIN" }, { MROCE_ERR_CAP_BPF, "CAP_BPF" },
			{ MROCE_ERR_CAP_PERFMON, "CAP_PERFMON" },
			{ MROCE_ERR_CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
			{ MROCE_ERR_CAP_NET_RAW, "CAP_NET_RAW" }, { MROCE_ERR_MEMLOCK, "CAP_IPC_LOCK" },
			{ MROCE_ERR_CAP_SYS_PTRACE, "CAP_DAC_READ_SEARCH" },
		};

		for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
			assert_int_equal(mroce_strerror(-caps[i].err, buf, sizeof(buf)), 0);
			assert_non_null(strstr(buf, caps[i].cap));
			for (size_t j = 0; j < sizeof(caps) / sizeof(caps[0]); j++)
				if (j != i)
					assert_null(strstr(buf, caps[j].cap));
			assert_null(strstr(buf, "root"));
		}
	}
	/* a server's reply naming another host: its own code, and no word of root */
	assert_int_equal(mroce_strerror(-MROCE_ERR_PEER_ADDR, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "address other than the connection's"));
	assert_null(strstr(buf, "root"));
	assert_int_equal(mroce_strerror(-ENODEV, NULL, 0), -EINVAL);
	for (int s = 0; s < MROCE_STAT_MAX; s++) {
		assert_non_null(mroce_stat_name(s));
		assert_non_null(mroce_stat_desc(s));
		for (int t = 0; t < s; t++)
			assert_string_not_equal(mroce_stat_name(s), mroce_stat_name(t));
	}
	assert_string_equal(mroce_stat_name(MROCE_STAT_DUPLICATE), "duplicate");
	assert_null(mroce_stat_name(MROCE_STAT_MAX));
	assert_null(mroce_stat_name(-1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hdr_round_trip),
		cmocka_unit_test(test_wire_layout),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_frame_checksums),
		cmocka_unit_test(test_frame_checksum_apart),
		cmocka_unit_test(test_frame_errors),
		cmocka_unit_test(test_strerror_and_names),
	};

	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
