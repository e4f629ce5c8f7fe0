// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * verbs_check: an end-to-end check of a Verbs provider through nothing but
 * the standard ibverbs API (<infiniband/verbs.h>), so it runs unchanged over
 * Debian's libibverbs or mroce's (LD_LIBRARY_PATH=build/verbs).
 *
 *   server: verbs_check -d DEV [options]
 *   client: verbs_check -d DEV [options] SERVER_IPV4
 *   alone:  verbs_check -d DEV --refusals-only   (no peer: what must be refused)
 *
 * Both ends exchange, over TCP (as ibv_rc_pingpong does), per QP its QPN, a
 * random 24-bit PSN, GID 0 and the addresses and rkeys of two regions (the
 * one the peer WRITEs into, the one it READs from). Then, on every QP and in
 * both directions at once, the requester runs rounds of W work requests in
 * flight: a mix of RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM and
 * RDMA_READ of 1 B .. 1 MiB (sizes around the path MTU and the interface's),
 * some inline, some with two SGEs, only every k-th signaled.
 *
 * The schedule of a round (opcode, size, offsets, imm) is a function of a
 * seed the server draws, the QP and the round, so the responder knows what
 * to expect: it posts exactly the receives the round needs, fills what the
 * peer will READ and poisons what it will WRITE, and says READY over TCP.
 * The requester posts the round, checks every completion (status, opcode,
 * wr_id, qp_num, byte_len of READs, completion order), checks every READ
 * byte, and says END. The responder checks every receive completion
 * (opcode, byte_len, imm_data, wc_flags, wr_id, qp_num), every byte SENT
 * and WRITTEN, and that nothing outside those spans changed. Bytes are a
 * function of (seed, direction, qp, seq, offset). Any mismatch: a message
 * on stderr and exit 1. A stall of 20 s without progress also fails.
 *
 * Modes: -e completion channel (req_notify_cq / get_cq_event, the channel
 * fd polled beside the TCP socket), -x the extended post API (ibv_qp_to_qp_ex,
 * ibv_wr_*), -c the extended CQ (ibv_create_cq_ex, ibv_start_poll ...).
 * --refusals: first check that UD/UC QPs, SRQs, memory windows and atomics
 * are refused with an error (never a crash), and that the QP still works.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_QPS		64
#define MAX_W		256
#define POISON		0xa5
#define STALL_S		20
#define MAX_INLINE	64

static const char *role = "?";

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "verbs_check %s: FAIL: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ---- options --------------------------------------------------------------------------- */

static struct {
	const char *dev, *server;
	int port, gidx, nqp, w, rounds, sig_every;
	size_t region, max_size;
	bool events, wr_api, cq_ex, refusals, refusals_only;
} opt = { .port = 18515, .nqp = 4, .w = 64, .rounds = 20, .sig_every = 4,
	  .region = 2u << 20, .max_size = 1u << 20 };

/* ---- the deterministic schedule --------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t seed;

/* The bytes of one message: dir = the requester (0 server, 1 client). */
static uint64_t pat_base(int dir, int qp, uint32_t seq)
{
	return mix64(seed ^ mix64(((uint64_t)dir << 56) ^ ((uint64_t)qp << 32) ^ seq));
}

static uint8_t pat_byte(uint64_t base, size_t off)
{
	return (uint8_t)(mix64(base ^ (off >> 3)) >> ((off & 7) * 8));
}

/* Byte k of a word is bits 8k.. of its hash, whatever the host's byte order. */
static inline uint64_t le_fix(uint64_t v)
{
	return htole64(v);
}

static void pat_fill(uint8_t *p, size_t len, uint64_t base)
{
	for (size_t i = 0; i < len; i++) {
		if ((i & 7) == 0 && i + 8 <= len) {
			uint64_t v = le_fix(mix64(base ^ (i >> 3)));

			memcpy(p + i, &v, 8);
			i += 7;
			continue;
		}
		p[i] = pat_byte(base, i);
	}
}

/* The offset of the first wrong byte, or -1. */
static long pat_check(const uint8_t *p, size_t len, uint64_t base)
{
	for (size_t i = 0; i < len; i++) {
		if ((i & 7) == 0 && i + 8 <= len) {
			uint64_t v = le_fix(mix64(base ^ (i >> 3))), g;

			memcpy(&g, p + i, 8);
			if (g == v) {
				i += 7;
				continue;
			}
		}
		if (p[i] != pat_byte(base, i))
			return (long)i;
	}
	return -1;
}

static long poison_check(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != POISON)
			return (long)i;
	return -1;
}

enum op { OP_WRITE, OP_WRITE_IMM, OP_SEND, OP_SEND_IMM, OP_READ, OP_N };
static const char *op_name[OP_N] = { "RDMA_WRITE", "RDMA_WRITE_WITH_IMM", "SEND",
				     "SEND_WITH_IMM", "RDMA_READ" };

struct wrdesc {
	enum op op;
	uint32_t seq;		/* per QP and direction, from 0 */
	size_t len;
	size_t src_off;		/* in the requester's src region (WRITE*, SEND*) */
	size_t dst_off;		/* in tgt (WRITE*), recv (SEND*), rsrc/rdst (READ) */
	int recv_idx;		/* which receive of the round it takes (-1: none) */
	uint32_t imm;
	bool signaled, inline_, two_sge;
};

struct round {
	struct wrdesc wr[MAX_W];
	int n, nrecv;
	size_t used[3];		/* bytes of tgt, recv, rsrc(/rdst) used */
};

static size_t mtu_bytes = 1024, if_payload = 1472;

/* Sizes 1 B .. max_size, most of them near the boundaries that matter. */
static size_t pick_size(uint64_t r)
{
	size_t m = mtu_bytes, sizes[] = {
		1, 2, 3, 7, 8, 63, 64, 65, 255, 1000, m - 1, m, m + 1, 2 * m - 1, 2 * m + 1,
		if_payload - 64, if_payload, if_payload + 1, 4095, 4096, 4097, 8192 + 13,
		65535, 65536, 65537, 100000, 262144, 1u << 20,
	};
	size_t n = sizeof(sizes) / sizeof(sizes[0]), s;

	/* the big ones (from 64 KiB) one time in eight */
	if ((r & 7) == 0)
		s = sizes[22 + (r >> 3) % (n - 22)];
	else
		s = sizes[(r >> 3) % 22];
	return s > opt.max_size ? opt.max_size : s;
}

