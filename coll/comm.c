// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collectives: joining a communicator (rendezvous through rank 0 over TCP),
 * its resources, and tearing it down.
 *
 * Rendezvous: every rank creates one QP per peer and registers one inbox per
 * peer, then sends rank 0 a record: for each peer j, the QP info and inbox
 * (address, rkey) meant for j. Rank 0 checks the records (one per rank, same
 * world size and chunk size) and sends the whole table to everyone; each rank
 * connects its QP for j to what j published for it, reports ready, and starts
 * once rank 0 has seen every rank ready (so no QP ever sends to a peer whose
 * QP does not exist yet).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mroce/dp_maps.h"
#include "coll_internal.h"

#define REC_MAGIC	0x4d524332u	/* "MRC2" */
#define REC_HDR		20	/* magic, rank, size, chunk, choices */
#define REC_PEER	(MROCE_QP_INFO_WIRE_LEN + 12)	/* QP info, inbox address, rkey */
#define DEFAULT_PORT	29500
#define DEFAULT_TIMEOUT	30000

static size_t rec_len(int size)
{
	return REC_HDR + (size_t)size * REC_PEER;
}

/* ---- small TCP helpers with a deadline ---------------------------------- */

/*
 * A process may take signals without SA_RESTART at any time (profilers,
 * language runtimes set interval timers), so every call here can fail with
 * EINTR. A signal only cuts one wait short: the loops go back to waiting
 * until the absolute deadline, and only a transfer of every byte counts as
 * done. The sockets are non-blocking, so no call can outlive the deadline.
 */

static int remaining_ms(__u64 deadline)
{
	__u64 now = coll_now_ns();

	return now >= deadline ? 0 : (int)((deadline - now) / 1000000) + 1;
}

/* Until fd reports events (or an error the next call will return). */
static int wait_fd(int fd, short events, __u64 deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events };
		int ms = remaining_ms(deadline), n;

		if (!ms)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Sleep ms, or up to the deadline, whatever signals arrive meanwhile. */
static void pause_ms(int ms, __u64 deadline)
{
	__u64 until = coll_now_ns() + (__u64)ms * 1000000ull, now;

	if (until > deadline)
		until = deadline;
	while ((now = coll_now_ns()) < until) {
		struct timespec ts = { .tv_sec = (time_t)((until - now) / 1000000000ull),
				       .tv_nsec = (long)((until - now) % 1000000000ull) };

		nanosleep(&ts, NULL);
	}
}

int coll_io_all(int fd, void *buf, size_t len, bool out, __u64 deadline)
{
	__u8 *p = buf;

	while (len) {
		int err = wait_fd(fd, out ? POLLOUT : POLLIN, deadline);
		ssize_t n;

		if (err)
			return err;
		n = out ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) :
			  recv(fd, p, len, MSG_DONTWAIT);
		if (n == 0 && !out)
			return -ECONNRESET;	/* the other side went away mid-message */
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int tcp_socket(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* One attempt: a connection in progress (or interrupted, which the kernel
 * carries on with) is waited for and its outcome read from SO_ERROR. */
static int dial_once(const struct sockaddr_in *sa, __u64 deadline)
{
	int fd = tcp_socket(), err = 0, soerr = 0;
	socklen_t len = sizeof(soerr);

	if (fd < 0)
		return fd;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		if (errno != EINPROGRESS && errno != EINTR)
			err = -errno;
		else if (!(err = wait_fd(fd, POLLOUT, deadline)))
			err = getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) ? -errno : -soerr;
	}
	if (!err)
		return fd;
	close(fd);
	return err;
}

/* Connect to the root, retrying while it is not listening yet. */
int coll_tcp_dial(const struct sockaddr_in *sa, __u64 deadline)
{
	for (;;) {
		int fd = dial_once(sa, deadline);

		if (fd >= 0 || (fd != -ECONNREFUSED && fd != -ENETUNREACH && fd != -EHOSTUNREACH))
			return fd;
		if (!remaining_ms(deadline))
			return -ETIMEDOUT;
		pause_ms(20, deadline);
	}
}

/* accept(2): these say only that one pending connection went away. */
static bool accept_transient(int err)
{
	return err == EINTR || err == EAGAIN || err == EWOULDBLOCK || err == ECONNABORTED ||
	       err == EPROTO || err == ENETDOWN || err == ENETUNREACH || err == EHOSTUNREACH;
}

