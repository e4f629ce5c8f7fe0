// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Both ends of the libmroce selftests over the real XDP + AF_XDP path.
 *
 *   rdma_test server --dev D --addr A --port P [--region BYTES] [--qps N] [--faults SPEC] [--umem N]
 *                    [--plane IF ...]  (more interfaces: one device over several planes)
 *                    [--queue Q] [--queues N|all]   (either side: the receive queues served)
 *                    [--no-grants]   (grant senders no rates: mroce_dev_opts.no_rate_grants)
 *                    [--timeline F [--timeline-us N]]   (the receive counters every N us, 1000)
 *   rdma_test client --dev D --addr SERVER --port P --sizes LIST [--qps N] [--faults SPEC]
 *                    [--order unordered] [--paths N] [--gbn] [--bad-keys] [--until-killed]
 *                    [--cc ecn|delay|both] [--sports P1,P2,...] [--window PKTS] [--static-paths]
 *                    [--retry N]   (retransmissions of one packet before the QP fails; 12)
 *                    [--dm]   (either side: the region is device memory, XDP places WRITEs)
 *                    [--pool] (either side: the region is in the UMEM's transmit pool, sent
 *                              from without the library's copy; MROCE_TEST_POOL=1 too)
 *                    [--stream BYTES [--roff OFF] [--go-file F] [--timeline F] [--linger-ms N]]
 *                    [--streams N [--stall S] [--rounds R] [--phase-ms MS]]   (both sides)
 *
 * --streams: the data QP carries N ordered streams (attr.streams). The
 * client keeps 2 SENDs of 64 KiB outstanding on every stream; the server
 * keeps 4 receives posted on every stream and checks every 8th message of
 * each by content. In rounds, the client runs a phase with every stream
 * served, then one in which the server posts nothing on stream S (STALL):
 * the other streams' goodput in both is printed, and the ratio. At the end
 * every stream is served again and every SEND must complete.
 *
 * --stream: every data QP WRITEs BYTES at once (QP i to remote offset
 * roff + i * BYTES), after F exists if --go-file is given (a start barrier
 * across hosts); each QP's start, end and rate are printed, the server's
 * memory is checked, and --timeline records "t_ns acked_bytes" every
 * millisecond (CLOCK_MONOTONIC, comparable across namespaces); --linger-ms
 * keeps the QPs open that long afterwards, so tools can read their counters.
 * On the server, --timeline F records the device's receive counters every
 * millisecond instead (the receiver's side of a stall).
 *
 * The server exposes one region (filled with a known pattern) and answers
 * control messages (SEND/RECV) so the client can check, by content, what
 * its one-sided operations did to the server's memory:
 *   CHECK seed,off,len  -> RESULT: mismatching bytes in that range
 *   EXPECT off,len      -> the server posts a receive there, then READY
 *   (data received)     -> RECVD byte_len, imm, status
 *   BYE
 * Faults: "drop=10000,dup=0,reorder=50000,corrupt=0,seed=1" in parts per
 * million, applied to both directions of the device (test-only).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <sys/wait.h>
#include <poll.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <mroce/mroce.h>
#include <mroce/wire.h>
#include "../lib/testhook.h"

enum { CTL_HELLO = 1, CTL_CHECK, CTL_RESULT, CTL_EXPECT, CTL_READY, CTL_RECVD, CTL_BYE,
       CTL_STALL };

struct ctl {
	__u32	type;
	__u32	seed;
	__u64	addr;
	__u64	off;
	__u64	len;
	__u32	rkey;
	__u32	imm;
	__u32	status;
	__u32	pad;
	__u64	value;
};

#define MAX_QPS		64
#define CTL_SLOTS	8

/*
 * Two QPs per connection: control messages on one, data on the other, so a
 * data SEND or WRITE_IMM consumes exactly the receive that EXPECT posted
 * (receives are used in posting order, as in InfiniBand RC).
 */
struct conn {
	struct mroce_qp	*qp;		/* data */
	struct mroce_qp	*cqp;		/* control */
	struct ctl	*rx;		/* CTL_SLOTS receive slots */
	struct ctl	*tx;
	struct ctl	hello;
	struct ctl	pending[CTL_SLOTS];	/* replies that came while waiting for something else */
	int		npending;
	bool		bye;
};

static struct {
	const char	*dev, *addr, *sizes, *faults, *sports, *go_file, *timeline;
	const char	*planes[MROCE_MAX_PLANES - 1];	/* --plane IF, once per plane beyond --dev */
	int		nplanes;
	int		port, qps, paths, umem, linger_ms, window, retry;
	__u32		queue, queues;	/* --queue, --queues: mroce_dev_opts */
	size_t		region, stream, roff;
	bool		cc_ecn, cc_delay, no_cc, static_paths;
	bool		server, unordered, gbn, bad_keys, until_killed, dm, no_grants, pool;
	int		timeline_us;	/* the server's --timeline period */
	int		streams, stall, rounds, phase_ms;	/* --streams */
} o = { .port = 7471, .qps = 1, .paths = 4, .region = 130u << 20, .timeline_us = 1000,
	.stall = -1, .rounds = 3, .phase_ms = 500 };

/* --streams: work request ids of stream traffic, message size, depths */
#define SWR_BASE	(1ULL << 40)
#define SMSG		(64u << 10)
#define SRECVS		4
#define SSENDS		2
#define SCHECK_EVERY	8

static struct mroce_dev *dev;
static struct mroce_cq *cq;
static struct mroce_mr *mr, *ctl_mr;
static __u8 *region;
static struct mroce_dm *dm;	/* --dm: region is device memory */
static bool in_pool;		/* --pool: region is in the UMEM's transmit pool */
static struct ctl *ctl_mem;
static struct conn conns[MAX_QPS];

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Byte i of stream `seed` depends only on (seed, start + i): any range can be checked. */
static void pattern_at(__u8 *p, size_t len, __u32 seed, __u64 start)
{
	size_t i = 0;

	while (i < len) {
		__u64 pos = start + i, z = ((__u64)seed << 40) ^ (pos >> 3);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		for (unsigned int b = (unsigned int)(pos & 7); b < 8 && i < len; b++, i++)
			p[i] = (__u8)(z >> (8 * b));
	}
}

static void pattern(__u8 *p, size_t len, __u32 seed)
{
	pattern_at(p, len, seed, 0);
}

/* Bytes of p that differ from stream `seed` at positions start.. */
static size_t mismatches_at(const __u8 *p, size_t len, __u32 seed, __u64 start)
{
	__u8 want[4096];
	size_t bad = 0;

	for (size_t done = 0; done < len; done += sizeof(want)) {
		size_t n = len - done < sizeof(want) ? len - done : sizeof(want);

		pattern_at(want, n, seed, start + done);
		for (size_t i = 0; i < n; i++)
			bad += p[done + i] != want[i];
	}
	return bad;
}

static size_t mismatches(const __u8 *p, size_t len, __u32 seed)
{
	return mismatches_at(p, len, seed, 0);
}

static int fail(const char *what, int err)
{
	char msg[128];

	mroce_strerror(err, msg, sizeof(msg));
	printf("rdma_test: FAIL: %s: %s\n", what, msg);
	return 1;
}

static struct mroce_sge ctl_sge(struct ctl *c)
{
	return (struct mroce_sge){ (__u64)(unsigned long)c, sizeof(*c), mroce_mr_lkey(ctl_mr) };
}

static int post_ctl_recv(struct conn *c, int slot)
{
	struct mroce_sge sge = ctl_sge(&c->rx[slot]);
	struct mroce_recv_wr wr = { .wr_id = (__u64)slot, .sg_list = &sge, .num_sge = 1 };

	return mroce_post_recv(c->cqp, &wr);
}

static int send_ctl(struct conn *c, const struct ctl *m)
{
	struct mroce_sge sge = ctl_sge(c->tx);
	struct mroce_send_wr wr = { .wr_id = 1000, .opcode = MROCE_WR_SEND, .sg_list = &sge,
				    .num_sge = 1 };

	*c->tx = *m;
	return mroce_post_send(c->cqp, &wr);
}

/* Next completion of any kind, sleeping on the CQ fd. */
static int next_wc(struct mroce_wc *wc, double timeout_s)
{
	struct pollfd pfd = { .fd = mroce_cq_fd(cq), .events = POLLIN };
	double end = now_s() + timeout_s;
	int n;

	while ((n = mroce_poll_cq(cq, 1, wc)) == 0) {
		if (now_s() > end)
			return -ETIMEDOUT;
		poll(&pfd, 1, 100);
	}
	return n < 0 ? n : 0;
}

static struct conn *conn_of(__u32 qpn)
{
	for (int i = 0; i < o.qps; i++)
		if ((conns[i].qp && mroce_qp_num(conns[i].qp) == qpn) ||
		    (conns[i].cqp && mroce_qp_num(conns[i].cqp) == qpn))
			return &conns[i];
	return NULL;
}

/* ---- device memory: the allocation rules --------------------------------- */

#define DM_POOL	(256u << 20)	/* the datapath's default pool */

static int dm_expect(const char *what, int got, int want)
{
	if (got == want)
		return 0;
	printf("rdma_test: FAIL: dm: %s: %d, want %d\n", what, got, want);
	return 1;
}

/* Allocate the whole pool in 4 MiB pieces: how many pieces it took (64 when all free). */
static int dm_fill(struct mroce_dev *d, struct mroce_dm **dms, int max)
{
	int n = 0;

	while (n < max && !mroce_alloc_dm(d, 4u << 20, &dms[n]))
		n++;
	return n;
}

/*
 * rdma_test dm DEV: argument errors, the pool's size, zeroed and separate
 * allocations, -EBUSY while a region is on one, and chunks given back by
 * mroce_dev_close() and by a process that died holding them.
 */
static int dm_check(const char *ifname)
{
	struct mroce_dm *a = NULL, *b = NULL, *all[80];
	struct mroce_mr *m;
	struct mroce_dev *d;
	int err, bad = 0, n, status;
	pid_t child;

	if ((err = mroce_dev_open(ifname, NULL, &d)))
		return fail(ifname, err);
	bad |= dm_expect("length 0", mroce_alloc_dm(d, 0, &a), -EINVAL);
	bad |= dm_expect("no handle", mroce_alloc_dm(d, 4096, NULL), -EINVAL);
	bad |= dm_expect("no device", mroce_alloc_dm(NULL, 4096, &a), -EINVAL);
	bad |= dm_expect("larger than the pool", mroce_alloc_dm(d, DM_POOL + 1, &a), -ENOSPC);
	bad |= dm_expect("free NULL", mroce_free_dm(NULL), -EINVAL);
	if ((err = mroce_alloc_dm(d, 5u << 20, &a)) || (err = mroce_alloc_dm(d, 1, &b)))
		return fail("mroce_alloc_dm", err);
	bad |= dm_expect("length", (int)(mroce_dm_length(a) == (5u << 20)), 1);
	for (size_t i = 0; i < (5u << 20); i++)
		if (((__u8 *)mroce_dm_addr(a))[i]) {
			bad |= dm_expect("zeroed", (int)i, -1);
			break;
		}
	memset(mroce_dm_addr(a), 0x77, 5u << 20);
	bad |= dm_expect("separate", ((__u8 *)mroce_dm_addr(b))[0], 0);
	if ((err = mroce_reg_mr(d, (__u8 *)mroce_dm_addr(a) + 4096, 1u << 20,
				MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE, &m)))
		return fail("mroce_reg_mr on device memory", err);
	bad |= dm_expect("free with a region on it", mroce_free_dm(a), -EBUSY);
	mroce_dereg_mr(m);
	bad |= dm_expect("free", mroce_free_dm(a), 0);
	/* 5 MiB took two chunks, 1 byte one: 63 left after a is freed. */
	n = dm_fill(d, all, 80);
	bad |= dm_expect("chunks left beside a 1-byte allocation", n, 63);
	while (n)
		mroce_free_dm(all[--n]);
	mroce_dev_close(d);	/* b goes with it */

	/* A process that dies holding the whole pool: its chunks are taken back. */
	child = fork();
	if (child == 0) {
		struct mroce_dev *cd;

		if (mroce_dev_open(ifname, NULL, &cd) || dm_fill(cd, all, 80) != 64)
			_exit(1);
		kill(getpid(), SIGKILL);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFSIGNALED(status))
		return fail("the child that dies holding the pool", -ECHILD);
	if ((err = mroce_dev_open(ifname, NULL, &d)))
		return fail(ifname, err);
	n = dm_fill(d, all, 80);
	bad |= dm_expect("chunks after their owner died", n, 64);
	mroce_dev_close(d);	/* what is left goes with the device */
	if ((err = mroce_dev_open(ifname, NULL, &d)))
		return fail(ifname, err);
	bad |= dm_expect("chunks after mroce_dev_close() took them back", dm_fill(d, all, 80), 64);
	mroce_dev_close(d);
	printf("rdma_test: dm: %s\n", bad ? "FAIL" : "ok");
	return bad;
}

/* ---- QPNs: processes on one interface take them at once ----------------- */

#define QPN_MAX_PROCS	8

/*
 * Create QPs on dev until none is left, then connect every `every`-th one
 * (to itself, at addr: nothing reaches another host; the rest stay
 * unconnected, their QPNs reserved): how many, their QPNs in qpns.
 * Creating ends at -ENOSPC; any other error is the test's failure.
 */
static int qpn_take_all(struct mroce_dev *d, const char *addr, int every, struct mroce_qp **qps,
			__u32 *qpns, int *count)
{
	MROCE_OPTS(mroce_qp_attr, qa, .sq_depth = 16, .rq_depth = 16, .max_inflight = 16);
	struct mroce_dev_attr da;
	struct mroce_qp_info info;
	struct in6_addr a6 = {};
	struct mroce_cq *cq;
	int err, n = 0;

	if ((err = mroce_dev_query(d, &da)) || (err = mroce_create_cq(d, 64, &cq)))
		return err;
	a6.s6_addr[10] = a6.s6_addr[11] = 0xff;
	if (inet_pton(AF_INET, addr, &a6.s6_addr[12]) != 1)
		return -EINVAL;
	qa.send_cq = qa.recv_cq = cq;
	/* all created first, as a CM's round trips leave them unconnected a while */
	while (n < MROCE_MAX_QPS && !(err = mroce_create_qp(d, &qa, &qps[n]))) {
		qpns[n] = mroce_qp_num(qps[n]);
		n++;
	}
	*count = n;
	if (err != -ENOSPC)
		return err;
	for (int i = 0; i < n; i += every)
		if ((err = mroce_qp_local_info(qps[i], &a6, AF_INET, &info)) ||
		    (err = mroce_qp_connect(qps[i], &info, da.mac)))
			return err;
	return 0;
}

/* One process of qpn_check(): its pipes, and how it takes and gives back. */
struct qpn_proc {
	pid_t	pid;
	int	rep[2];		/* its reports to the parent */
	int	every;		/* connects every every-th QP it takes */
	bool	closes;		/* closes its device when told (close pipe), then stays */
};

/* go, cls, done: the pipes the parent closes to say so ([0] read here, [1] closed here). */
static int qpn_spawn(struct qpn_proc *k, const char *ifname, const char *addr, const int *gop,
		     const int *clsp, const int *donep)
{
	int go = gop[0], cls = clsp[0], done = donep[0];
	static struct mroce_qp *qps[MROCE_MAX_QPS];
	static __u32 qpns[MROCE_MAX_QPS];
	struct mroce_dev *d = NULL;
	int err, n = 0;
	char c;

	if (pipe(k->rep) || (k->pid = fork()) < 0)
		return -errno;
	if (k->pid) {
		close(k->rep[1]);
		return 0;
	}
	close(gop[1]);	/* else their ends never read EOF */
	close(clsp[1]);
	close(donep[1]);
	err = mroce_dev_open(ifname, NULL, &d);
	/* every process's device open first: they create their QPs at once */
	if (write(k->rep[1], &err, sizeof(err)) != sizeof(err))
		_exit(3);
	if (!err && read(go, &c, 1) < 0)
		err = -errno;
	if (!err)
		err = qpn_take_all(d, addr, k->every, qps, qpns, &n);
	if (write(k->rep[1], &err, sizeof(err)) != sizeof(err) ||
	    write(k->rep[1], &n, sizeof(n)) != sizeof(n) ||
	    write(k->rep[1], qpns, n * sizeof(*qpns)) != (ssize_t)(n * sizeof(*qpns)))
		_exit(3);
	if (k->closes) {
		if (read(cls, &c, 1) < 0)
			_exit(4);
		if (d)
			mroce_dev_close(d);	/* destroys the QPs: their QPNs go back */
		d = NULL;
		if (write(k->rep[1], "c", 1) != 1)	/* closed, and alive */
			_exit(3);
	}
	if (read(done, &c, 1) < 0)	/* held till the parent has counted */
		_exit(4);
	if (d)
		mroce_dev_close(d);
	_exit(err ? 1 : 0);
}

/* Start n processes, let them take QPNs at once, check each QPN went to one: how many. */
static int qpn_round(struct qpn_proc *k, int n, const char *ifname, const char *addr,
		     const int *cls, const int *done, int *bad, __u32 *seen)
{
	static __u32 qpns[MROCE_MAX_QPS];
	int go[2], err, total = 0;

	if (pipe(go))
		return -errno;
	for (int i = 0; i < n; i++)
		if ((err = qpn_spawn(&k[i], ifname, addr, go, cls, done)))
			return err;
	close(go[0]);
	for (int i = 0; i < n; i++)
		if (read(k[i].rep[0], &err, sizeof(err)) != sizeof(err) || err)
			*bad |= fail("qpns: a process's device", err ? err : -EPROTO);
	close(go[1]);	/* all opened: go */
	memset(seen, 0, MROCE_MAX_QPS * sizeof(*seen));
	for (int i = 0; i < n; i++) {
		int m = 0;

		if (read(k[i].rep[0], &err, sizeof(err)) != sizeof(err) ||
		    read(k[i].rep[0], &m, sizeof(m)) != sizeof(m) || m < 0 || m > MROCE_MAX_QPS ||
		    read(k[i].rep[0], qpns, m * sizeof(*qpns)) != (ssize_t)(m * sizeof(*qpns)))
			return -EPROTO;
		if (err) {
			printf("rdma_test: FAIL: qpns: process %d: after %d QPs:", i, m);
			*bad |= fail("", err);
		}
		printf("rdma_test: qpns: process %d took %d QPNs%s\n", i, m,
		       k[i].every > 1 ? ", connected every other" : "");
		for (int q = 0; q < m; q++) {
			if (!qpns[q] || qpns[q] >= MROCE_MAX_QPS || seen[qpns[q]]) {
				printf("rdma_test: FAIL: qpns: QPN %u taken by processes %d and %d\n",
				       qpns[q], qpns[q] < MROCE_MAX_QPS ? (int)seen[qpns[q]] - 1 : -1, i);
				*bad = 1;
				continue;
			}
			seen[qpns[q]] = (__u32)i + 1;
		}
		total += m;
	}
	return total;
}

/*
 * rdma_test qpns DEV ADDR N: N processes, each with a device on a queue of
 * DEV's, create QPs at once until the QPNs run out, then connect them
 * (process 0 every other one only): every QPN must be taken once, by one
 * of them, and no other process may take, replace or delete a live one's
 * flow. Then process 0 is killed holding its QPs (connected and not) and
 * the others close their devices but stay alive; two new processes take
 * QPNs at once: as many again, each once (a dead process's flows taken
 * over by one of them only, a closed device's given back).
 */
static int qpn_check(const char *ifname, const char *addr, int nproc)
{
	static __u32 seen[MROCE_MAX_QPS];
	struct qpn_proc k[QPN_MAX_PROCS + 2] = {};
	int cls[2], done[2], first, again, err, status, bad = 0;
	char c;

	if (nproc < 2 || nproc > QPN_MAX_PROCS)
		return fail("qpns: processes, 2..8", -EINVAL);
	if (pipe(cls) || pipe(done))
		return fail("pipe", -errno);
	for (int i = 0; i < nproc + 2; i++) {
		k[i].every = i == 0 ? 2 : 1;
		k[i].closes = i > 0 && i < nproc;
	}
	first = qpn_round(k, nproc, ifname, addr, cls, done, &bad, seen);
	if (first < 0)
		return fail("qpns: the first round", first);
	/* another process can neither take, replace nor delete a live one's active flow */
	for (__u32 q = 1; q <= MROCE_MAX_QPS; q++) {
		MROCE_OPTS(mroce_flow_cfg, fc, .token = 1);
		struct mroce_dp *dp;

		if (q == MROCE_MAX_QPS) {
			bad |= fail("qpns: no QPN of a process that connects them all", -ENOENT);
			break;
		}
		if (seen[q] < 2)	/* processes 1 .. connect every QP */
			continue;
		if ((err = mroce_dp_open(ifname, &dp)))
			return fail("mroce_dp_open", err);
		bad |= dm_expect("reserving a live process's QPN", mroce_dp_flow_reserve(dp, q), -EEXIST);
		bad |= dm_expect("adding a flow over a live one's", mroce_dp_flow_add(dp, q, &fc), -EEXIST);
		bad |= dm_expect("deleting a live process's flow", mroce_dp_flow_del(dp, q), -EBUSY);
		bad |= dm_expect("its flow still active", (int)mroce_dp_flow(dp, q)->state,
				 MROCE_FLOW_ACTIVE);
		mroce_dp_close(dp);
		break;
	}
	/* process 0 dies holding its QPs; the others close their devices and stay */
	kill(k[0].pid, SIGKILL);
	if (waitpid(k[0].pid, &status, 0) != k[0].pid || !WIFSIGNALED(status))
		bad |= fail("qpns: the process killed", -ECHILD);
	close(cls[1]);
	cls[1] = -1;	/* its number may be a later pipe's */
	for (int i = 1; i < nproc; i++)
		if (read(k[i].rep[0], &c, 1) != 1)
			bad |= fail("qpns: a process closing its device", -EPROTO);
	again = qpn_round(k + nproc, 2, ifname, addr, cls, done, &bad, seen);
	if (again < 0)
		return fail("qpns: the second round", again);
	close(done[1]);
	for (int i = 1; i < nproc + 2; i++)
		if (waitpid(k[i].pid, &status, 0) != k[i].pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad |= fail("qpns: a process's exit", -ECHILD);
	printf("rdma_test: qpns: %d processes at once took %d QPNs, each once; "
	       "2 after them, at once: %d\n", nproc, first, again);
	if (first != again || again < MROCE_MAX_QPS - 8) {
		printf("rdma_test: FAIL: qpns: %d taken, %d after, of %d\n", first, again,
		       MROCE_MAX_QPS - 1);
		bad = 1;
	}
	printf("rdma_test: qpns: %s\n", bad ? "FAIL" : "ok");
	return bad;
}

/* ---- server ------------------------------------------------------------- */

static volatile bool srv_sampling;

/* The server's --timeline: the device's counters every --timeline-us. */
static void *srv_sampler(void *arg)
{
	FILE *tl = arg;
	struct mroce_dp *dp = NULL;

	/* The XDP program's counters too: what reached the host, before user space. */
	if (mroce_dp_open(o.dev, &dp))
		dp = NULL;
	while (srv_sampling) {
		__u64 x[MROCE_STAT_MAX] = {};
		struct mroce_dev_stats st;

		if (dp)
			mroce_dp_stats(dp, x);
		if (!mroce_dev_stats(dev, &st))
			fprintf(tl, "%llu rx %llu ooo %llu dup %llu acks %llu nacks %llu window_drops %llu "
				"xsk_dropped %llu fill_empty %llu tx %llu xdp_rx %llu xdp_dup %llu xdp_dup_limit %llu "
				"xdp_window %llu xdp_other %llu\n", (unsigned long long)now_ns(),
				(unsigned long long)st.rx_pkts, (unsigned long long)st.ooo_pkts,
				(unsigned long long)st.dup_pkts, (unsigned long long)st.acks_tx,
				(unsigned long long)st.nacks_tx, (unsigned long long)st.rx_dropped_window,
				(unsigned long long)st.xsk_rx_dropped, (unsigned long long)st.xsk_rx_fill_ring_empty,
				(unsigned long long)st.tx_pkts, (unsigned long long)x[MROCE_STAT_RX],
				(unsigned long long)x[MROCE_STAT_DUPLICATE],
				(unsigned long long)x[MROCE_STAT_DUP_RETX_LIMIT],
				(unsigned long long)x[MROCE_STAT_OUT_OF_WINDOW],
				(unsigned long long)(x[MROCE_STAT_BAD_TOKEN] + x[MROCE_STAT_UNKNOWN_QP] +
						     x[MROCE_STAT_NO_XSK] + x[MROCE_STAT_BAD_LENGTH] +
						     x[MROCE_STAT_TRUNCATED]));
		usleep((useconds_t)o.timeline_us);
	}
	if (dp)
		mroce_dp_close(dp);
	return NULL;
}

/* ---- --streams: the server's side --------------------------------------- */

static struct {
	int	stall;			/* stream whose receives are not reposted (-1: none) */
	__u32	posted[MROCE_MAX_STREAMS];
	__u64	msgs[MROCE_MAX_STREAMS];
	__u64	checked, bad;
} srv_st = { .stall = -1 };

static __u8 *srv_slot(int s, int k)
{
	return region + ((size_t)s * SRECVS + (size_t)k) * SMSG;
}

static int srv_post_stream(struct conn *c, int s, int k)
{
	struct mroce_sge sge = { (__u64)(unsigned long)srv_slot(s, k), SMSG, mroce_mr_lkey(mr) };
	struct mroce_recv_wr wr = { .wr_id = SWR_BASE | (__u64)s << 8 | (__u64)k, .sg_list = &sge,
				    .num_sge = 1 };
	int err = mroce_post_recv_on(c->qp, (__u32)s, &wr);

	if (!err)
		srv_st.posted[s]++;
	return err;
}

/* Post what stream s lacks of its SRECVS receives (slots in turn, the first free ones). */
static int srv_fill_stream(struct conn *c, int s)
{
	static __u32 next_slot[MROCE_MAX_STREAMS];
	int err = 0;

	while (!err && srv_st.posted[s] < SRECVS) {
		err = srv_post_stream(c, s, (int)(next_slot[s] % SRECVS));
		next_slot[s]++;
	}
	return err;
}

/* A stream receive completed: check it now and then, post it again unless stalled. */
static void srv_stream_recv(struct conn *c, const struct mroce_wc *wc)
{
	int s = (int)((wc->wr_id >> 8) & 0xffff), k = (int)(wc->wr_id & 0xff);

	if (s >= o.streams || k >= SRECVS)
		return;
	srv_st.posted[s]--;
	if (wc->status != MROCE_WC_SUCCESS || wc->byte_len != SMSG) {
		srv_st.bad++;
	} else if (srv_st.msgs[s]++ % SCHECK_EVERY == 0) {
		srv_st.checked++;
		if (mismatches(srv_slot(s, k), SMSG, 9000 + (__u32)s))
			srv_st.bad++;
		memset(srv_slot(s, k), 0, SMSG);	/* the next one checked must land afresh */
	}
	if (s != srv_st.stall)
		srv_fill_stream(c, s);
}

static int server(void)
{
	struct mroce_listener *l;
	int err, done = 0;
	MROCE_OPTS(mroce_qp_attr, attr, .send_cq = cq, .recv_cq = cq, .sq_depth = 64, .rq_depth = 64,
		   .retry_cnt = (__u32)o.retry);

	if (o.streams && (size_t)o.streams * SRECVS * SMSG > o.region)
		return fail("--streams: N x 4 x 64 KiB must fit --region", -EINVAL);
	pattern(region, o.region, 0);
	err = mroce_listen(dev, o.addr, (__u16)o.port, &l);
	if (err)
		return fail("listen", err);
	printf("server: listening on %s:%d, region %zu bytes, pid %d\n", o.addr, o.port, o.region,
	       (int)getpid());
	fflush(stdout);
	for (int i = 0; i < o.qps; i++) {
		struct conn *c = &conns[i];

		err = mroce_accept(l, &attr, 60000, &c->cqp);
		attr.streams = (__u32)o.streams;	/* the data QP's */
		if (!err)
			err = mroce_accept(l, &attr, 60000, &c->qp);
		attr.streams = 0;
		if (err)
			return fail("accept", err);
		for (int s = 0; i == 0 && s < o.streams; s++)
			if ((err = srv_fill_stream(c, s)))
				return fail("post_recv_on", err);
		for (int s = 0; s < CTL_SLOTS; s++)
			if ((err = post_ctl_recv(c, s)))
				return fail("post_recv", err);
		c->hello = (struct ctl){ .type = CTL_HELLO, .addr = (__u64)(unsigned long)region,
					 .len = o.region, .rkey = mroce_mr_rkey(mr) };
		if ((err = send_ctl(c, &c->hello)))
			return fail("hello", err);
	}
	mroce_listener_close(l);
	while (done < o.qps) {
		struct mroce_wc wc;
		struct conn *c;
		struct ctl m, r = {};

		err = next_wc(&wc, 120);
		if (err)
			return fail("server waiting", err);
		c = conn_of(wc.qp_num);
		if (!c)
			continue;
		if (wc.opcode == MROCE_WC_SEND || wc.opcode == MROCE_WC_RDMA_WRITE)
			continue;
		if (wc.status != MROCE_WC_SUCCESS) {
			/* A peer that failed on purpose (bad keys) takes its QP down; that QP is done. */
			if (!c->bye) {
				c->bye = true;
				done++;
			}
			continue;
		}
		if (wc.wr_id >= SWR_BASE && wc.qp_num == mroce_qp_num(c->qp)) {
			srv_stream_recv(c, &wc);	/* --streams */
			continue;
		}
		if (wc.wr_id >= CTL_SLOTS) {	/* a data receive (SEND or WRITE_IMM) */
			r = (struct ctl){ .type = CTL_RECVD, .len = wc.byte_len, .imm = wc.imm_data,
					  .status = wc.status, .value = wc.opcode };
			send_ctl(c, &r);
			continue;
		}
		m = c->rx[wc.wr_id];
		post_ctl_recv(c, (int)wc.wr_id);
		switch (m.type) {
		case CTL_CHECK:
			r.type = CTL_RESULT;
			r.value = m.off + m.len <= o.region ?
				  mismatches_at(region + m.off, m.len, m.seed, m.addr) : ~0ULL;
			break;
		case CTL_EXPECT: {
			struct mroce_sge sge = { (__u64)(unsigned long)(region + m.off), (__u32)m.len,
						 mroce_mr_lkey(mr) };
			struct mroce_recv_wr wr = { .wr_id = 100, .sg_list = &sge, .num_sge = m.len ? 1 : 0 };

			r.type = CTL_READY;
			r.status = (__u32)-mroce_post_recv(c->qp, &wr);
			break;
		}
		case CTL_STALL: {
			int was = srv_st.stall;

			srv_st.stall = m.value == ~0ULL ? -1 : (int)m.value;
			if (was >= 0 && was != srv_st.stall)
				srv_fill_stream(c, was);	/* served again */
			r.type = CTL_READY;
			r.value = srv_st.bad;
			break;
		}
		case CTL_BYE:
			if (m.value) {	/* "all done": QPs the client failed on purpose say nothing */
				done = o.qps;
				continue;
			}
			c->bye = true;
			done++;
			{
				struct mroce_qp_stats qs = { .sz = sizeof(qs) };

				if (!mroce_qp_query_stats(c->qp, &qs))
					printf("server: qp %u: planes down %llu rejoined %llu\n",
					       mroce_qp_num(c->qp), (unsigned long long)qs.plane_downs,
					       (unsigned long long)qs.plane_rejoins);
				fflush(stdout);
			}
			continue;
		default:
			continue;
		}
		if ((err = send_ctl(c, &r)))
			return fail("reply", err);
	}
	/* Linger: the last ACKs may be lost and must be sent again when the client resends. */
	usleep(300000);
	if (o.streams) {
		printf("server: streams: %llu messages checked by content, %llu bad\n",
		       (unsigned long long)srv_st.checked, (unsigned long long)srv_st.bad);
		if (srv_st.bad)
			return fail("streams", -EBADMSG);
	}
	printf("server: ok\n");
	return 0;
}

/* ---- client ------------------------------------------------------------- */

/*
 * Wait for the completion of wr_id on conn c (~0: for the next control
 * message). Control messages that arrive meanwhile are kept, in order: a
 * reply can overtake the ACK that completes the request it answers.
 */
static int wait_for(struct conn *c, __u64 wr_id, struct ctl *reply, enum mroce_wc_status *st)
{
	if (wr_id == ~0ULL && c->npending) {
		if (reply)
			*reply = c->pending[0];
		memmove(c->pending, c->pending + 1, sizeof(c->pending[0]) * (size_t)--c->npending);
		return 0;
	}
	for (;;) {
		struct mroce_wc wc;
		int err = next_wc(&wc, 60);

		if (err)
			return err;
		if (conn_of(wc.qp_num) != c)
			continue;
		if (wc.opcode == MROCE_WC_RECV && wc.wr_id < CTL_SLOTS && wc.status == MROCE_WC_SUCCESS &&
		    mroce_qp_num(c->cqp) == wc.qp_num) {
			struct ctl m = c->rx[wc.wr_id];

			post_ctl_recv(c, (int)wc.wr_id);
			if (wr_id == ~0ULL) {
				if (reply)
					*reply = m;
				return 0;
			}
			if (c->npending < CTL_SLOTS)
				c->pending[c->npending++] = m;
			continue;
		}
		if (wc.wr_id == wr_id || wc.status != MROCE_WC_SUCCESS) {
			if (st)
				*st = wc.status;
			else if (wc.status != MROCE_WC_SUCCESS)
				printf("rdma_test: wr %llu on QP %u: %s\n", (unsigned long long)wc.wr_id,
				       wc.qp_num, mroce_wc_status_str(wc.status));
			return wc.status == MROCE_WC_SUCCESS || st ? 0 : -EIO;
		}
	}
}

static int rpc(struct conn *c, const struct ctl *m, struct ctl *reply)
{
	int err = send_ctl(c, m);

	if (!err)
		err = wait_for(c, 1000, NULL, NULL);
	return err ? err : wait_for(c, ~0ULL, reply, NULL);
}

static int op(struct conn *c, enum mroce_wr_opcode opc, __u8 *local, size_t len, __u64 roff,
	      __u32 rkey_xor, __u32 imm, enum mroce_wc_status *st)
{
	struct mroce_sge sge = { (__u64)(unsigned long)local, (__u32)len, mroce_mr_lkey(mr) };
	struct mroce_send_wr wr = { .wr_id = 7, .opcode = opc, .sg_list = &sge, .num_sge = 1,
				    .remote_addr = c->hello.addr + roff,
				    .rkey = c->hello.rkey ^ rkey_xor, .imm_data = imm };
	int err = mroce_post_send(c->qp, &wr);

	return err ? err : wait_for(c, 7, NULL, st);
}

/* Does the server's [off, off + len) hold stream `seed` from position pos? */
static int check_at(struct conn *c, __u32 seed, __u64 off, __u64 len, __u64 pos, const char *what)
{
	struct ctl m = { .type = CTL_CHECK, .seed = seed, .off = off, .len = len, .addr = pos }, r;
	int err = rpc(c, &m, &r);

	if (err)
		return fail(what, err);
	if (r.type != CTL_RESULT || r.value) {
		printf("rdma_test: FAIL: %s: %llu bytes differ at the server\n", what, (unsigned long long)r.value);
		return 1;
	}
	return 0;
}

static int check(struct conn *c, __u32 seed, __u64 off, __u64 len, const char *what)
{
	return check_at(c, seed, off, len, 0, what);
}

static int expect_recv(struct conn *c, __u64 off, __u64 len)
{
	struct ctl m = { .type = CTL_EXPECT, .off = off, .len = len }, r;
	int err = rpc(c, &m, &r);

	return err ? err : r.type == CTL_READY && !r.status ? 0 : -EIO;
}

static int run_size(struct conn *c, size_t s, __u32 seed)
{
	__u8 *src = region, *dst = region + o.region / 2;
	struct ctl r;
	double t0, t1, t2, t3;
	char what[96];
	int err;

	/* WRITE, verified at the server by content. */
	pattern(src, s, seed);
	t0 = now_s();
	if ((err = op(c, MROCE_WR_RDMA_WRITE, src, s, 0, 0, 0, NULL)))
		return fail("write", err);
	t1 = now_s();
	snprintf(what, sizeof(what), "WRITE %zu", s);
	if (check(c, seed, 0, s, what))
		return 1;
	/* READ it back. */
	memset(dst, 0, s);
	t2 = now_s();
	if ((err = op(c, MROCE_WR_RDMA_READ, dst, s, 0, 0, 0, NULL)))
		return fail("read", err);
	t3 = now_s();
	if (mismatches(dst, s, seed)) {
		printf("rdma_test: FAIL: READ %zu returned other bytes\n", s);
		return 1;
	}
	/* WRITE with immediate: data plus a receive completion carrying the immediate. */
	pattern(src, s, seed + 1);
	if ((err = expect_recv(c, 0, 0)) ||
	    (err = op(c, MROCE_WR_RDMA_WRITE_WITH_IMM, src, s, 0, 0, (__u32)s ^ 0x5a5a5a5a, NULL)) ||
	    (err = wait_for(c, ~0ULL, &r, NULL)))
		return fail("write with immediate", err);
	if (r.type != CTL_RECVD || r.len != s || r.imm != ((__u32)s ^ 0x5a5a5a5a) ||
	    r.value != MROCE_WC_RECV_RDMA_WITH_IMM) {
		printf("rdma_test: FAIL: WRITE_IMM %zu: receiver saw len %llu imm %#x opcode %llu\n", s,
		       (unsigned long long)r.len, r.imm, (unsigned long long)r.value);
		return 1;
	}
	snprintf(what, sizeof(what), "WRITE_IMM %zu", s);
	if (check(c, seed + 1, 0, s, what))
		return 1;
	/* SEND into a receive the server posted. */
	pattern(src, s, seed + 2);
	if ((err = expect_recv(c, 0, s)) ||
	    (err = op(c, MROCE_WR_SEND, src, s, 0, 0, 0, NULL)) ||
	    (err = wait_for(c, ~0ULL, &r, NULL)))
		return fail("send", err);
	if (r.type != CTL_RECVD || r.len != s || r.value != MROCE_WC_RECV) {
		printf("rdma_test: FAIL: SEND %zu: receiver saw len %llu\n", s, (unsigned long long)r.len);
		return 1;
	}
	snprintf(what, sizeof(what), "SEND %zu", s);
	if (check(c, seed + 2, 0, s, what))
		return 1;
	printf("client: qp %u size %zu: WRITE %.3f ms (%.2f Gbit/s), READ %.3f ms (%.2f Gbit/s); "
	       "WRITE_IMM, SEND verified too\n", mroce_qp_num(c->qp), s, (t1 - t0) * 1e3,
	       s ? (double)s * 8 / (t1 - t0) / 1e9 : 0.0, (t3 - t2) * 1e3,
	       s ? (double)s * 8 / (t3 - t2) / 1e9 : 0.0);
	return 0;
}

/* Wrong key, address past the region, READ with a wrong key: refused, memory untouched. */
static int bad_keys(void)
{
	struct conn *ok = &conns[0];
	__u8 *src = region;
	enum mroce_wc_status st;
	struct {
		const char *what;
		enum mroce_wr_opcode op;
		__u32 rkey_xor;
		__u64 off;
	} cases[] = {
		{ "WRITE with a wrong rkey", MROCE_WR_RDMA_WRITE, 0x1000, 0 },
		{ "WRITE past the region", MROCE_WR_RDMA_WRITE, 0, 0 },
		{ "READ with a wrong rkey", MROCE_WR_RDMA_READ, 0x2000, 0 },
	};

	pattern(src, 65536, 4242);
	if (op(ok, MROCE_WR_RDMA_WRITE, src, 65536, 0, 0, 0, NULL) || check(ok, 4242, 0, 65536, "baseline"))
		return 1;
	cases[1].off = ok->hello.len - 100;
	for (int i = 0; i < 3; i++) {
		struct conn *c = &conns[1 + i];

		pattern(src, 4096, 9999);
		if (op(c, cases[i].op, cases[i].op == MROCE_WR_RDMA_READ ? region + o.region / 2 : src,
		       4096, cases[i].off, cases[i].rkey_xor, 0, &st))
			return fail(cases[i].what, -EIO);
		if (st != MROCE_WC_REM_ACCESS_ERR) {
			printf("rdma_test: FAIL: %s completed with '%s'\n", cases[i].what, mroce_wc_status_str(st));
			return 1;
		}
		if (mroce_qp_state(c->qp) != MROCE_QPS_ERR) {
			printf("rdma_test: FAIL: %s: QP not in error state\n", cases[i].what);
			return 1;
		}
		if (check(ok, 4242, 0, 65536, cases[i].what) ||
		    check_at(ok, 0, ok->hello.len - 100, 100, ok->hello.len - 100, "region tail"))
			return 1;
		printf("client: %s -> %s, QP in error, server memory untouched\n", cases[i].what,
		       mroce_wc_status_str(st));
	}
	return 0;
}

/* Keep writing until the server dies; the QP must fail with retries exceeded, promptly. */
static int until_killed(struct conn *c)
{
	enum mroce_wc_status st = MROCE_WC_SUCCESS;
	double last_ok = now_s();
	size_t s = 1 << 20;
	int n = 0;

	printf("client: writing until the server goes away\n");
	fflush(stdout);
	while (st == MROCE_WC_SUCCESS) {
		pattern(region, s, (__u32)n);
		if (op(c, MROCE_WR_RDMA_WRITE, region, s, 0, 0, 0, &st))
			return fail("write", -EIO);
		if (st == MROCE_WC_SUCCESS) {
			last_ok = now_s();
			n++;
		}
	}
	printf("client: after %d writes: %s, %.0f ms after the last success; QP %s\n", n,
	       mroce_wc_status_str(st), (now_s() - last_ok) * 1e3,
	       mroce_qp_state(c->qp) == MROCE_QPS_ERR ? "in error" : "NOT in error");
	return st == MROCE_WC_RETRY_EXC_ERR && mroce_qp_state(c->qp) == MROCE_QPS_ERR ? 0 : 1;
}

/* One timeline line: time, bytes acknowledged over all QPs, then the first
 * QP's counters, so that a slow recovery can be read after the fact. */
static void timeline_sample(FILE *tl, __u64 now)
{
	struct mroce_qp_stats st = { .sz = sizeof(st) };
	__u64 sum = 0;

	for (int i = 0; i < o.qps; i++) {
		struct mroce_qp_stats qs = { .sz = sizeof(qs) };

		if (!mroce_qp_query_stats(conns[i].qp, &qs))
			sum += qs.acked_bytes;
		if (!i)
			st = qs;
	}
	fprintf(tl, "%llu %llu tx %llu retx %llu rto %llu retired %llu inflight %u cwnd %u srtt %u worst %u\n",
		(unsigned long long)now, (unsigned long long)sum, (unsigned long long)st.tx_pkts,
		(unsigned long long)st.retx_pkts, (unsigned long long)st.rto_events,
		(unsigned long long)st.paths_retired, st.inflight_pkts, st.cwnd_pkts, st.srtt_us,
		st.worst_path_srtt_us);
}

/* Every data QP WRITEs o.stream bytes at once; see the header comment. */
static int stream(void)
{
	__u64 t0, t_end[MAX_QPS] = {}, last_sample = 0;
	enum mroce_wc_status st[MAX_QPS];
	size_t s = o.stream;
	FILE *tl = NULL;
	int left = o.qps, err;

	if ((size_t)o.qps * s > o.region || s > 1u << 30)
		return fail("--stream: QPs x BYTES must fit the client's --region", -EINVAL);
	for (int i = 0; i < o.qps; i++) {
		if (o.roff + (i + 1) * s > conns[i].hello.len)
			return fail("--stream: past the server's region", -EINVAL);
		pattern(region + i * s, s, 7000 + (__u32)i);
	}
	if (o.timeline && !(tl = fopen(o.timeline, "w")))
		return fail("--timeline", -errno);
	printf("client: streaming, ready\n");
	fflush(stdout);
	while (o.go_file && access(o.go_file, F_OK))
		usleep(200);
	t0 = now_ns();
	for (int i = 0; i < o.qps; i++) {
		struct mroce_sge sge = { (__u64)(unsigned long)(region + i * s), (__u32)s, mroce_mr_lkey(mr) };
		struct mroce_send_wr wr = { .wr_id = 7, .opcode = MROCE_WR_RDMA_WRITE, .sg_list = &sge,
					    .num_sge = 1, .remote_addr = conns[i].hello.addr + o.roff + i * s,
					    .rkey = conns[i].hello.rkey };

		if ((err = mroce_post_send(conns[i].qp, &wr)))
			return fail("stream write", err);
	}
	while (left) {
		struct pollfd pfd = { .fd = mroce_cq_fd(cq), .events = POLLIN };
		struct mroce_wc wc;
		__u64 now = now_ns();
		struct conn *c;
		int n;

		if (tl && now - last_sample >= 1000000) {
			timeline_sample(tl, now);
			last_sample = now;
		}
		n = mroce_poll_cq(cq, 1, &wc);
		if (n < 0)
			return fail("poll", n);
		if (!n) {
			if (now - t0 > 120000000000ULL)
				return fail("stream", -ETIMEDOUT);
			poll(&pfd, 1, 1);
			continue;
		}
		c = conn_of(wc.qp_num);
		if (!c || wc.wr_id != 7 || mroce_qp_num(c->qp) != wc.qp_num)
			continue;
		t_end[c - conns] = now_ns();
		st[c - conns] = wc.status;
		left--;
	}
	if (tl) {
		timeline_sample(tl, now_ns());
		fclose(tl);
	}
	for (int i = 0; i < o.qps; i++) {
		struct mroce_qp_stats qs = { .sz = sizeof(qs) };
		char what[64];

		mroce_qp_query_stats(conns[i].qp, &qs);
		if (st[i] != MROCE_WC_SUCCESS) {
			printf("rdma_test: FAIL: stream on QP %u: %s\n", mroce_qp_num(conns[i].qp),
			       mroce_wc_status_str(st[i]));
			return 1;
		}
		printf("client: stream qp %u: %zu bytes start_ns %llu end_ns %llu: %.3f ms, %.3f Gbit/s; "
		       "sent %llu resent %llu, paths retired %llu, ECN echoed %llu, window cuts %llu, "
		       "srtt %u us, slowest path %u us; per-path SACK losses %llu, paths suspected %llu, "
		       "skipped %llu, rate grant %u kbit/s, timeouts %llu, min rtt %u us; "
		       "planes down %llu rejoined %llu; spurious losses %llu, reordering window %u us\n",
		       mroce_qp_num(conns[i].qp), s,
		       (unsigned long long)t0, (unsigned long long)t_end[i], (double)(t_end[i] - t0) / 1e6,
		       (double)s * 8 / (double)(t_end[i] - t0), (unsigned long long)qs.tx_pkts,
		       (unsigned long long)qs.retx_pkts, (unsigned long long)qs.paths_retired,
		       (unsigned long long)qs.ecn_ce, (unsigned long long)qs.cc_cuts, qs.srtt_us,
		       qs.worst_path_srtt_us, (unsigned long long)qs.psack_lost,
		       (unsigned long long)qs.paths_suspected, (unsigned long long)qs.paths_skipped,
		       qs.rate_hint_kbps, (unsigned long long)qs.rto_events, qs.min_rtt_us,
		       (unsigned long long)qs.plane_downs, (unsigned long long)qs.plane_rejoins,
		       (unsigned long long)qs.spurious_losses, qs.reorder_window_us);
		snprintf(what, sizeof(what), "stream on QP %u", mroce_qp_num(conns[i].qp));
		if (check(&conns[i], 7000 + (__u32)i, o.roff + i * s, s, what))
			return 1;
	}
	printf("client: stream verified at the server\n");
	if (o.linger_ms) {
		printf("client: lingering %d ms\n", o.linger_ms);
		fflush(stdout);
		usleep((useconds_t)o.linger_ms * 1000);
	}
	return 0;
}

/* ---- --streams: the client's side --------------------------------------- */

static int cli_send_on(struct conn *c, int s)
{
	struct mroce_sge sge = { (__u64)(unsigned long)(region + (size_t)s * SMSG), SMSG,
				 mroce_mr_lkey(mr) };
	struct mroce_send_wr wr = { .wr_id = SWR_BASE | (__u64)s, .opcode = MROCE_WR_SEND,
				    .sg_list = &sge, .num_sge = 1 };

	return mroce_post_send_on(c->qp, (__u32)s, &wr);
}

struct cli_streams {
	struct conn	*c;
	__u64		bytes[MROCE_MAX_STREAMS];
	int		outstanding;
	bool		reply;		/* the server answered the last STALL */
	__u64		srv_bad;
};

/* Take completions for up to ms: SENDs are posted again; false on an error. */
static bool cli_streams_poll(struct cli_streams *cs, double until_s, bool repost)
{
	struct pollfd pfd = { .fd = mroce_cq_fd(cq), .events = POLLIN };

	while (now_s() < until_s) {
		struct mroce_wc wc[32];
		int n = mroce_poll_cq(cq, 32, wc);

		if (n < 0)
			return false;
		if (!n) {
			poll(&pfd, 1, 1);
			continue;
		}
		for (int i = 0; i < n; i++) {
			int s = (int)(wc[i].wr_id & 0xffff);

			if (wc[i].qp_num == mroce_qp_num(cs->c->cqp)) {
				if (wc[i].opcode == MROCE_WC_RECV && wc[i].status == MROCE_WC_SUCCESS &&
				    wc[i].wr_id < CTL_SLOTS) {
					struct ctl m = cs->c->rx[wc[i].wr_id];

					post_ctl_recv(cs->c, (int)wc[i].wr_id);
					if (m.type == CTL_READY) {
						cs->reply = true;
						cs->srv_bad = m.value;
					}
				}
				continue;
			}
			if (wc[i].status != MROCE_WC_SUCCESS || wc[i].wr_id < SWR_BASE ||
			    s >= o.streams) {
				printf("rdma_test: FAIL: streams: SEND on stream %d: %s\n", s,
				       mroce_wc_status_str(wc[i].status));
				return false;
			}
			cs->bytes[s] += SMSG;
			cs->outstanding--;
			if (repost && !cli_send_on(cs->c, s))
				cs->outstanding++;
		}
	}
	return true;
}

/* Tell the server which stream to stall (-1: none), traffic going on meanwhile. */
static bool cli_stall(struct cli_streams *cs, int stream)
{
	struct ctl m = { .type = CTL_STALL, .value = stream < 0 ? ~0ULL : (__u64)stream };
	double end = now_s() + 10;

	cs->reply = false;
	if (send_ctl(cs->c, &m))
		return false;
	while (!cs->reply && now_s() < end)
		if (!cli_streams_poll(cs, now_s() + 0.001, true))
			return false;
	return cs->reply;
}

static __u64 others_bytes(const struct cli_streams *cs, int except)
{
	__u64 n = 0;

	for (int s = 0; s < o.streams; s++)
		n += s == except ? 0 : cs->bytes[s];
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int streams_bench(void)
{
	struct cli_streams *cs = calloc(1, sizeof(*cs));
	int stall = o.stall >= 0 ? o.stall : o.streams / 2;
	double ratios[64], phase = o.phase_ms / 1000.0;
	struct mroce_qp_stats qs = { .sz = sizeof(qs) };
	int nr = 0;

	if (!cs || o.rounds < 1 || o.rounds > 64 || stall >= o.streams ||
	    (size_t)o.streams * SMSG > o.region)
		return fail("--streams: bad --stall, --rounds or --region", -EINVAL);
	cs->c = &conns[0];
	for (int s = 0; s < o.streams; s++)
		pattern(region + (size_t)s * SMSG, SMSG, 9000 + (__u32)s);
	for (int s = 0; s < o.streams; s++)
		for (int k = 0; k < SSENDS; k++) {
			int err = cli_send_on(cs->c, s);

			if (err)
				return fail("post_send_on", err);
			cs->outstanding++;
		}
	if (!cli_streams_poll(cs, now_s() + 0.2, true))	/* warm up */
		return 1;
	for (int r = 0; r < o.rounds; r++) {
		double rate[2];

		for (int stalled = 0; stalled < 2; stalled++) {
			__u64 b0;
			double t0;

			if (!cli_stall(cs, stalled ? stall : -1))
				return fail("streams: STALL", -ETIMEDOUT);
			/* the stalled stream's posted receives go first: then it waits */
			if (stalled && !cli_streams_poll(cs, now_s() + 0.05, true))
				return 1;
			b0 = others_bytes(cs, stall);
			t0 = now_s();
			if (!cli_streams_poll(cs, t0 + phase, true))
				return 1;
			rate[stalled] = (double)(others_bytes(cs, stall) - b0) * 8 / (now_s() - t0) / 1e9;
		}
		ratios[nr++] = rate[1] / rate[0];
		printf("client: streams round %d: the other %d streams %.3f Gbit/s with all served, "
		       "%.3f Gbit/s with stream %d stalled: %.3fx\n", r, o.streams - 1, rate[0], rate[1],
		       stall, rate[1] / rate[0]);
		fflush(stdout);
	}
	/* Everything served again: every SEND outstanding, the stalled stream's too, completes. */
	if (!cli_stall(cs, -1))
		return fail("streams: STALL", -ETIMEDOUT);
	{
		double end = now_s() + 20;

		while (cs->outstanding && now_s() < end)
			if (!cli_streams_poll(cs, now_s() + 0.01, false))
				return 1;
	}
	if (cs->outstanding)
		return fail("streams: SENDs left after every stream was served again", -ETIMEDOUT);
	if (!cli_stall(cs, -1) || cs->srv_bad)
		return fail("streams: the server found messages bad", -EBADMSG);
	qsort(ratios, (size_t)nr, sizeof(ratios[0]), cmp_double);
	mroce_qp_query_stats(cs->c->qp, &qs);
	printf("client: streams: %d streams, stream %d stalled costs the others %.1f%% (median of %d "
	       "rounds, %.3fx); restarts %llu, VOIDs %llu, sent %llu resent %llu\n", o.streams, stall,
	       (1 - ratios[nr / 2]) * 100, nr, ratios[nr / 2],
	       (unsigned long long)qs.stream_restarts, (unsigned long long)qs.voids,
	       (unsigned long long)qs.tx_pkts, (unsigned long long)qs.retx_pkts);
	free(cs);
	return 0;
}

static int client(void)
{
	MROCE_OPTS(mroce_qp_attr, attr, .send_cq = cq, .recv_cq = cq, .sq_depth = 64, .rq_depth = 64,
		   .order = o.unordered ? MROCE_UNORDERED : MROCE_ORDERED, .go_back_n = o.gbn,
		   .paths = (__u32)o.paths, .cc_ecn = o.cc_ecn, .cc_delay = o.cc_delay,
		   .no_cc = o.no_cc,
		   .max_inflight = (__u32)o.window, .static_paths = o.static_paths,
		   .retry_cnt = (__u32)o.retry);
	size_t sizes[32];
	__u16 sports[MAX_QPS] = {};
	int nsizes = 0, err;
	char *list = strdup(o.sizes ? o.sizes : "0,1,4096"), *tok;

	for (tok = strtok(list, ","); tok && nsizes < 32; tok = strtok(NULL, ","))
		sizes[nsizes++] = strtoull(tok, NULL, 0);
	free(list);
	if (o.sports) {
		int n = 0;

		list = strdup(o.sports);
		for (tok = strtok(list, ","); tok && n < MAX_QPS; tok = strtok(NULL, ","))
			sports[n++] = (__u16)atoi(tok);
		free(list);
	}
	for (int i = 0; i < o.qps; i++) {
		struct conn *c = &conns[i];

		attr.udp_sport = 0;
		err = mroce_connect(dev, o.addr, (__u16)o.port, &attr, 10000, &c->cqp);
		attr.udp_sport = sports[i];
		attr.streams = (__u32)o.streams;	/* the data QP's */
		if (o.streams)
			attr.sq_depth = (__u32)o.streams * SSENDS + 8;
		if (!err)
			err = mroce_connect(dev, o.addr, (__u16)o.port, &attr, 10000, &c->qp);
		attr.streams = 0;
		attr.sq_depth = 64;
		if (err)
			return fail("connect", err);
		for (int s = 0; s < CTL_SLOTS; s++)
			post_ctl_recv(c, s);
		if ((err = wait_for(c, ~0ULL, &c->hello, NULL)) || c->hello.type != CTL_HELLO)
			return fail("hello", err ? err : -EPROTO);
	}
	printf("client: %d QP%s connected, %s, %d path%s%s\n", o.qps, o.qps > 1 ? "s" : "",
	       o.unordered ? "unordered" : "ordered", o.paths, o.paths > 1 ? "s" : "",
	       o.gbn ? ", go-back-N" : "");
	if (o.until_killed)
		return until_killed(&conns[0]);
	if (o.streams) {
		if (streams_bench())
			return 1;
		nsizes = 0;
	}
	if (o.stream) {
		if (stream())
			return 1;
		nsizes = 0;
	}
	if (o.bad_keys) {
		if (o.qps < 4)
			return fail("--bad-keys needs --qps 4", -EINVAL);
		if (bad_keys())
			return 1;
	} else {
		for (int k = 0; k < nsizes; k++)
			for (int i = 0; i < o.qps; i++)
				if ((nsizes == 1 || o.qps == 1 || i == k % o.qps) &&
				    run_size(&conns[i], sizes[k], (__u32)(k * 131 + i)))
					return 1;
	}
	for (int i = 0; i < o.qps; i++) {
		struct ctl bye = { .type = CTL_BYE, .value = o.bad_keys };

		if (mroce_qp_state(conns[i].cqp) == MROCE_QPS_RTS) {
			send_ctl(&conns[i], &bye);
			wait_for(&conns[i], 1000, NULL, NULL);
			if (o.bad_keys)
				break;
		}
	}
	printf("client: ok\n");
	return 0;
}

static int parse_faults(const char *spec, struct mroce_faults *f)
{
	char *copy = strdup(spec), *tok;

	memset(f, 0, sizeof(*f));
	for (tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
		unsigned long v;
		char key[16];

		if (sscanf(tok, "%15[a-z]=%lu", key, &v) != 2) {
			free(copy);
			return -EINVAL;
		}
		if (!strcmp(key, "drop"))
			f->tx_drop_ppm = f->rx_drop_ppm = (__u32)v / 2;
		else if (!strcmp(key, "dup"))
			f->tx_dup_ppm = (__u32)v;
		else if (!strcmp(key, "reorder"))
			f->tx_reorder_ppm = f->rx_reorder_ppm = (__u32)v;
		else if (!strcmp(key, "corrupt"))
			f->rx_corrupt_ppm = (__u32)v;
		else if (!strcmp(key, "seed"))
			f->seed = (__u32)v;
		else {
			free(copy);
			return -EINVAL;
		}
	}
	free(copy);
	return 0;
}

/* ---- the UMEM's transmit pool: the allocation rules ------------------------- */

/*
 * rdma_test pool DEV: argument errors, -EOPNOTSUPP without a pool, first
 * fit in whole 64 KiB chunks, zeroed memory, frees only of what was
 * allocated, and the space coming back.
 */
static int pool_check(const char *ifname)
{
	MROCE_OPTS(mroce_dev_opts, o, .umem_pool_bytes = 1u << 20);
	struct mroce_dev *d;
	void *a = NULL, *b = NULL, *c = NULL;
	int err, bad = 0;

	if ((err = mroce_dev_open(ifname, NULL, &d)))
		return fail(ifname, err);
	bad |= dm_expect("no pool", mroce_alloc_umem(d, 4096, &a), -EOPNOTSUPP);
	bad |= dm_expect("no pool: NULL back", a != NULL, 0);
	mroce_dev_close(d);
	if ((err = mroce_dev_open(ifname, &o, &d)))
		return fail(ifname, err);
	bad |= dm_expect("length 0", mroce_alloc_umem(d, 0, &a), -EINVAL);
	bad |= dm_expect("no address", mroce_alloc_umem(d, 4096, NULL), -EINVAL);
	bad |= dm_expect("no device", mroce_alloc_umem(NULL, 4096, &a), -EINVAL);
	bad |= dm_expect("larger than the pool", mroce_alloc_umem(d, (1u << 20) + 1, &a), -ENOMEM);
	if ((err = mroce_alloc_umem(d, 1, &a)) || (err = mroce_alloc_umem(d, 500000, &b)))
		return fail("mroce_alloc_umem", err);
	bad |= dm_expect("separate", (__u8 *)b - (__u8 *)a, 64 << 10);
	for (size_t i = 0; i < 500000; i++)
		if (((__u8 *)b)[i]) {
			bad |= dm_expect("zeroed", (int)i, -1);
			break;
		}
	memset(b, 0x77, 500000);
	/* 1 + 8 chunks taken of 16: 7 left */
	bad |= dm_expect("8 chunks in 7", mroce_alloc_umem(d, 8u << 16, &c), -ENOMEM);
	bad |= dm_expect("free inside an allocation", mroce_free_umem(d, (__u8 *)b + 4096), -EINVAL);
	bad |= dm_expect("free outside the pool", mroce_free_umem(d, &err), -EINVAL);
	bad |= dm_expect("free NULL", mroce_free_umem(d, NULL), -EINVAL);
	bad |= dm_expect("free", mroce_free_umem(d, b), 0);
	bad |= dm_expect("free twice", mroce_free_umem(d, b), -EINVAL);
	bad |= dm_expect("15 chunks after the free", mroce_alloc_umem(d, 15u << 16, &c), 0);
	bad |= dm_expect("first fit: where b was", c == b, 1);
	bad |= dm_expect("zeroed again", ((__u8 *)c)[4096], 0);
	mroce_dev_close(d);	/* a and c go with it */
	if (!bad)
		printf("pool: ok\n");
	return bad;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", 1, 0, 'd' }, { "addr", 1, 0, 'a' }, { "port", 1, 0, 'p' },
		{ "sizes", 1, 0, 's' }, { "qps", 1, 0, 'q' }, { "faults", 1, 0, 'f' },
		{ "order", 1, 0, 'o' }, { "paths", 1, 0, 'P' }, { "gbn", 0, 0, 'g' },
		{ "bad-keys", 0, 0, 'b' }, { "until-killed", 0, 0, 'k' }, { "region", 1, 0, 'r' },
		{ "umem", 1, 0, 'u' }, { "cc", 1, 0, 'c' }, { "sports", 1, 0, 'S' },
		{ "stream", 1, 0, 'w' }, { "roff", 1, 0, 'R' }, { "go-file", 1, 0, 'G' },
		{ "timeline", 1, 0, 'T' }, { "linger-ms", 1, 0, 'L' }, { "window", 1, 0, 'W' },
		{ "static-paths", 0, 0, 'X' }, { "retry", 1, 0, 'Y' }, { "dm", 0, 0, 'M' },
		{ "no-grants", 0, 0, 'N' }, { "timeline-us", 1, 0, 'U' }, { "streams", 1, 0, 'Z' },
		{ "stall", 1, 0, 'z' }, { "rounds", 1, 0, 'n' }, { "phase-ms", 1, 0, 'm' },
		{ "plane", 1, 0, 'l' }, { "pool", 0, 0, 'O' }, { "queue", 1, 0, 'e' },
		{ "queues", 1, 0, 'E' },
		{ 0, 0, 0, 0 },
	};
	struct mroce_faults faults;
	pthread_t sampler;
	int c, err, rc;

	if (argc == 3 && !strcmp(argv[1], "dm"))
		return dm_check(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "pool"))
		return pool_check(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "qpns"))
		return qpn_check(argv[2], argv[3], atoi(argv[4]));
	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: rdma_test server|client --dev DEV --addr ADDR [options]\n"
				"       rdma_test dm DEV\n"
				"       rdma_test pool DEV\n"
				"       rdma_test qpns DEV ADDR NPROCS\n");
		return 2;
	}
	o.server = !strcmp(argv[1], "server");
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'a': o.addr = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 's': o.sizes = optarg; break;
		case 'q': o.qps = atoi(optarg); break;
		case 'f': o.faults = optarg; break;
		case 'o': o.unordered = !strcmp(optarg, "unordered"); break;
		case 'P': o.paths = atoi(optarg); break;
		case 'g': o.gbn = true; break;
		case 'b': o.bad_keys = true; break;
		case 'k': o.until_killed = true; break;
		case 'r': o.region = strtoull(optarg, NULL, 0); break;
		case 'u': o.umem = atoi(optarg); break;
		case 'l':
			if (o.nplanes == MROCE_MAX_PLANES - 1) {
				fprintf(stderr, "rdma_test: at most %d --plane\n", MROCE_MAX_PLANES - 1);
				return 2;
			}
			o.planes[o.nplanes++] = optarg;
			break;
		case 'c':
			o.cc_ecn = !strcmp(optarg, "ecn") || !strcmp(optarg, "both");
			o.cc_delay = !strcmp(optarg, "delay") || !strcmp(optarg, "both");
			o.no_cc = !strcmp(optarg, "none");
			if (!o.cc_ecn && !o.cc_delay && !o.no_cc && strcmp(optarg, "default")) {
				fprintf(stderr, "rdma_test: --cc default|none|ecn|delay|both\n");
				return 2;
			}
			break;
		case 'S': o.sports = optarg; break;
		case 'w': o.stream = strtoull(optarg, NULL, 0); break;
		case 'R': o.roff = strtoull(optarg, NULL, 0); break;
		case 'G': o.go_file = optarg; break;
		case 'T': o.timeline = optarg; break;
		case 'L': o.linger_ms = atoi(optarg); break;
		case 'W': o.window = atoi(optarg); break;
		case 'X': o.static_paths = true; break;
		case 'Y': o.retry = atoi(optarg); break;
		case 'M': o.dm = true; break;
		case 'O': o.pool = true; break;
		case 'e': o.queue = (__u32)atoi(optarg); break;
		case 'E': o.queues = !strcmp(optarg, "all") ? MROCE_QUEUES_ALL : (__u32)atoi(optarg); break;
		case 'N': o.no_grants = true; break;
		case 'U': o.timeline_us = atoi(optarg); break;
		case 'Z': o.streams = atoi(optarg); break;
		case 'z': o.stall = atoi(optarg); break;
		case 'n': o.rounds = atoi(optarg); break;
		case 'm': o.phase_ms = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!o.dev || !o.addr || o.qps < 1 || o.qps > MAX_QPS || (o.faults && parse_faults(o.faults, &faults)))
		return 2;
	if (o.streams < 0 || o.streams > MROCE_MAX_STREAMS || (o.streams && o.qps != 1) ||
	    o.phase_ms < 10) {
		fprintf(stderr, "rdma_test: --streams 1..%d with --qps 1, --phase-ms >= 10\n",
			MROCE_MAX_STREAMS);
		return 2;
	}
	if (o.timeline_us < 50 || o.timeline_us > 1000000) {
		fprintf(stderr, "rdma_test: --timeline-us 50..1000000\n");
		return 2;
	}
	if (getenv("MROCE_TEST_POOL") && strcmp(getenv("MROCE_TEST_POOL"), "0"))
		o.pool = true;
	{
		MROCE_OPTS(mroce_dev_opts, dopts, .test_faults = o.faults ? &faults : NULL,
			   .umem_frames = (__u32)o.umem, .no_rate_grants = o.no_grants,
			   .planes = o.nplanes ? o.planes : NULL, .n_planes = (__u32)o.nplanes,
			   .umem_pool_bytes = o.pool && !o.nplanes ? o.region : 0,
			   .queue = o.queue, .queues = o.queues);
		struct mroce_dev_attr attr;

		err = mroce_dev_open(o.dev, &dopts, &dev);
		if (!err && !mroce_dev_query(dev, &attr))
			printf("%s: queues %u..%u, UDP port %u\n", o.server ? "server" : "client",
			       attr.queue, attr.queue + attr.queues - 1, mroce_dev_udp_port(dev));
	}
	if (err)
		return fail(o.dev, err);
	/*
	 * --dm (or MROCE_TEST_DM=1 in the environment, how the selftests run
	 * every case a second time): the region is device memory, so XDP
	 * places WRITEs into it. One larger than the pool stays ordinary.
	 */
	if (getenv("MROCE_TEST_DM") && strcmp(getenv("MROCE_TEST_DM"), "0"))
		o.dm = true;
	if (o.dm) {
		err = mroce_alloc_dm(dev, o.region, &dm);
		if (err && err != -ENOSPC)
			return fail("--dm", err);
		if (err)
			printf("%s: region of %zu bytes is larger than the device memory pool: "
			       "ordinary memory\n", o.server ? "server" : "client", o.region);
		region = dm ? mroce_dm_addr(dm) : NULL;
	}
	/*
	 * --pool (or MROCE_TEST_POOL=1, the veth-pool tier): the region is in
	 * the UMEM's transmit pool, so its data leaves without the library's
	 * copy; a device over planes has no pool and keeps ordinary memory.
	 */
	if (o.pool && !region && !o.nplanes) {
		void *at;

		err = mroce_alloc_umem(dev, o.region, &at);
		if (err)
			return fail("--pool", err);
		region = at;
		in_pool = true;
	}
	if (!region)
		region = malloc(o.region);
	ctl_mem = calloc(MAX_QPS * (CTL_SLOTS + 1), sizeof(*ctl_mem));
	if (!region || !ctl_mem)
		return fail("memory", -ENOMEM);
	memset(region, 0, o.region);
	for (int i = 0; i < MAX_QPS; i++) {
		conns[i].rx = ctl_mem + i * (CTL_SLOTS + 1);
		conns[i].tx = conns[i].rx + CTL_SLOTS;
	}
	if ((err = mroce_reg_mr(dev, region, o.region, MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE |
				MROCE_ACCESS_REMOTE_READ, &mr)) ||
	    (err = mroce_reg_mr(dev, ctl_mem, MAX_QPS * (CTL_SLOTS + 1) * sizeof(*ctl_mem),
				MROCE_ACCESS_LOCAL_WRITE, &ctl_mr)) ||
	    (err = mroce_create_cq(dev, 4096, &cq)))
		return fail("setup", err);
	if (o.server && o.timeline) {
		FILE *tl = fopen(o.timeline, "w");

		if (!tl)
			return fail("--timeline", -errno);
		srv_sampling = true;
		if ((err = -pthread_create(&sampler, NULL, srv_sampler, tl)))
			return fail("--timeline", err);
		rc = server();
		srv_sampling = false;
		pthread_join(sampler, NULL);
		fclose(tl);
	} else {
		rc = o.server ? server() : client();
	}
	{
		struct mroce_dev_stats st;

		mroce_dev_stats(dev, &st);
		printf("%s: packets tx %llu rx %llu, retransmitted %llu, timeouts %llu, out of order %llu, "
		       "duplicates %llu, bad %llu, injected faults %llu, placed by XDP %llu\n",
		       o.server ? "server" : "client",
		       (unsigned long long)st.tx_pkts, (unsigned long long)st.rx_pkts,
		       (unsigned long long)st.retx_pkts, (unsigned long long)st.rto_events,
		       (unsigned long long)st.ooo_pkts, (unsigned long long)st.dup_pkts,
		       (unsigned long long)st.bad_pkts, (unsigned long long)st.faults,
		       (unsigned long long)st.xdp_placed);
		if (in_pool)
			printf("%s: sent from the transmit pool without a copy %llu\n", o.server ? "server" : "client",
			       (unsigned long long)mroce_dev_test_ref_pkts(dev));
	}
	for (int i = 0; i < o.qps; i++) {
		if (conns[i].qp)
			mroce_destroy_qp(conns[i].qp);
		if (conns[i].cqp)
			mroce_destroy_qp(conns[i].cqp);
	}
	mroce_destroy_cq(cq);
	mroce_dereg_mr(mr);
	mroce_dereg_mr(ctl_mr);
	if (dm) {
		err = mroce_free_dm(dm);
		if (err)
			rc = fail("mroce_free_dm", err);
	} else if (in_pool) {
		err = mroce_free_umem(dev, region);
		if (err)
			rc = fail("mroce_free_umem", err);
	} else {
		free(region);
	}
	mroce_dev_close(dev);
	free(ctl_mem);
	return rc;
}