static void make_round(struct round *rd, int dir, int qp, int r)
{
	uint64_t st = mix64(seed ^ ((uint64_t)dir << 60) ^ ((uint64_t)qp << 40) ^ (uint64_t)r);
	size_t src = 0;

	memset(rd, 0, sizeof(*rd));
	rd->n = opt.w;
	for (int i = 0; i < opt.w; i++) {
		struct wrdesc *d = &rd->wr[i];
		uint64_t x = mix64(st + (uint64_t)i);
		int kind;
		size_t *used;

		d->seq = (uint32_t)(r * opt.w + i);
		d->op = (enum op)(x % OP_N);
		d->len = pick_size(x >> 8);
		kind = d->op == OP_READ ? 2 : (d->op == OP_SEND || d->op == OP_SEND_IMM) ? 1 : 0;
		/* this kind's region is full: an op of a kind with room */
		for (int k = 0; k < 3 && rd->used[kind] + 1 + 64 > opt.region; k++) {
			static const enum op alt[3] = { OP_SEND, OP_READ, OP_WRITE_IMM };

			d->op = alt[kind];
			kind = (kind + 1) % 3;
		}
		used = &rd->used[kind];
		/* the region is full: a small one instead (64 bytes kept for a
		 * receive's rounding and the poisoned tail checked after the spans) */
		if (*used + d->len + 64 > opt.region)
			d->len = 1 + (x >> 40) % 4096;
		if (*used + d->len + 64 > opt.region)
			d->len = 1;
		if (*used + d->len + 64 > opt.region)
			die("region too small for the schedule (-m)");
		d->dst_off = *used;
		/* receives are laid out at 64-byte steps: the slack must stay poisoned */
		*used += kind == 1 ? (d->len + 64) & ~(size_t)63 : d->len;
		if (d->op != OP_READ) {
			d->src_off = src;
			src += d->len;
			if (src > 2 * opt.region)
				die("source region too small");
		}
		d->recv_idx = (d->op == OP_WRITE_IMM || kind == 1) ? rd->nrecv++ : -1;
		d->imm = (uint32_t)(x >> 32) ^ d->seq;
		d->signaled = i == opt.w - 1 || (d->seq % (uint32_t)opt.sig_every) == 0;
		d->inline_ = d->len <= MAX_INLINE && d->op != OP_READ && ((x >> 20) & 1);
		d->two_sge = !d->inline_ && d->len >= 2 && ((x >> 21) & 3) == 0;
	}
}

/* ---- verbs objects ---------------------------------------------------------------------- */

struct region {
	uint8_t *buf;
	size_t len;
	struct ibv_mr *mr;
};

struct peer_qp {		/* what the other end sent us for one QP */
	uint32_t qpn, psn;
	uint8_t gid[16];
	uint64_t tgt_addr, rsrc_addr;
	uint32_t tgt_rkey, rsrc_rkey;
};

struct qpc {
	int idx;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	uint32_t psn;
	struct peer_qp peer;
	/* src: what we WRITE/SEND; tgt: what the peer WRITEs into; recv: what it
	 * SENDs into; rsrc: what it READs; rdst: where our READs land */
	struct region src, tgt, recv, rsrc, rdst;
	/* requester side */
	int req_round;		/* round being posted / in flight; -1 none */
	bool peer_ready;	/* READY(req_round) came */
	int req_done;		/* rounds completed */
	int next_sig;		/* index in req.wr of the next signaled WR expected */
	struct round req;
	/* responder side */
	int rsp_round;		/* round whose receives are posted */
	int recv_got;
	bool peer_end;
	int rsp_done;
	struct round rsp;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_cq_ex *cqx;
static struct ibv_comp_channel *chan;
static struct qpc qps[MAX_QPS];
static int dir_me, dir_peer;	/* 0 server, 1 client */
static int sock = -1;
static unsigned int cq_events;
static time_t last_progress;
static struct {
	uint64_t posted[OP_N], signaled, send_wc, recv_wc, bytes_checked, events;
} cnt;

static void reg(struct region *r, size_t len, int access)
{
	r->len = len;
	if (posix_memalign((void **)&r->buf, 4096, len))
		die("out of memory");
	memset(r->buf, POISON, len);
	r->mr = ibv_reg_mr(pd, r->buf, len, access);
	if (!r->mr)
		die("ibv_reg_mr(%zu bytes): %s", len, strerror(errno));
	if (r->mr->addr != r->buf || r->mr->length != len)
		die("ibv_reg_mr: the MR says addr %p length %zu, registered %p %zu",
		    r->mr->addr, r->mr->length, (void *)r->buf, len);
}

static void unreg(struct region *r)
{
	if (r->mr && ibv_dereg_mr(r->mr))
		die("ibv_dereg_mr: %s", strerror(errno));
	free(r->buf);
}

static struct ibv_qp *create_rc_qp(void)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = (uint32_t)opt.w + 1, .max_recv_wr = (uint32_t)opt.w + 1,
			 .max_send_sge = 2, .max_recv_sge = 1, .max_inline_data = MAX_INLINE },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct ibv_qp *qp;

	if (opt.wr_api) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				   IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				   IBV_QP_EX_WITH_RDMA_READ;
		qp = ibv_create_qp_ex(ctx, &a);
	} else {
		struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .cap = a.cap,
					       .qp_type = IBV_QPT_RC };
		qp = ibv_create_qp(pd, &ia);
		if (qp && ia.cap.max_inline_data < MAX_INLINE)
			die("ibv_create_qp: max_inline_data %u < %u asked", ia.cap.max_inline_data,
			    MAX_INLINE);
	}
	if (!qp)
		die("ibv_create_qp%s(RC): %s", opt.wr_api ? "_ex" : "", strerror(errno));
	if (qp->qp_type != IBV_QPT_RC || qp->send_cq != cq || qp->pd != pd || qp->context != ctx)
		die("the new QP's fields are wrong");
	return qp;
}

