// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The XDP program itself, run by the kernel on crafted frames through
 * BPF_PROG_TEST_RUN: for each frame the verdict, and exactly which counter
 * moved. Needs root; runs in a private network namespace so the AF_XDP
 * socket it binds on lo is its own.
 *
 * The program is loaded as libmroce loads it: placement in XDP switched on
 * only where the kernel lets XDP call bpf_xdp_adjust_meta (the library's
 * probe says). Where it does not, the placement tests skip with that
 * reason and test_place_off checks what the program does instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "../tests/fixtures.h"
#include "../tests/malformed.h"
#include "../lib/engine.h"	/* mroce_frame_csum_ok(): what user space checks */
#include "../lib/internal.h"
#include "mroce.skel.h"

#define UMEM_FRAMES 64
#define FRAME_SIZE  4096

struct env {
	struct mroce_bpf	*skel;
	struct xsk_umem		*umem;
	struct xsk_socket	*xsk;
	struct xsk_ring_prod	fq;
	struct xsk_ring_cons	cq, rx;
	struct xsk_ring_prod	tx;
	void			*umem_area;
	int			ncpus;
	int			prog_fd;
	int			flows_fd;
	int			stats_fd;
	int			cfg_fd;
	int			xsks_fd;
	int			retx_ts_fd;
	int			queues_fd;
	__u8			*dm;		/* the device memory pool, mmap'ed */
	size_t			dm_len;
	__u32			*dm_own;
	struct mroce_dmr	*dmr;
	bool			places;		/* placement in XDP on (the kernel allows it) */
	__u32			meta_len;	/* metadata in front of a redirected frame */
};

static struct env E;

/* Device memory in these tests: one region across the end of chunk 0 into chunk 1. */
#define DM_COOKIE	0x5eed5eed5eed5eedULL
#define DM_IOVA		0x7f0000000000ULL
#define DM_LEN		(128u << 10)
#define DM_OFF		(MROCE_DM_CHUNK - (64u << 10))
#define DM_RKEY		0x1234a007u	/* table index 7 */
#define DM_NOWRITE_RKEY	0x9876b009u	/* a read-only region in chunk 2 */
#define DM_SENTINEL	0xa5

static int lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		err = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		err = -errno;
	close(fd);
	return err;
}

static int setup(void **state)
{
	struct xsk_socket_config xcfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	__u32 zero = 0;
	int fd, err;

	(void)state;
	if (unshare(CLONE_NEWNET) || lo_up()) {
		fprintf(stderr, "FAIL: cannot create a private network namespace: %s\n", strerror(errno));
		return -1;
	}
	E.places = mroce_xdp_place_probe(true) == 1;
	E.meta_len = E.places ? sizeof(struct mroce_xdp_meta) : 0;
	E.skel = mroce_bpf__open();
	if (!E.skel) {
		fprintf(stderr, "FAIL: opening the XDP object: %s\n", strerror(errno));
		return -1;
	}
	E.skel->rodata->mroce_xdp_meta_ok = E.places;
	err = mroce_bpf__load(E.skel);
	if (err) {
		fprintf(stderr, "FAIL: loading the XDP program (placement %s): %s\n",
			E.places ? "on" : "off", strerror(-err));
		return -1;
	}
	if (!E.places)
		printf("    this kernel refuses bpf_xdp_adjust_meta to XDP programs: placement in XDP "
		       "is off, user space places every payload\n");
	E.prog_fd = bpf_program__fd(E.skel->progs.mroce_xdp);
	E.flows_fd = bpf_map__fd(E.skel->maps.mroce_flows);
	E.stats_fd = bpf_map__fd(E.skel->maps.mroce_stats);
	E.cfg_fd = bpf_map__fd(E.skel->maps.mroce_cfg);
	E.xsks_fd = bpf_map__fd(E.skel->maps.mroce_xsks);
	E.retx_ts_fd = bpf_map__fd(E.skel->maps.mroce_retx_ts);
	E.queues_fd = bpf_map__fd(E.skel->maps.mroce_queues);
	E.ncpus = libbpf_num_possible_cpus();
	E.dm_len = (size_t)bpf_map__max_entries(E.skel->maps.mroce_dm) * MROCE_DM_CHUNK;
	E.dm = mmap(NULL, E.dm_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    bpf_map__fd(E.skel->maps.mroce_dm), 0);
	E.dm_own = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			bpf_map__fd(E.skel->maps.mroce_dm_own), 0);
	E.dmr = mmap(NULL, sizeof(struct mroce_dmr) * MROCE_DMR_MAX, PROT_READ | PROT_WRITE, MAP_SHARED,
		     bpf_map__fd(E.skel->maps.mroce_dmr), 0);
	if (E.dm == MAP_FAILED || E.dm_own == MAP_FAILED || E.dmr == MAP_FAILED) {
		fprintf(stderr, "FAIL: mapping the device memory maps: %s\n", strerror(errno));
		return -1;
	}

	E.umem_area = mmap(NULL, UMEM_FRAMES * FRAME_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (E.umem_area == MAP_FAILED)
		return -1;
	err = xsk_umem__create(&E.umem, E.umem_area, UMEM_FRAMES * FRAME_SIZE, &E.fq, &E.cq, NULL);
	if (!err)
		err = xsk_socket__create(&E.xsk, "lo", 0, E.umem, &E.rx, &E.tx, &xcfg);
	if (err) {
		fprintf(stderr, "FAIL: AF_XDP socket on lo: %s\n", strerror(-err));
		return -1;
	}
	fd = xsk_socket__fd(E.xsk);
	if (bpf_map_update_elem(E.xsks_fd, &zero, &fd, BPF_ANY))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (E.xsk)
		xsk_socket__delete(E.xsk);
	if (E.umem)
		xsk_umem__delete(E.umem);
	if (E.umem_area && E.umem_area != MAP_FAILED)
		munmap(E.umem_area, UMEM_FRAMES * FRAME_SIZE);
	if (E.dm && E.dm != MAP_FAILED)
		munmap(E.dm, E.dm_len);
	if (E.dm_own && E.dm_own != MAP_FAILED)
		munmap(E.dm_own, 4096);
	if (E.dmr && E.dmr != MAP_FAILED)
		munmap(E.dmr, sizeof(struct mroce_dmr) * MROCE_DMR_MAX);
	mroce_bpf__destroy(E.skel);
	return 0;
}

static void set_flow(__u32 qpn, __u64 token, __u32 base, __u32 flags)
{
	struct mroce_flow f = {};
	struct mroce_flow_xdp never = {};

	mroce_rxwin_reset(&f, base);
	f.token = mroce_be64(token);
	f.flags = flags;
	f.pd_cookie = DM_COOKIE;
	f.state = MROCE_FLOW_ACTIVE;
	assert_int_equal(bpf_map_update_elem(E.flows_fd, &qpn, &f, BPF_ANY), 0);
	/* A new flow: nothing went up on it to be answered yet. */
	assert_int_equal(bpf_map_update_elem(E.retx_ts_fd, &qpn, &never, BPF_ANY), 0);
}

static void clear_flow(__u32 qpn)
{
	struct mroce_flow f = {};

	assert_int_equal(bpf_map_update_elem(E.flows_fd, &qpn, &f, BPF_ANY), 0);
}

/* The stats map: one entry, a struct mroce_dp_counters per CPU (counter s = word s). */
static void read_stats(__u64 out[MROCE_STAT_MAX])
{
	__u64 percpu[E.ncpus][MROCE_STAT_MAX];
	__u32 zero = 0;

	assert_int_equal(bpf_map_lookup_elem(E.stats_fd, &zero, percpu), 0);
	for (__u32 s = 0; s < MROCE_STAT_MAX; s++) {
		out[s] = 0;
		for (int c = 0; c < E.ncpus; c++)
			out[s] += percpu[c][s];
	}
}

