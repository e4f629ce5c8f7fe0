// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Two ends of the veth selftests:
 *   peer send  crafts MetaRoCE frames (valid, duplicate, spoofed, malformed)
 *              and writes them to a device with an AF_PACKET socket;
 *   peer recv  owns a flow and an AF_XDP socket behind the attached
 *              datapath, places what arrives (marking the receive window
 *              only after placement), and checks what it got, byte for byte,
 *              and how the datapath counters moved.
 * Both sides build the suite from the same table, so the receiver knows
 * exactly what must arrive and what must be dropped, and why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_xdp.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "../tests/fixtures.h"
#include "../tests/malformed.h"

#define NUM_FRAMES	1024
#define FRAME_SIZE	XSK_UMEM__DEFAULT_FRAME_SIZE
#define SUITE_MAX	128
#define SUITE_VALID	(2 * FX_NOPCODES)	/* phase 1: every opcode, both families */
#define SUITE_PLACED	suite_placed()		/* of which PSN-consuming */

struct opts {
	const char	*dev;
	const char	*sync;
	const char	*wait;
	__u8		dst_mac[6];
	bool		have_dst;
	bool		suite;
	__u32		qpn;
	__u64		token;
	__u32		psn;
	__u32		count;
	__u32		queue;
	__u32		starve;
	__u32		block;		/* send: shuffle within blocks of this many PSNs */
	__u32		dup_pct;	/* send: re-send this % of the previous block */
	__u32		blast_ms;	/* send: the count frames over and over, this long */
	struct in_addr	src_ip, dst_ip;	/* send --blast-ms: IPv4 addresses instead of the fixtures' */
	__u32		qpns[16];	/* --blast-ms: --qpn Q1,Q2,... in turn */
	__u32		nqpns;
	__u8		ops[8];		/* --blast-ms: the opcodes, in turn (--op) */
	__u32		nops;
	bool		guess;		/* --blast-ms: a random token and PSN in every frame */
	bool		guess_psn;	/* --blast-ms: a random PSN, --token's token */
	__u32		rate;		/* --blast-ms: frames per second at most (0: as fast as it can) */
	__u64		raddr;		/* --blast-ms: WRITEs at this address and rkey */
	__u32		rkey;
	unsigned int	seed;
	int		family;
	int		timeout_ms;
};