static void setup(void)
{
	struct ibv_device **list;
	int n, i;
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!opt.dev || !strcmp(ibv_get_device_name(list[i]), opt.dev))
			break;
	if (i == n)
		die("no device %s among %d", opt.dev ? opt.dev : "(any)", n);
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("ibv_open_device(%s): %s", ibv_get_device_name(list[i]), strerror(errno));
	ibv_free_device_list(list);
	if (ibv_query_device(ctx, &da))
		die("ibv_query_device: %s", strerror(errno));
	if ((int)da.max_qp_wr < opt.w + 1 || da.max_qp < opt.nqp)
		die("device: max_qp %d max_qp_wr %d, need %d and %d", da.max_qp, da.max_qp_wr,
		    opt.nqp, opt.w + 1);
	if (ibv_query_port(ctx, 1, &pa))
		die("ibv_query_port: %s", strerror(errno));
	if (pa.state != IBV_PORT_ACTIVE)
		die("port 1 is not active (%d)", pa.state);
	mtu_bytes = 128u << pa.active_mtu;	/* IBV_MTU_256 = 1 */
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	if (opt.events) {
		chan = ibv_create_comp_channel(ctx);
		if (!chan)
			die("ibv_create_comp_channel: %s", strerror(errno));
		if (fcntl(chan->fd, F_SETFL, fcntl(chan->fd, F_GETFL) | O_NONBLOCK))
			die("fcntl(channel fd): %s", strerror(errno));
	}
	int depth = opt.nqp * 2 * (opt.w + 1);

	if (opt.cq_ex) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = (uint32_t)depth, .channel = chan,
			.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM,
		};
		cqx = ibv_create_cq_ex(ctx, &ca);
		if (!cqx)
			die("ibv_create_cq_ex: %s", strerror(errno));
		cq = ibv_cq_ex_to_cq(cqx);
	} else {
		cq = ibv_create_cq(ctx, depth, NULL, chan, 0);
		if (!cq)
			die("ibv_create_cq(%d): %s", depth, strerror(errno));
		if (cq->cqe < depth)
			die("ibv_create_cq: %d entries, asked %d", cq->cqe, depth);
	}
	if (opt.events && ibv_req_notify_cq(cq, 0))
		die("ibv_req_notify_cq: %s", strerror(errno));
	for (i = 0; i < opt.nqp; i++) {
		struct qpc *q = &qps[i];

		q->idx = i;
		q->qp = create_rc_qp();
		if (opt.wr_api && !(q->qpx = ibv_qp_to_qp_ex(q->qp)))
			die("ibv_qp_to_qp_ex: NULL");
		if (getrandom(&q->psn, sizeof(q->psn), 0) != sizeof(q->psn))
			die("getrandom");
		q->psn &= 0xffffff;
		reg(&q->src, 2 * opt.region, IBV_ACCESS_LOCAL_WRITE);
		reg(&q->tgt, opt.region, acc);
		reg(&q->recv, opt.region + 4096, IBV_ACCESS_LOCAL_WRITE);	/* + the WRITE_IMM buffers */
		reg(&q->rsrc, opt.region, acc);
		reg(&q->rdst, opt.region, IBV_ACCESS_LOCAL_WRITE);
		q->req_round = -1;
		q->rsp_round = -1;
	}
}

/* ---- TCP: the exchange and the round messages -------------------------------------------- */

static void xwrite(const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = write(sock, c, len);

		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			die("TCP write: %s", n ? strerror(errno) : "closed");
		c += n;
		len -= (size_t)n;
	}
}

static void xread(void *p, size_t len)
{
	char *c = p;

	while (len) {
		ssize_t n = read(sock, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("TCP read: %s", n ? strerror(errno) : "the peer closed the connection");
		c += n;
		len -= (size_t)n;
	}
}

static void tcp_connect(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port) };
	int one = 1;

	if (inet_pton(AF_INET, opt.server ? opt.server : "0.0.0.0", &sa.sin_addr) != 1)
		die("bad address %s", opt.server);
	if (opt.server) {
		for (int tries = 0;; tries++) {
			sock = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(sock, (struct sockaddr *)&sa, sizeof(sa)))
				break;
			if (tries > 100)
				die("connect %s:%d: %s", opt.server, opt.port, strerror(errno));
			close(sock);
			usleep(100000);
		}
	} else {
		int l = socket(AF_INET, SOCK_STREAM, 0);

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1))
			die("listen on port %d: %s", opt.port, strerror(errno));
		printf("verbs_check server: listening on port %d\n", opt.port);
		fflush(stdout);
		sock = accept(l, NULL, NULL);
		if (sock < 0)
			die("accept: %s", strerror(errno));
		close(l);
	}
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

struct hello {
	uint64_t seed;
	uint32_t nqp, w, rounds, sig_every, region, max_size, pad;	/* no padding to compare */
};

static void exchange(void)
{
	struct hello me = { 0, (uint32_t)opt.nqp, (uint32_t)opt.w, (uint32_t)opt.rounds,
			    (uint32_t)opt.sig_every, (uint32_t)opt.region, (uint32_t)opt.max_size, 0 },
		     him;
	union ibv_gid gid;

	if (!opt.server) {
		if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
			die("getrandom");
		me.seed = seed;
	}
	xwrite(&me, sizeof(me));
	xread(&him, sizeof(him));
	if (opt.server)
		seed = him.seed;
	him.seed = me.seed = 0;
	if (memcmp(&me, &him, sizeof(me)))
		die("the two ends were given different -q/-w/-n/-k/-m/-S options");
	if (ibv_query_gid(ctx, 1, opt.gidx, &gid))
		die("ibv_query_gid(%d): %s", opt.gidx, strerror(errno));
	for (int i = 0; i < opt.nqp; i++) {
		struct qpc *q = &qps[i];
		struct peer_qp p = { .qpn = q->qp->qp_num, .psn = q->psn,
				     .tgt_addr = (uintptr_t)q->tgt.buf, .tgt_rkey = q->tgt.mr->rkey,
				     .rsrc_addr = (uintptr_t)q->rsrc.buf, .rsrc_rkey = q->rsrc.mr->rkey };

		memcpy(p.gid, gid.raw, 16);
		xwrite(&p, sizeof(p));
	}
	for (int i = 0; i < opt.nqp; i++)
		xread(&qps[i].peer, sizeof(qps[i].peer));
}

struct msg {
	uint32_t type, qp, round;
};
enum { MSG_READY = 1, MSG_END, MSG_DONE };

static void send_msg(uint32_t type, int qp, int round)
{
	struct msg m = { type, (uint32_t)qp, (uint32_t)round };

	xwrite(&m, sizeof(m));
}

/* ---- connecting the QPs ----------------------------------------------------------------- */

static void connect_qp(struct qpc *q)
{
	struct ibv_port_attr pa;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ };
	struct ibv_qp_init_attr ia;

	if (ibv_query_port(ctx, 1, &pa))
		die("ibv_query_port: %s", strerror(errno));
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("qp %d: modify to INIT: %s", q->idx, strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = q->peer.qpn;
	a.rq_psn = q->peer.psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, q->peer.gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)opt.gidx;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("qp %d: modify to RTR: %s", q->idx, strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = q->psn;
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("qp %d: modify to RTS: %s", q->idx, strerror(errno));
	memset(&a, 0, sizeof(a));
	if (ibv_query_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
			 IBV_QP_CAP, &ia))
		die("qp %d: ibv_query_qp: %s", q->idx, strerror(errno));
	if (a.qp_state != IBV_QPS_RTS || a.dest_qp_num != q->peer.qpn || a.sq_psn != q->psn ||
	    a.rq_psn != q->peer.psn)
		die("qp %d: ibv_query_qp says state %d dest_qp_num %#x sq_psn %#x rq_psn %#x, "
		    "set RTS %#x %#x %#x", q->idx, a.qp_state, a.dest_qp_num, a.sq_psn, a.rq_psn,
		    q->peer.qpn, q->psn, q->peer.psn);
}