/*
 * Run one frame; check the verdict, that exactly the expected counter moved
 * by one (RX also adds the frame's bytes), and that a passed frame is
 * handed on byte for byte.
 */
static void expect(const char *what, const void *frame, int len, int verdict, int stat)
{
	__u8 out[FX_FRAME_MAX + 256];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (__u32)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	__u64 before[MROCE_STAT_MAX], after[MROCE_STAT_MAX];

	read_stats(before);
	if (bpf_prog_test_run_opts(E.prog_fd, &o))
		fail_msg("%s: test run failed: %s", what, strerror(errno));
	read_stats(after);
	if ((int)o.retval != verdict)
		fail_msg("%s: verdict %u, want %d", what, o.retval, verdict);
	for (int s = 0; s < MROCE_STAT_MAX; s++) {
		__u64 want = s == stat ? 1 : 0;

		if (s == MROCE_STAT_RX_BYTES && stat == MROCE_STAT_RX)
			want = (__u64)len;
		if (after[s] - before[s] != want)
			fail_msg("%s: counter %s moved by %llu, want %llu", what, mroce_stat_name(s),
				 (unsigned long long)(after[s] - before[s]), (unsigned long long)want);
	}
	if (verdict == XDP_PASS && (o.data_size_out != (__u32)len || memcmp(out, frame, (size_t)len)))
		fail_msg("%s: passed frame was modified", what);
}

static const int families[] = { AF_INET, AF_INET6 };

static void test_valid_every_opcode(void **state)
{
	(void)state;
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	for (int fi = 0; fi < 2; fi++) {
		for (size_t i = 0; i < FX_NOPCODES; i++) {
			struct fx_frame f;
			char what[64];

			fx_build(&f, families[fi], fx_opcodes[i], FX_PSN + (__u32)i);
			snprintf(what, sizeof(what), "valid opcode %#x over IPv%d", fx_opcodes[i],
				 fi ? 6 : 4);
			expect(what, f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
		}
	}
}

static void test_truncated_at_every_byte(void **state)
{
	(void)state;
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	for (int fi = 0; fi < 2; fi++) {
		for (size_t i = 0; i < FX_NOPCODES; i++) {
			struct fx_frame f;
			int udp_end;

			fx_build(&f, families[fi], fx_opcodes[i], FX_PSN);
			udp_end = fx_l4_off(&f) + (int)sizeof(struct udphdr);
			/* The kernel refuses test frames shorter than an Ethernet header. */
			for (int cut = ETH_HLEN; cut < f.len; cut++) {
				char what[64];

				snprintf(what, sizeof(what), "opcode %#x IPv%d cut at %d", fx_opcodes[i],
					 fi ? 6 : 4, cut);
				if (cut < udp_end)
					expect(what, f.buf, cut, XDP_PASS, MROCE_STAT_PASS);
				else
					expect(what, f.buf, cut, XDP_DROP, MROCE_STAT_TRUNCATED);
			}
		}
	}
}

static void test_malformed(void **state)
{
	(void)state;
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	for (size_t i = 0; i < FX_NMALFORMED; i++) {
		const struct fx_malformed *m = &fx_malformed[i];
		struct fx_frame f;
		int verdict = m->want == MROCE_STAT_PASS ? XDP_PASS :
			      m->want == MROCE_STAT_RX ? XDP_REDIRECT : XDP_DROP;

		fx_build(&f, m->family, m->opcode, FX_PSN);
		m->mutate(&f);
		expect(m->name, f.buf, f.len, verdict, m->want);
	}
}

static void test_other_traffic_passes(void **state)
{
	static const char *const names[FX_OTHER_MAX] = { "ARP", "ICMP", "TCP", "UDP to 4791" };

	(void)state;
	for (int k = 0; k < FX_OTHER_MAX; k++) {
		struct fx_frame f;

		fx_other(&f, (enum fx_other)k);
		expect(names[k], f.buf, f.len, XDP_PASS, MROCE_STAT_PASS);
	}
}

static void placed_retx_dup(struct fx_frame *f, __u32 psn);

static void test_flow_checks(void **state)
{
	struct fx_frame f;
	struct mroce_hdr h;
	struct mroce_flow flow;
	__u32 qpn = FX_QPN;

	(void)state;
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);

	fx_hdr(&h, MROCE_OP_WRITE, FX_PSN);
	h.token ^= 1;
	fx_build_hdr(&f, AF_INET, &h);
	expect("wrong token", f.buf, f.len, XDP_DROP, MROCE_STAT_BAD_TOKEN);

	fx_hdr(&h, MROCE_OP_ACK, FX_PSN);
	h.token = 0;
	fx_build_hdr(&f, AF_INET6, &h);
	expect("ack with zero token", f.buf, f.len, XDP_DROP, MROCE_STAT_BAD_TOKEN);

	for (__u32 q = 0; q < 4; q++) {
		static const __u32 qpns[] = { 0, FX_QPN + 1, MROCE_MAX_QPS, 0xffffffff };

		fx_hdr(&h, MROCE_OP_WRITE, FX_PSN);
		h.dqpn = qpns[q];
		fx_build_hdr(&f, AF_INET, &h);
		expect("unknown qp", f.buf, f.len, XDP_DROP, MROCE_STAT_UNKNOWN_QP);
	}

	/* A placed PSN is a duplicate; so is anything before the window. */
	assert_int_equal(bpf_map_lookup_elem(E.flows_fd, &qpn, &flow), 0);
	mroce_rxwin_mark(&flow, FX_PSN + 5);
	assert_int_equal(bpf_map_update_elem(E.flows_fd, &qpn, &flow, BPF_ANY), 0);
	fx_build(&f, AF_INET, MROCE_OP_SEND, FX_PSN + 5);
	expect("duplicate", f.buf, f.len, XDP_DROP, MROCE_STAT_DUPLICATE);
	fx_hdr(&h, MROCE_OP_SEND, FX_PSN + 5);
	h.flags |= MROCE_F_RETX;
	fx_build_hdr(&f, AF_INET6, &h);
	expect("resent duplicate goes up to be acknowledged", f.buf, f.len, XDP_REDIRECT,
	       MROCE_STAT_DUP_RETX);
	fx_build(&f, AF_INET6, MROCE_OP_READ_REQ, FX_PSN + 4);
	expect("neighbour of duplicate", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN - 1);
	expect("before window", f.buf, f.len, XDP_DROP, MROCE_STAT_DUPLICATE);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN + MROCE_RXWIN_PSNS - 1);
	expect("last in window", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN + MROCE_RXWIN_PSNS);
	expect("beyond window", f.buf, f.len, XDP_DROP, MROCE_STAT_OUT_OF_WINDOW);
	/* ACKs carry no PSN of the receive space: never a duplicate. */
	fx_build(&f, AF_INET, MROCE_OP_ACK, FX_PSN + 5);
	expect("ack", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);

	/* Across 2^32. */
	set_flow(FX_QPN, FX_TOKEN, 0xfffffff0u, 0);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, 0x10);
	expect("window across 2^32", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, 0xffffffe0u);
	expect("behind window across 2^32", f.buf, f.len, XDP_DROP, MROCE_STAT_DUPLICATE);

	/*
	 * Go-back-N: only the next PSN is kept; the first packet past a gap
	 * goes up (not placed) for user space to NACK the gap, the rest of
	 * the interval's die here.
	 */
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, MROCE_FLOW_GO_BACK_N);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN + 1);
	expect("go-back-N gap reported", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_GAP_REPORT);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN + 2);
	expect("go-back-N gap, reported already", f.buf, f.len, XDP_DROP, MROCE_STAT_OUT_OF_ORDER);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN);
	expect("go-back-N next", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
	/* A resent duplicate's interval is its own: the gap's does not hold it back. */
	placed_retx_dup(&f, FX_PSN);
	expect("go-back-N resent duplicate", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_DUP_RETX);
	/* The NACK may be lost: after the interval the gap is reported again. */
	usleep(2 * MROCE_ANSWER_GAP_NS / 1000);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN + 3);
	expect("go-back-N gap reported again", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_GAP_REPORT);

	clear_flow(FX_QPN);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN);
	expect("flow removed", f.buf, f.len, XDP_DROP, MROCE_STAT_UNKNOWN_QP);
}

