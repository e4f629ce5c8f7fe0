// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Drives an NCCL net plugin (ABI v8) the way NCCL's proxy does, in the
 * style of aws-ofi-nccl's functional tests, and checks every byte:
 *
 *   nccl_harness PLUGIN.so CASE...
 *
 * CASE: connect sizes larger group maxreq close_inflight stray neigh (two ranks), ring
 * (any number of ranks), killed (two ranks; the test script SIGKILLs rank 1
 * once it has written "inflight PID" to $HNCCL_MARK). Ranks find each other
 * through RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT: a TCP star on rank 0
 * that carries the plugin's handles and barriers, nothing else. Each case
 * prints "PASS: name" or "FAIL: name: why"; the exit status is 0 only if
 * every case passed. selftests/test_nccl.sh runs it in network namespaces.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "../nccl/nccl_net_abi.h"

#define MiB		(1 << 20)
#define WAIT_MS		20000	/* any single request or connection: longer is a hang */
#define DEAD_PEER_MS	2000	/* a killed peer must show as an error within this */

static const ncclNet_v8_t *net;
static int rank, world;
static int boot_fds[64];	/* rank 0: one per other rank; others: boot_fds[0] */
static char fail_msg[256];
static int log_unresolved;	/* the plugin said: next hop not resolved yet, retrying */
static int log_dropped;		/* the plugin said: dropped a connection (not our peer) */
static int log_warns;		/* WARNs the plugin logged: none on a clean run or close */

/* ---- small helpers --------------------------------------------------------- */

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

static __u64 wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

#define FAIL(...) do { snprintf(fail_msg, sizeof(fail_msg), __VA_ARGS__); return -1; } while (0)
#define CHECK(cond, ...) do { if (!(cond)) FAIL(__VA_ARGS__); } while (0)
#define NCCLOK(call) do { ncclResult_t r_ = (call); \
	if (r_ != ncclSuccess) FAIL("%s returned %d (line %d)", #call, r_, __LINE__); } while (0)

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		   const char *fmt, ...)
{
	va_list ap;

	(void)flags;
	log_unresolved += strstr(fmt, "not resolved yet") != NULL;
	log_dropped += strstr(fmt, "dropped a connection") != NULL;
	log_warns += level == NCCL_LOG_WARN;
	if (level > NCCL_LOG_WARN && !getenv("HNCCL_VERBOSE"))
		return;
	fprintf(stderr, "[rank %d] NCCL %s %s:%d ", rank, level == NCCL_LOG_WARN ? "WARN" : "INFO",
		file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static __u8 pat(int seed, size_t i)
{
	return (__u8)(seed * 151 + i * 7 + (i >> 9) * 13 + 1);
}

static void fill(void *buf, size_t len, int seed)
{
	for (size_t i = 0; i < len; i++)
		((__u8 *)buf)[i] = pat(seed, i);
}

/* -1 if buf holds seed's pattern, else the first wrong offset. */
static long check(const void *buf, size_t len, int seed)
{
	for (size_t i = 0; i < len; i++)
		if (((const __u8 *)buf)[i] != pat(seed, i))
			return (long)i;
	return -1;
}

static long check_byte(const void *buf, size_t len, __u8 v)
{
	for (size_t i = 0; i < len; i++)
		if (((const __u8 *)buf)[i] != v)
			return (long)i;
	return -1;
}

static void *xalloc(size_t len)
{
	void *p = aligned_alloc(4096, len ? (len + 4095) / 4096 * 4096 : 4096);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}

/* ---- bootstrap: a TCP star on rank 0 --------------------------------------------- */

static int io_all(int fd, void *buf, size_t len, bool out)
{
	__u8 *p = buf;
	__u64 deadline = now_ms() + WAIT_MS;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = out ? POLLOUT : POLLIN };
		ssize_t n;

		if (now_ms() > deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int boot_init(void)
{
	const char *ma = getenv("MASTER_ADDR"), *mp = getenv("MASTER_PORT");
	const char *r = getenv("RANK"), *w = getenv("WORLD_SIZE");
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int one = 1;

	if (!ma || !mp || !r || !w || inet_pton(AF_INET, ma, &sa.sin_addr) != 1) {
		fprintf(stderr, "nccl_harness: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT needed\n");
		return -1;
	}
	rank = atoi(r);
	world = atoi(w);
	sa.sin_port = htons((__u16)atoi(mp));
	if (world < 1 || world > 64 || rank < 0 || rank >= world) {
		fprintf(stderr, "nccl_harness: bad RANK %s / WORLD_SIZE %s\n", r, w);
		return -1;
	}
	if (rank == 0) {
		int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 64)) {
			perror("nccl_harness: bootstrap listen");
			return -1;
		}
		for (int i = 1; i < world; i++) {
			struct pollfd pfd = { .fd = lfd, .events = POLLIN };
			int fd, peer;

			if (poll(&pfd, 1, WAIT_MS) <= 0 || (fd = accept(lfd, NULL, NULL)) < 0 ||
			    io_all(fd, &peer, sizeof(peer), false) || peer < 1 || peer >= world) {
				fprintf(stderr, "nccl_harness: bootstrap: rank missing\n");
				return -1;
			}
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			boot_fds[peer] = fd;
		}
		close(lfd);
		return 0;
	}
	for (__u64 deadline = now_ms() + WAIT_MS;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			boot_fds[0] = fd;
			return io_all(fd, &rank, sizeof(rank), true);
		}
		close(fd);
		if (now_ms() > deadline) {
			perror("nccl_harness: bootstrap connect");
			return -1;
		}
		usleep(20000);
	}
}

/* Every rank's len bytes into all (world x len), in rank order. */
static int allgather(const void *mine, size_t len, void *all)
{
	int err = 0;

	memcpy((__u8 *)all + (size_t)rank * len, mine, len);
	if (rank) {
		err = io_all(boot_fds[0], (void *)mine, len, true);
		return err ?: io_all(boot_fds[0], all, len * (size_t)world, false);
	}
	for (int i = 1; !err && i < world; i++)
		err = io_all(boot_fds[i], (__u8 *)all + (size_t)i * len, len, false);
	for (int i = 1; !err && i < world; i++)
		err = io_all(boot_fds[i], all, len * (size_t)world, true);
	return err;
}