/* ---- the responder's side of a round ---------------------------------------------------- */

#define WRID_RECV	(1ull << 63)
static uint64_t wrid(bool recv, int qp, int round, int i)
{
	return (recv ? WRID_RECV : 0) | (uint64_t)qp << 48 | (uint64_t)round << 16 | (uint64_t)i;
}

/* Post the receives round r of the peer takes, fill what it READs, poison the rest. */
static void rsp_prepare(struct qpc *q, int r)
{
	struct round *rd = &q->rsp;

	make_round(rd, dir_peer, q->idx, r);
	memset(q->tgt.buf, POISON, rd->used[0] + 64 < q->tgt.len ? rd->used[0] + 64 : q->tgt.len);
	memset(q->recv.buf, POISON, rd->used[1] + 64 < q->recv.len ? rd->used[1] + 64 : q->recv.len);
	for (int i = 0; i < rd->n; i++) {
		struct wrdesc *d = &rd->wr[i];

		if (d->op == OP_READ)
			pat_fill(q->rsrc.buf + d->dst_off, d->len, pat_base(dir_peer, q->idx, d->seq));
		if (d->recv_idx < 0)
			continue;
		/* WRITE_WITH_IMM's receive gets a small buffer that must stay untouched */
		struct ibv_sge sge = {
			.addr = (uintptr_t)q->recv.buf + (d->op == OP_WRITE_IMM ? rd->used[1] : d->dst_off),
			.length = d->op == OP_WRITE_IMM ? 16 : (uint32_t)((d->len + 64) & ~(size_t)63),
			.lkey = q->recv.mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = wrid(true, q->idx, r, d->recv_idx), .sg_list = &sge,
					  .num_sge = 1 }, *bad = NULL;
		int err = ibv_post_recv(q->qp, &wr, &bad);

		if (err)
			die("qp %d round %d: ibv_post_recv #%d: %s", q->idx, r, d->recv_idx, strerror(err));
	}
	q->rsp_round = r;
	q->recv_got = 0;
	q->peer_end = false;
}

static struct wrdesc *recv_desc(struct round *rd, int idx)
{
	for (int i = 0; i < rd->n; i++)
		if (rd->wr[i].recv_idx == idx)
			return &rd->wr[i];
	return NULL;
}

static void rsp_recv_wc(struct qpc *q, const struct ibv_wc *wc)
{
	struct round *rd = &q->rsp;
	int r = q->rsp_round, idx = q->recv_got;
	struct wrdesc *d = recv_desc(rd, idx);

	/* END may come before the receives are polled: the requester's ACKs say the
	 * data was placed, not that the completions were read */
	if (!d)
		die("qp %d round %d: an unexpected receive completion (wr_id %#llx, %d of %d)",
		    q->idx, r, (unsigned long long)wc->wr_id, idx, rd->nrecv);
	if (wc->wr_id != wrid(true, q->idx, r, idx))
		die("qp %d round %d: receive completion wr_id %#llx, expected %#llx (receives complete in order)",
		    q->idx, r, (unsigned long long)wc->wr_id, (unsigned long long)wrid(true, q->idx, r, idx));
	enum ibv_wc_opcode want = d->op == OP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	bool imm = d->op != OP_SEND;

	if (wc->opcode != want)
		die("qp %d seq %u (%s): receive opcode %d, expected %d", q->idx, d->seq,
		    op_name[d->op], wc->opcode, want);
	if (wc->byte_len != d->len)
		die("qp %d seq %u (%s): receive byte_len %u, expected %zu", q->idx, d->seq,
		    op_name[d->op], wc->byte_len, d->len);
	if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != imm)
		die("qp %d seq %u (%s): wc_flags %#x", q->idx, d->seq, op_name[d->op], wc->wc_flags);
	if (imm && wc->imm_data != htobe32(d->imm))
		die("qp %d seq %u (%s): imm_data %#x, expected %#x (network order)", q->idx, d->seq,
		    op_name[d->op], be32toh(wc->imm_data), d->imm);
	q->recv_got++;
}

/* The peer said END: every receive must have completed; check every byte. */
static void rsp_finish(struct qpc *q)
{
	struct round *rd = &q->rsp;
	long bad;

	if (q->recv_got != rd->nrecv)
		return;		/* receives still on their way: checked again at each completion */
	/* VERBS_CHECK_CORRUPT=1 (the test of this test): one byte of the last
	 * message (not a READ) of round 1 flipped where it landed, which the checks
	 * below must see */
	for (int i = rd->n - 1; i >= 0 && q->rsp_round == 1 && getenv("VERBS_CHECK_CORRUPT"); i--) {
		struct wrdesc *d = &rd->wr[i];

		if (d->op == OP_READ)
			continue;
		((d->op == OP_SEND || d->op == OP_SEND_IMM) ? q->recv.buf : q->tgt.buf)
			[d->dst_off + d->len / 2] ^= 0x10;
		break;
	}
	for (int i = 0; i < rd->n; i++) {
		struct wrdesc *d = &rd->wr[i];
		const uint8_t *p;

		if (d->op == OP_READ)
			continue;
		p = (d->op == OP_SEND || d->op == OP_SEND_IMM ? q->recv.buf : q->tgt.buf) + d->dst_off;
		bad = pat_check(p, d->len, pat_base(dir_peer, q->idx, d->seq));
		if (bad >= 0)
			die("qp %d round %d seq %u (%s, %zu B%s%s): byte %ld is %#x, expected %#x",
			    q->idx, q->rsp_round, d->seq, op_name[d->op], d->len,
			    d->inline_ ? ", inline" : "", d->two_sge ? ", 2 SGEs" : "", bad, p[bad],
			    pat_byte(pat_base(dir_peer, q->idx, d->seq), (size_t)bad));
		cnt.bytes_checked += d->len;
		if (d->op == OP_SEND || d->op == OP_SEND_IMM) {
			size_t slack = ((d->len + 64) & ~(size_t)63) - d->len;

			if ((bad = poison_check(p + d->len, slack)) >= 0)
				die("qp %d seq %u (%s, %zu B): receive buffer written past the message (+%ld)",
				    q->idx, d->seq, op_name[d->op], d->len, bad);
		}
	}
	/* nothing beyond the spans written; WRITE_WITH_IMM's receive buffer untouched */
	if ((bad = poison_check(q->tgt.buf + rd->used[0],
				q->tgt.len - rd->used[0] < 64 ? q->tgt.len - rd->used[0] : 64)) >= 0)
		die("qp %d round %d: WRITE target written past the last WRITE (+%ld)", q->idx, q->rsp_round, bad);
	if ((bad = poison_check(q->recv.buf + rd->used[1],
				q->recv.len - rd->used[1] < 16 ? q->recv.len - rd->used[1] : 16)) >= 0)
		die("qp %d round %d: a WRITE_WITH_IMM wrote into its receive buffer (+%ld)", q->idx,
		    q->rsp_round, bad);
	q->rsp_done++;
	if (q->rsp_done < opt.rounds) {
		rsp_prepare(q, q->rsp_done);
		send_msg(MSG_READY, q->idx, q->rsp_done);
	} else {
		q->rsp_round = -1;
	}
	last_progress = time(NULL);
}