struct suite_frame {
	struct fx_frame	f;
	int		stat;	/* counter it must move at the receiver */
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Of phase 1's frames, those that consume a PSN (both families): they fill the window. */
static __u32 suite_placed(void)
{
	__u32 n = 0;

	for (size_t i = 0; i < FX_NOPCODES; i++)
		n += !!(mroce_op_layout(fx_opcodes[i]) & MROCE_EXT_SEQ);
	return 2 * n;
}

/* Phase 1: frames that must be delivered. */
static int suite_valid(struct suite_frame *s)
{
	int n = 0;
	__u32 psn = FX_PSN;

	for (int fam = 0; fam < 2; fam++) {
		for (size_t i = 0; i < FX_NOPCODES; i++, n++) {
			bool seq = mroce_op_layout(fx_opcodes[i]) & MROCE_EXT_SEQ;

			fx_build(&s[n].f, fam ? AF_INET6 : AF_INET, fx_opcodes[i], seq ? psn++ : FX_PSN);
			s[n].stat = MROCE_STAT_RX;
		}
	}
	return n;
}

/* Phase 2: frames the datapath must drop, each for a known reason. */
static int suite_drops(struct suite_frame *s)
{
	struct mroce_hdr h;
	int n = 0;

	for (__u32 i = 0; i < 3; i++) {		/* placed already */
		fx_build(&s[n].f, i & 1 ? AF_INET6 : AF_INET, MROCE_OP_WRITE, FX_PSN + i);
		s[n++].stat = MROCE_STAT_DUPLICATE;
	}
	fx_build(&s[n].f, AF_INET, MROCE_OP_SEND, FX_PSN - 1);
	s[n++].stat = MROCE_STAT_DUPLICATE;
	fx_build(&s[n].f, AF_INET6, MROCE_OP_WRITE, FX_PSN + SUITE_PLACED + MROCE_RXWIN_PSNS);
	s[n++].stat = MROCE_STAT_OUT_OF_WINDOW;
	fx_hdr(&h, MROCE_OP_WRITE, FX_PSN + 20);
	h.token ^= 0x8000;
	fx_build_hdr(&s[n].f, AF_INET, &h);
	s[n++].stat = MROCE_STAT_BAD_TOKEN;
	fx_hdr(&h, MROCE_OP_READ_REQ, FX_PSN + 21);
	h.dqpn = FX_QPN + 1;
	fx_build_hdr(&s[n].f, AF_INET6, &h);
	s[n++].stat = MROCE_STAT_UNKNOWN_QP;
	fx_build(&s[n].f, AF_INET, MROCE_OP_WRITE_IMM, FX_PSN + 22);
	s[n].f.len = fx_l4_off(&s[n].f) + (int)sizeof(struct udphdr) + 5;
	s[n++].stat = MROCE_STAT_TRUNCATED;
	for (size_t i = 0; i < FX_NMALFORMED; i++) {
		const struct fx_malformed *m = &fx_malformed[i];

		/* Frames the kernel takes are not ours to count exactly; VLAN tags are
		 * covered by the BPF program tests (veth may strip them). */
		if (m->want == MROCE_STAT_PASS || m->want == MROCE_STAT_RX)
			continue;
		fx_build(&s[n].f, m->family, m->opcode, FX_PSN + 30);
		m->mutate(&s[n].f);
		s[n++].stat = m->want;
	}
	return n;
}

static int parse_mac(const char *s, __u8 mac[6])
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (__u8)b[i];
	return 0;
}

static void sync_write(const char *path, const char *fmt, ...)
{
	char tmp[4096];
	va_list ap;
	FILE *f;

	if (!path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	rename(tmp, path);	/* readers never see half a line */
}

static int sync_wait(const char *path, const char *want, int timeout_ms)
{
	long end = now_ms() + timeout_ms;
	char buf[256];

	while (now_ms() < end) {
		FILE *f = fopen(path, "r");

		if (f) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);

			fclose(f);
			buf[n] = '\0';
			if (strstr(buf, want))
				return 0;
		}
		usleep(2000);
	}
	fprintf(stderr, "peer: timed out waiting for '%s' in %s\n", want, path);
	return -ETIMEDOUT;
}

/* Wait until the receiver reports at least `target` placed PSNs. */
static int sync_wait_placed(const char *path, __u32 target, int timeout_ms)
{
	long end = now_ms() + timeout_ms;

	while (now_ms() < end) {
		FILE *f = fopen(path, "r");
		unsigned int rcvd, placed;

		if (f) {
			int n = fscanf(f, "received=%u placed=%u", &rcvd, &placed);

			fclose(f);
			if (n == 2 && placed >= target)
				return 0;
		}
		usleep(500);
	}
	fprintf(stderr, "peer: timed out waiting for %u placed PSNs in %s\n", target, path);
	return -ETIMEDOUT;
}

/*
 * Blocks of PSNs in shuffled order, each block sent once the previous one is
 * placed (so the receive window never overflows), plus duplicates of the
 * previous block, which the datapath must drop.
 */