static int barrier(void)
{
	char one = 1, all[64];

	return allgather(&one, 1, all);
}

/* ---- driving the plugin ------------------------------------------------------ */

struct link {
	void *lc, *s, *r;	/* listen, send (to next), recv (from prev) comms */
	__u64 max_call_ms;	/* the longest connect/accept call: they must never block */
	int null_calls;		/* connect/accept calls that returned no comm yet */
};

/*
 * Send to rank (rank + 1) % world, receive from (rank - 1 + world) % world.
 * prep (optional) runs with our own handle once we listen, before the
 * handles are exchanged; before (optional) runs before every round of
 * connect/accept calls, outside the time measured.
 */
static int link_up_ex(struct link *L, int (*prep)(const char *handle), void (*before)(void))
{
	char mine[NCCL_NET_HANDLE_MAXSIZE], (*all)[NCCL_NET_HANDLE_MAXSIZE];
	int next = (rank + 1) % world;
	__u64 deadline;

	memset(L, 0, sizeof(*L));
	all = calloc((size_t)world, NCCL_NET_HANDLE_MAXSIZE);
	if (!all)
		FAIL("out of memory");
	if (net->listen(0, mine, &L->lc) != ncclSuccess || !L->lc) {
		free(all);
		FAIL("listen failed");
	}
	if (prep && prep(mine)) {
		free(all);
		return -1;
	}
	if (allgather(mine, NCCL_NET_HANDLE_MAXSIZE, all)) {
		free(all);
		FAIL("bootstrap allgather failed");
	}
	deadline = now_ms() + WAIT_MS;
	while (!L->s || !L->r) {
		ncclNetDeviceHandle_v8_t *dc = NULL;
		__u64 t0 = now_ms(), dt;
		ncclResult_t rc = ncclSuccess;

		if (before) {
			before();
			t0 = now_ms();
		}
		if (!L->s)
			rc = net->connect(0, all[next], &L->s, &dc);
		if (rc == ncclSuccess && !L->r)
			rc = net->accept(L->lc, &L->r, &dc);
		dt = now_ms() - t0;
		if (dt > L->max_call_ms)
			L->max_call_ms = dt;
		if (rc != ncclSuccess) {
			free(all);
			FAIL("connect/accept returned %d", rc);
		}
		L->null_calls += !L->s || !L->r;
		if (now_ms() > deadline) {
			free(all);
			FAIL("connection not established within %d ms", WAIT_MS);
		}
	}
	free(all);
	return 0;
}

static int link_up(struct link *L)
{
	return link_up_ex(L, NULL, NULL);
}

static void link_down(struct link *L)
{
	if (L->s)
		net->closeSend(L->s);
	if (L->r)
		net->closeRecv(L->r);
	if (L->lc)
		net->closeListen(L->lc);
	memset(L, 0, sizeof(*L));
}

/* Test req until done: ncclSuccess with the sizes, an error, or -1 after ms. */
static int wait_req(void *req, int *sizes, int ms)
{
	__u64 deadline = now_ms() + (__u64)ms;
	int done = 0;

	for (;;) {
		ncclResult_t r = net->test(req, &done, sizes);

		if (r != ncclSuccess)
			return r;
		if (done)
			return ncclSuccess;
		if (now_ms() > deadline)
			return -1;
	}
}

/* isend, calling again while the plugin returns no request (no receive posted yet). */
static int post_send(void *s, void *buf, int size, int tag, void *mh, void **req)
{
	__u64 deadline = now_ms() + WAIT_MS;

	for (*req = NULL; !*req;) {
		ncclResult_t r = net->isend(s, buf, size, tag, mh, req);

		if (r != ncclSuccess)
			return r;
		if (!*req && now_ms() > deadline)
			return -1;
	}
	return 0;
}

static int post_recv(void *rc, int n, void **bufs, int *sizes, int *tags, void **mhs, void **req)
{
	__u64 deadline = now_ms() + WAIT_MS;

	for (*req = NULL; !*req;) {
		ncclResult_t r = net->irecv(rc, n, bufs, sizes, tags, mhs, req);

		if (r != ncclSuccess)
			return r;
		if (!*req && now_ms() > deadline)
			return -1;
	}
	return 0;
}

/*
 * One message each way: receive into rbuf (rsize, poisoned first), send
 * ssize bytes of our pattern; then check size, content and that nothing
 * beyond the message was written.
 */
static int exchange(struct link *L, void *sbuf, void *smh, int ssize, void *rbuf, void *rmh,
		    int rsize, int tag)
{
	int peer_seed = (rank + world - 1) % world + tag * 16, got = -1, r;
	void *sreq, *rreq;

	memset(rbuf, 0xee, (size_t)rsize);
	fill(sbuf, (size_t)ssize, rank + tag * 16);
	r = post_recv(L->r, 1, &rbuf, &rsize, &tag, &rmh, &rreq);
	CHECK(!r, "irecv of %d bytes: %d", rsize, r);
	r = post_send(L->s, sbuf, ssize, tag, smh, &sreq);
	CHECK(!r, "isend of %d bytes: %d", ssize, r);
	r = wait_req(sreq, NULL, WAIT_MS);
	CHECK(!r, "send of %d bytes did not complete: %d", ssize, r);
	r = wait_req(rreq, &got, WAIT_MS);
	CHECK(!r, "receive of %d bytes did not complete: %d", ssize, r);
	/* Both ranks send the same sizes: what arrives is ssize bytes of the peer's pattern. */
	CHECK(got == ssize, "received size %d, sent %d", got, ssize);
	long bad = check(rbuf, (size_t)ssize, peer_seed);
	CHECK(bad < 0, "%d-byte message wrong at offset %ld", ssize, bad);
	bad = check_byte((__u8 *)rbuf + ssize, (size_t)(rsize - ssize), 0xee);
	CHECK(bad < 0, "%d-byte message into %d: byte %ld beyond it written", ssize, rsize,
	      ssize + bad);
	return 0;
}