/* ---- the requester's side ---------------------------------------------------------------- */

static void post_classic(struct qpc *q, struct wrdesc *d, uint64_t id)
{
	struct ibv_sge sge[2];
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = 1 }, *bad = NULL;
	int err;

	sge[0] = (struct ibv_sge){ .lkey = q->src.mr->lkey, .length = (uint32_t)d->len,
				   .addr = (uintptr_t)q->src.buf + d->src_off };
	switch (d->op) {
	case OP_WRITE: wr.opcode = IBV_WR_RDMA_WRITE; break;
	case OP_WRITE_IMM: wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM; break;
	case OP_SEND: wr.opcode = IBV_WR_SEND; break;
	case OP_SEND_IMM: wr.opcode = IBV_WR_SEND_WITH_IMM; break;
	case OP_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		sge[0] = (struct ibv_sge){ .lkey = q->rdst.mr->lkey, .length = (uint32_t)d->len,
					   .addr = (uintptr_t)q->rdst.buf + d->dst_off };
		break;
	default: break;
	}
	if (d->op == OP_WRITE || d->op == OP_WRITE_IMM) {
		wr.wr.rdma.remote_addr = q->peer.tgt_addr + d->dst_off;
		wr.wr.rdma.rkey = q->peer.tgt_rkey;
	} else if (d->op == OP_READ) {
		wr.wr.rdma.remote_addr = q->peer.rsrc_addr + d->dst_off;
		wr.wr.rdma.rkey = q->peer.rsrc_rkey;
	}
	if (d->op == OP_WRITE_IMM || d->op == OP_SEND_IMM)
		wr.imm_data = htobe32(d->imm);
	if (d->two_sge) {
		size_t half = d->len / 2;

		sge[1] = sge[0];
		sge[0].length = (uint32_t)half;
		sge[1].addr += half;
		sge[1].length = (uint32_t)(d->len - half);
		wr.num_sge = 2;
	}
	wr.send_flags = (d->signaled ? IBV_SEND_SIGNALED : 0) | (d->inline_ ? IBV_SEND_INLINE : 0);
	err = ibv_post_send(q->qp, &wr, &bad);
	if (err)
		die("qp %d seq %u: ibv_post_send(%s, %zu B): %s", q->idx, d->seq, op_name[d->op], d->len,
		    strerror(err));
	if (bad)
		die("qp %d: ibv_post_send succeeded but set bad_wr", q->idx);
}

static void post_ex(struct qpc *q, struct wrdesc *d, uint64_t id)
{
	struct ibv_qp_ex *x = q->qpx;
	uint64_t src = (uintptr_t)q->src.buf + d->src_off;

	x->wr_id = id;
	x->wr_flags = (d->signaled ? IBV_SEND_SIGNALED : 0) | (d->inline_ ? IBV_SEND_INLINE : 0);
	switch (d->op) {
	case OP_WRITE: ibv_wr_rdma_write(x, q->peer.tgt_rkey, q->peer.tgt_addr + d->dst_off); break;
	case OP_WRITE_IMM:
		ibv_wr_rdma_write_imm(x, q->peer.tgt_rkey, q->peer.tgt_addr + d->dst_off, htobe32(d->imm));
		break;
	case OP_SEND: ibv_wr_send(x); break;
	case OP_SEND_IMM: ibv_wr_send_imm(x, htobe32(d->imm)); break;
	case OP_READ:
		ibv_wr_rdma_read(x, q->peer.rsrc_rkey, q->peer.rsrc_addr + d->dst_off);
		ibv_wr_set_sge(x, q->rdst.mr->lkey, (uintptr_t)q->rdst.buf + d->dst_off, (uint32_t)d->len);
		return;
	default: break;
	}
	if (d->inline_) {
		ibv_wr_set_inline_data(x, (void *)(uintptr_t)src, d->len);
	} else if (d->two_sge) {
		size_t half = d->len / 2;
		struct ibv_sge sge[2] = {
			{ .addr = src, .length = (uint32_t)half, .lkey = q->src.mr->lkey },
			{ .addr = src + half, .length = (uint32_t)(d->len - half), .lkey = q->src.mr->lkey },
		};
		ibv_wr_set_sge_list(x, 2, sge);
	} else {
		ibv_wr_set_sge(x, q->src.mr->lkey, src, (uint32_t)d->len);
	}
}

static void req_post_round(struct qpc *q)
{
	struct round *rd = &q->req;
	int r = q->req_round;

	make_round(rd, dir_me, q->idx, r);
	memset(q->rdst.buf, POISON, rd->used[2] + 64 < q->rdst.len ? rd->used[2] + 64 : q->rdst.len);
	for (int i = 0; i < rd->n; i++) {
		struct wrdesc *d = &rd->wr[i];

		if (d->op != OP_READ)
			pat_fill(q->src.buf + d->src_off, d->len, pat_base(dir_me, q->idx, d->seq));
	}
	if (opt.wr_api)
		ibv_wr_start(q->qpx);
	for (int i = 0; i < rd->n; i++) {
		struct wrdesc *d = &rd->wr[i];

		if (opt.wr_api)
			post_ex(q, d, wrid(false, q->idx, r, i));
		else
			post_classic(q, d, wrid(false, q->idx, r, i));
		cnt.posted[d->op]++;
		cnt.signaled += d->signaled;
		/* inline data is copied at post: the source may change at once */
		if (d->inline_ && !opt.wr_api)
			memset(q->src.buf + d->src_off, 0x5a, d->len);
	}
	if (opt.wr_api) {
		int err = ibv_wr_complete(q->qpx);

		if (err)
			die("qp %d round %d: ibv_wr_complete: %s", q->idx, r, strerror(err));
		/* ibv_wr_complete posted them all: inline sources may change now */
		for (int i = 0; i < rd->n; i++)
			if (rd->wr[i].inline_)
				memset(q->src.buf + rd->wr[i].src_off, 0x5a, rd->wr[i].len);
	}
	q->next_sig = 0;
	while (!rd->wr[q->next_sig].signaled)
		q->next_sig++;
	q->peer_ready = false;
}