static void test_no_socket_and_port(void **state)
{
	struct mroce_cfg cfg = { .udp_port = 5000 };
	struct fx_frame f;
	__u32 zero = 0;
	int fd = xsk_socket__fd(E.xsk);

	(void)state;
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	assert_int_equal(bpf_map_delete_elem(E.xsks_fd, &zero), 0);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN);
	expect("no AF_XDP socket", f.buf, f.len, XDP_DROP, MROCE_STAT_NO_XSK);
	assert_int_equal(bpf_map_update_elem(E.xsks_fd, &zero, &fd, BPF_ANY), 0);

	assert_int_equal(bpf_map_update_elem(E.cfg_fd, &zero, &cfg, BPF_ANY), 0);
	expect("default port once reconfigured", f.buf, f.len, XDP_PASS, MROCE_STAT_PASS);
	fx_udp(&f)->dest = htons(5000);
	expect("configured port", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
	cfg.udp_port = 0;
	assert_int_equal(bpf_map_update_elem(E.cfg_fd, &zero, &cfg, BPF_ANY), 0);
	expect("port back to default", f.buf, f.len, XDP_PASS, MROCE_STAT_PASS);
}

/* Queue i as served by device dev_id (0: none), flags MROCE_QUEUE_*. */
static void set_queue(__u32 i, __u32 dev_id, __u32 flags)
{
	struct mroce_queue q = { .dev_id = dev_id, .owner_pid = dev_id ? 1 : 0, .flags = flags };

	assert_int_equal(bpf_map_update_elem(E.queues_fd, &i, &q, BPF_ANY), 0);
}

/* Queue 0, every test run's, as served by device dev_id (0: none), its first queue. */
static void set_queue0(__u32 dev_id)
{
	set_queue(0, dev_id, dev_id ? MROCE_QUEUE_PORT : 0);
}

static void set_flow_dev(__u32 qpn, __u32 flags, __u32 dev_id)
{
	struct mroce_flow f;

	set_flow(qpn, FX_TOKEN, FX_PSN, flags);
	assert_int_equal(bpf_map_lookup_elem(E.flows_fd, &qpn, &f), 0);
	f.dev_id = dev_id;
	assert_int_equal(bpf_map_update_elem(E.flows_fd, &qpn, &f, BPF_ANY), 0);
}

/*
 * Several devices on one interface: a flow's frames go only to a queue its
 * own device serves, whatever else holds, and leave no state behind when
 * refused; each queue's device has a UDP port of its own.
 */