static int send_shuffled(const struct opts *o, int fd, const struct sockaddr_ll *sll,
			 const __u8 src_mac[6])
{
	struct fx_frame f;
	struct mroce_hdr h;
	__u32 *order = calloc(o->block, sizeof(*order)), sent = 0, dups = 0;

	if (!order)
		return -ENOMEM;
	srand(o->seed);
	for (__u32 start = 0; start < o->count; start += o->block) {
		__u32 n = o->count - start < o->block ? o->count - start : o->block;

		if (start && o->sync && sync_wait_placed(o->sync, start, o->timeout_ms)) {
			free(order);
			return -ETIMEDOUT;
		}
		for (__u32 i = 0; i < n; i++)
			order[i] = start + i;
		for (__u32 i = n; i > 1; i--) {
			__u32 j = (__u32)rand() % i, t = order[i - 1];

			order[i - 1] = order[j];
			order[j] = t;
		}
		for (__u32 i = 0; i < n + (start ? n * o->dup_pct / 100 : 0); i++) {
			/* after the block itself: duplicates of the previous block */
			__u32 k = i < n ? order[i] : start - 1 - (__u32)rand() % o->block;

			fx_hdr(&h, MROCE_OP_WRITE, o->psn + k);
			h.dqpn = o->qpn;
			h.token = o->token;
			h.msg_len = o->count * FX_PAYLOAD;
			h.offset = k * FX_PAYLOAD;
			h.flags = (k == 0 ? MROCE_F_FIRST : 0) | (k == o->count - 1 ? MROCE_F_LAST : 0);
			fx_build_hdr(&f, o->family, &h);
			memcpy(f.buf, o->dst_mac, 6);
			memcpy(f.buf + 6, src_mac, 6);
			if (sendto(fd, f.buf, (size_t)f.len, 0, (const struct sockaddr *)sll, sizeof(*sll)) != f.len) {
				free(order);
				return -errno;
			}
			sent++;
			dups += i >= n;
		}
	}
	free(order);
	printf("send: frames=%u (of which %u duplicates), blocks of %u shuffled\n", sent, dups, o->block);
	return 0;
}

/* ---- send -------------------------------------------------------------- */

/*
 * --blast-ms: WRITEs to --qpn (a list Q1,Q2,... in turn; with --qpn 0 every
 * QPN in turn, so the live ones meet them too) sent over and over for that
 * long: a flood of frames the victim's XDP program must drop. --op picks the
 * opcodes (write, send, ack; a list is taken in turn); --guess makes each
 * frame an off-path attacker's guess: a fresh random token and PSN (from
 * --seed), as one who knows the QPNs and addresses but not the secret would
 * send (--guess-psn: the PSN alone, the token --token's, as one who could
 * compute the token would send). --raddr/--rkey aim the WRITEs at a region the attacker learnt of, so
 * only the token and the PSN stand between the frames and the memory.
 */