static void req_send_wc(struct qpc *q, const struct ibv_wc *wc)
{
	struct round *rd = &q->req;
	int r = q->req_round;

	if (r < 0 || q->next_sig >= rd->n)
		die("qp %d: a send completion with nothing signaled outstanding (wr_id %#llx)", q->idx,
		    (unsigned long long)wc->wr_id);
	struct wrdesc *d = &rd->wr[q->next_sig];
	static const enum ibv_wc_opcode want[OP_N] = { IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
						       IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_READ };

	if (wc->wr_id != wrid(false, q->idx, r, q->next_sig))
		die("qp %d round %d: send completion wr_id %#llx, expected %#llx (seq %u, %s): "
		    "signaled completions come in posting order", q->idx, r, (unsigned long long)wc->wr_id,
		    (unsigned long long)wrid(false, q->idx, r, q->next_sig), d->seq, op_name[d->op]);
	if (wc->opcode != want[d->op])
		die("qp %d seq %u (%s): completion opcode %d, expected %d", q->idx, d->seq,
		    op_name[d->op], wc->opcode, want[d->op]);
	if (d->op == OP_READ && wc->byte_len != d->len)
		die("qp %d seq %u (RDMA_READ): byte_len %u, expected %zu", q->idx, d->seq, wc->byte_len, d->len);
	do
		q->next_sig++;
	while (q->next_sig < rd->n && !rd->wr[q->next_sig].signaled);
	if (q->next_sig < rd->n)
		return;
	/* the last WR is signaled: everything of the round completed; check the READs */
	for (int i = 0; i < rd->n; i++) {
		struct wrdesc *e = &rd->wr[i];
		long bad;

		if (e->op != OP_READ)
			continue;
		bad = pat_check(q->rdst.buf + e->dst_off, e->len, pat_base(dir_me, q->idx, e->seq));
		if (bad >= 0)
			die("qp %d round %d seq %u (RDMA_READ %zu B): byte %ld is %#x, expected %#x", q->idx,
			    r, e->seq, e->len, bad, q->rdst.buf[e->dst_off + (size_t)bad],
			    pat_byte(pat_base(dir_me, q->idx, e->seq), (size_t)bad));
		cnt.bytes_checked += e->len;
	}
	long bad = poison_check(q->rdst.buf + rd->used[2],
				q->rdst.len - rd->used[2] < 64 ? q->rdst.len - rd->used[2] : 64);
	if (bad >= 0)
		die("qp %d round %d: a READ wrote past its buffer (+%ld)", q->idx, r, bad);
	send_msg(MSG_END, q->idx, r);
	q->req_done++;
	q->req_round = q->req_done < opt.rounds ? q->req_done : -1;
	last_progress = time(NULL);
	if (q->req_round >= 0 && q->peer_ready)
		req_post_round(q);
}

/* ---- completions ------------------------------------------------------------------------ */

static struct qpc *qp_of(uint32_t qpn)
{
	for (int i = 0; i < opt.nqp; i++)
		if (qps[i].qp->qp_num == qpn)
			return &qps[i];
	return NULL;
}

static void handle_wc(const struct ibv_wc *wc)
{
	bool recv = wc->wr_id & WRID_RECV;
	int qi = (int)((wc->wr_id >> 48) & 0x7fff);
	struct qpc *q;

	if (wc->status != IBV_WC_SUCCESS)
		die("completion wr_id %#llx qp_num %#x: status %s (%d), vendor_err %#x",
		    (unsigned long long)wc->wr_id, wc->qp_num, ibv_wc_status_str(wc->status),
		    wc->status, wc->vendor_err);
	q = qp_of(wc->qp_num);
	if (!q)
		die("completion wr_id %#llx: qp_num %#x is none of our QPs", (unsigned long long)wc->wr_id,
		    wc->qp_num);
	if (qi != q->idx)
		die("completion wr_id %#llx (QP %d's) carries qp_num %#x (QP %d's)",
		    (unsigned long long)wc->wr_id, qi, wc->qp_num, q->idx);
	last_progress = time(NULL);
	if (recv) {
		cnt.recv_wc++;
		if (q->rsp_round < 0)
			die("qp %d: a receive completion after the last round", q->idx);
		rsp_recv_wc(q, wc);
		if (q->peer_end)
			rsp_finish(q);
	} else {
		cnt.send_wc++;
		req_send_wc(q, wc);
	}
}

static int poll_some(void)
{
	struct ibv_wc wc[32];
	int n = 0;

	if (!cqx) {
		n = ibv_poll_cq(cq, 32, wc);
		if (n < 0)
			die("ibv_poll_cq: %d", n);
		for (int i = 0; i < n; i++)
			handle_wc(&wc[i]);
		return n;
	}
	struct ibv_poll_cq_attr pa = { 0 };
	int err = ibv_start_poll(cqx, &pa);

	if (err == ENOENT)
		return 0;
	if (err)
		die("ibv_start_poll: %s", strerror(err));
	do {
		struct ibv_wc w = {
			.wr_id = cqx->wr_id, .status = cqx->status, .opcode = ibv_wc_read_opcode(cqx),
			.byte_len = ibv_wc_read_byte_len(cqx), .qp_num = ibv_wc_read_qp_num(cqx),
			.wc_flags = ibv_wc_read_wc_flags(cqx),
		};
		if (w.wc_flags & IBV_WC_WITH_IMM)
			w.imm_data = ibv_wc_read_imm_data(cqx);
		wc[n++] = w;
		if (n == 32)
			break;	/* a successful next_poll moves onto an entry: read it too */
		err = ibv_next_poll(cqx);
	} while (!err);
	if (err && err != ENOENT)
		die("ibv_next_poll: %s", strerror(err));
	ibv_end_poll(cqx);
	/* handled after end_poll: handling posts, which must not happen inside a poll */
	for (int i = 0; i < n; i++)
		handle_wc(&wc[i]);
	return n;
}

/* ---- TCP messages ---------------------------------------------------------------------- */

static int peers_done;