static void test_queue_owner_and_ports(void **state)
{
	struct mroce_cfg cfg = {};
	struct fx_frame f;
	__u32 zero = 0, one;
	int fd = xsk_socket__fd(E.xsk);

	(void)state;
	set_flow_dev(FX_QPN, 0, 7);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN);
	expect("queue served by no device", f.buf, f.len, XDP_DROP, MROCE_STAT_WRONG_QUEUE);
	set_queue0(8);
	expect("queue of another device", f.buf, f.len, XDP_DROP, MROCE_STAT_WRONG_QUEUE);
	set_queue0(7);
	expect("queue of the flow's device", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
	set_flow_dev(FX_QPN, 0, 0);
	expect("a device's queue, a flow of none", f.buf, f.len, XDP_DROP, MROCE_STAT_WRONG_QUEUE);

	/* refused on the wrong queue, a go-back-N packet moves nothing of the flow's */
	set_flow_dev(FX_QPN, MROCE_FLOW_GO_BACK_N, 7);
	set_queue0(8);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN);
	expect("go-back-N next, wrong queue", f.buf, f.len, XDP_DROP, MROCE_STAT_WRONG_QUEUE);
	set_queue0(7);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN + 1);
	expect("go-back-N gap still there", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_GAP_REPORT);

	/*
	 * The ports: one per queue from the base, each MetaRoCE's only while a
	 * device receives on it (its first queue); other traffic there passes,
	 * even what would be malformed MetaRoCE. None past the queues.
	 */
	set_flow_dev(FX_QPN, 0, 7);
	set_queue(1, 9, MROCE_QUEUE_PORT);
	one = 1;
	assert_int_equal(bpf_map_update_elem(E.xsks_fd, &one, &fd, BPF_ANY), 0);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN);
	fx_udp(&f)->dest = htons(MROCE_DEFAULT_PORT + 1);
	expect("second queue's port, one port", f.buf, f.len, XDP_PASS, MROCE_STAT_PASS);
	cfg.n_ports = 2;
	assert_int_equal(bpf_map_update_elem(E.cfg_fd, &zero, &cfg, BPF_ANY), 0);
	expect("second queue's port", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
	f.buf[14 + 20 + 8] ^= 0xff;	/* the BTH's first byte: version */
	expect("second queue's port, bad version", f.buf, f.len, XDP_DROP, MROCE_STAT_BAD_VERSION);
	/* its process died: the socket left the XSKMAP, the entry stayed */
	assert_int_equal(bpf_map_delete_elem(E.xsks_fd, &one), 0);
	expect("a dead device's port: another protocol's", f.buf, f.len, XDP_PASS, MROCE_STAT_PASS);
	assert_int_equal(bpf_map_update_elem(E.xsks_fd, &one, &fd, BPF_ANY), 0);
	set_queue(1, 9, 0);
	expect("a queue, not a device's first: another protocol's port", f.buf, f.len, XDP_PASS,
	       MROCE_STAT_PASS);
	set_queue(1, 0, 0);
	expect("a queue nobody serves: another protocol's port", f.buf, f.len, XDP_PASS,
	       MROCE_STAT_PASS);
	f.buf[14 + 20 + 8] ^= 0xff;
	fx_udp(&f)->dest = htons(MROCE_DEFAULT_PORT);
	expect("the base port is always MetaRoCE's", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
	fx_udp(&f)->dest = htons(MROCE_DEFAULT_PORT + 2);
	expect("past the ports", f.buf, f.len, XDP_PASS, MROCE_STAT_PASS);
	assert_int_equal(bpf_map_delete_elem(E.xsks_fd, &one), 0);
	fx_udp(&f)->dest = htons(MROCE_DEFAULT_PORT - 1);
	expect("before the ports", f.buf, f.len, XDP_PASS, MROCE_STAT_PASS);
	cfg.udp_port = 65535;
	assert_int_equal(bpf_map_update_elem(E.cfg_fd, &zero, &cfg, BPF_ANY), 0);
	fx_udp(&f)->dest = htons(0);
	expect("no wrap past port 65535", f.buf, f.len, XDP_PASS, MROCE_STAT_PASS);

	cfg = (struct mroce_cfg){};
	assert_int_equal(bpf_map_update_elem(E.cfg_fd, &zero, &cfg, BPF_ANY), 0);
	set_queue0(0);
	clear_flow(FX_QPN);
}

/* A RETX-flagged copy of a PSN that is already placed on FX_QPN. */
static void placed_retx_dup(struct fx_frame *f, __u32 psn)
{
	struct mroce_hdr h;
	struct mroce_flow flow;
	__u32 qpn = FX_QPN;

	assert_int_equal(bpf_map_lookup_elem(E.flows_fd, &qpn, &flow), 0);
	mroce_rxwin_mark(&flow, psn);
	assert_int_equal(bpf_map_update_elem(E.flows_fd, &qpn, &flow, BPF_ANY), 0);
	fx_hdr(&h, MROCE_OP_WRITE, psn);
	h.flags |= MROCE_F_RETX;
	assert_int_equal(fx_build_hdr(f, AF_INET, &h), 0);
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * A flood of resent duplicates (right token) of one placed PSN: one per
 * interval goes up to be acknowledged again, the rest die in XDP, counted.
 */
static void test_dup_retx_flood(void **state)
{
	enum { N = 20000 };
	__u8 out[FX_FRAME_MAX + 256];
	__u64 before[MROCE_STAT_MAX], after[MROCE_STAT_MAX], t0, t1, up, limited, allowed;
	struct fx_frame f;
	__u32 last;

	(void)state;
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	placed_retx_dup(&f, FX_PSN + 3);
	{
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f.buf, .data_size_in = (__u32)f.len,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = N);

		read_stats(before);
		t0 = mono_ns();
		assert_int_equal(bpf_prog_test_run_opts(E.prog_fd, &o), 0);
		t1 = mono_ns();
		read_stats(after);
		last = o.retval;
	}
	up = after[MROCE_STAT_DUP_RETX] - before[MROCE_STAT_DUP_RETX];
	limited = after[MROCE_STAT_DUP_RETX_LIMIT] - before[MROCE_STAT_DUP_RETX_LIMIT];
	/* The first copy always goes up; then one per interval of the run's length. */
	allowed = 1 + (t1 - t0) / MROCE_ANSWER_GAP_NS;
	printf("    %d resent duplicates in %llu us: %llu up, %llu dropped (allowed up: %llu)\n",
	       N, (unsigned long long)(t1 - t0) / 1000, (unsigned long long)up,
	       (unsigned long long)limited, (unsigned long long)allowed);
	if (up < 1 || up > allowed)
		fail_msg("%llu resent duplicates went up, want 1..%llu", (unsigned long long)up,
			 (unsigned long long)allowed);
	if (limited != N - up)
		fail_msg("dup_retx_limit moved by %llu, want %llu", (unsigned long long)limited,
			 (unsigned long long)(N - up));
	for (int s = 0; s < MROCE_STAT_MAX; s++)
		if (s != MROCE_STAT_DUP_RETX && s != MROCE_STAT_DUP_RETX_LIMIT &&
		    after[s] != before[s])
			fail_msg("counter %s moved during the flood", mroce_stat_name(s));
	assert_int_equal(last, XDP_DROP);	/* the last copy: within an interval */
}

/* Around a rate-limited flow: fresh PSNs and plain duplicates as before. */
static void test_dup_retx_limit_scope(void **state)
{
	struct fx_frame f, fresh;

	(void)state;
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	placed_retx_dup(&f, FX_PSN + 3);
	expect("first resent duplicate goes up", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_DUP_RETX);
	expect("second at once is dropped", f.buf, f.len, XDP_DROP, MROCE_STAT_DUP_RETX_LIMIT);
	fx_build(&fresh, AF_INET, MROCE_OP_WRITE, FX_PSN + 4);
	expect("fresh PSN still goes through", fresh.buf, fresh.len, XDP_REDIRECT, MROCE_STAT_RX);
	fx_bth(&fresh)->flags |= htons(MROCE_F_RETX);
	expect("fresh resent PSN still goes through", fresh.buf, fresh.len, XDP_REDIRECT,
	       MROCE_STAT_RX);
	fx_build(&fresh, AF_INET6, MROCE_OP_WRITE, FX_PSN + 3);
	expect("plain duplicate dropped as before", fresh.buf, fresh.len, XDP_DROP,
	       MROCE_STAT_DUPLICATE);
	/* A sender whose ACK was lost again retransmits after an RTO: it goes up. */
	usleep(2 * MROCE_ANSWER_GAP_NS / 1000);
	expect("resent duplicate after the interval goes up", f.buf, f.len, XDP_REDIRECT,
	       MROCE_STAT_DUP_RETX);
}

/* This host's addresses as the loader would configure them: fx_route()'s receiver. */
static void set_host(bool mac, bool ip4, bool ip6)
{
	static const __u8 our_mac[6] = { 0x02, 0, 0, 0, 0, 0x0b };
	struct mroce_cfg cfg = {};
	__u32 zero = 0;

	if (mac)
		memcpy(cfg.mac, our_mac, 6);
	if (ip4) {
		inet_pton(AF_INET, "198.18.0.9", &cfg.ip4[0]);
		inet_pton(AF_INET, "198.18.0.2", &cfg.ip4[1]);
		cfg.n_ip4 = 2;
	}
	if (ip6) {
		inet_pton(AF_INET6, "2001:2::2", cfg.ip6[0]);
		cfg.n_ip6 = 1;
	}
	assert_int_equal(bpf_map_update_elem(E.cfg_fd, &zero, &cfg, BPF_ANY), 0);
}

/* MetaRoCE frames for another host (a bridge or router in the path) go on untouched. */
static void test_not_for_this_host(void **state)
{
	static const __u8 other_mac[6] = { 0x02, 0, 0, 0, 0, 0x0c }, bcast[6] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct fx_frame f;

	(void)state;
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	set_host(true, true, true);
	for (int fi = 0; fi < 2; fi++) {
		fx_build(&f, families[fi], MROCE_OP_WRITE, FX_PSN);
		memcpy(f.buf, other_mac, 6);
		expect("another host's MAC", f.buf, f.len, XDP_PASS, MROCE_STAT_NOT_LOCAL);
		memcpy(f.buf, bcast, 6);
		expect("broadcast MAC", f.buf, f.len, XDP_PASS, MROCE_STAT_NOT_LOCAL);
		f.buf[0] = 0x01;
		expect("multicast MAC", f.buf, f.len, XDP_PASS, MROCE_STAT_NOT_LOCAL);
	}
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN);
	inet_pton(AF_INET, "198.18.0.3", &ip4(&f)->daddr);
	expect("another IPv4 destination", f.buf, f.len, XDP_PASS, MROCE_STAT_NOT_LOCAL);
	fx_build(&f, AF_INET6, MROCE_OP_WRITE, FX_PSN);
	inet_pton(AF_INET6, "2001:2::3", &((mroce_ipv6hdr_t *)ip4(&f))->daddr);
	expect("another IPv6 destination", f.buf, f.len, XDP_PASS, MROCE_STAT_NOT_LOCAL);
	/* Transit frames are not ours to judge: a malformed one goes on too. */
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN);
	inet_pton(AF_INET, "198.18.0.3", &ip4(&f)->daddr);
	fx_bth(&f)->ver = 1;
	expect("malformed, for another IP", f.buf, f.len, XDP_PASS, MROCE_STAT_NOT_LOCAL);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN);
	fx_bth(&f)->token ^= 1;
	memcpy(f.buf, other_mac, 6);
	expect("wrong token, for another MAC", f.buf, f.len, XDP_PASS, MROCE_STAT_NOT_LOCAL);

	/* Only the IPv4 side configured: IPv6 destinations are not checked. */
	set_host(true, true, false);
	fx_build(&f, AF_INET6, MROCE_OP_WRITE, FX_PSN + 1);
	inet_pton(AF_INET6, "2001:2::3", &((mroce_ipv6hdr_t *)ip4(&f))->daddr);
	expect("IPv6 unchecked without IPv6 addresses", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
	/* No MAC configured: the MAC is not checked. */
	set_host(false, true, true);
	fx_build(&f, AF_INET, MROCE_OP_WRITE, FX_PSN + 2);
	memcpy(f.buf, other_mac, 6);
	expect("MAC unchecked without a MAC", f.buf, f.len, XDP_REDIRECT, MROCE_STAT_RX);
	set_host(false, false, false);
}