/* ---- the cases ------------------------------------------------------------------ */

static int case_connect(void)
{
	struct link L;
	void *lc = NULL, *rc = NULL, *smh, *rmh;
	__u8 *sbuf = xalloc(4096), *rbuf = xalloc(4096);
	char h[NCCL_NET_HANDLE_MAXSIZE];
	ncclNetProperties_v8_t p;
	int ndev = 0;

	NCCLOK(net->devices(&ndev));
	CHECK(ndev >= 1, "devices() says %d", ndev);
	NCCLOK(net->getProperties(0, &p));
	CHECK(p.name && (p.ptrSupport & NCCL_PTR_HOST) && p.maxRecvs >= 2 && p.speed > 0 &&
	      p.maxComms > 0 && p.netDeviceType == NCCL_NET_DEVICE_HOST,
	      "properties: name %s ptrSupport %d maxRecvs %d speed %d", p.name ? p.name : "(null)",
	      p.ptrSupport, p.maxRecvs, p.speed);
	CHECK(net->getProperties(ndev, &p) != ncclSuccess, "getProperties(%d) accepted", ndev);

	/* accept() on a listener nobody connects to returns at once, with no comm. */
	NCCLOK(net->listen(0, h, &lc));
	for (int i = 0; i < 200; i++) {
		__u64 t0 = now_ms();

		NCCLOK(net->accept(lc, &rc, NULL));
		CHECK(!rc && now_ms() - t0 < 50, "accept without a peer blocked or returned a comm");
	}
	NCCLOK(net->closeListen(lc));

	if (link_up(&L))
		return -1;
	CHECK(L.max_call_ms < 100, "a connect/accept call took %llu ms",
	      (unsigned long long)L.max_call_ms);
	CHECK(L.null_calls > 0, "connection finished in one call: nothing proves connect/accept "
	      "do not wait for the peer");
	NCCLOK(net->regMr(L.s, sbuf, 4096, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, 4096, NCCL_PTR_HOST, &rmh));
	{
		void *cmh = NULL;

		CHECK(net->regMr(L.r, rbuf, 4096, NCCL_PTR_CUDA, &cmh) != ncclSuccess,
		      "regMr accepted NCCL_PTR_CUDA");
	}
	if (exchange(&L, sbuf, smh, 64, rbuf, rmh, 64, 1))
		return -1;
	NCCLOK(net->deregMr(L.s, smh));
	NCCLOK(net->deregMr(L.r, rmh));
	link_down(&L);
	free(sbuf);
	free(rbuf);
	return barrier() ? -1 : 0;
}

static int case_sizes(void)
{
	static const int sizes[] = { 0, 1, 3, 7, 4095, 4096, 4097, 65537, 1000003, MiB,
				     16 * MiB - 1, 16 * MiB };
	size_t cap = 16 * MiB + 4096;
	__u8 *sbuf = xalloc(cap), *rbuf = xalloc(cap);
	void *smh, *rmh;
	struct link L;

	if (link_up(&L))
		return -1;
	NCCLOK(net->regMr(L.s, sbuf, cap, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, cap, NCCL_PTR_HOST, &rmh));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (exchange(&L, sbuf, smh, sizes[i], rbuf, rmh, sizes[i], (int)i))
			return -1;
	/* Neither buffer at its region's start. */
	if (exchange(&L, sbuf + 4093, smh, 12345, rbuf + 17, rmh, 12345, 99))
		return -1;
	NCCLOK(net->deregMr(L.s, smh));
	NCCLOK(net->deregMr(L.r, rmh));
	link_down(&L);
	free(sbuf);
	free(rbuf);
	return barrier() ? -1 : 0;
}

static int case_larger(void)
{
	static const int sizes[] = { 0, 1, 1000, 4096, 65536, MiB - 1 };
	__u8 *sbuf = xalloc(MiB), *rbuf = xalloc(MiB);
	void *smh, *rmh, *req;
	struct link L;
	int big = 2 * MiB, r, tag = 1;

	if (link_up(&L))
		return -1;
	NCCLOK(net->regMr(L.s, sbuf, MiB, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, MiB, NCCL_PTR_HOST, &rmh));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (exchange(&L, sbuf, smh, sizes[i], rbuf, rmh, MiB, (int)i))
			return -1;
	/* A receive past its region is refused, not posted. */
	{
		void *b = rbuf;

		req = NULL;
		r = net->irecv(L.r, 1, &b, &big, &tag, &rmh, &req);
	}
	CHECK(r != ncclSuccess && !req, "irecv of %d bytes into a 1 MiB region accepted", big);
	/* A send larger than the receive posted for it is refused (ncclInvalidUsage). */
	{
		void *b = rbuf, *sreq = NULL;
		int small = 100, got = 0;

		r = post_recv(L.r, 1, &b, &small, &tag, &rmh, &req);
		CHECK(!r, "irecv of 100 bytes: %d", r);
		for (__u64 t0 = now_ms(); now_ms() - t0 < WAIT_MS;) {
			r = net->isend(L.s, sbuf, 200, tag, smh, &sreq);
			if (r != ncclSuccess || sreq)
				break;
		}
		CHECK(r == ncclInvalidUsage && !sreq, "a 200-byte send into a 100-byte receive: "
		      "result %d, request %p", r, sreq);
		/* ... and the receive stays pending (nothing was written into it). */
		CHECK(net->test(req, &got, NULL) == ncclSuccess && !got,
		      "the receive completed although its send was refused");
	}
	if (barrier())
		FAIL("bootstrap barrier failed");
	NCCLOK(net->deregMr(L.s, smh));
	NCCLOK(net->deregMr(L.r, rmh));
	link_down(&L);
	free(sbuf);
	free(rbuf);
	return barrier() ? -1 : 0;
}

