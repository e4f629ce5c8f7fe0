// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mroce-perf: perftest-style bandwidth and latency tests over libmroce.
 *
 * Each connection is two QPs: a control QP (small SEND messages: START a
 * test, STOP it, the server's counters back) and a data QP. The server
 * exposes one region; in latency tests it answers every ping (WRITE_IMM or
 * SEND) with a pong of the same size. Latency tests report half the round
 * trip (as perftest's *_lat do), except read_lat, whose unit is one READ.
 *
 * Bidirectional bandwidth runs (-b, perftest's): the START tells the server
 * to run the same test toward the client at once, on the same connections,
 * with the client's depth and duration or count. Each end's region is then
 * split: what arrives lands in the first half, what goes out (a WRITE's or
 * SEND's source, what the peer READs) comes from the second, filled with a
 * pattern of that end and size. Each end counts only its own requests'
 * completions; once the client's are done it asks each connection for the
 * server's figures (STATS), which the server gives once that connection's
 * requests are done too, with whether its first half held the client's
 * pattern; the client checks its own the same way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <mroce/mroce.h>
#include <mroce/proto.h>	/* MROCE_VERSION, the wire protocol's */

#include "args.h"
#include "json.h"

#ifndef MROCE_TOOL_VERSION	/* the Makefile's VERSION */
#define MROCE_TOOL_VERSION MROCE_VERSION_STRING
#endif
#include "report.h"

enum { MSG_HELLO = 1, MSG_START, MSG_READY, MSG_STOP, MSG_DONE, MSG_STATS };

#define MSG_F_BIDIR	1	/* START: run the test toward the client too */
#define MSG_F_COUNTED	2	/* START, -b: post iters requests on this connection, not for secs */

struct msg {
	__u32	type;
	__u32	test;
	__u32	size;
	__u32	rkey;
	__u64	addr, len;
	/* -b: START from the client; STATS from the server (its figures, per connection) */
	__u32	flags;
	__u32	depth;		/* START: requests in flight per QP */
	__u64	iters;		/* START: requests to post (MSG_F_COUNTED); STATS: requests done */
	double	secs;		/* START: duration; STATS: from the run's first START to the last completion */
	double	peak;		/* STATS: the server's best window, requests per second */
	__u32	run;		/* which run (size) a START or STATS is about */
	__u32	bad;		/* READY: the run is refused; STATS: the client's data not found */
};

#define CTL_SLOTS	4
#define CTL_STRIDE	(2 * CTL_SLOTS * sizeof(struct msg))	/* a connection's receive and send slots */
#define CTL_BYTES	(PERF_MAX_QPS * CTL_STRIDE)
#define RX_DEPTH	128	/* data receives kept posted by each side for SEND / WRITE_IMM */
#define REGION		(PERF_MAX_SIZE + 4096)
#define WR_CTL		(1ULL << 62)
#define LAT_MAX		(1u << 22)	/* latency samples kept per size */
#define SRC_UNI		4096ULL		/* a WRITE's or SEND's source in a one-way run */
#define SRC_BIDIR	((__u64)PERF_MAX_BIDIR_SIZE + 4096)	/* -b: the second half, to REGION's end */
#define SIDE_CLIENT	1
#define SIDE_SERVER	2

struct conn {
	struct mroce_qp	*cqp, *qp;
	struct msg	*rx, *tx;	/* CTL_SLOTS receive slots, CTL_SLOTS send slots */
	__u32		tx_next;	/* sends read application memory when they go out: rotate */
	struct msg	peer;		/* the server's HELLO */
	__u64		posted, done;	/* data requests */
	/* server, -b: this connection's side of the run */
	bool		bi_on;		/* posting or draining */
	bool		bi_stats;	/* the client asked for the figures: answer once drained */
	bool		bi_counted;	/* bi_target requests, else until bi_end */
	__u64		bi_target;
	double		bi_end, bi_last;
};

struct perf {
	struct perf_args	a;
	struct mroce_dev	*dev;
	struct mroce_cq		*cq;
	struct mroce_mr		*mr, *ctl_mr;
	__u8			*region, *ctl;
	struct mroce_dm		*dm;		/* region is device memory (--memory dm) */
	struct conn		conns[PERF_MAX_QPS];
	__u32			nconns;
	double			*lat;
	__u64			nlat;
	struct perf_meter	meter;		/* this size's intervals and peak */
	char			transport[2 * PERF_MAX_SIZES][256];	/* text mode: lines per size */
	__u32			ntransport;
	bool			bidir;		/* the region split: the client's -b, the server's last START */
	__u32			run;		/* client, -b: the current run */
	struct {				/* server, -b: the run the client started */
		__u32			run, size, depth;
		enum mroce_wr_opcode	op;
		double			t0;
		__u64			ops;
		int			checked;	/* 0: not yet; 1: held the client's data; -1: did not */
	} bi;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/*
 * Let the transport run until something may have happened: in poll mode
 * this thread runs it (busy, or sleeping up to 20 ms once idle for a while),
 * otherwise the library's thread does and we sleep on the CQ's fd (up to
 * 100 ms once idle: completions and the listener wake us).
 */
static void pump(struct perf *p, bool idle, int extra_fd)
{
	if (p->a.poll) {
		mroce_dev_progress(p->dev, idle ? 20 : 0);
		if (idle && extra_fd >= 0) {
			struct pollfd pfd = { .fd = extra_fd, .events = POLLIN };

			poll(&pfd, 1, 0);
		}
		return;
	}
	struct pollfd pfd[2] = { { .fd = mroce_cq_fd(p->cq), .events = POLLIN },
				 { .fd = extra_fd, .events = POLLIN } };

	poll(pfd, extra_fd >= 0 ? 2 : 1, idle ? 100 : 1);
}

/* Resident set size, KiB (/proc/self/status VmRSS). */
static long rss_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static int die(const char *what, int err)
{
	char m[128];

	mroce_strerror(err, m, sizeof(m));
	fprintf(stderr, "mroce-perf: %s: %s\n", what, m);
	return 1;
}

/* -b: the bytes an end sends in a run of `size`: its own and the size's (splitmix64 of the word's index). */
static __u64 pattern_word(int side, __u32 size, __u64 i)
{
	__u64 z = ((__u64)side << 40 ^ (__u64)size << 8 ^ 0x6d726f6365ULL) + (i + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void pattern_fill(__u8 *b, int side, __u32 size)
{
	for (__u32 off = 0; off < size; off += 8) {
		__u64 w = pattern_word(side, size, off / 8);

		memcpy(b + off, &w, size - off < 8 ? size - off : 8);
	}
}

/* Does b hold side's bytes of a run of `size`? */
static bool pattern_held(const __u8 *b, int side, __u32 size)
{
	for (__u32 off = 0; off < size; off += 8) {
		__u64 w = pattern_word(side, size, off / 8);

		if (memcmp(b + off, &w, size - off < 8 ? size - off : 8))
			return false;
	}
	return true;
}

static enum mroce_wr_opcode op_of(enum perf_test t)
{
	return t == PERF_WRITE_BW ? MROCE_WR_RDMA_WRITE :
	       t == PERF_READ_BW || t == PERF_READ_LAT ? MROCE_WR_RDMA_READ :
	       t == PERF_SEND_BW || t == PERF_SEND_LAT ? MROCE_WR_SEND : MROCE_WR_RDMA_WRITE_WITH_IMM;
}

static int post_ctl_recv(struct perf *p, struct conn *c, __u64 slot)
{
	struct mroce_sge sge = { (__u64)(unsigned long)&c->rx[slot], sizeof(struct msg), mroce_mr_lkey(p->ctl_mr) };
	struct mroce_recv_wr wr = { .wr_id = WR_CTL | slot, .sg_list = &sge, .num_sge = 1 };

	return mroce_post_recv(c->cqp, &wr);
}

static int send_ctl(struct perf *p, struct conn *c, const struct msg *m)
{
	struct msg *slot = &c->tx[c->tx_next++ % CTL_SLOTS];
	struct mroce_sge sge = { (__u64)(unsigned long)slot, sizeof(*m), mroce_mr_lkey(p->ctl_mr) };
	struct mroce_send_wr wr = { .wr_id = WR_CTL | 99, .opcode = MROCE_WR_SEND, .sg_list = &sge, .num_sge = 1 };

	*slot = *m;
	return mroce_post_send(c->cqp, &wr);
}

static int post_data_recv(struct perf *p, struct conn *c, __u32 size)
{
	struct mroce_sge sge = { (__u64)(unsigned long)p->region, size, mroce_mr_lkey(p->mr) };
	struct mroce_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };

	return mroce_post_recv(c->qp, &wr);
}

/*
 * A READ lands at the region's start and reads the peer's; WRITE and SEND go
 * from SRC_UNI to the peer's start. With -b the sources (ours, and the
 * peer's that a READ reads) are the second half, SRC_BIDIR.
 */
static int post_data(struct perf *p, struct conn *c, enum mroce_wr_opcode op, __u32 size)
{
	bool read = op == MROCE_WR_RDMA_READ;
	__u64 src = p->bidir ? SRC_BIDIR : SRC_UNI;
	struct mroce_sge sge = { (__u64)(unsigned long)(p->region + (read ? 0 : src)), size, mroce_mr_lkey(p->mr) };
	struct mroce_send_wr wr = { .wr_id = 2, .opcode = op, .sg_list = &sge, .num_sge = 1,
				    .remote_addr = c->peer.addr + (read && p->bidir ? SRC_BIDIR : 0),
				    .rkey = c->peer.rkey };
	int err = mroce_post_send(c->qp, &wr);

	if (!err)
		c->posted++;
	return err;
}

static struct conn *conn_of(struct perf *p, __u32 qpn, bool *ctl)
{
	for (__u32 i = 0; i < p->nconns; i++) {
		if (!p->conns[i].cqp)
			continue;	/* a server slot not in use */
		if ((p->conns[i].qp && mroce_qp_num(p->conns[i].qp) == qpn) ||
		    mroce_qp_num(p->conns[i].cqp) == qpn) {
			*ctl = mroce_qp_num(p->conns[i].cqp) == qpn;
			return &p->conns[i];
		}
	}
	return NULL;
}

/*
 * Wait for a control message of `type` on c; other completions meanwhile are
 * dropped, except that with -b a receive the server's SENDs used is posted again.
 */
static int wait_ctl(struct perf *p, struct conn *c, __u32 type, struct msg *out)
{
	double end = now_s() + 10;

	while (now_s() < end) {
		struct mroce_wc wc;
		bool ctl;
		int n = mroce_poll_cq(p->cq, 1, &wc);

		if (n < 0)
			return n;
		if (!n) {
			pump(p, false, -1);
			continue;
		}
		if (wc.status != MROCE_WC_SUCCESS)
			return -EIO;
		if (p->bidir && wc.opcode == MROCE_WC_RECV) {
			struct conn *k = conn_of(p, wc.qp_num, &ctl);

			if (k && !ctl)
				post_data_recv(p, k, PERF_MAX_SIZE);
		}
		if (conn_of(p, wc.qp_num, &ctl) != c || !ctl || wc.opcode != MROCE_WC_RECV)
			continue;
		*out = c->rx[wc.wr_id & ~WR_CTL];
		post_ctl_recv(p, c, wc.wr_id & ~WR_CTL);
		if (out->type == type)
			return 0;
	}
	return -ETIMEDOUT;
}

static int setup(struct perf *p)
{
	int err;

	MROCE_OPTS(mroce_dev_opts, o, .queue = p->a.queue, .no_thread = p->a.poll,
		   .umem_pool_bytes = p->a.umem ? REGION : 0, .queues = p->a.queues);

	if ((err = mroce_dev_open(p->a.dev, &o, &p->dev)))
		return die(p->a.dev, err);
	if (p->a.dm) {
		if ((err = mroce_alloc_dm(p->dev, REGION, &p->dm)))
			return die("device memory", err);
		p->region = mroce_dm_addr(p->dm);
	} else if (p->a.umem) {
		void *at;

		if ((err = mroce_alloc_umem(p->dev, REGION, &at)))
			return die("UMEM transmit pool", err);
		p->region = at;	/* the device's: goes with it */
	} else {
		p->region = aligned_alloc(4096, REGION);
	}
	p->ctl = aligned_alloc(4096, CTL_BYTES);
	if (!p->region || !p->ctl)
		return die("memory", -ENOMEM);
	memset(p->region, 0x5a, REGION);
	memset(p->ctl, 0, CTL_BYTES);
	if ((err = mroce_create_cq(p->dev, 8192, &p->cq)) ||
	    (err = mroce_reg_mr(p->dev, p->region, REGION, MROCE_ACCESS_LOCAL_WRITE |
				MROCE_ACCESS_REMOTE_WRITE | MROCE_ACCESS_REMOTE_READ, &p->mr)) ||
	    (err = mroce_reg_mr(p->dev, p->ctl, CTL_BYTES, MROCE_ACCESS_LOCAL_WRITE, &p->ctl_mr)))
		return die("setup", err);
	return 0;
}

static void conn_bufs(struct perf *p, struct conn *c, __u32 i)
{
	c->rx = (struct msg *)(p->ctl + i * CTL_STRIDE);
	c->tx = c->rx + CTL_SLOTS;
}

/* ---- server -------------------------------------------------------------- */

/* -b: keep the run's depth in flight on c while its count or time lasts; then it drains. */
static int bidir_post(struct perf *p, struct conn *c, double now)
{
	int err;

	while (c->bi_on && c->posted - c->done < p->bi.depth &&
	       (c->bi_counted ? c->posted < c->bi_target : now < c->bi_end))
		if ((err = post_data(p, c, p->bi.op, p->bi.size)))
			return err;
	if (c->bi_on && c->posted == c->done)
		c->bi_on = false;	/* nothing in flight and nothing more to post */
	return 0;
}

/* A -b START on c: the run begins (its first connection fills our source), then c's side of it. */
static bool bidir_start(struct perf *p, struct conn *c, const struct msg *m, double now)
{
	if (!perf_test_is_bw(m->test) || !m->size || m->size > PERF_MAX_BIDIR_SIZE || !m->depth || m->depth > 256)
		return false;
	if (m->run != p->bi.run || m->size != p->bi.size) {
		p->bi.run = m->run;
		p->bi.size = m->size;
		p->bi.op = op_of(m->test);
		p->bi.t0 = now;
		p->bi.ops = 0;
		p->bi.checked = 0;
		pattern_fill(p->region + SRC_BIDIR, SIDE_SERVER, m->size);
		perf_meter_start(&p->meter, now, m->size);
	}
	p->bi.depth = m->depth;
	c->posted = c->done = 0;
	c->bi_counted = m->flags & MSG_F_COUNTED;
	c->bi_target = m->iters;
	c->bi_end = now + m->secs;
	c->bi_last = now;
	c->bi_stats = false;
	c->bi_on = true;
	return true;
}

/* The server's figures for c, once its side of the run is done: STATS. */
static void bidir_stats(struct perf *p, struct conn *c)
{
	struct msg r = { .type = MSG_STATS, .run = p->bi.run, .iters = c->done, .secs = c->bi_last - p->bi.t0 };

	/*
	 * The client asks once all its requests completed, so whatever it
	 * WRITEs or SENDs here is in place: our first half holds its pattern.
	 */
	if (!p->bi.checked)
		p->bi.checked = pattern_held(p->region, SIDE_CLIENT, p->bi.size) ? 1 : -1;
	r.bad = p->bi.checked < 0;
	r.peak = perf_meter_peak(&p->meter, p->bi.ops, r.secs);
	send_ctl(p, c, &r);
	c->bi_stats = false;
}

/*
 * One event loop: connections (a control and a data QP each) are accepted
 * whenever the listener is readable, so a polling server never blocks in
 * accept while its QPs need the transport. A STOP ends its connection.
 */
static int server(struct perf *p)
{
	MROCE_OPTS(mroce_qp_attr, attr, .send_cq = p->cq, .recv_cq = p->cq, .sq_depth = 256,
		   .rq_depth = 256, .paths = 4, .no_cc = p->a.no_cc, .cc_ecn = p->a.cc_ecn,
		   .cc_delay = p->a.cc_delay);
	struct msg hello = { .type = MSG_HELLO, .addr = (__u64)(unsigned long)p->region,
			     .len = REGION, .rkey = mroce_mr_rkey(p->mr) };
	double closing[PERF_MAX_QPS] = {}, greeted[PERF_MAX_QPS] = {}, last_work = now_s();
	__u32 test = 0, size = 0;
	struct mroce_listener *l;
	int err;

	if ((err = mroce_listen(p->dev, p->a.addr, p->a.port, &l)))
		return die("listen", err);
	printf("mroce-perf: server listening on %s port %u (%s, %s)\n", p->a.addr, p->a.port,
	       p->a.poll ? "busy-polling" : "progress thread",
	       p->dm ? "device memory: XDP places WRITEs" :
	       p->a.umem ? "the UMEM's transmit pool: sent without a copy" : "heap memory");
	fflush(stdout);
	p->nconns = PERF_MAX_QPS;
	for (;;) {
		struct pollfd lp = { .fd = mroce_listener_fd(l), .events = POLLIN };
		struct mroce_wc wc[32];
		double now = now_s();
		int n;

		if (poll(&lp, 1, 0) == 1) {
			struct conn *c = NULL;
			__u32 i;

			/*
			 * A connection is its control QP, greeted at once, then its
			 * data QP, which the client connects only once greeted: so
			 * the next handshake after a control QP is its data QP's.
			 */
			for (i = 0; i < PERF_MAX_QPS && !c; i++) {
				if (!p->conns[i].cqp || p->conns[i].qp)
					continue;
				if (now - greeted[i] <= 10) {
					c = &p->conns[i];
					continue;
				}
				/* a client that never connected its data QP (its connect gives up after 10 s) */
				mroce_destroy_qp(p->conns[i].cqp);
				memset(&p->conns[i], 0, sizeof(p->conns[i]));
				closing[i] = 0;
			}
			for (i = c ? i : 0; i < PERF_MAX_QPS && !c; i++)
				if (!p->conns[i].qp && !p->conns[i].cqp)
					c = &p->conns[i];
			i--;
			if (c && c->cqp) {
				if ((err = mroce_accept(l, &attr, 10000, &c->qp))) {
					die("accept", err);
					mroce_destroy_qp(c->cqp);
					c->cqp = NULL;
				} else {
					for (int r = 0; r < RX_DEPTH; r++)
						post_data_recv(p, c, PERF_MAX_SIZE);
					closing[i] = 0;
				}
			} else if (!c) {
				fprintf(stderr, "mroce-perf: accept: too many connections\n");
			} else if ((err = mroce_accept(l, &attr, 10000, &c->cqp))) {
				die("accept", err);
			} else {
				conn_bufs(p, c, i);
				for (__u64 s = 0; s < CTL_SLOTS; s++)
					post_ctl_recv(p, c, s);
				send_ctl(p, c, &hello);
				greeted[i] = now;
				closing[i] = 0;
			}
			last_work = now;
		}
		n = mroce_poll_cq(p->cq, 32, wc);
		for (int i = 0; i < n; i++) {
			bool ctl;
			struct conn *k = conn_of(p, wc[i].qp_num, &ctl);

			if (!k)
				continue;
			if (wc[i].status != MROCE_WC_SUCCESS) {
				if (wc[i].status != MROCE_WC_WR_FLUSH_ERR)
					fprintf(stderr, "mroce-perf: QP %u: %s\n", wc[i].qp_num,
						mroce_wc_status_str(wc[i].status));
				if (!closing[k - p->conns])
					closing[k - p->conns] = now;	/* the client went away */
				continue;
			}
			if (ctl && wc[i].opcode == MROCE_WC_RECV) {
				struct msg m = k->rx[wc[i].wr_id & ~WR_CTL], r = { .type = MSG_READY };

				post_ctl_recv(p, k, wc[i].wr_id & ~WR_CTL);
				if (m.type == MSG_HELLO) {
					k->peer = m;	/* where latency tests' pongs go */
					continue;
				}
				if (m.type == MSG_STATS) {
					k->bi_stats = true;	/* answered once k's side is done */
					continue;
				}
				if (m.type == MSG_START) {
					test = m.test;
					size = m.size;
					p->bidir = m.flags & MSG_F_BIDIR;
					if (p->bidir && !bidir_start(p, k, &m, now)) {
						fprintf(stderr, "mroce-perf: a bidirectional %s of %u B refused\n",
							perf_test_name(m.test), m.size);
						r.bad = 1;
						p->bidir = false;
					}
				} else if (m.type == MSG_STOP) {
					r.type = MSG_DONE;
					closing[k - p->conns] = now;
				} else {
					continue;
				}
				send_ctl(p, k, &r);
				if (m.type == MSG_START && p->bidir && (err = bidir_post(p, k, now))) {
					die("post", err);
					k->bi_on = false;
				}
				continue;
			}
			/* -b: our own requests' completions (the client's own arrive as receives, if any) */
			if (!ctl && k->bi_on && (wc[i].opcode == MROCE_WC_RDMA_WRITE ||
			    wc[i].opcode == MROCE_WC_RDMA_READ || wc[i].opcode == MROCE_WC_SEND)) {
				k->done++;
				p->bi.ops++;
				k->bi_last = now;
				if ((err = bidir_post(p, k, now))) {
					die("post", err);
					k->bi_on = false;
				}
				continue;
			}
			if (ctl || (wc[i].opcode != MROCE_WC_RECV && wc[i].opcode != MROCE_WC_RECV_RDMA_WITH_IMM))
				continue;
			post_data_recv(p, k, PERF_MAX_SIZE);
			/* Latency tests: answer each ping with a pong of the same kind. */
			if (test == PERF_WRITE_LAT)
				post_data(p, k, MROCE_WR_RDMA_WRITE_WITH_IMM, size);
			else if (test == PERF_SEND_LAT)
				post_data(p, k, MROCE_WR_SEND, size);
		}
		/* -b: figures for the connections whose side is done; the peak of those still running */
		{
			bool running = false;

			for (__u32 i = 0; i < PERF_MAX_QPS; i++) {
				struct conn *k = &p->conns[i];

				if (!k->cqp)
					continue;
				if (k->bi_on && (err = bidir_post(p, k, now))) {	/* its time may be up */
					die("post", err);
					k->bi_on = false;
				}
				running |= k->bi_on;
				if (k->bi_stats && !k->bi_on)
					bidir_stats(p, k);
			}
			if (running)
				perf_meter_tick(&p->meter, now, p->bi.ops);
		}
		/* A finished connection lingers 100 ms: its last ACKs may need resending. */
		for (__u32 i = 0; i < PERF_MAX_QPS; i++) {
			if (!closing[i] || now - closing[i] < 0.1)
				continue;
			mroce_destroy_qp(p->conns[i].qp);
			mroce_destroy_qp(p->conns[i].cqp);
			memset(&p->conns[i], 0, sizeof(p->conns[i]));
			closing[i] = 0;
			printf("mroce-perf: connection %u closed\n", i);
			fflush(stdout);
		}
		if (n > 0)
			last_work = now;
		if (n <= 0)
			pump(p, now - last_work > 1.0, mroce_listener_fd(l));
	}
	return 0;
}

/* ---- client -------------------------------------------------------------- */

/* Asks our QPs' timers made instead of resending (mroce_qp_stats.asks). */
static __u64 perf_asks(struct perf *p)
{
	__u64 n = 0;

	for (__u32 i = 0; i < p->nconns; i++) {
		struct mroce_qp_stats st = { .sz = sizeof(st) };

		if (p->conns[i].qp && !mroce_qp_query_stats(p->conns[i].qp, &st))
			n += st.asks;
	}
	return n;
}

/* -b: the server's side of a run, from its STATS, and whether both ends held the other's data. */
struct bidir_figures {
	__u64	ops;
	double	secs, peak_ops;		/* the server's: its run's length, its best window */
	bool	verified;
};

static void report(struct perf *p, __u32 size, __u64 ops, double secs, double cpu,
		   const struct mroce_dev_stats *s0, const struct mroce_dev_stats *s1, __u64 asks,
		   const struct bidir_figures *bi)
{
	const struct perf_args *a = &p->a;
	double bytes = (double)ops * size, gbps = bytes * 8 / secs / 1e9, mops = (double)ops / secs / 1e6;
	double peak_ops = perf_meter_peak(&p->meter, ops, secs);
	double peak_Bps = peak_ops * size, avg_Bps = bytes / secs;
	struct perf_dir dir[2] = { { ops, (__u64)ops * size, secs, gbps } };
	__u64 all_ops = ops;
	struct perf_lat_summary lat;
	__u64 retx = s1->retx_pkts - s0->retx_pkts, ooo = s1->ooo_pkts - s0->ooo_pkts,
	      dup = s1->dup_pkts - s0->dup_pkts, rto = s1->rto_events - s0->rto_events,
	      retired = s1->paths_retired - s0->paths_retired, pkts = s1->tx_pkts - s0->tx_pkts;
	bool bw = perf_test_is_bw(a->test);

	if (bi) {	/* perftest's -b figures: both directions summed */
		double s_Bps = bi->secs > 0 ? (double)bi->ops * size / bi->secs : 0;

		dir[1] = (struct perf_dir){ bi->ops, bi->ops * size, bi->secs, s_Bps * 8 / 1e9 };
		all_ops += bi->ops;
		bytes += (double)bi->ops * size;
		avg_Bps += s_Bps;
		gbps += dir[1].gbps;
		mops += bi->secs > 0 ? (double)bi->ops / bi->secs / 1e6 : 0;
		peak_Bps += bi->peak_ops * size;
	}
	perf_lat_summarize(p->lat, p->nlat, &lat);
	if (a->json) {
		struct perf_result r = {
			.test = perf_test_name(a->test), .dev = a->dev, .size = size, .qps = a->qps,
			.mode = a->go_back_n ? "gbn" : a->unordered ? "unordered" : "ordered",
			.paths = a->paths, .ops = all_ops, .retx = retx, .ooo = ooo, .dup = dup,
			.tx_pkts = pkts, .rto = rto, .retired = retired, .asks = asks, .secs = secs, .gbps = gbps,
			.mops = mops, .p50 = lat.typical, .p99 = lat.p99, .p999 = lat.p999,
			.rss_kb = rss_kb(), .cpu_s_per_gb = bytes ? cpu / (bytes / 1e9) : 0,
			.peak_gbps = peak_Bps * 8 / 1e9, .lat = lat, .latency_test = !bw,
			.intervals = p->meter.iv, .nintervals = p->meter.niv,
			.bidir = bi, .verified = bi && bi->verified, .dir = { dir[0], dir[1] },
		};

		if (p->meter.oom || perf_json_print(stdout, perf_json_result(&r)))
			fprintf(stderr, "mroce-perf: out of memory for the JSON report\n");
	} else {
		if (bw)
			perf_print_bw_row(stdout, size, all_ops, peak_Bps, avg_Bps, mops, a->gbits);
		else
			perf_print_lat_row(stdout, size, ops, &lat);
		/* mroce's own figures, printed under the table (selftests/test_xsk.sh reads them) */
		if (p->ntransport < 2 * PERF_MAX_SIZES)
			snprintf(p->transport[p->ntransport++], sizeof(p->transport[0]),
				 "%s %u B: %.3f Gbit/s in %.3f s, sent %llu retx %llu ooo %llu dup %llu "
				 "rto %llu retired %llu  cpu %.2f s/GB", perf_test_name(a->test), size,
				 gbps, secs, (unsigned long long)pkts, (unsigned long long)retx,
				 (unsigned long long)ooo, (unsigned long long)dup, (unsigned long long)rto,
				 (unsigned long long)retired, bytes ? cpu / (bytes / 1e9) : 0);
		if (bi && p->ntransport < 2 * PERF_MAX_SIZES)
			snprintf(p->transport[p->ntransport++], sizeof(p->transport[0]),
				 "  both ways: client->server %.3f Gbit/s (%llu in %.3f s), server->client "
				 "%.3f Gbit/s (%llu in %.3f s), total %.3f Gbit/s; %s", dir[0].gbps,
				 (unsigned long long)dir[0].ops, dir[0].secs, dir[1].gbps,
				 (unsigned long long)dir[1].ops, dir[1].secs, gbps,
				 bi->verified ? "each end held the other's data" : "DATA CHECK FAILED");
	}
	fflush(stdout);
}

static __u64 posted_total(const struct perf *p)
{
	__u64 n = 0;

	for (__u32 i = 0; i < p->nconns; i++)
		n += p->conns[i].posted;
	return n;
}

static const char *bidir_fault = "";

/*
 * -b, once all our requests completed: each connection's STATS, which the
 * server sends once its side is done too (so all it WRITEs or SENDs here is
 * in place), then whether our first half holds the server's bytes and its
 * held ours.
 */
static int bidir_collect(struct perf *p, __u32 size, struct bidir_figures *bi)
{
	int err;

	bi->verified = true;
	/* one connection at a time: wait_ctl drops what comes on the others */
	for (__u32 i = 0; i < p->nconns; i++) {
		struct msg m = { .type = MSG_STATS, .run = p->run }, r;

		if ((err = send_ctl(p, &p->conns[i], &m)))
			return err;
		do {
			if ((err = wait_ctl(p, &p->conns[i], MSG_STATS, &r)))
				return err;
		} while (r.run != p->run);
		bi->ops += r.iters;
		if (r.secs > bi->secs)
			bi->secs = r.secs;
		if (r.peak > bi->peak_ops)
			bi->peak_ops = r.peak;
		if (r.bad) {
			bi->verified = false;
			bidir_fault = "the server's buffer does not hold the client's data";
		}
	}
	if (bi->verified && !pattern_held(p->region, SIDE_SERVER, size)) {
		bi->verified = false;
		bidir_fault = "the client's buffer does not hold the server's data";
	}
	return 0;
}

/* One size: run until the duration or iteration count is reached. */
static int run_size(struct perf *p, __u32 size)
{
	const struct perf_args *a = &p->a;
	enum perf_test t = a->test;
	enum mroce_wr_opcode op = op_of(t);
	bool bw = perf_test_is_bw(t);
	struct mroce_dev_stats s0, s1;
	double t0, end, cpu0, sent_at = 0;
	__u64 asks0;
	__u64 ops = 0, target = a->iters;
	int err;

	if (a->bidir) {	/* our source, before the server may READ it */
		p->run++;
		pattern_fill(p->region + SRC_BIDIR, SIDE_CLIENT, size);
	}
	for (__u32 i = 0; i < p->nconns; i++) {
		/* -b: the server posts as many as we do (-n split over the QPs as ours are), or as long */
		struct msg m = { .type = MSG_START, .test = t, .size = size, .run = p->run, .depth = a->depth,
				 .flags = (a->bidir ? MSG_F_BIDIR : 0) | (target ? MSG_F_COUNTED : 0),
				 .iters = target / p->nconns + (i < target % p->nconns), .secs = a->duration_s }, r;

		if ((err = send_ctl(p, &p->conns[i], &m)) || (err = wait_ctl(p, &p->conns[i], MSG_READY, &r)))
			return die("start", err);
		if (r.bad) {
			fprintf(stderr, "mroce-perf: the server refused the bidirectional run (an older mroce-perf?)\n");
			return 1;
		}
		p->conns[i].posted = p->conns[i].done = 0;
	}
	p->nlat = 0;
	mroce_dev_stats(p->dev, &s0);
	asks0 = perf_asks(p);
	cpu0 = cpu_s();
	t0 = now_s();
	perf_meter_start(&p->meter, t0, size);
	end = t0 + a->duration_s;
	/* Bandwidth: keep depth requests in flight on every QP. Latency: one at a time on QP 0. */
	for (__u32 i = 0; i < (bw ? p->nconns : 1); i++)
		for (__u32 d = 0; d < (bw ? a->depth : 1) && (!target || posted_total(p) < target); d++) {
			if ((err = post_data(p, &p->conns[i], op, size)))
				return die("post", err);
			sent_at = now_s();
		}
	for (;;) {
		struct mroce_wc wc[64];
		double now;
		int n = mroce_poll_cq(p->cq, 64, wc);

		if (n < 0)
			return die("poll", n);
		now = now_s();
		for (int k = 0; k < n; k++) {
			bool ctl;
			struct conn *c = conn_of(p, wc[k].qp_num, &ctl);
			bool done_one;

			if (!c || ctl)
				continue;
			if (wc[k].status != MROCE_WC_SUCCESS) {
				fprintf(stderr, "mroce-perf: QP %u: %s\n", wc[k].qp_num, mroce_wc_status_str(wc[k].status));
				return 1;
			}
			/* A ping-pong is done when the pong arrives; READ when it completes. */
			if (t == PERF_WRITE_LAT || t == PERF_SEND_LAT) {
				if (wc[k].opcode != MROCE_WC_RECV && wc[k].opcode != MROCE_WC_RECV_RDMA_WITH_IMM)
					continue;
				post_data_recv(p, c, PERF_MAX_SIZE);
				done_one = true;
			} else {
				done_one = wc[k].opcode != MROCE_WC_RECV && wc[k].opcode != MROCE_WC_RECV_RDMA_WITH_IMM;
				if (!done_one && a->bidir)	/* the server's SEND took a receive */
					post_data_recv(p, c, PERF_MAX_SIZE);
			}
			if (!done_one)
				continue;
			c->done++;
			ops++;
			if (!bw && p->nlat < LAT_MAX)
				p->lat[p->nlat++] = (now - sent_at) * 1e6 / (t == PERF_READ_LAT ? 1 : 2);
			if (target ? posted_total(p) >= target : now >= end)
				continue;	/* draining */
			if ((err = post_data(p, c, op, size)))
				return die("post", err);
			sent_at = now;
		}
		{
			const struct perf_interval *iv = perf_meter_tick(&p->meter, now, ops);

			if (iv && bw && !a->json) {	/* perftest has no such line: iperf3 has */
				perf_print_interval(stdout, iv, a->gbits);
				fflush(stdout);
			}
		}
		{
			__u64 outstanding = 0;

			for (__u32 i = 0; i < p->nconns; i++)
				outstanding += p->conns[i].posted - p->conns[i].done;
			if (!outstanding && ((target && ops >= target) || (!target && now >= end)))
				break;
		}
		if (!n)
			pump(p, false, -1);
		if (now - t0 > a->duration_s + 60)
			return die("run", -ETIMEDOUT);
	}
	mroce_dev_stats(p->dev, &s1);
	{
		double t1 = now_s(), cpu1 = cpu_s();
		struct bidir_figures bi = { .verified = true };

		perf_meter_finish(&p->meter, t1, ops);
		if (a->bidir && (err = bidir_collect(p, size, &bi)))
			return die("the server's figures", err);
		report(p, size, ops, t1 - t0, cpu1 - cpu0, &s0, &s1, perf_asks(p) - asks0, a->bidir ? &bi : NULL);
		if (!bi.verified) {
			fprintf(stderr, "mroce-perf: %s %u B both ways: the data check failed (%s)\n",
				perf_test_name(t), size, bidir_fault);
			return 1;
		}
	}
	return 0;
}

static const char *const titles[PERF_TESTS] = {
	"RDMA_Write BW Test", "RDMA_Write Latency Test", "RDMA_Read BW Test",
	"RDMA_Read Latency Test", "Send BW Test", "Send Latency Test",
};

#define RULE "---------------------------------------------------------------------------------------\n"

/* perftest's block: what runs, then the columns. */
static void print_header(const struct perf *p)
{
	const struct perf_args *a = &p->a;
	char window[16], run[32];

	snprintf(window, sizeof(window), a->window ? "%u pkts" : "default", a->window);
	if (a->iters)
		snprintf(run, sizeof(run), "%llu iters", (unsigned long long)a->iters);
	else
		snprintf(run, sizeof(run), "%.2f s", a->duration_s);
	printf(RULE "                    %s (mroce-perf %s)\n", titles[a->test], MROCE_TOOL_VERSION);
	printf(" %-15s: %-16s %-15s: %s:%u\n", "Device", a->dev, "Server", a->addr, a->port);
	printf(" %-15s: %-16u %-15s: %s\n", "Number of qps", a->qps, "Transport type",
	       "MetaRoCE over UDP (AF_XDP)");
	printf(" %-15s: %-16s %-15s: %s\n", "Connection type", "RC", "Delivery",
	       a->go_back_n ? "go-back-N" : a->unordered ? "unordered, selective repeat" :
	       "ordered, selective repeat");
	printf(" %-15s: %-16u %-15s: %u\n", "Paths per QP", a->paths, "TX depth",
	       perf_test_is_bw(a->test) ? a->depth : 1);
	printf(" %-15s: %-16s %-15s: %s\n", "Window", window, "Progress",
	       a->poll ? "busy-polling" : "library thread");
	printf(" %-15s: %-16s %-15s: %s per size\n", "Memory",
	       a->dm ? "device (dm)" : a->umem ? "UMEM pool" : "heap", "Run", run);
	if (a->gid_index >= 0)
		printf(" %-15s: %d (ignored: mroce addresses the peer by IP)\n", "GID index", a->gid_index);
	if (a->bidir)
		printf(" %-15s: %s\n", "Bidirectional", "on: the server runs the same test toward us at once;"
		       " rows sum both directions");
	if (!perf_test_is_bw(a->test))
		printf(" %-15s: %s\n", "Latency", a->test == PERF_READ_LAT ? "one READ, post to completion" :
		       "half the round trip of a ping-pong");
}

/* The table's closing rule, then mroce's transport figures per size. */
static void print_footer(const struct perf *p)
{
	if (p->a.json)
		return;
	fputs(RULE, stdout);
	for (__u32 i = 0; i < p->ntransport; i++)
		printf("%s\n", p->transport[i]);
	fflush(stdout);
}

static int client(struct perf *p)
{
	const struct perf_args *a = &p->a;
	MROCE_OPTS(mroce_qp_attr, attr, .send_cq = p->cq, .recv_cq = p->cq, .sq_depth = 256,
		   .rq_depth = 256, .paths = a->paths, .go_back_n = a->go_back_n, .max_inflight = a->window,
		   .order = a->unordered ? MROCE_UNORDERED : MROCE_ORDERED, .no_cc = a->no_cc,
		   .cc_ecn = a->cc_ecn, .cc_delay = a->cc_delay);
	int err;

	p->bidir = a->bidir;
	/* -b runs are numbered from a start of our own: a server tells them from an earlier client's */
	p->run = (__u32)(now_s() * 1e6) ^ (__u32)getpid() << 16;
	p->lat = calloc(LAT_MAX, sizeof(double));
	if (!p->lat)
		return die("memory", -ENOMEM);
	for (__u32 i = 0; i < a->qps; i++) {
		struct conn *c = &p->conns[i];

		conn_bufs(p, c, i);
		/*
		 * The server takes the first QP it accepts for control and
		 * greets on it; its accepts return handshakes in the order they
		 * complete, and a handshake's last TCP segment may be resent
		 * (the CM runs over the same lossy network). So the data QP is
		 * connected only once the greeting came on the control QP.
		 */
		if ((err = mroce_connect(p->dev, a->addr, a->port, &attr, 10000, &c->cqp)))
			return die("connect", err);
		p->nconns = i + 1;
		for (__u64 s = 0; s < CTL_SLOTS; s++)
			post_ctl_recv(p, c, s);
		if ((err = wait_ctl(p, c, MSG_HELLO, &c->peer)))
			return die("hello", err);
		if ((err = mroce_connect(p->dev, a->addr, a->port, &attr, 10000, &c->qp)))
			return die("connect", err);
		for (int r = 0; r < RX_DEPTH; r++)
			post_data_recv(p, c, PERF_MAX_SIZE);
		{	/* and ours, where the server's pongs land */
			struct msg me = { .type = MSG_HELLO, .addr = (__u64)(unsigned long)p->region,
					  .len = REGION, .rkey = mroce_mr_rkey(p->mr) };

			if ((err = send_ctl(p, c, &me)))
				return die("hello", err);
		}
	}
	if (!a->json) {
		print_header(p);
		perf_print_columns(stdout, perf_test_is_bw(a->test), a->gbits);
	}
	for (__u32 s = 0; s < a->nsizes; s++) {
		if (run_size(p, a->sizes[s])) {
			print_footer(p);
			return 1;
		}
	}
	print_footer(p);
	for (__u32 i = 0; i < p->nconns; i++) {
		struct msg m = { .type = MSG_STOP, .len = 1 }, r;

		send_ctl(p, &p->conns[i], &m);
		wait_ctl(p, &p->conns[i], MSG_DONE, &r);
	}
	return 0;
}

/* Everything setup() and the tests made; the device does not own CQs or regions. */
static void teardown(struct perf *p)
{
	for (__u32 i = 0; i < PERF_MAX_QPS; i++) {
		if (p->conns[i].qp)
			mroce_destroy_qp(p->conns[i].qp);
		if (p->conns[i].cqp)
			mroce_destroy_qp(p->conns[i].cqp);
	}
	if (p->mr)
		mroce_dereg_mr(p->mr);
	if (p->ctl_mr)
		mroce_dereg_mr(p->ctl_mr);
	if (p->cq)
		mroce_destroy_cq(p->cq);
	if (p->dm)
		mroce_free_dm(p->dm);
	else if (p->a.umem)
		mroce_free_umem(p->dev, p->region);
	else
		free(p->region);
	mroce_dev_close(p->dev);
	free(p->lat);
	perf_meter_free(&p->meter);
	free(p->ctl);
	free(p);
}

int main(int argc, char **argv)
{
	struct perf *p = calloc(1, sizeof(*p));
	char err[256];
	int rc;

	if (!p)
		return 1;
	rc = perf_parse_args(argc, argv, &p->a, err, sizeof(err));
	if (rc == PERF_ARGS_VERSION)
		printf("mroce-perf %s (wire protocol version %d)\n", MROCE_TOOL_VERSION, MROCE_VERSION);
	else if (rc < 0)
		fprintf(stderr, "mroce-perf: %s (mroce-perf --help)\n", err);
	else if (rc)
		fputs(perf_usage, stdout);
	if (rc) {
		free(p);
		return rc < 0 ? 2 : 0;
	}
	rc = setup(p) ? 1 : p->a.server ? server(p) : client(p);
	teardown(p);
	return rc;
}