int coll_tcp_accept(int lfd, __u64 deadline)
{
	for (;;) {
		int err = wait_fd(lfd, POLLIN, deadline), fd, one = 1;

		if (err)
			return err;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		if (!accept_transient(errno))
			return -errno;
	}
}

/* ---- options and environment ------------------------------------------- */

static int env_int(const char *name, long lo, long hi, long *out)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -ENOENT;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * MROCE_QUEUE and MROCE_QUEUES (libmroce(7), ENVIRONMENT): the receive
 * queues of the communicator's own device (several ranks per NIC).
 */
static int env_queues(struct mroce_dev_opts *o)
{
	const char *all = getenv("MROCE_QUEUES");
	long v;
	int err;

	err = env_int("MROCE_QUEUE", 0, MROCE_MAX_QUEUES - 1, &v);
	if (err != -ENOENT) {
		if (err)
			return err;
		o->queue = (__u32)v;
	}
	if (all && !strcmp(all, "all")) {
		o->queues = MROCE_QUEUES_ALL;
		return 0;
	}
	err = env_int("MROCE_QUEUES", 1, MROCE_MAX_QUEUES, &v);
	if (err == -ENOENT)
		return 0;
	if (!err)
		o->queues = (__u32)v;
	return err;
}

/* The interface holding addr, or the address of ifname. */
static int find_if(const char *ifname, struct in_addr *addr, char out[IF_NAMESIZE])
{
	struct ifaddrs *ifa, *i;
	int err = -ENODEV;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)i->ifa_addr;

		if (!sin || sin->sin_family != AF_INET)
			continue;
		if (ifname ? !strcmp(i->ifa_name, ifname) : sin->sin_addr.s_addr == addr->s_addr) {
			*addr = sin->sin_addr;
			snprintf(out, IF_NAMESIZE, "%s", i->ifa_name);
			err = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	return ifname && err ? -EADDRNOTAVAIL : err;
}

/* The source address the kernel would use towards the master. */
static int route_src(const struct sockaddr_in *master, struct in_addr *src)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)master, sizeof(*master)) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		err = -errno;
	else
		*src = sa.sin_addr;
	close(fd);
	return err;
}

/* ---- resources ----------------------------------------------------------- */

static int comm_alloc_mem(struct mroce_coll_comm *c)
{
	size_t inbox = (size_t)c->size * COLL_SLOTS * c->chunk;
	size_t ctrl_rx = (size_t)c->size * COLL_CTRL_BUFS * COLL_CTRL_LEN;
	size_t ctrl_tx = (size_t)c->size * COLL_ADV_RING * COLL_CTRL_LEN;
	size_t pool = (size_t)COLL_POOL * c->chunk;
	int err;

	c->mem_len = inbox + ctrl_rx + ctrl_tx + pool;
	c->mem = mmap(NULL, c->mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->mem == MAP_FAILED) {
		c->mem = NULL;
		return -ENOMEM;
	}
	c->ctrl_rx = c->mem + inbox;
	c->pool = c->ctrl_rx + ctrl_rx + ctrl_tx;
	c->pool_free = ~0ull;
	err = mroce_reg_mr(c->dev, c->ctrl_rx, ctrl_rx + ctrl_tx + pool, MROCE_ACCESS_LOCAL_WRITE,
			   &c->mr_local);
	for (int p = 0; !err && p < c->size; p++) {
		struct coll_peer *pe = &c->peers[p];

		if (p == c->rank)
			continue;
		pe->inbox = c->mem + (size_t)p * COLL_SLOTS * c->chunk;
		pe->ctrl_tx = c->ctrl_rx + ctrl_rx + (size_t)p * COLL_ADV_RING * COLL_CTRL_LEN;
		pe->ctrl_rx = c->ctrl_rx + (size_t)p * COLL_CTRL_BUFS * COLL_CTRL_LEN;
		pe->ctrl_lkey = mroce_mr_lkey(c->mr_local);
		pe->credits = COLL_SLOTS;
		err = mroce_reg_mr(c->dev, pe->inbox, (size_t)COLL_SLOTS * c->chunk,
				   MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE,
				   &pe->inbox_mr);
	}
	return err;
}