static __u64 xorshift64(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int blast_frame(const struct opts *o, struct fx_frame *f, __u32 i, __u64 *rng,
		       const __u8 *src)
{
	static const __u8 payload[FX_FRAME_MAX] = { [0 ... FX_FRAME_MAX - 1] = 0xee };
	__u32 nq = o->nqpns ? o->nqpns : MROCE_MAX_QPS - 1, q = i % nq;
	__u8 op = o->nops ? o->ops[(i / nq) % o->nops] : MROCE_OP_WRITE;
	struct mroce_route rt;
	struct mroce_hdr h;

	fx_hdr(&h, op, o->psn);
	h.dqpn = o->nqpns ? o->qpns[q] : q + 1;
	h.token = o->token;
	if (o->guess || o->guess_psn) {
		if (o->guess)
			h.token = xorshift64(rng);
		h.psn = (__u32)xorshift64(rng);
		if (op == MROCE_OP_ACK)
			h.cum_psn = h.psn;
	}
	if (mroce_op_layout(op) & MROCE_EXT_RETH) {
		if (o->raddr)
			h.raddr = o->raddr;
		if (o->rkey)
			h.rkey = o->rkey;
	}
	fx_route(&rt, AF_INET);
	if (o->src_ip.s_addr)
		rt.src.v4 = o->src_ip;
	if (o->dst_ip.s_addr)
		rt.dst.v4 = o->dst_ip;
	rt.dport = (__u16)(MROCE_DEFAULT_PORT + o->queue);
	f->family = AF_INET;
	f->len = mroce_frame_build(f->buf, sizeof(f->buf), &rt, &h, payload);
	if (f->len < 0)
		return f->len;
	memcpy(f->buf, o->dst_mac, 6);
	memcpy(f->buf + 6, src, 6);
	return 0;
}

static int send_blast(const struct opts *o, int fd, const struct sockaddr_ll *sll, const __u8 *src)
{
	struct fx_frame *f = calloc(MROCE_MAX_QPS, sizeof(*f));
	struct timespec t;
	__u64 end, start_ns, sent = 0, per_op[8] = { 0 }, rng = o->seed ? o->seed : 0x9e3779b97f4a7c15ULL;
	/* every QPN with every opcode, in turn */
	__u32 n = (o->nqpns ? o->nqpns : MROCE_MAX_QPS - 1) * (o->nops > 1 ? o->nops : 1);
	int err = 0;

	if (!f)
		return -ENOMEM;
	if (n > MROCE_MAX_QPS)
		n = MROCE_MAX_QPS;
	for (__u32 i = 0; i < n && !err; i++)
		err = blast_frame(o, &f[i], i, &rng, src);
	clock_gettime(CLOCK_MONOTONIC, &t);
	end = (__u64)t.tv_sec * 1000 + (__u64)t.tv_nsec / 1000000 + o->blast_ms;
	start_ns = (__u64)t.tv_sec * 1000000000ULL + (__u64)t.tv_nsec;
	while (!err) {
		for (__u32 i = 0; i < n && !err; i++) {
			if (sendto(fd, f[i].buf, (size_t)f[i].len, 0, (const struct sockaddr *)sll,
				   sizeof(*sll)) == f[i].len) {
				sent++;
				per_op[o->nops ? (i / (o->nqpns ? o->nqpns : MROCE_MAX_QPS - 1)) % o->nops : 0]++;
			}
			if (o->guess || o->guess_psn)	/* the next guess for this slot */
				err = blast_frame(o, &f[i], i, &rng, src);
			if (o->rate && sent % 32 == 0) {	/* --rate: sleep to the sent-th frame's time */
				__u64 due_ns = start_ns + sent * 1000000000ULL / o->rate;
				struct timespec d = { .tv_sec = (time_t)(due_ns / 1000000000ULL),
						      .tv_nsec = (long)(due_ns % 1000000000ULL) };

				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL);
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((__u64)t.tv_sec * 1000 + (__u64)t.tv_nsec / 1000000 >= end)
			break;
	}
	if (err) {
		fprintf(stderr, "peer: blast: building a frame: %s\n", strerror(-err));
		free(f);
		return err;
	}
	printf("send: blasted=%llu\n", (unsigned long long)sent);
	for (__u32 k = 0; k < o->nops; k++)
		printf("send: opcode 0x%02x blasted=%llu\n", o->ops[k], (unsigned long long)per_op[k]);
	free(f);
	return 0;
}

static int do_send(const struct opts *o)
{
	struct suite_frame *s = calloc(SUITE_MAX, sizeof(*s));
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct ifreq ifr = {};
	int fd, n = 0, phase1 = 0, err = 0;

	if (!s)
		return 1;
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("peer: AF_PACKET socket");
		return 1;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->dev);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		fprintf(stderr, "peer: %s: %s\n", o->dev, strerror(errno));
		return 1;
	}
	sll.sll_ifindex = (int)if_nametoindex(o->dev);
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, o->dst_mac, 6);

	if (o->blast_ms) {
		err = send_blast(o, fd, &sll, (const __u8 *)ifr.ifr_hwaddr.sa_data);
		close(fd);
		free(s);
		return err ? 1 : 0;
	}
	if (o->block) {
		err = send_shuffled(o, fd, &sll, (const __u8 *)ifr.ifr_hwaddr.sa_data);
		if (err)
			fprintf(stderr, "peer: send: %s\n", strerror(-err));
		close(fd);
		free(s);
		return err ? 1 : 0;
	}
	if (o->suite) {
		phase1 = suite_valid(s);
		n = phase1 + suite_drops(s + phase1);
	} else {
		for (__u32 i = 0; i < o->count && n < SUITE_MAX; i++, n++) {
			struct mroce_hdr h;

			fx_hdr(&h, MROCE_OP_WRITE, o->psn + i);
			h.dqpn = o->qpn;
			h.token = o->token;
			fx_build_hdr(&s[n].f, o->family, &h);
		}
	}
	for (int i = 0; i < n && !err; i++) {
		memcpy(s[i].f.buf, o->dst_mac, 6);
		memcpy(s[i].f.buf + 6, ifr.ifr_hwaddr.sa_data, 6);
		if (o->suite && i == phase1 && o->sync) {
			char want[32];

			/* Drops of duplicates are only certain once the originals are placed. */
			snprintf(want, sizeof(want), "received=%u ", (unsigned int)SUITE_VALID);
			err = sync_wait(o->sync, want, o->timeout_ms);
		}
		if (!err && sendto(fd, s[i].f.buf, (size_t)s[i].f.len, 0, (struct sockaddr *)&sll,
				   sizeof(sll)) != s[i].f.len) {
			fprintf(stderr, "peer: send frame %d: %s\n", i, strerror(errno));
			err = -errno;
		}
	}
	printf("send: frames=%d\n", err ? 0 : n);
	close(fd);
	free(s);
	return err ? 1 : 0;
}