/* Grouped receives: n buffers, n tags, one request; the sends come in another order. */
static int group_round(struct link *L, int n, __u8 *sbuf, void *smh, __u8 *rbuf, void *rmh,
		       int round)
{
	void *bufs[8], *mhs[8], *sreq[8], *rreq;
	int sizes[8], tags[8], got[8], ssize[8], r;
	const int slot = 256 * 1024;

	for (int i = 0; i < n; i++) {
		bufs[i] = rbuf + (size_t)i * slot;
		mhs[i] = rmh;
		sizes[i] = slot;
		tags[i] = 1000 + round * 10 + i;
		ssize[i] = (i * 37171 + round * 4099) % slot;	/* i = 0: 0 bytes in round 0 */
		memset(bufs[i], 0xee, (size_t)slot);
		fill(sbuf + (size_t)i * slot, (size_t)ssize[i], rank * 100 + tags[i]);
		got[i] = -1;
	}
	r = post_recv(L->r, n, bufs, sizes, tags, mhs, &rreq);
	CHECK(!r, "grouped irecv of %d: %d", n, r);
	for (int k = 0; k < n; k++) {
		int i = (k * 5 + 3) % n;	/* a permutation: tags arrive out of order */

		if (n % 5 == 0)
			i = n - 1 - k;
		r = post_send(L->s, sbuf + (size_t)i * slot, ssize[i], tags[i], smh, &sreq[k]);
		CHECK(!r, "isend tag %d: %d", tags[i], r);
	}
	for (int k = 0; k < n; k++) {
		r = wait_req(sreq[k], NULL, WAIT_MS);
		CHECK(!r, "grouped send %d did not complete: %d", k, r);
	}
	r = wait_req(rreq, got, WAIT_MS);
	CHECK(!r, "grouped receive of %d did not complete: %d", n, r);
	for (int i = 0; i < n; i++) {
		int peer = (rank + world - 1) % world;
		long bad;

		CHECK(got[i] == ssize[i], "grouped receive %d/%d (tag %d): size %d, sent %d",
		      i, n, tags[i], got[i], ssize[i]);
		bad = check(bufs[i], (size_t)ssize[i], peer * 100 + tags[i]);
		CHECK(bad < 0, "grouped receive %d/%d wrong at %ld", i, n, bad);
		bad = check_byte((__u8 *)bufs[i] + ssize[i], (size_t)(slot - ssize[i]), 0xee);
		CHECK(bad < 0, "grouped receive %d/%d: written beyond the message", i, n);
	}
	return 0;
}

static int case_group(void)
{
	ncclNetProperties_v8_t p;
	size_t cap = 8 * 256 * 1024;
	__u8 *sbuf = xalloc(cap), *rbuf = xalloc(cap);
	void *smh, *rmh, *req = NULL, *bufs[9], *mhs[9];
	int sizes[9], tags[9], r;
	struct link L;

	NCCLOK(net->getProperties(0, &p));
	CHECK(p.maxRecvs == 8, "maxRecvs %d, the harness expects 8", p.maxRecvs);
	if (link_up(&L))
		return -1;
	NCCLOK(net->regMr(L.s, sbuf, cap, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, cap, NCCL_PTR_HOST, &rmh));
	for (int round = 0, n; round < 6; round++) {
		n = (int[]){ 2, 8, 3, 5, 8, 1 }[round];
		if (group_round(&L, n, sbuf, smh, rbuf, rmh, round))
			return -1;
	}
	/* More buffers than maxRecvs: refused cleanly. */
	for (int i = 0; i < 9; i++) {
		bufs[i] = rbuf;
		mhs[i] = rmh;
		sizes[i] = 64;
		tags[i] = i;
	}
	r = net->irecv(L.r, p.maxRecvs + 1, bufs, sizes, tags, mhs, &req);
	CHECK(r != ncclSuccess && !req, "irecv of %d buffers (maxRecvs %d) accepted",
	      p.maxRecvs + 1, p.maxRecvs);
	/* ... and the comm still works. */
	if (group_round(&L, 4, sbuf, smh, rbuf, rmh, 7))
		return -1;
	NCCLOK(net->deregMr(L.s, smh));
	NCCLOK(net->deregMr(L.r, rmh));
	link_down(&L);
	free(sbuf);
	free(rbuf);
	return barrier() ? -1 : 0;
}

/*
 * NCCL_NET_MAX_REQUESTS receives in flight on one comm. One more cannot be
 * performed now: the v8 answer is ncclSuccess with no request (NCCL calls
 * again), never an error, and the comm goes on working. As soon as one
 * receive is reported done, the next irecv gets a request on its first
 * call, whether or not that receive's clear-to-send has completed.
 */