static int comm_create_qps(struct mroce_coll_comm *c, __u32 paths)
{
	MROCE_OPTS(mroce_qp_attr, attr, .send_cq = NULL, .order = MROCE_UNORDERED,
		   .sq_depth = 256, .rq_depth = 2 * COLL_CTRL_BUFS, .paths = paths,
		   .max_inflight = 896);	/* the receive window's limit: loss recovery needs room */
	int err = mroce_create_cq(c->dev, (__u32)(c->size - 1) * (256 + 2 * COLL_CTRL_BUFS) + 64,
				  &c->cq);

	if (!err && c->self_progress)
		err = mroce_cq_set_notify(c->cq, false);	/* we never sleep on its fd */
	attr.send_cq = attr.recv_cq = c->cq;
	for (int p = 0; !err && p < c->size; p++)
		if (p != c->rank)
			err = mroce_create_qp(c->dev, &attr, &c->peers[p].qp);
	for (int p = 0; !err && p < c->size; p++)
		if (p != c->rank)
			err = coll_post_recvs(c, p);
	return err;
}

static void *progress_thread(void *arg)
{
	struct mroce_coll_comm *c = arg;

	while (!__atomic_load_n(&c->progress_quit, __ATOMIC_ACQUIRE)) {
		/* Stand aside while operations run back to back: waking up for
		 * their packets would cost them more than it saves. */
		if (__atomic_load_n(&c->op_active, __ATOMIC_ACQUIRE) ||
		    coll_now_ns() - __atomic_load_n(&c->op_end_ns, __ATOMIC_ACQUIRE) < 1000000) {
			usleep(1000);
			continue;
		}
		mroce_dev_progress(c->dev, 1);
	}
	return NULL;
}

/* The thread running an operation takes over progress, and hands it back. */
void coll_progress_own(struct mroce_coll_comm *c, bool own)
{
	if (!own)
		__atomic_store_n(&c->op_end_ns, coll_now_ns(), __ATOMIC_RELEASE);
	__atomic_store_n(&c->op_active, own, __ATOMIC_RELEASE);
}

static void progress_stop(struct mroce_coll_comm *c)
{
	if (!c->progress_running)
		return;
	__atomic_store_n(&c->progress_quit, true, __ATOMIC_RELEASE);
	pthread_join(c->progress, NULL);
	c->progress_running = false;
}

static void comm_free(struct mroce_coll_comm *c)
{
	progress_stop(c);
	if (c->peers) {
		for (int p = 0; p < c->size; p++) {
			if (c->peers[p].qp)
				mroce_destroy_qp(c->peers[p].qp);
			if (c->peers[p].inbox_mr)
				mroce_dereg_mr(c->peers[p].inbox_mr);
		}
	}
	if (c->mr_local)
		mroce_dereg_mr(c->mr_local);
	if (c->cq)
		mroce_destroy_cq(c->cq);
	if (c->own_dev)
		mroce_dev_close(c->dev);
	if (c->mem)
		munmap(c->mem, c->mem_len);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c->peers);
	free(c->force_algo);
	free(c);
}

/* ---- rendezvous ------------------------------------------------------------ */

static void put32(__u8 *p, __u32 v) { memcpy(p, &v, 4); }
static __u32 get32(const __u8 *p) { __u32 v; memcpy(&v, p, 4); return v; }

/*
 * What decides each operation's algorithm and messages beside chunk_bytes:
 * the pins, small_bytes, ring_only and the all-to-all window. Ranks that
 * differ in any would run different algorithms whose chunks may still match
 * in length (a result silently wrong), so they must agree (FNV-1a of them).
 */
static __u32 choices_hash(const struct mroce_coll_comm *c)
{
	__u64 v[3] = { c->small_bytes, c->ring_only, (__u64)c->a2a_window };
	const char *pin = c->force_algo ? c->force_algo : "";
	__u32 h = 2166136261u;

	for (size_t i = 0; i <= strlen(pin); i++)
		h = (h ^ (__u8)pin[i]) * 16777619u;
	for (size_t i = 0; i < sizeof(v); i++)
		h = (h ^ ((const __u8 *)v)[i]) * 16777619u;
	return h;
}