/* Addressed to this host, every frame is judged exactly as without addresses. */
static void test_for_this_host_validated(void **state)
{
	set_host(true, true, true);
	test_valid_every_opcode(state);
	test_truncated_at_every_byte(state);
	test_malformed(state);
	test_other_traffic_passes(state);
	test_flow_checks(state);
	set_host(false, false, false);
}

/* ---- jumbo frames: multi-buffer XDP -------------------------------------- */

/*
 * A 9000-byte frame reaches the program in several buffers (the test run
 * splits what does not fit a page): parsed with its headers in the linear
 * part and its lengths against the whole frame.
 */
static void test_jumbo_frames(void **state)
{
	static __u8 frame[9216], out[9216 + 256], payload[9000];
	struct mroce_route rt;
	struct mroce_hdr h;
	__u64 before[MROCE_STAT_MAX], after[MROCE_STAT_MAX];
	int len;

	(void)state;
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	for (int fi = 0; fi < 2; fi++) {
		for (int cut = 0; cut < 2; cut++) {
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_out = out, .data_size_out = sizeof(out),
				    .repeat = 1);

			fx_hdr(&h, MROCE_OP_WRITE, FX_PSN + 1);
			h.payload_len = 8900;
			h.msg_len = 3 * 8900;
			h.offset = 8900;
			fx_route(&rt, families[fi]);
			len = mroce_frame_build(frame, sizeof(frame), &rt, &h, payload);
			assert_true(len > 8900);
			o.data_in = frame;
			o.data_size_in = (__u32)(len - cut * 100);	/* cut: shorter than its IP length */
			read_stats(before);
			assert_int_equal(bpf_prog_test_run_opts(E.prog_fd, &o), 0);
			read_stats(after);
			if (cut) {
				assert_int_equal(o.retval, XDP_DROP);
				assert_int_equal(after[MROCE_STAT_TRUNCATED] - before[MROCE_STAT_TRUNCATED], 1);
			} else {
				assert_int_equal(o.retval, XDP_REDIRECT);
				assert_int_equal(after[MROCE_STAT_RX] - before[MROCE_STAT_RX], 1);
				assert_int_equal(after[MROCE_STAT_RX_BYTES] - before[MROCE_STAT_RX_BYTES],
						 (__u64)len);
				/* up whole: metadata (when XDP writes it), then every byte */
				assert_int_equal(o.data_size_out, E.meta_len + (__u32)len);
				assert_memory_equal(out + E.meta_len, frame, (size_t)len);
			}
		}
	}
}

/* ---- placement in XDP ---------------------------------------------------- */

static void dm_reset(void)
{
	memset(E.dm, DM_SENTINEL, 3 * (size_t)MROCE_DM_CHUNK);
	memset(E.dmr, 0, sizeof(struct mroce_dmr) * MROCE_DMR_MAX);
	E.dm_own[0] = E.dm_own[1] = E.dm_own[2] = (__u32)getpid();
	E.dmr[DM_RKEY & (MROCE_DMR_MAX - 1)] = (struct mroce_dmr){
		.state = MROCE_DMR_ACTIVE, .rkey = DM_RKEY, .pd_cookie = DM_COOKIE, .iova = DM_IOVA,
		.length = DM_LEN, .dm_off = DM_OFF, .access = MROCE_DMR_REMOTE_WRITE,
		.owner_pid = (__u32)getpid() };
	E.dmr[DM_NOWRITE_RKEY & (MROCE_DMR_MAX - 1)] = (struct mroce_dmr){
		.state = MROCE_DMR_ACTIVE, .rkey = DM_NOWRITE_RKEY, .pd_cookie = DM_COOKIE,
		.iova = DM_IOVA + (1u << 20), .length = DM_LEN, .dm_off = 2ull * MROCE_DM_CHUNK,
		.access = 0, .owner_pid = (__u32)getpid() };
}

static void dm_clear(void)
{
	memset(E.dmr, 0, sizeof(struct mroce_dmr) * MROCE_DMR_MAX);
	memset(E.dm_own, 0, 3 * sizeof(__u32));
}

/* Every pool byte outside [from, to) of the first three chunks is still the sentinel. */
static bool pool_untouched_outside(size_t from, size_t to)
{
	for (size_t i = 0; i < 3 * (size_t)MROCE_DM_CHUNK; i++) {
		if (i == from && to > from) {
			i = to - 1;
			continue;
		}
		if (E.dm[i] != DM_SENTINEL) {
			fprintf(stderr, "    pool byte %zu written (region is [%zu, %zu))\n", i, from, to);
			return false;
		}
	}
	return true;
}

/* A WRITE (or WRITE_IMM) of plen bytes at message offset off into raddr. */
static void dm_frame(struct fx_frame *f, int family, __u8 opcode, __u32 psn, __u64 raddr,
		     __u32 rkey, __u32 msg_len, __u32 off, __u32 plen)
{
	struct mroce_hdr h;

	fx_hdr(&h, opcode, psn);
	h.raddr = raddr;
	h.rkey = rkey;
	h.msg_len = msg_len;
	h.offset = off;
	h.payload_len = mroce_op_layout(opcode) & MROCE_EXT_PAYLOAD ? plen : 0;
	h.flags = (off == 0 ? MROCE_F_FIRST : 0) | (off + plen == msg_len ? MROCE_F_LAST : 0);
	assert_int_equal(fx_build_hdr(f, family, &h), 0);
}

struct run {
	__u32	verdict;
	__u32	out_len;
	__u8	out[FX_FRAME_MAX + 256];
	__u64	d[MROCE_STAT_MAX];	/* how far each counter moved */
};

static void run_frame(const void *frame, int len, struct run *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (__u32)len,
		    .data_out = r->out, .data_size_out = sizeof(r->out), .repeat = 1);
	__u64 before[MROCE_STAT_MAX], after[MROCE_STAT_MAX];

	read_stats(before);
	if (bpf_prog_test_run_opts(E.prog_fd, &o))
		fail_msg("test run failed: %s", strerror(errno));
	read_stats(after);
	r->verdict = o.retval;
	r->out_len = o.data_size_out;
	for (int s = 0; s < MROCE_STAT_MAX; s++)
		r->d[s] = after[s] - before[s];
}

/* The metadata XDP put in front of a redirected frame (the test run hands it out first). */
static struct mroce_xdp_meta run_meta(const struct run *r)
{
	struct mroce_xdp_meta m = {};

	if (r->out_len >= sizeof(m))
		memcpy(&m, r->out, sizeof(m));
	return m;
}