static int case_maxreq(void)
{
	enum { N = NCCL_NET_MAX_REQUESTS, SZ = 8192 };
	__u8 *sbuf = xalloc((size_t)(N + 1) * SZ), *rbuf = xalloc((size_t)(N + 1) * SZ);
	void *smh, *rmh, *rreq[N + 1], *sreq[N + 1], *extra = NULL, *b;
	int size = SZ, tag = 7, got, r, peer = (rank + world - 1) % world;
	struct link L;

	if (link_up(&L))
		return -1;
	NCCLOK(net->regMr(L.s, sbuf, (size_t)(N + 1) * SZ, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, (size_t)(N + 1) * SZ, NCCL_PTR_HOST, &rmh));
	memset(rbuf, 0xee, (size_t)(N + 1) * SZ);
	for (int i = 0; i <= N; i++)
		fill(sbuf + (size_t)i * SZ, SZ - (size_t)i, rank * 1000 + i);
	for (int i = 0; i < N; i++) {
		b = rbuf + (size_t)i * SZ;
		r = post_recv(L.r, 1, &b, &size, &tag, &rmh, &rreq[i]);
		CHECK(!r, "irecv %d of %d: %d", i + 1, N, r);
	}
	b = rbuf + (size_t)N * SZ;
	for (int k = 0; k < 100; k++) {
		r = net->irecv(L.r, 1, &b, &size, &tag, &rmh, &extra);
		CHECK(r == ncclSuccess, "irecv %d (one past the maximum), call %d: error %d, not "
		      "ncclSuccess with no request", N + 1, k + 1, r);
		CHECK(!extra, "irecv %d (one past the maximum) gave a request", N + 1);
	}
	/* The peer's N sends all in flight before any is tested. */
	for (int i = 0; i < N; i++) {
		r = post_send(L.s, sbuf + (size_t)i * SZ, SZ - i, tag, smh, &sreq[i]);
		CHECK(!r, "isend %d of %d: %d", i + 1, N, r);
	}
	/* Tested in reverse order of posting; right after the first is done, one more fits. */
	for (int i = N - 1; i >= 0; i--) {
		r = wait_req(rreq[i], &got, WAIT_MS);
		CHECK(!r && got == SZ - i, "receive %d: result %d size %d (want %d)", i, r, got,
		      SZ - i);
		long bad = check(rbuf + (size_t)i * SZ, SZ - (size_t)i, peer * 1000 + i);
		CHECK(bad < 0, "receive %d wrong at %ld", i, bad);
		if (i == N - 1) {
			r = net->irecv(L.r, 1, &b, &size, &tag, &rmh, &rreq[N]);
			CHECK(r == ncclSuccess && rreq[N], "irecv right after a receive was "
			      "reported done: result %d, request %p", r, rreq[N]);
		}
	}
	for (int i = 0; i < N; i++) {
		r = wait_req(sreq[i], NULL, WAIT_MS);
		CHECK(!r, "send %d: %d", i, r);
	}
	/* The extra receive moves data like any other. */
	r = post_send(L.s, sbuf + (size_t)N * SZ, SZ - N, tag, smh, &sreq[N]);
	CHECK(!r, "isend after the others completed: %d", r);
	r = wait_req(rreq[N], &got, WAIT_MS);
	CHECK(!r && got == SZ - N, "the extra receive: %d size %d", r, got);
	CHECK(check(b, SZ - N, peer * 1000 + N) < 0, "the extra receive: wrong content");
	CHECK(!wait_req(sreq[N], NULL, WAIT_MS), "the extra send did not complete");
	/* And the comm keeps going: N more rounds, each with every slot cycling. */
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N; i++) {
			void *bi = rbuf + (size_t)i * SZ;

			r = post_recv(L.r, 1, &bi, &size, &tag, &rmh, &rreq[i]);
			CHECK(!r, "round %d irecv %d: %d", round, i, r);
		}
		for (int i = 0; i < N; i++) {
			r = post_send(L.s, sbuf + (size_t)i * SZ, SZ - i, tag, smh, &sreq[i]);
			CHECK(!r, "round %d isend %d: %d", round, i, r);
		}
		for (int i = 0; i < N; i++) {
			r = wait_req(rreq[i], &got, WAIT_MS);
			CHECK(!r && got == SZ - i &&
			      check(rbuf + (size_t)i * SZ, SZ - (size_t)i, peer * 1000 + i) < 0,
			      "round %d receive %d: %d size %d", round, i, r, got);
		}
		for (int i = 0; i < N; i++)
			CHECK(!wait_req(sreq[i], NULL, WAIT_MS), "round %d send %d", round, i);
	}
	printf("    irecv %d: ncclSuccess with no request (100 calls); a request on the first "
	       "call once one receive was done\n", N + 1);
	NCCLOK(net->deregMr(L.s, smh));
	NCCLOK(net->deregMr(L.r, rmh));
	link_down(&L);
	free(sbuf);
	free(rbuf);
	return barrier() ? -1 : 0;
}

/* ---- stray connections on the listener ------------------------------------------ */

#define STRAY_BOUND_MS	5000	/* the real peer's comm, behind the strays (1.5 s hello stage) */
enum { STRAY_FIN, STRAY_RST, STRAY_JUNK, STRAY_SILENT, NSTRAY };
static int stray_fd[NSTRAY];

/* The address in our handle (the plugin's layout, nccl/conn.c: struct mn_handle). */
static int handle_addr(const char *h, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	memcpy(&sa->sin_addr.s_addr, h + 8, 4);
	memcpy(&sa->sin_port, h + 12, 2);
	return sa->sin_port ? 0 : -1;
}

/* Before the real peer can connect: four strangers in the listener's backlog. */
static int make_strays(const char *h)
{
	static const char junk[16] = "GET / HTTP/1.0\r\n";
	struct sockaddr_in sa;

	CHECK(!handle_addr(h, &sa), "no port in the handle");
	for (int i = 0; i < NSTRAY; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		CHECK(fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)),
		      "stray connect to our own listener: %s", strerror(errno));
		stray_fd[i] = fd;
	}
	close(stray_fd[STRAY_FIN]);		/* closes before a hello (nc -z) */
	stray_fd[STRAY_FIN] = -1;
	{
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(stray_fd[STRAY_RST], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(stray_fd[STRAY_RST]);	/* resets */
		stray_fd[STRAY_RST] = -1;
	}
	CHECK(send(stray_fd[STRAY_JUNK], junk, sizeof(junk), MSG_NOSIGNAL) == sizeof(junk),
	      "stray send");
	return 0;				/* STRAY_SILENT says nothing, stays open */
}

/* A stray the plugin dropped reads EOF or a reset. */
static bool dropped(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char b;

	return poll(&pfd, 1, 0) == 1 && recv(fd, &b, 1, MSG_DONTWAIT) <= 0;
}

/* Between rounds of calls: a pause, as flush_neigh() explains. */
static void pause_round(void)
{
	usleep(200);
}