static int my_record(struct mroce_coll_comm *c, const struct in_addr *local, __u8 *rec)
{
	struct in6_addr a6 = { .s6_addr = { [10] = 0xff, [11] = 0xff } };

	memcpy(&a6.s6_addr[12], local, 4);
	memset(rec, 0, rec_len(c->size));
	put32(rec, REC_MAGIC);
	put32(rec + 4, (__u32)c->rank);
	put32(rec + 8, (__u32)c->size);
	put32(rec + 12, c->chunk);
	put32(rec + 16, choices_hash(c));
	for (int p = 0; p < c->size; p++) {
		__u8 *e = rec + REC_HDR + (size_t)p * REC_PEER;
		struct mroce_qp_info info;
		__u64 addr;
		int err;

		if (p == c->rank)
			continue;
		err = mroce_qp_local_info(c->peers[p].qp, &a6, AF_INET, &info);
		if (err)
			return err;
		mroce_qp_info_pack(&info, e);
		addr = (__u64)(unsigned long)c->peers[p].inbox;
		memcpy(e + MROCE_QP_INFO_WIRE_LEN, &addr, 8);
		put32(e + MROCE_QP_INFO_WIRE_LEN + 8, mroce_mr_rkey(c->peers[p].inbox_mr));
	}
	return 0;
}

/* Connect our QP for each peer j to what j published for us. */
static int connect_all(struct mroce_coll_comm *c, const __u8 *table)
{
	for (int p = 0; p < c->size; p++) {
		const __u8 *rec = table + (size_t)p * rec_len(c->size);
		const __u8 *e = rec + REC_HDR + (size_t)c->rank * REC_PEER;
		struct mroce_qp_info info;
		int err;

		if (get32(rec) != REC_MAGIC || get32(rec + 4) != (__u32)p ||
		    get32(rec + 8) != (__u32)c->size)
			return -EPROTO;
		if (get32(rec + 12) != c->chunk || get32(rec + 16) != choices_hash(c))
			return -EINVAL;	/* ranks disagree on chunk_bytes or the algorithms */
		if (p == c->rank)
			continue;
		err = mroce_qp_info_unpack(e, &info);
		if (err)
			return err;
		memcpy(&c->peers[p].r_inbox, e + MROCE_QP_INFO_WIRE_LEN, 8);
		c->peers[p].r_rkey = get32(e + MROCE_QP_INFO_WIRE_LEN + 8);
		err = mroce_qp_connect(c->peers[p].qp, &info, NULL);
		if (err)
			return err;
	}
	return 0;
}

static int rendezvous_root(struct mroce_coll_comm *c, const struct sockaddr_in *sa,
			   __u8 *table, __u64 deadline)
{
	size_t rl = rec_len(c->size);
	int *fds = calloc((size_t)c->size, sizeof(int)), lfd, err = 0;
	__u8 go = 'G', ready;

	if (!fds)
		return -ENOMEM;
	lfd = tcp_socket();
	if (lfd < 0) {
		free(fds);
		return lfd;
	}
	if (bind(lfd, (const struct sockaddr *)sa, sizeof(*sa)) || listen(lfd, c->size))
		err = -errno;
	for (int i = 0; i < c->size; i++)
		fds[i] = -1;
	/* Collect one record per rank. */
	for (int got = 1; !err && got < c->size; got++) {
		int fd = coll_tcp_accept(lfd, deadline);
		__u8 *rec = malloc(rl);
		__u32 r;

		if (fd < 0 || !rec) {
			err = fd < 0 ? fd : -ENOMEM;
			if (fd >= 0)
				close(fd);
			free(rec);
			break;
		}
		err = coll_io_all(fd, rec, rl, false, deadline);
		r = get32(rec + 4);
		if (!err && (get32(rec) != REC_MAGIC || get32(rec + 8) != (__u32)c->size ||
			     !r || r >= (__u32)c->size || fds[r] >= 0))
			err = -EPROTO;	/* wrong world size, or a rank twice */
		if (!err) {
			fds[r] = fd;
			memcpy(table + r * rl, rec, rl);
		} else {
			close(fd);
		}
		free(rec);
	}
	for (int r = 1; !err && r < c->size; r++)
		err = coll_io_all(fds[r], table, rl * (size_t)c->size, true, deadline);
	if (!err)
		err = connect_all(c, table);
	for (int r = 1; !err && r < c->size; r++) {
		err = coll_io_all(fds[r], &ready, 1, false, deadline);
		if (!err && ready != 'R')
			err = -EPROTO;
	}
	for (int r = 1; !err && r < c->size; r++)
		err = coll_io_all(fds[r], &go, 1, true, deadline);
	for (int r = 0; r < c->size; r++)
		if (fds[r] >= 0)
			close(fds[r]);
	close(lfd);
	free(fds);
	return err;
}