/* Placed: bytes in the pool where the region maps them, the frame cut to its headers. */
static void expect_placed(const char *what, const struct fx_frame *f, __u64 target, __u32 plen)
{
	struct run r;
	struct mroce_xdp_meta m;
	size_t at = DM_OFF + (size_t)(target - DM_IOVA);

	run_frame(f->buf, f->len, &r);
	m = run_meta(&r);
	if (r.verdict != XDP_REDIRECT || r.d[MROCE_STAT_PLACED] != 1 ||
	    r.d[MROCE_STAT_PLACED_BYTES] != plen || r.d[MROCE_STAT_RX] != 1)
		fail_msg("%s: verdict %u, placed %llu (%llu bytes), want one of %u bytes", what,
			 r.verdict, (unsigned long long)r.d[MROCE_STAT_PLACED],
			 (unsigned long long)r.d[MROCE_STAT_PLACED_BYTES], plen);
	if (m.magic != MROCE_XDP_META_MAGIC || m.placed_len != plen)
		fail_msg("%s: metadata %#x/%u, want placed_len %u", what, m.magic, m.placed_len, plen);
	if (r.out_len != sizeof(m) + (__u32)f->len - plen ||
	    memcmp(r.out + sizeof(m), f->buf, (size_t)f->len - plen))
		fail_msg("%s: frame not cut to its headers (%u bytes out)", what, r.out_len);
	if (memcmp(E.dm + at, f->buf + f->len - plen, plen))
		fail_msg("%s: payload not in the pool at %zu", what, at);
	if (!pool_untouched_outside(at, at + plen))
		fail_msg("%s: wrote outside its bytes", what);
	memset(E.dm + at, DM_SENTINEL, plen);
}

/* Not placed: it goes up whole (user space places or refuses it), the pool untouched. */
static void expect_not_placed(const char *what, const struct fx_frame *f, __u32 stat)
{
	struct run r;
	struct mroce_xdp_meta m;

	run_frame(f->buf, f->len, &r);
	m = run_meta(&r);
	if (r.verdict != XDP_REDIRECT || r.d[stat] != 1 || r.d[MROCE_STAT_PLACED] ||
	    r.d[MROCE_STAT_PLACED_BYTES])
		fail_msg("%s: verdict %u, %s %llu, placed %llu: want it up whole", what, r.verdict,
			 mroce_stat_name(stat), (unsigned long long)r.d[stat],
			 (unsigned long long)r.d[MROCE_STAT_PLACED]);
	/* Without placement in XDP: no metadata at all, the frame as it came. */
	if ((E.places && (m.magic != MROCE_XDP_META_MAGIC || m.placed_len != 0)) ||
	    r.out_len != E.meta_len + (__u32)f->len ||
	    memcmp(r.out + E.meta_len, f->buf, (size_t)f->len))
		fail_msg("%s: frame or metadata changed (%u bytes out, placed_len %u)", what,
			 r.out_len, m.placed_len);
	if (!pool_untouched_outside(0, 0))
		fail_msg("%s: the pool was written", what);
}

/* Placement in XDP is off on this kernel: say exactly why, and skip (test_place_off runs). */
#define SKIP_WITHOUT_PLACEMENT()								\
	do {											\
		if (!E.places) {								\
			printf("    %s: SKIP: this kernel refuses bpf_xdp_adjust_meta to XDP "	\
			       "programs, so XDP places nothing here (test_place_off checks "	\
			       "that every frame goes up whole instead)\n", __func__);		\
			skip();									\
		}										\
	} while (0)

static void test_place_write(void **state)
{
	struct fx_frame f;
	struct run r;

	(void)state;
	SKIP_WITHOUT_PLACEMENT();
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	dm_reset();
	for (int fi = 0; fi < 2; fi++) {
		dm_frame(&f, families[fi], MROCE_OP_WRITE, FX_PSN, DM_IOVA, DM_RKEY, 4096, 1000, 1000);
		expect_placed("WRITE into chunk 0", &f, DM_IOVA + 1000, 1000);
		dm_frame(&f, families[fi], MROCE_OP_WRITE_IMM, FX_PSN + 1, DM_IOVA + (64u << 10),
			 DM_RKEY, 8192, 0, 1800);
		expect_placed("WRITE_IMM into chunk 1", &f, DM_IOVA + (64u << 10), 1800);
		dm_frame(&f, families[fi], MROCE_OP_WRITE, FX_PSN + 2, DM_IOVA, DM_RKEY, DM_LEN,
			 DM_LEN - 1, 1);
		expect_placed("last byte of the region", &f, DM_IOVA + DM_LEN - 1, 1);
	}
	/*
	 * A payload starting in a chunk's last MROCE_DM_PLACE_MAX bytes is user
	 * space's to place (it might cross into the next chunk, which XDP
	 * cannot write in the same copy).
	 */
	dm_frame(&f, AF_INET, MROCE_OP_WRITE, FX_PSN, DM_IOVA, DM_RKEY, 1 << 16,
		 (64u << 10) - MROCE_DM_PLACE_MAX, 1800);
	expect_placed("starting exactly where user space's last bytes begin", &f,
		      DM_IOVA + (64u << 10) - MROCE_DM_PLACE_MAX, 1800);
	dm_frame(&f, AF_INET, MROCE_OP_WRITE, FX_PSN, DM_IOVA, DM_RKEY, 1 << 16, (64u << 10) - 100,
		 100);
	expect_not_placed("in a chunk's last bytes", &f, MROCE_STAT_RX);
	dm_frame(&f, AF_INET, MROCE_OP_WRITE, FX_PSN, DM_IOVA, DM_RKEY, 1 << 17, (64u << 10) - 100,
		 200);
	expect_not_placed("across the chunk's end", &f, MROCE_STAT_RX);

	/* Every refusal of the library's placement rules: up whole, nothing written. */
	dm_frame(&f, AF_INET, MROCE_OP_WRITE, FX_PSN, DM_IOVA, DM_RKEY ^ 0x100000, 4096, 0, 512);
	expect_not_placed("wrong key, right index", &f, MROCE_STAT_RX);
	dm_frame(&f, AF_INET, MROCE_OP_WRITE, FX_PSN, DM_IOVA + (1u << 20), DM_NOWRITE_RKEY, 4096, 0, 512);
	expect_not_placed("region without remote write", &f, MROCE_STAT_RX);
	dm_frame(&f, AF_INET, MROCE_OP_WRITE, FX_PSN, DM_IOVA - 512, DM_RKEY, 4096, 512, 512);
	expect_not_placed("message starts before the region", &f, MROCE_STAT_RX);
	dm_frame(&f, AF_INET, MROCE_OP_WRITE, FX_PSN, DM_IOVA + DM_LEN - 4096, DM_RKEY, 4097, 0, 512);
	expect_not_placed("message ends past the region (this packet inside)", &f, MROCE_STAT_RX);
	dm_frame(&f, AF_INET, MROCE_OP_WRITE, FX_PSN, 0xffffffffffffff00ULL, DM_RKEY, 4096, 0, 512);
	expect_not_placed("address wrapping 2^64", &f, MROCE_STAT_RX);
	dm_frame(&f, AF_INET, MROCE_OP_SEND, FX_PSN, 0, 0, 4096, 0, 512);
	expect_not_placed("SEND (no region named)", &f, MROCE_STAT_RX);

	dm_frame(&f, AF_INET, MROCE_OP_WRITE, FX_PSN, DM_IOVA, DM_RKEY, 4096, 0, 512);
	E.dmr[DM_RKEY & (MROCE_DMR_MAX - 1)].pd_cookie ^= 1;
	expect_not_placed("region of another protection domain", &f, MROCE_STAT_RX);
	E.dmr[DM_RKEY & (MROCE_DMR_MAX - 1)].pd_cookie ^= 1;
	E.dmr[DM_RKEY & (MROCE_DMR_MAX - 1)].state = MROCE_DMR_CLAIMED;
	expect_not_placed("region being filled in", &f, MROCE_STAT_RX);
	E.dmr[DM_RKEY & (MROCE_DMR_MAX - 1)].state = MROCE_DMR_ACTIVE;
	E.dm_own[0] = (__u32)getpid() + 1;
	expect_not_placed("chunk held by another process", &f, MROCE_STAT_RX);
	E.dm_own[0] = 0;
	expect_not_placed("chunk freed", &f, MROCE_STAT_RX);
	E.dm_own[0] = (__u32)getpid();
	E.dmr[DM_RKEY & (MROCE_DMR_MAX - 1)].dm_off = E.dm_len;
	expect_not_placed("region past the pool's end", &f, MROCE_STAT_RX);
	E.dmr[DM_RKEY & (MROCE_DMR_MAX - 1)].dm_off = DM_OFF;
	{
		struct mroce_flow fl;
		__u32 qpn = FX_QPN;

		assert_int_equal(bpf_map_lookup_elem(E.flows_fd, &qpn, &fl), 0);
		fl.pd_cookie = 0;
		assert_int_equal(bpf_map_update_elem(E.flows_fd, &qpn, &fl, BPF_ANY), 0);
		expect_not_placed("QP without a protection domain", &f, MROCE_STAT_RX);
		set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	}
	/* A resent copy of a placed PSN goes up to be acknowledged, not placed again. */
	{
		struct mroce_hdr h;
		struct mroce_flow fl;
		__u32 qpn = FX_QPN;

		assert_int_equal(bpf_map_lookup_elem(E.flows_fd, &qpn, &fl), 0);
		mroce_rxwin_mark(&fl, FX_PSN + 9);
		assert_int_equal(bpf_map_update_elem(E.flows_fd, &qpn, &fl, BPF_ANY), 0);
		fx_hdr(&h, MROCE_OP_WRITE, FX_PSN + 9);
		h.raddr = DM_IOVA;
		h.rkey = DM_RKEY;
		h.flags |= MROCE_F_RETX;
		assert_int_equal(fx_build_hdr(&f, AF_INET, &h), 0);
		expect_not_placed("resent duplicate", &f, MROCE_STAT_DUP_RETX);
	}

	/* A bad checksum: dropped before anything is written (it could misdirect). */
	dm_frame(&f, AF_INET6, MROCE_OP_WRITE, FX_PSN, DM_IOVA, DM_RKEY, 4096, 0, 512);
	f.buf[f.len - 7] ^= 0x40;
	run_frame(f.buf, f.len, &r);
	if (r.verdict != XDP_DROP || r.d[MROCE_STAT_BAD_CSUM] != 1 || r.d[MROCE_STAT_PLACED])
		fail_msg("bad checksum: verdict %u, bad_csum %llu", r.verdict,
			 (unsigned long long)r.d[MROCE_STAT_BAD_CSUM]);
	assert_true(pool_untouched_outside(0, 0));
	/* No checksum: IPv4 may omit it and is placed; IPv6 may not. */
	dm_frame(&f, AF_INET, MROCE_OP_WRITE, FX_PSN, DM_IOVA, DM_RKEY, 4096, 0, 512);
	fx_udp(&f)->check = 0;
	expect_placed("IPv4 without a checksum", &f, DM_IOVA, 512);
	dm_frame(&f, AF_INET6, MROCE_OP_WRITE, FX_PSN, DM_IOVA, DM_RKEY, 4096, 0, 512);
	fx_udp(&f)->check = 0;
	run_frame(f.buf, f.len, &r);
	if (r.verdict != XDP_DROP || r.d[MROCE_STAT_BAD_CSUM] != 1)
		fail_msg("IPv6 without a checksum: verdict %u", r.verdict);
	dm_clear();
}