static int case_stray(void)
{
	__u8 *sbuf = xalloc(4096), *rbuf = xalloc(4096);
	void *smh, *rmh;
	struct link L;
	__u64 t0 = now_ms(), dt;

	if (link_up_ex(&L, make_strays, pause_round))
		return -1;
	dt = now_ms() - t0;
	CHECK(dt < STRAY_BOUND_MS, "the peer's connection took %llu ms behind the strays "
	      "(bound %d)", (unsigned long long)dt, STRAY_BOUND_MS);
	CHECK(L.max_call_ms < 100, "a connect/accept round took %llu ms (bound 100)",
	      (unsigned long long)L.max_call_ms);
	CHECK(log_dropped == NSTRAY, "the plugin dropped %d connections, want %d", log_dropped,
	      NSTRAY);
	CHECK(dropped(stray_fd[STRAY_JUNK]), "the stray that sent junk is still open");
	CHECK(dropped(stray_fd[STRAY_SILENT]), "the silent stray is still open");
	close(stray_fd[STRAY_JUNK]);
	close(stray_fd[STRAY_SILENT]);
	NCCLOK(net->regMr(L.s, sbuf, 4096, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, 4096, NCCL_PTR_HOST, &rmh));
	if (exchange(&L, sbuf, smh, 4000, rbuf, rmh, 4096, 3))
		return -1;
	printf("    %d strays dropped (closed, reset, junk, silent); the peer's comm up in "
	       "%llu ms (bound %d), longest connect/accept round %llu ms (bound 100)\n",
	       log_dropped, (unsigned long long)dt, STRAY_BOUND_MS,
	       (unsigned long long)L.max_call_ms);
	NCCLOK(net->deregMr(L.s, smh));
	NCCLOK(net->deregMr(L.r, rmh));
	link_down(&L);
	free(sbuf);
	free(rbuf);
	return barrier() ? -1 : 0;
}

/* ---- no neighbour entry: connect/accept must still never block ------------------ */

#define NEIGH_CALL_MS	20	/* the longest connect/accept round (making a comm: up to ~7 ms) */
#define NEIGH_FLUSH_MS	3000	/* flushing stops by then at the latest */
static __u64 flush_until;
static int flushes;

/*
 * The bootstrap's own TCP traffic has filled the neighbour table: empty it
 * before every round of calls, until the plugin has found a next hop
 * unresolved (or NEIGH_FLUSH_MS passed), then let the handshake finish.
 * Between rounds the harness sleeps a little, as a proxy thread with other
 * work would: spinning flat out on 2 cores, it is preempted for 5-15 ms at
 * a time, inside a call as likely as not, and the bound would measure the
 * scheduler instead of the plugin.
 */
static void flush_neigh(void)
{
	char cmd[96];

	usleep(200);
	if (log_unresolved || now_ms() > flush_until)
		return;
	snprintf(cmd, sizeof(cmd), "ip neigh flush dev %s >/dev/null 2>&1",
		 getenv("MROCE_IFNAME") ? getenv("MROCE_IFNAME") : "eth0");
	if (system(cmd) == 0)
		flushes++;
}

static int case_neigh(void)
{
	__u8 *sbuf = xalloc(65536), *rbuf = xalloc(65536);
	int mine[2], all[2 * 64], unresolved = 0;
	void *smh, *rmh;
	struct link L;

	flush_until = now_ms() + NEIGH_FLUSH_MS;
	log_unresolved = 0;
	if (link_up_ex(&L, NULL, flush_neigh))
		return -1;
	CHECK(flushes > 0, "the neighbour table was never flushed (ip neigh flush failed)");
	CHECK(L.max_call_ms < NEIGH_CALL_MS, "a connect/accept round took %llu ms (bound %d)",
	      (unsigned long long)L.max_call_ms, NEIGH_CALL_MS);
	NCCLOK(net->regMr(L.s, sbuf, 65536, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, 65536, NCCL_PTR_HOST, &rmh));
	if (exchange(&L, sbuf, smh, 65536, rbuf, rmh, 65536, 5))
		return -1;
	mine[0] = log_unresolved;
	mine[1] = flushes;
	CHECK(!allgather(mine, sizeof(mine), all), "bootstrap allgather failed");
	for (int i = 0; i < world; i++)
		unresolved += all[2 * i];
	/* Proof that the case did what it says: some handshake found no entry. */
	CHECK(unresolved > 0, "no handshake found its next hop unresolved: the case proved nothing");
	printf("    %d flushes; %d of %d handshakes found the next hop unresolved and retried; "
	       "longest connect/accept round %llu ms (bound %d)\n", mine[1], unresolved,
	       2 * world, (unsigned long long)L.max_call_ms, NEIGH_CALL_MS);
	NCCLOK(net->deregMr(L.s, smh));
	NCCLOK(net->deregMr(L.r, rmh));
	link_down(&L);
	free(sbuf);
	free(rbuf);
	return barrier() ? -1 : 0;
}

/*
 * Close with requests in flight (both sides, nothing tested), then: the
 * plugin still connects and moves data. Then one side closes while the
 * other waits on a request: the waiting side gets an answer, never a hang.
 */