/* ---- recv -------------------------------------------------------------- */

struct rx_state {
	struct xsk_umem		*umem;
	struct xsk_socket	*xsk;
	struct xsk_ring_prod	fq;
	struct xsk_ring_cons	cq;
	struct xsk_ring_cons	rx;
	void			*area;
	__u32			received, placed, dups, invalid, payload_errors;
};

static int fill(struct rx_state *r, __u64 *addrs, __u32 n)
{
	__u32 idx;

	if (xsk_ring_prod__reserve(&r->fq, n, &idx) != n)
		return -ENOSPC;
	for (__u32 i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&r->fq, idx + i) = addrs[i];
	xsk_ring_prod__submit(&r->fq, n);
	return 0;
}

static int fill_all(struct rx_state *r)
{
	static __u64 addrs[NUM_FRAMES];

	for (__u32 i = 0; i < NUM_FRAMES; i++)
		addrs[i] = (__u64)i * FRAME_SIZE;
	return fill(r, addrs, NUM_FRAMES);
}

static int open_xsk(struct rx_state *r, const struct opts *o, const char **mode)
{
	struct xsk_umem_config ucfg = {
		.fill_size = NUM_FRAMES * 2,
		.comp_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.frame_size = FRAME_SIZE,
	};
	struct xsk_socket_config xcfg = {
		.rx_size = NUM_FRAMES,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP,
	};
	struct xsk_ring_prod tx;
	int err;

	r->area = mmap(NULL, (size_t)NUM_FRAMES * FRAME_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->area == MAP_FAILED)
		return -errno;
	err = xsk_umem__create(&r->umem, r->area, (__u64)NUM_FRAMES * FRAME_SIZE, &r->fq, &r->cq, &ucfg);
	if (err)
		return err;
	*mode = "zero-copy";
	err = xsk_socket__create(&r->xsk, o->dev, o->queue, r->umem, &r->rx, &tx, &xcfg);
	if (err) {	/* veth and most drivers without AF_XDP support: copy mode */
		xcfg.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP;
		*mode = "copy";
		err = xsk_socket__create(&r->xsk, o->dev, o->queue, r->umem, &r->rx, &tx, &xcfg);
	}
	return err;
}

static __u64 xsk_dropped(struct rx_state *r)
{
	struct xdp_statistics st = {};
	socklen_t len = sizeof(st);

	if (getsockopt(xsk_socket__fd(r->xsk), SOL_XDP, XDP_STATISTICS, &st, &len))
		return 0;
	return st.rx_dropped > st.rx_fill_ring_empty_descs ? st.rx_dropped : st.rx_fill_ring_empty_descs;
}