static __u64 fuzz_rng;

static __u32 fuzz_rand(void)
{
	fuzz_rng ^= fuzz_rng << 13;
	fuzz_rng ^= fuzz_rng >> 7;
	fuzz_rng ^= fuzz_rng << 17;
	return (__u32)(fuzz_rng >> 16);
}

/* The UDP checksum a sender would put on the frame as it now is (a mutation that survives it). */
static void fuzz_resum(struct fx_frame *f)
{
	int l3 = ETH_HLEN, l4 = fx_l4_off(f);
	mroce_udphdr_t *udp = fx_udp(f);
	__u32 len = ntohs(udp->len), sum = 0;
	const __u8 *p;

	if (l4 + 8 > f->len)
		return;
	if (len > (__u32)(f->len - l4))
		len = (__u32)(f->len - l4);
	udp->check = 0;
	p = f->buf + l3 + (f->family == AF_INET ? 12 : 8);
	for (int i = 0; i < (f->family == AF_INET ? 8 : 32); i += 2)
		sum += (__u32)(p[i] << 8 | p[i + 1]);
	sum += IPPROTO_UDP + ntohs(udp->len);
	p = f->buf + l4;
	for (__u32 i = 0; i + 1 < len; i += 2)
		sum += (__u32)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (__u32)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	udp->check = htons((__u16)~sum) ? htons((__u16)~sum) : 0xffff;
}

/*
 * Mutated WRITEs aimed at and around a region, most with the checksum
 * recomputed so the mutation reaches the placement rules: whatever XDP
 * does with them, no byte outside the region changes, and what it reports
 * placed is what its metadata says. MROCE_FUZZ_FRAMES sets how many
 * (default 10^6).
 */
static void test_place_fuzz(void **state)
{
	const char *env = getenv("MROCE_FUZZ_FRAMES");
	__u64 n = env ? strtoull(env, NULL, 0) : 1000000, placed = 0, up = 0, dropped = 0, t0;
	__u64 placed_bytes = 0, before[MROCE_STAT_MAX], after[MROCE_STAT_MAX];
	static __u8 guard[8192];
	struct fx_frame f;
	struct run r;

	(void)state;
	SKIP_WITHOUT_PLACEMENT();
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	dm_reset();
	memset(guard, DM_SENTINEL, sizeof(guard));
	read_stats(before);
	fuzz_rng = 0x9e3779b97f4a7c15ULL;
	t0 = mono_ns();
	for (__u64 i = 0; i < n; i++) {
		static const __u8 ops[] = { MROCE_OP_WRITE, MROCE_OP_WRITE_IMM, MROCE_OP_SEND,
					    MROCE_OP_READ_REQ };
		__u32 pick = fuzz_rand(), plen = 1 + fuzz_rand() % 1800, msg = plen + fuzz_rand() % 8192;
		__u32 off = fuzz_rand() % (msg - plen + 1);
		__u64 raddr = DM_IOVA - 8192 + fuzz_rand() % (DM_LEN + 16384);
		__u32 rkey = pick % 8 == 0 ? DM_NOWRITE_RKEY : pick % 8 == 1 ? fuzz_rand() : DM_RKEY;
		int nmut = (int)(fuzz_rand() % 5);
		struct mroce_xdp_meta m;

		if (pick % 16 == 2)
			raddr = DM_IOVA + (1u << 20) - 4096 + fuzz_rand() % 8192;	/* the read-only one */
		dm_frame(&f, (pick >> 4) & 1 ? AF_INET6 : AF_INET, ops[(pick >> 5) % 4 < 3 ? 0 : (pick >> 7) % 4],
			 FX_PSN + fuzz_rand() % MROCE_RXWIN_PSNS, raddr, rkey, msg, off, plen);
		for (int k = 0; k < nmut; k++)
			f.buf[ETH_HLEN + fuzz_rand() % (__u32)(f.len - ETH_HLEN)] ^= (__u8)(1 + fuzz_rand() % 255);
		if (fuzz_rand() % 8 == 0)
			f.len -= (int)(fuzz_rand() % (__u32)(f.len - ETH_HLEN));
		if (fuzz_rand() % 4)
			fuzz_resum(&f);
		{
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f.buf, .data_size_in = (__u32)f.len,
				    .data_out = r.out, .data_size_out = sizeof(r.out), .repeat = 1);

			if (bpf_prog_test_run_opts(E.prog_fd, &o))
				fail_msg("frame %llu: test run failed: %s", (unsigned long long)i,
					 strerror(errno));
			r.verdict = o.retval;
			r.out_len = o.data_size_out;
		}
		m = run_meta(&r);
		if (r.verdict == XDP_REDIRECT) {
			if (m.magic != MROCE_XDP_META_MAGIC)
				fail_msg("frame %llu went up without metadata", (unsigned long long)i);
			if (m.placed_len) {
				placed++;
				placed_bytes += m.placed_len;
				/* cut exactly where its payload began */
				if (r.out_len != sizeof(m) + (__u32)f.len - m.placed_len)
					fail_msg("frame %llu: %u bytes placed, %u out of %d",
						 (unsigned long long)i, m.placed_len, r.out_len, f.len);
			} else {
				up++;
			}
		} else {
			dropped++;
		}
		/* The bytes around the region every time; the whole pool now and then. */
		if (memcmp(E.dm + DM_OFF - sizeof(guard), guard, sizeof(guard)) ||
		    memcmp(E.dm + DM_OFF + DM_LEN, guard, sizeof(guard)))
			fail_msg("frame %llu wrote next to the region", (unsigned long long)i);
		if ((i & 0xffff) == 0xffff || i + 1 == n)
			if (!pool_untouched_outside(DM_OFF, DM_OFF + DM_LEN))
				fail_msg("after frame %llu: the pool was written outside the region",
					 (unsigned long long)i);
	}
	read_stats(after);
	/* What the counters say was placed is what the frames' metadata said. */
	if (after[MROCE_STAT_PLACED] - before[MROCE_STAT_PLACED] != placed ||
	    after[MROCE_STAT_PLACED_BYTES] - before[MROCE_STAT_PLACED_BYTES] != placed_bytes)
		fail_msg("placed counters %llu (%llu bytes), metadata said %llu (%llu bytes)",
			 (unsigned long long)(after[MROCE_STAT_PLACED] - before[MROCE_STAT_PLACED]),
			 (unsigned long long)(after[MROCE_STAT_PLACED_BYTES] - before[MROCE_STAT_PLACED_BYTES]),
			 (unsigned long long)placed, (unsigned long long)placed_bytes);
	printf("    %llu mutated frames in %.1f s: %llu placed, %llu went up whole, %llu dropped; "
	       "no byte outside the region written\n", (unsigned long long)n,
	       (double)(mono_ns() - t0) / 1e9, (unsigned long long)placed, (unsigned long long)up,
	       (unsigned long long)dropped);
	if (n >= 10000 && (!placed || !up || !dropped))
		fail_msg("the fuzz did not reach every outcome: it tests too little");
	dm_clear();
}