static int case_close_inflight(void)
{
	size_t cap = 4 * 16 * MiB;
	__u8 *sbuf = xalloc(cap), *rbuf = xalloc(cap);
	void *smh, *rmh, *req;
	int size = 16 * MiB, tag = 3, r, posted = 0, warns;
	struct link L;

	if (link_up(&L))
		return -1;
	NCCLOK(net->regMr(L.s, sbuf, cap, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, cap, NCCL_PTR_HOST, &rmh));
	for (int i = 0; i < 4; i++) {
		void *b = rbuf + (size_t)i * 16 * MiB;

		r = post_recv(L.r, 1, &b, &size, &tag, &rmh, &req);
		CHECK(!r, "irecv: %d", r);
	}
	for (int i = 0; i < 4; i++) {
		r = post_send(L.s, sbuf + (size_t)i * 16 * MiB, size, tag, smh, &req);
		CHECK(!r, "isend: %d", r);
		posted++;
	}
	CHECK(posted == 4, "not every send was posted");
	/* Every rank has its sends posted (so a CTS reached it) before anyone closes. */
	if (barrier())
		FAIL("bootstrap barrier failed");
	NCCLOK(net->closeSend(L.s));
	NCCLOK(net->closeRecv(L.r));
	NCCLOK(net->closeListen(L.lc));
	NCCLOK(net->deregMr(NULL, smh));
	NCCLOK(net->deregMr(NULL, rmh));
	if (barrier())
		FAIL("bootstrap barrier failed");

	/* Still healthy. */
	if (link_up(&L))
		return -1;
	NCCLOK(net->regMr(L.s, sbuf, cap, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, cap, NCCL_PTR_HOST, &rmh));
	if (exchange(&L, sbuf, smh, MiB + 5, rbuf, rmh, 2 * MiB, 4))
		return -1;
	if (barrier())
		FAIL("bootstrap barrier failed");

	/*
	 * Rank 1 closes its receive side the moment its receive completes: rank 0's
	 * send, whose ACK may not be out yet, must still complete successfully,
	 * and a close that strands nothing is no failure: no WARN on either side.
	 */
	warns = log_warns;
	if (rank == 1) {
		void *b = rbuf;
		int got = -1;

		r = post_recv(L.r, 1, &b, &size, &tag, &rmh, &req);
		CHECK(!r, "irecv: %d", r);
		r = wait_req(req, &got, WAIT_MS);
		CHECK(!r && got == 4096, "receive before the close: %d size %d", r, got);
		NCCLOK(net->closeRecv(L.r));
		L.r = NULL;
	} else if (rank == 0) {
		r = post_send(L.s, sbuf, 4096, tag, smh, &req);
		CHECK(!r, "isend: %d", r);
	}
	/* Rank 1 has closed: rank 0 tests its send with the close notice waiting. */
	if (barrier())
		FAIL("bootstrap barrier failed");
	if (rank == 0) {
		r = wait_req(req, NULL, WAIT_MS);
		CHECK(r == ncclSuccess, "a send the receiver got, then closed: result %d", r);
	}
	if (barrier())
		FAIL("bootstrap barrier failed");
	NCCLOK(net->deregMr(L.s, smh));
	NCCLOK(net->deregMr(L.r, rmh));
	link_down(&L);
	CHECK(log_warns == warns, "a clean close logged %d WARN(s)", log_warns - warns);
	if (link_up(&L))
		return -1;
	NCCLOK(net->regMr(L.s, sbuf, cap, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, cap, NCCL_PTR_HOST, &rmh));

	/* Rank 1 closes its receive side with a receive posted; rank 0 sends into it. */
	if (rank == 1) {
		void *b = rbuf;

		r = post_recv(L.r, 1, &b, &size, &tag, &rmh, &req);
		CHECK(!r, "irecv: %d", r);
		NCCLOK(net->closeRecv(L.r));
		L.r = NULL;
	} else if (rank == 0) {
		__u64 t0 = now_ms();

		r = post_send(L.s, sbuf, size, tag, smh, &req);
		if (!r)
			r = wait_req(req, NULL, WAIT_MS);
		CHECK(r != -1, "a send to a closed receiver hung for %d ms", WAIT_MS);
		printf("    send to a receiver that closed: result %d after %llu ms\n", r,
		       (unsigned long long)(now_ms() - t0));
		CHECK(r == ncclRemoteError || r == ncclSuccess,
		      "a send to a closed receiver: unexpected result %d", r);
	}
	NCCLOK(net->deregMr(L.s, smh));
	NCCLOK(net->deregMr(L.r, rmh));
	if (barrier())
		FAIL("bootstrap barrier failed");
	link_down(&L);
	free(sbuf);
	free(rbuf);
	return 0;
}

/* Ring all-gather over every rank: W-1 steps, each a send to next and a receive from prev. */
static int ring_round(struct link *L, __u8 *buf, void *smh, void *rmh, int chunk, int iter)
{
	memset(buf, 0xee, (size_t)world * (size_t)chunk);
	fill(buf + (size_t)rank * chunk, (size_t)chunk, rank + 64 * iter);
	for (int s = 0; s < world - 1; s++) {
		int out = (rank - s + world) % world, in = (rank - s - 1 + world) % world;
		void *rb = buf + (size_t)in * chunk, *sreq, *rreq;
		int size = chunk, tag = s, got = -1, r;

		r = post_recv(L->r, 1, &rb, &size, &tag, &rmh, &rreq);
		CHECK(!r, "ring step %d: irecv %d", s, r);
		r = post_send(L->s, buf + (size_t)out * chunk, chunk, tag, smh, &sreq);
		CHECK(!r, "ring step %d: isend %d", s, r);
		r = wait_req(rreq, &got, WAIT_MS);
		CHECK(!r && got == chunk, "ring step %d: receive %d size %d", s, r, got);
		r = wait_req(sreq, NULL, WAIT_MS);
		CHECK(!r, "ring step %d: send %d", s, r);
	}
	for (int i = 0; i < world; i++) {
		long bad = check(buf + (size_t)i * chunk, (size_t)chunk, i + 64 * iter);

		CHECK(bad < 0, "ring (chunk %d): rank %d's chunk wrong at %ld", chunk, i, bad);
	}
	return 0;
}

static int case_ring(void)
{
	static const int chunks[] = { 1, 4097, MiB + 13, 4 * MiB };
	size_t cap = (size_t)world * 4 * MiB;
	__u8 *buf = xalloc(cap);
	void *smh, *rmh;
	struct link L;

	if (link_up(&L))
		return -1;
	NCCLOK(net->regMr(L.s, buf, cap, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, buf, cap, NCCL_PTR_HOST, &rmh));
	for (int i = 0; i < 4; i++)
		if (ring_round(&L, buf, smh, rmh, chunks[i], i))
			return -1;
	printf("    ring all-gather over %d ranks: chunks 1 B, 4097 B, 1 MiB+13, 4 MiB checked\n",
	       world);
	NCCLOK(net->deregMr(L.s, smh));
	NCCLOK(net->deregMr(L.r, rmh));
	if (barrier())
		FAIL("bootstrap barrier failed");
	link_down(&L);
	free(buf);
	return 0;
}

/*
 * Rank 1 is SIGKILLed by the test script mid-transfer. Rank 0 must see an
 * error on both its comms within DEAD_PEER_MS, and prints when (wall clock)
 * for the script to compare with the time of the kill.
 */