static void handle_msg(const struct msg *m)
{
	struct qpc *q;

	if (m->type == MSG_DONE) {
		peers_done = 1;
		return;
	}
	if (m->qp >= (uint32_t)opt.nqp)
		die("bad message from the peer");
	q = &qps[m->qp];
	last_progress = time(NULL);
	if (m->type == MSG_READY) {
		if ((int)m->round != q->req_done)
			die("qp %d: READY for round %u, at round %d", q->idx, m->round, q->req_done);
		q->peer_ready = true;
		if (q->req_round == (int)m->round)
			req_post_round(q);
	} else if (m->type == MSG_END) {
		if ((int)m->round != q->rsp_round)
			die("qp %d: END of round %u, expecting round %d", q->idx, m->round, q->rsp_round);
		q->peer_end = true;
		rsp_finish(q);
	} else {
		die("bad message type %u", m->type);
	}
}

static void read_msgs(void)
{
	static struct msg buf[64];
	static size_t have;
	ssize_t n = recv(sock, (char *)buf + have, sizeof(buf) - have, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0)
		die("TCP: %s", n ? strerror(errno) : "the peer closed the connection (it failed?)");
	have += (size_t)n;
	size_t k = have / sizeof(struct msg);

	for (size_t i = 0; i < k; i++)
		handle_msg(&buf[i]);
	have -= k * sizeof(struct msg);
	memmove(buf, (char *)buf + k * sizeof(struct msg), have);
}

static bool all_done(void)
{
	for (int i = 0; i < opt.nqp; i++)
		if (qps[i].req_done < opt.rounds || qps[i].rsp_done < opt.rounds)
			return false;
	return true;
}

static void stall_check(void)
{
	if (time(NULL) - last_progress < STALL_S)
		return;
	for (int i = 0; i < opt.nqp; i++) {
		struct qpc *q = &qps[i];

		fprintf(stderr, "  qp %d: requester round %d (done %d, peer ready %d, next signaled #%d); "
			"responder round %d (done %d, receives %d of %d, peer end %d)\n", i, q->req_round,
			q->req_done, q->peer_ready, q->next_sig, q->rsp_round, q->rsp_done, q->recv_got,
			q->rsp.nrecv, q->peer_end);
	}
	die("no progress for %d s (%s)", STALL_S,
	    opt.events ? "a completion event missed?" : "completions missing");
}

static void run(void)
{
	bool sent_done = false;

	last_progress = time(NULL);
	for (int i = 0; i < opt.nqp; i++) {
		qps[i].req_round = 0;
		rsp_prepare(&qps[i], 0);
		send_msg(MSG_READY, i, 0);
	}
	for (unsigned long spin = 0;; spin++) {
		if (all_done() && !sent_done) {
			send_msg(MSG_DONE, 0, 0);
			sent_done = true;
		}
		if (sent_done && peers_done)
			break;
		if (opt.events) {
			struct pollfd pf[2] = { { .fd = chan->fd, .events = POLLIN },
						{ .fd = sock, .events = POLLIN } };

			if (poll(pf, 2, 200) < 0 && errno != EINTR)
				die("poll: %s", strerror(errno));
			if (pf[0].revents & POLLIN) {
				struct ibv_cq *ecq;
				void *ectx;

				if (ibv_get_cq_event(chan, &ecq, &ectx)) {
					if (errno != EAGAIN)
						die("ibv_get_cq_event: %s", strerror(errno));
				} else {
					if (ecq != cq)
						die("ibv_get_cq_event: another CQ (%p, ours %p)", (void *)ecq, (void *)cq);
					cq_events++;
					cnt.events++;
					if (ibv_req_notify_cq(cq, 0))
						die("ibv_req_notify_cq: %s", strerror(errno));
					while (poll_some() > 0)
						;
				}
			}
			if (pf[1].revents & (POLLIN | POLLHUP | POLLERR))
				read_msgs();
		} else {
			poll_some();
			if ((spin & 63) == 0)
				read_msgs();
		}
		if ((spin & 1023) == 0 || opt.events)
			stall_check();
	}
}

/* ---- refusals: what mroce does not have fails cleanly ----------------------------------- */

static int refusals_failed;

/*
 * The errors: creating what the device lacks (a QP type, an SRQ, a memory
 * window, atomic access) is EOPNOTSUPP, as libibverbs' providers answer for
 * a verb they do not have; posting an opcode the QP cannot carry is EINVAL,
 * as ibv_post_send(3) says for an invalid WR.
 */
static int want_errno = EOPNOTSUPP;

static void refused(const char *what, bool refused_ok, int err)
{
	bool errno_ok = err == want_errno;

	if (refused_ok && errno_ok) {
		printf("verbs_check %s: refused as it should be: %s (%s)\n", role, what, strerror(err));
		return;
	}
	fprintf(stderr, "verbs_check %s: FAIL: %s: %s\n", role, what,
		refused_ok ? "refused with an unexpected errno" : "was accepted");
	if (refused_ok)
		fprintf(stderr, "    errno %d (%s), expected %s\n", err, strerror(err), strerror(want_errno));
	refusals_failed++;
}

static void check_refusals(struct qpc *connected)
{
	struct ibv_device_attr da;
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp *qp;
	enum ibv_qp_type types[] = { IBV_QPT_UD, IBV_QPT_UC, IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND };
	const char *tname[] = { "UD QP", "UC QP", "raw packet QP", "XRC send QP" };

	if (ibv_query_device(ctx, &da))
		die("ibv_query_device: %s", strerror(errno));
	if (da.atomic_cap != IBV_ATOMIC_NONE)
		refused("ibv_query_device: atomic_cap is not IBV_ATOMIC_NONE", false, 0);
	if (da.max_srq || da.max_mw)
		fprintf(stderr, "verbs_check %s: note: max_srq %d max_mw %d advertised\n", role,
			da.max_srq, da.max_mw);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		ia.qp_type = types[i];
		errno = 0;
		qp = ibv_create_qp(pd, &ia);
		refused(tname[i], !qp, errno);
		if (qp)
			ibv_destroy_qp(qp);
	}
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	errno = 0;
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	refused("ibv_create_srq", !srq, errno);
	if (srq)
		ibv_destroy_srq(srq);
	errno = 0;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	refused("ibv_alloc_mw(type 1)", !mw, errno);
	if (mw)
		ibv_dealloc_mw(mw);
	errno = 0;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	refused("ibv_alloc_mw(type 2)", !mw, errno);
	if (mw)
		ibv_dealloc_mw(mw);
	/* an extended QP that asks for atomics */
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.cap = ia.cap, .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	errno = 0;
	qp = ibv_create_qp_ex(ctx, &ax);
	refused("ibv_create_qp_ex with atomic send_ops_flags", !qp, errno);
	if (qp)
		ibv_destroy_qp(qp);
	/* registering with atomic access */
	static uint64_t word;
	errno = 0;
	struct ibv_mr *mr = ibv_reg_mr(pd, &word, sizeof(word), IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_ATOMIC);
	if (mr) {
		/* rdma-core's providers accept the flag and fail the atomic itself; fine either way */
		printf("verbs_check %s: note: ibv_reg_mr with REMOTE_ATOMIC accepted\n", role);
		ibv_dereg_mr(mr);
	} else {
		refused("ibv_reg_mr with IBV_ACCESS_REMOTE_ATOMIC", true, errno);
	}
	if (!connected)
		return;
	/* an atomic posted on a connected RC QP: refused at post, the QP unharmed */
	struct ibv_sge sge = { .addr = (uintptr_t)connected->rdst.buf, .length = 8,
			       .lkey = connected->rdst.mr->lkey };
	enum ibv_wr_opcode aops[] = { IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD };

	want_errno = EINVAL;
	for (int i = 0; i < 2; i++) {
		struct ibv_send_wr wr = { .wr_id = 0xdead, .sg_list = &sge, .num_sge = 1, .opcode = aops[i],
					  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

		wr.wr.atomic.remote_addr = connected->peer.tgt_addr;
		wr.wr.atomic.rkey = connected->peer.tgt_rkey;
		wr.wr.atomic.compare_add = 1;
		int err = ibv_post_send(connected->qp, &wr, &bad);

		refused(i ? "ibv_post_send(ATOMIC_FETCH_AND_ADD)" : "ibv_post_send(ATOMIC_CMP_AND_SWP)",
			err != 0, err);
		if (err && bad != &wr) {
			fprintf(stderr, "verbs_check %s: FAIL: ibv_post_send refused an atomic without "
				"pointing bad_wr at it\n", role);
			refusals_failed++;
		}
	}
}