static int rendezvous_peer(struct mroce_coll_comm *c, const struct sockaddr_in *sa,
			   __u8 *table, __u64 deadline)
{
	size_t rl = rec_len(c->size);
	int fd = coll_tcp_dial(sa, deadline), err;
	__u8 ready = 'R', go = 0;

	if (fd < 0)
		return fd;
	err = coll_io_all(fd, table + (size_t)c->rank * rl, rl, true, deadline);
	if (!err)
		err = coll_io_all(fd, table, rl * (size_t)c->size, false, deadline);
	if (!err)
		err = connect_all(c, table);
	if (!err)
		err = coll_io_all(fd, &ready, 1, true, deadline);
	if (!err)
		err = coll_io_all(fd, &go, 1, false, deadline);
	if (!err && go != 'G')
		err = -EPROTO;
	close(fd);
	return err;
}

/* ---- public ---------------------------------------------------------------- */

static int resolve_opts(const struct mroce_coll_opts *opts, struct mroce_coll_comm *c,
			struct sockaddr_in *master, __u32 *paths)
{
	const char *maddr = MROCE_OPT(opts, master_addr, NULL), *pin;
	long v;
	int err;

	c->rank = MROCE_OPT(opts, rank, -1);
	c->size = MROCE_OPT(opts, world_size, 0);
	if (c->rank < 0 && (err = env_int("RANK", 0, COLL_MAX_RANKS - 1, &v)) == 0)
		c->rank = (int)v;
	if (c->size <= 0 && env_int("WORLD_SIZE", 1, COLL_MAX_RANKS, &v) == 0)
		c->size = (int)v;
	if (c->rank < 0 || c->size < 1 || c->size > COLL_MAX_RANKS || c->rank >= c->size)
		return -EINVAL;	/* RANK / WORLD_SIZE missing or out of range */
	memset(master, 0, sizeof(*master));
	master->sin_family = AF_INET;
	master->sin_port = htons(MROCE_OPT(opts, master_port, 0));
	if (!master->sin_port) {
		err = env_int("MASTER_PORT", 1, 65535, &v);
		if (err == -EINVAL)
			return -EINVAL;	/* set, but not a port: never another port silently */
		master->sin_port = htons(err ? DEFAULT_PORT : (__u16)v);
	}
	if (!maddr)
		maddr = getenv("MASTER_ADDR");
	if (c->size > 1 && (!maddr || inet_pton(AF_INET, maddr, &master->sin_addr) != 1))
		return -EDESTADDRREQ;	/* MASTER_ADDR missing or not an IPv4 literal */
	c->timeout_ms = MROCE_OPT(opts, timeout_ms, 0);
	if (!c->timeout_ms) {
		err = env_int("MROCE_COLL_TIMEOUT_MS", 1, 86400000, &v);
		if (err == -EINVAL)
			return -EINVAL;
		c->timeout_ms = err ? DEFAULT_TIMEOUT : (__u32)v;
	}
	c->chunk = MROCE_OPT(opts, chunk_bytes, 0);
	if (!c->chunk)
		c->chunk = 256 * 1024;
	if (c->chunk < 4096 || c->chunk > (1u << 20) || c->chunk % 64)
		return -EINVAL;
	c->small_bytes = MROCE_OPT(opts, small_bytes, 0);
	if (!c->small_bytes)
		c->small_bytes = 16 * 1024;
	c->ring_only = MROCE_OPT(opts, ring_only, false);
	err = env_int("MROCE_COLL_A2A_WINDOW", 2, COLL_MAX_RANKS, &v);
	if (err == -EINVAL)
		return -EINVAL;
	c->a2a_window = err ? 0 : (int)v;	/* 0: by block size (algo_a2a.c) */
	/* pin algorithms by name (select.c); every rank must set the same */
	pin = getenv("MROCE_COLL_ALGO");
	if (pin && *pin) {
		if (!coll_algo_names_valid(pin))
			return -EINVAL;	/* a name no algorithm has: never ignored silently */
		if (!(c->force_algo = strdup(pin)))
			return -ENOMEM;
	}
	*paths = MROCE_OPT(opts, paths, 0);
	if (!*paths)
		*paths = 8;
	return 0;
}