/* Place one frame: verify it, write its payload "into memory", then mark its PSN. */
static void place(struct rx_state *r, struct mroce_flow *flow, const __u8 *frame, __u32 len,
		  __u16 port)
{
	struct mroce_pkt pkt;
	struct mroce_hdr h;

	r->received++;
	if (mroce_parse(frame, frame + len, port, &pkt) != MROCE_STAT_RX) {
		r->invalid++;
		return;
	}
	mroce_hdr_decode(&pkt, &h);
	for (__u32 i = 0; i < h.payload_len; i++)
		if (((const __u8 *)pkt.payload)[i] != (__u8)(h.psn * 7 + i)) {
			r->payload_errors++;
			break;
		}
	if (!(pkt.layout & MROCE_EXT_SEQ))
		return;
	if (mroce_rxwin_mark(flow, h.psn) == MROCE_RXWIN_NEW)
		r->placed++;
	else
		r->dups++;
	mroce_rxwin_advance(flow);
}

static int do_recv(const struct opts *o)
{
	MROCE_OPTS(mroce_flow_cfg, fcfg, .token = o->token, .rx_psn = o->psn, .peer_qpn = FX_PEER_QPN);
	struct rx_state r = {};
	struct mroce_dp *dp = NULL;
	struct mroce_dp_info info;
	struct mroce_flow *flow;
	__u64 before[MROCE_STAT_MAX], after[MROCE_STAT_MAX], want[MROCE_STAT_MAX] = {};
	__u32 expect = o->suite ? SUITE_VALID : o->count;
	bool starving = o->starve > 0, flow_added = false, xsk_set = false;
	const char *mode = "";
	long deadline, quiet_until = 0;
	int err, rc = 1;

	err = mroce_dp_open(o->dev, &dp);
	if (!err)
		err = mroce_dp_info(dp, &info);
	if (err) {
		char msg[128];

		mroce_strerror(err, msg, sizeof(msg));
		fprintf(stderr, "peer: %s: %s\n", o->dev, msg);
		goto out;
	}
	err = open_xsk(&r, o, &mode);
	if (err) {
		fprintf(stderr, "peer: AF_XDP socket on %s queue %u: %s\n", o->dev, o->queue, strerror(-err));
		goto out;
	}
	if (!starving && (err = fill_all(&r)))
		goto out;
	err = mroce_dp_xsk_set(dp, o->queue, xsk_socket__fd(r.xsk));
	xsk_set = !err;
	if (!err)
		err = mroce_dp_flow_add(dp, o->qpn, &fcfg);
	flow_added = !err;
	if (err) {
		fprintf(stderr, "peer: flow %u on %s: %s\n", o->qpn, o->dev, strerror(-err));
		goto out;
	}
	flow = mroce_dp_flow(dp, o->qpn);
	mroce_dp_stats(dp, before);
	printf("recv: ready on %s queue %u, %s mode\n", o->dev, o->queue, mode);
	fflush(stdout);
	sync_write(o->sync, "ready\n");

	deadline = now_ms() + o->timeout_ms;
	while (now_ms() < deadline) {
		struct pollfd pfd = { .fd = xsk_socket__fd(r.xsk), .events = POLLIN };
		__u64 addrs[64];
		__u32 idx, n;

		if (starving && xsk_dropped(&r) >= o->starve) {
			starving = false;
			if ((err = fill_all(&r)))
				goto out;
			sync_write(o->sync, "starved=%llu\n", (unsigned long long)xsk_dropped(&r));
		}
		if (xsk_ring_prod__needs_wakeup(&r.fq) || starving)
			poll(&pfd, 1, 5);
		n = xsk_ring_cons__peek(&r.rx, 64, &idx);
		for (__u32 i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&r.rx, idx + i);

			place(&r, flow, xsk_umem__get_data(r.area, d->addr), d->len, info.udp_port);
			addrs[i] = xsk_umem__extract_addr(d->addr);
		}
		if (n) {
			xsk_ring_cons__release(&r.rx, n);
			fill(&r, addrs, n);
			sync_write(o->sync, "received=%u placed=%u \n", r.received, r.placed);
		}
		/* Once everything expected is in, listen a little longer for strays. */
		if (r.received >= expect && !quiet_until)
			quiet_until = now_ms() + (o->suite ? 1000 : 200);
		if (quiet_until && now_ms() > quiet_until)
			break;
	}
	mroce_dp_stats(dp, after);

	printf("recv: received=%u placed=%u dup=%u invalid=%u payload_errors=%u rx_base=%u "
	       "xsk_dropped=%llu\n", r.received, r.placed, r.dups, r.invalid, r.payload_errors,
	       flow->rx_base, (unsigned long long)xsk_dropped(&r));
	rc = r.received == expect && !r.dups && !r.invalid && !r.payload_errors ? 0 : 1;
	if (rc)
		printf("recv: FAIL: expected exactly %u clean frames\n", expect);
	if (o->suite) {
		struct suite_frame *s = calloc(SUITE_MAX, sizeof(*s));
		int n = s ? suite_drops(s) : 0;

		want[MROCE_STAT_RX] = SUITE_VALID;
		for (int i = 0; i < n; i++)
			want[s[i].stat]++;
		free(s);
		if (r.placed != SUITE_PLACED || flow->rx_base != FX_PSN + SUITE_PLACED) {
			printf("recv: FAIL: placed %u, window base %u\n", r.placed, flow->rx_base);
			rc = 1;
		}
		for (int st = 0; st < MROCE_STAT_MAX; st++) {
			__u64 d = after[st] - before[st];

			if (st == MROCE_STAT_PASS || st == MROCE_STAT_RX_BYTES)
				continue;	/* the kernel's own traffic moves these */
			printf("recv: counter %-14s +%llu (want +%llu)\n", mroce_stat_name(st),
			       (unsigned long long)d, (unsigned long long)want[st]);
			if (d != want[st])
				rc = 1;
		}
	}
	printf("recv: %s\n", rc ? "FAIL" : "ok");