/* ---- main ------------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: verbs_check [-d DEV] [-g GIDX] [-p PORT] [-q QPS] [-w WRS] [-n ROUNDS] [-k SIG_EVERY]\n"
		"                   [-m REGION_BYTES] [-S MAX_SIZE] [-e] [-x] [-c] [--refusals] [SERVER]\n"
		"       verbs_check -d DEV --refusals-only\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "refusals", no_argument, NULL, 'R' },
		{ "refusals-only", no_argument, NULL, 'O' },
		{ 0 },
	};
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "d:g:p:q:w:n:k:m:S:exch", lo, NULL)) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'g': opt.gidx = atoi(optarg); break;
		case 'p': opt.port = atoi(optarg); break;
		case 'q': opt.nqp = atoi(optarg); break;
		case 'w': opt.w = atoi(optarg); break;
		case 'n': opt.rounds = atoi(optarg); break;
		case 'k': opt.sig_every = atoi(optarg); break;
		case 'm': opt.region = strtoull(optarg, NULL, 0); break;
		case 'S': opt.max_size = strtoull(optarg, NULL, 0); break;
		case 'e': opt.events = true; break;
		case 'x': opt.wr_api = true; break;
		case 'c': opt.cq_ex = true; break;
		case 'R': opt.refusals = true; break;
		case 'O': opt.refusals_only = true; break;
		default: usage();
		}
	}
	if (optind < argc)
		opt.server = argv[optind++];
	if (optind != argc || opt.nqp < 1 || opt.nqp > MAX_QPS || opt.w < 1 || opt.w > MAX_W ||
	    opt.rounds < 1 || opt.sig_every < 1 || opt.region < 4096 || opt.region > (1u << 30) ||
	    opt.max_size < 1 || opt.max_size > opt.region)
		usage();
	role = opt.refusals_only ? "alone" : opt.server ? "client" : "server";
	dir_me = opt.server ? 1 : 0;
	dir_peer = !dir_me;
	if (opt.refusals_only)
		opt.nqp = 1;
	setup();
	if (opt.refusals_only) {
		check_refusals(NULL);
		if (refusals_failed)
			die("%d refusal checks failed", refusals_failed);
		printf("verbs_check alone: every unsupported feature refused cleanly\n");
		goto teardown;
	}
	tcp_connect();
	exchange();
	for (int i = 0; i < opt.nqp; i++)
		connect_qp(&qps[i]);
	if (opt.refusals) {
		check_refusals(&qps[0]);
		if (refusals_failed)
			die("%d refusal checks failed", refusals_failed);
	}
	printf("verbs_check %s: %d QPs connected (path MTU %zu), %d rounds of %d WRs each way, seed %#llx\n",
	       role, opt.nqp, mtu_bytes, opt.rounds, opt.w, (unsigned long long)seed);
	run();
	printf("verbs_check %s: ok: posted write %llu write_imm %llu send %llu send_imm %llu read %llu "
	       "(%llu signaled); completions send %llu recv %llu; %llu bytes checked%s%s%s\n", role,
	       (unsigned long long)cnt.posted[OP_WRITE], (unsigned long long)cnt.posted[OP_WRITE_IMM],
	       (unsigned long long)cnt.posted[OP_SEND], (unsigned long long)cnt.posted[OP_SEND_IMM],
	       (unsigned long long)cnt.posted[OP_READ], (unsigned long long)cnt.signaled,
	       (unsigned long long)cnt.send_wc, (unsigned long long)cnt.recv_wc,
	       (unsigned long long)cnt.bytes_checked,
	       opt.events ? ", events mode" : "", opt.wr_api ? ", ibv_wr_* API" : "",
	       opt.cq_ex ? ", extended CQ" : "");
	if (opt.events)
		printf("verbs_check %s: %u completion events\n", role, cq_events);
	if (cnt.send_wc != cnt.signaled)
		die("%llu send completions for %llu signaled WRs", (unsigned long long)cnt.send_wc,
		    (unsigned long long)cnt.signaled);
	close(sock);
teardown:
	for (int i = 0; i < opt.nqp; i++) {
		struct qpc *q = &qps[i];

		if (ibv_destroy_qp(q->qp))
			die("ibv_destroy_qp: %s", strerror(errno));
		unreg(&q->src);
		unreg(&q->tgt);
		unreg(&q->recv);
		unreg(&q->rsrc);
		unreg(&q->rdst);
	}
	if (chan)
		ibv_ack_cq_events(cq, cq_events);
	if (ibv_destroy_cq(cq))
		die("ibv_destroy_cq: %s", strerror(errno));
	if (chan && ibv_destroy_comp_channel(chan))
		die("ibv_destroy_comp_channel: %s", strerror(errno));
	if (ibv_dealloc_pd(pd))
		die("ibv_dealloc_pd: %s", strerror(errno));
	if (ibv_close_device(ctx))
		die("ibv_close_device: %s", strerror(errno));
	return 0;
}