int mroce_coll_comm_create(const struct mroce_coll_opts *opts, struct mroce_coll_comm **commp)
{
	struct mroce_coll_comm *c;
	struct sockaddr_in master;
	char ifname[IF_NAMESIZE] = "";
	struct in_addr local = { 0 };
	__u8 *table = NULL;
	__u64 deadline;
	__u32 paths;
	int err;

	if (!commp || (opts && !mroce_opts_valid(opts, opts->sz, sizeof(*opts))))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	c->pend_head = -1;
	err = resolve_opts(opts, c, &master, &paths);
	if (!err)
		c->peers = calloc((size_t)c->size, sizeof(*c->peers));
	if (!err && !c->peers)
		err = -ENOMEM;
	if (err || c->size == 1)
		goto out;
	deadline = coll_now_ns() + (__u64)c->timeout_ms * 1000000ull;
	c->dev = MROCE_OPT(opts, dev, NULL);
	if (!c->dev) {
		const char *want = MROCE_OPT(opts, ifname, NULL);

		if (!want)
			want = getenv("MROCE_IFNAME");
		err = want ? find_if(want, &local, ifname) :
		      route_src(&master, &local) ?: find_if(NULL, &local, ifname);
		if (!err) {
			MROCE_OPTS(mroce_dev_opts, dopts, .no_thread = true,
				   .test_faults = MROCE_OPT(opts, test_faults, NULL));

			err = env_queues(&dopts);
			if (!err)
				err = mroce_dev_open(ifname, &dopts, &c->dev);
			c->own_dev = c->self_progress = !err;
		}
		if (!err) {
			err = -pthread_create(&c->progress, NULL, progress_thread, c);
			c->progress_running = !err;
		}
	} else {
		struct mroce_dev_attr attr;

		err = mroce_dev_query(c->dev, &attr);
		if (!err && !attr.thread)
			err = -EINVAL;	/* nobody would progress it between our operations */
		if (!err)
			err = find_if(attr.ifname, &local, ifname);
	}
	if (!err)
		err = comm_alloc_mem(c);
	if (!err)
		err = comm_create_qps(c, paths);
	if (!err) {
		table = calloc((size_t)c->size, rec_len(c->size));
		err = table ? my_record(c, &local, table + (size_t)c->rank * rec_len(c->size)) :
			      -ENOMEM;
	}
	if (!err)
		err = c->rank ? rendezvous_peer(c, &master, table, deadline) :
				rendezvous_root(c, &master, table, deadline);
	free(table);
	if (!err)
		err = coll_ping_all(c);
out:
	if (err) {
		comm_free(c);
		return err;
	}
	*commp = c;
	return 0;
}

/* Make sure no peer still needs us: all ranks reach the end, our last
 * staged chunks are acknowledged, and our acknowledgements go out. */
static void comm_quiesce(struct mroce_coll_comm *c)
{
	struct coll_args barrier = { .kind = MROCE_COLL_BARRIER };

	if (c->err || c->size == 1)
		return;
	if (coll_run(c, &barrier) || coll_drain_pool(c))
		return;
	usleep(2000);
}

void mroce_coll_comm_destroy(struct mroce_coll_comm *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (c->worker_running)
		pthread_join(c->worker, NULL);
	comm_quiesce(c);
	comm_free(c);	/* stops the progress thread first */
}

int mroce_coll_rank(const struct mroce_coll_comm *c)
{
	return c ? c->rank : -EINVAL;
}

int mroce_coll_size(const struct mroce_coll_comm *c)
{
	return c ? c->size : -EINVAL;
}

int mroce_coll_error(const struct mroce_coll_comm *c)
{
	return c ? __atomic_load_n(&c->err, __ATOMIC_RELAXED) : -EINVAL;
}

struct mroce_dev *mroce_coll_dev(const struct mroce_coll_comm *c)
{
	return c ? c->dev : NULL;
}