out:
	if (dp && flow_added)
		mroce_dp_flow_del(dp, o->qpn);
	if (dp && xsk_set)
		mroce_dp_xsk_clear(dp, o->queue);
	if (r.xsk)
		xsk_socket__delete(r.xsk);
	if (r.umem)
		xsk_umem__delete(r.umem);
	if (r.area && r.area != MAP_FAILED)
		munmap(r.area, (size_t)NUM_FRAMES * FRAME_SIZE);
	mroce_dp_close(dp);
	return rc;
}

/* --op write,send,ack: the blast's opcodes, in turn. */
static int parse_ops(const char *arg, struct opts *o)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	o->nops = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (o->nops == sizeof(o->ops))
			return -1;
		if (!strcmp(t, "write"))
			o->ops[o->nops++] = MROCE_OP_WRITE;
		else if (!strcmp(t, "send"))
			o->ops[o->nops++] = MROCE_OP_SEND;
		else if (!strcmp(t, "ack"))
			o->ops[o->nops++] = MROCE_OP_ACK;
		else
			return -1;
	}
	return o->nops ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: peer send --dev DEV --dst-mac MAC (--suite [--sync FILE] | --count N [--psn P]\n"
		"                 [--qpn Q] [--token HEX] [--family 4|6]\n"
		"                 [--shuffle-block N --sync FILE [--dup-pct P] [--seed S]]\n"
		"                 | --blast-ms MS [--qpn Q[,Q...] (0: every QPN)] [--token HEX]\n"
		"                   [--src-ip A] [--dst-ip A]   (IPv4 frames to those addresses)\n"
		"                   [--op write|send|ack[,...]] [--guess | --guess-psn] [--seed S] [--queue N]\n"
		"                   [--raddr A --rkey K] [--rate PPS])\n"
		"       peer recv --dev DEV (--suite | --count N) [--qpn Q] [--token HEX] [--psn P]\n"
		"                 [--queue N] [--starve N] [--sync FILE] [--timeout-ms T]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", required_argument, 0, 'd' }, { "dst-mac", required_argument, 0, 'm' },
		{ "suite", no_argument, 0, 's' }, { "count", required_argument, 0, 'c' },
		{ "qpn", required_argument, 0, 'q' }, { "token", required_argument, 0, 't' },
		{ "psn", required_argument, 0, 'p' }, { "queue", required_argument, 0, 'Q' },
		{ "starve", required_argument, 0, 'S' }, { "sync", required_argument, 0, 'y' },
		{ "family", required_argument, 0, 'f' }, { "timeout-ms", required_argument, 0, 'T' },
		{ "shuffle-block", required_argument, 0, 'b' }, { "dup-pct", required_argument, 0, 'D' },
		{ "seed", required_argument, 0, 'e' }, { "blast-ms", required_argument, 0, 'B' },
		{ "src-ip", required_argument, 0, 'I' }, { "dst-ip", required_argument, 0, 'J' },
		{ "op", required_argument, 0, 'o' }, { "guess", no_argument, 0, 'g' },
		{ "raddr", required_argument, 0, 'r' }, { "rkey", required_argument, 0, 'k' },
		{ "rate", required_argument, 0, 'R' }, { "guess-psn", no_argument, 0, 'G' },
		{ 0, 0, 0, 0 },
	};
	struct opts o = { .qpn = FX_QPN, .token = FX_TOKEN, .psn = FX_PSN, .family = AF_INET,
			  .timeout_ms = 10000 };
	bool send;
	int c;

	if (argc < 2 || (strcmp(argv[1], "send") && strcmp(argv[1], "recv")))
		usage();
	send = !strcmp(argv[1], "send");
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'm': if (parse_mac(optarg, o.dst_mac)) usage(); o.have_dst = true; break;
		case 's': o.suite = true; break;
		case 'c': o.count = (__u32)strtoul(optarg, NULL, 0); break;
		case 'q': {
			char *p = optarg;

			o.qpn = (__u32)strtoul(optarg, NULL, 0);
			for (o.nqpns = 0; o.qpn && *p && o.nqpns < 16; p += *p == ',')
				o.qpns[o.nqpns++] = (__u32)strtoul(p, &p, 0);
			break;
		}
		case 't': o.token = strtoull(optarg, NULL, 16); break;
		case 'p': o.psn = (__u32)strtoul(optarg, NULL, 0); break;
		case 'Q': o.queue = (__u32)strtoul(optarg, NULL, 0); break;
		case 'S': o.starve = (__u32)strtoul(optarg, NULL, 0); break;
		case 'y': o.sync = optarg; break;
		case 'f': o.family = atoi(optarg) == 6 ? AF_INET6 : AF_INET; break;
		case 'T': o.timeout_ms = atoi(optarg); break;
		case 'b': o.block = (__u32)strtoul(optarg, NULL, 0); break;
		case 'D': o.dup_pct = (__u32)strtoul(optarg, NULL, 0); break;
		case 'e': o.seed = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'B': o.blast_ms = (__u32)strtoul(optarg, NULL, 0); break;
		case 'I': if (inet_pton(AF_INET, optarg, &o.src_ip) != 1) usage(); break;
		case 'J': if (inet_pton(AF_INET, optarg, &o.dst_ip) != 1) usage(); break;
		case 'o': if (parse_ops(optarg, &o)) usage(); break;
		case 'g': o.guess = true; break;
		case 'G': o.guess_psn = true; break;
		case 'r': o.raddr = strtoull(optarg, NULL, 0); break;
		case 'k': o.rkey = (__u32)strtoul(optarg, NULL, 0); break;
		case 'R': o.rate = (__u32)strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!o.dev || (send && !o.have_dst) || (!o.suite && !o.count && !o.blast_ms) ||
	    (o.block && (!o.sync || o.block > MROCE_RXWIN_PSNS / 2)))
		usage();
	libbpf_set_print(NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return send ? do_send(&o) : do_recv(&o);
}