/*
 * The probe's answer is the kernel's: where it says XDP may not call
 * bpf_xdp_adjust_meta, the object with placement switched on is refused
 * (setup loaded it where the probe said yes).
 */
static void test_probe_agrees(void **state)
{
	struct mroce_bpf *on;
	int err;

	(void)state;
	if (E.places) {
		printf("    placement in XDP is on: the kernel loaded the program with it\n");
		return;
	}
	on = mroce_bpf__open();
	assert_non_null(on);
	on->rodata->mroce_xdp_meta_ok = 1;
	err = mroce_bpf__load(on);
	mroce_bpf__destroy(on);
	if (!err)
		fail_msg("the probe says this kernel refuses bpf_xdp_adjust_meta, "
			 "yet it loaded the program with placement on");
	printf("    the program with placement on is refused here (%s), with it off it loads\n",
	       strerror(-err));
}

/*
 * Placement off (a kernel that refuses bpf_xdp_adjust_meta, or a loader
 * that leaves the switch alone): WRITEs XDP would place go up whole and
 * without metadata, nothing is counted placed, the pool is untouched, and
 * a wrong checksum is left to user space, whose check refuses it. Where
 * the kernel allows placement, the same object loaded with the switch off
 * over the same maps.
 */
static void test_place_off(void **state)
{
	struct mroce_bpf *off = NULL;
	struct bpf_map *m;
	struct mroce_pkt pkt;
	struct fx_frame f;
	bool places = E.places;
	int prog_fd = E.prog_fd;

	(void)state;
	if (places) {
		off = mroce_bpf__open();
		assert_non_null(off);
		bpf_object__for_each_map(m, off->obj) {
			if (bpf_map__is_internal(m))
				continue;
			assert_int_equal(bpf_map__reuse_fd(m, bpf_map__fd(bpf_object__find_map_by_name(
						 E.skel->obj, bpf_map__name(m)))), 0);
		}
		off->rodata->mroce_xdp_meta_ok = 0;
		assert_int_equal(mroce_bpf__load(off), 0);
		E.prog_fd = bpf_program__fd(off->progs.mroce_xdp);
	}
	E.places = false;
	E.meta_len = 0;
	set_flow(FX_QPN, FX_TOKEN, FX_PSN, 0);
	dm_reset();
	for (int fi = 0; fi < 2; fi++) {
		dm_frame(&f, families[fi], MROCE_OP_WRITE, FX_PSN, DM_IOVA, DM_RKEY, 4096, 1000, 1000);
		expect_not_placed("WRITE into chunk 0", &f, MROCE_STAT_RX);
		dm_frame(&f, families[fi], MROCE_OP_WRITE_IMM, FX_PSN + 1, DM_IOVA + (64u << 10),
			 DM_RKEY, 8192, 0, 1800);
		expect_not_placed("WRITE_IMM into chunk 1", &f, MROCE_STAT_RX);
		dm_frame(&f, families[fi], MROCE_OP_WRITE, FX_PSN + 2, DM_IOVA, DM_RKEY, DM_LEN,
			 DM_LEN - 1, 1);
		expect_not_placed("last byte of the region", &f, MROCE_STAT_RX);
		/* A wrong checksum goes up too; user space checks every frame it places. */
		dm_frame(&f, families[fi], MROCE_OP_WRITE, FX_PSN + 3, DM_IOVA, DM_RKEY, 4096, 0, 512);
		f.buf[f.len - 7] ^= 0x40;
		expect_not_placed("bad checksum", &f, MROCE_STAT_RX);
		assert_int_equal(mroce_parse(f.buf, f.buf + f.len, MROCE_DEFAULT_PORT, &pkt), MROCE_STAT_RX);
		assert_false(mroce_frame_csum_ok(f.buf, &pkt));
	}
	dm_clear();
	E.places = places;
	E.meta_len = places ? sizeof(struct mroce_xdp_meta) : 0;
	E.prog_fd = prog_fd;
	mroce_bpf__destroy(off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_every_opcode),
		cmocka_unit_test(test_truncated_at_every_byte),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_other_traffic_passes),
		cmocka_unit_test(test_flow_checks),
		cmocka_unit_test(test_no_socket_and_port),
		cmocka_unit_test(test_queue_owner_and_ports),
		cmocka_unit_test(test_dup_retx_flood),
		cmocka_unit_test(test_dup_retx_limit_scope),
		cmocka_unit_test(test_not_for_this_host),
		cmocka_unit_test(test_for_this_host_validated),
		cmocka_unit_test(test_jumbo_frames),
		cmocka_unit_test(test_place_write),
		cmocka_unit_test(test_place_fuzz),
		cmocka_unit_test(test_probe_agrees),
		cmocka_unit_test(test_place_off),
	};

	if (geteuid() != 0) {
		printf("SKIP: xdp_prog tests need root (BPF_PROG_TEST_RUN, AF_XDP)\n");
		return 77;
	}
	libbpf_set_print(NULL);
	return cmocka_run_group_tests_name("xdp_prog", tests, setup, teardown);
}