static int case_killed(void)
{
	size_t cap = 16 * MiB;
	__u8 *sbuf = xalloc(cap), *rbuf = xalloc(cap);
	const char *mark = getenv("HNCCL_MARK");
	void *smh, *rmh, *sreq = NULL, *rreq = NULL, *rb = rbuf;
	int size = 16 * MiB, tag = 0, r = 0, rounds = 0;
	__u64 err_ns = 0, t_err;
	struct link L;

	if (link_up(&L))
		return -1;
	NCCLOK(net->regMr(L.s, sbuf, cap, NCCL_PTR_HOST, &smh));
	NCCLOK(net->regMr(L.r, rbuf, cap, NCCL_PTR_HOST, &rmh));
	fill(sbuf, cap, rank);
	for (;;) {
		int got = -1;

		r = post_recv(L.r, 1, &rb, &size, &tag, &rmh, &rreq);
		if (r)
			break;
		r = post_send(L.s, sbuf, size, tag, smh, &sreq);
		if (r) {
			sreq = NULL;
			break;
		}
		r = wait_req(rreq, &got, WAIT_MS);
		if (r)
			break;
		rreq = NULL;
		r = wait_req(sreq, NULL, WAIT_MS);
		if (r)
			break;
		sreq = NULL;
		CHECK(got == size && check(rbuf, cap, 1 - rank) < 0, "round %d: wrong data", rounds);
		if (++rounds == 3 && rank == 1 && mark) {
			FILE *f = fopen(mark, "w");

			if (f) {
				fprintf(f, "inflight %d\n", (int)getpid());
				fclose(f);
			}
		}
		CHECK(rank == 0 || rounds < 100000, "rank 1 was never killed");
	}
	err_ns = wall_ns();
	t_err = now_ms();
	CHECK(rank == 0, "rank 1 saw error %d, but it is the one to be killed", r);
	CHECK(r != -1, "a request hung for %d ms after the peer was killed", WAIT_MS);
	CHECK(r == ncclRemoteError || r == ncclSystemError, "unexpected result %d", r);
	CHECK(rounds >= 3, "the error came after only %d rounds, before the kill", rounds);
	/* The other comm's request fails too, within the bound. */
	if (sreq) {
		r = wait_req(sreq, NULL, DEAD_PEER_MS);
		CHECK(r == ncclRemoteError || r == ncclSystemError,
		      "the send comm gave %d, not an error, within %d ms", r, DEAD_PEER_MS);
	} else {
		int got;

		if (!rreq)
			r = post_recv(L.r, 1, &rb, &size, &tag, &rmh, &rreq);
		if (!r && rreq)
			r = wait_req(rreq, &got, DEAD_PEER_MS);
		CHECK(r == ncclRemoteError || r == ncclSystemError,
		      "the recv comm gave %d, not an error, within %d ms", r, DEAD_PEER_MS);
	}
	printf("    error %d after %d verified 16 MiB rounds; both comms failed within %llu ms "
	       "of each other\n", r, rounds, (unsigned long long)(now_ms() - t_err));
	printf("ERROR_AT_NS %llu\n", (unsigned long long)err_ns);
	fflush(stdout);
	link_down(&L);
	net->deregMr(NULL, smh);
	net->deregMr(NULL, rmh);
	free(sbuf);
	free(rbuf);
	return 0;
}

static const struct { const char *name; int (*fn)(void); int ranks; } cases[] = {
	{ "connect", case_connect, 2 },
	{ "sizes", case_sizes, 2 },
	{ "larger", case_larger, 2 },
	{ "group", case_group, 2 },
	{ "maxreq", case_maxreq, 2 },
	{ "close_inflight", case_close_inflight, 2 },
	{ "stray", case_stray, 2 },
	{ "neigh", case_neigh, 2 },
	{ "ring", case_ring, 0 },
	{ "killed", case_killed, 2 },
};

int main(int argc, char **argv)
{
	void *lib;
	int failed = 0;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: nccl_harness PLUGIN.so CASE...\ncases:");
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			printf(" %s", cases[i].name);
		printf("\nenvironment: RANK WORLD_SIZE MASTER_ADDR MASTER_PORT [HNCCL_MARK]\n");
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: nccl_harness PLUGIN.so CASE...\n");
		return 2;
	}
	for (int a = 2; a < argc; a++) {
		size_t i;

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			if (!strcmp(argv[a], cases[i].name))
				break;
		if (i == sizeof(cases) / sizeof(cases[0])) {
			fprintf(stderr, "nccl_harness: unknown case '%s'\n", argv[a]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (boot_init())
		return 1;
	/* As NCCL opens it: RTLD_NOW | RTLD_LOCAL, then the versioned symbol. */
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		printf("FAIL: load: %s\n", dlerror());
		return 1;
	}
	net = dlsym(lib, NCCL_NET_PLUGIN_SYMBOL_V8);
	if (!net || !net->name || net->init(logger) != ncclSuccess) {
		printf("FAIL: load: %s\n", net ? "init() failed" : "no ncclNetPlugin_v8");
		return 1;
	}
	for (int a = 2; a < argc; a++) {
		size_t i;

		for (i = 0; strcmp(argv[a], cases[i].name); i++)
			;
		if (cases[i].ranks && world != cases[i].ranks) {
			printf("FAIL: %s: needs %d ranks, WORLD_SIZE is %d\n", cases[i].name,
			       cases[i].ranks, world);
			failed++;
			continue;
		}
		fail_msg[0] = 0;
		if (cases[i].fn()) {
			printf("FAIL: %s: rank %d: %s\n", cases[i].name, rank, fail_msg);
			failed++;
			break;	/* the ranks are out of step now */
		}
		printf("PASS: %s (rank %d)\n", cases[i].name, rank);
	}
	/* No dlclose() unless asked: NCCL keeps its net plugin loaded, and
	 * LeakSanitizer needs the plugin's symbols at exit (the plugin's
	 * destructor closes its devices either way). */
	if (getenv("HNCCL_DLCLOSE"))
		dlclose(lib);
	for (int i = 0; i < world; i++)
		if (boot_fds[i] > 0)
			close(boot_fds[i]);
	return failed ? 1 : 0;
}
