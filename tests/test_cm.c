// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The connection manager over real TCP on 127.0.0.1 (no root), with devices
 * on a simulated wire: a legitimate handshake, a peer naming another host
 * (reflection), idle and slow peers (lock-out), malformed, truncated and
 * oversized messages, peers that close mid-handshake, handshakes the
 * listener drops after answering (the client must not report success),
 * connect-and-close and idle floods beside real clients, EINTR on every
 * socket call, refused and silent ports, and timeouts.
 *
 * Next-hop resolution is replaced at link time (this file defines
 * mroce_resolve_mac_on, so lib/neigh.c is not linked in): it records which
 * addresses the CM asked about, the way the kernel would be asked to ARP.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "sim.h"

#define LOOP		0x7f000001	/* 127.0.0.1: every TCP peer here */
#define VICTIM		0x7f000009	/* 127.0.0.9: the host a liar names */

static const __u8 resolved_mac[6] = { 0x02, 0x7e, 0x57, 0, 0, 0x01 };
static const __u8 claimed_mac[6] = { 0x02, 0xba, 0xd0, 0, 0, 0x09 };

/* ---- link-time seams: the neighbour table and EINTR on every socket call ---- */

static pthread_mutex_t asked_lock = PTHREAD_MUTEX_INITIALIZER;
static __u32 asked[64];
static int nasked;

int mroce_resolve_mac_on(struct mroce_dev *dev, int family, const struct in6_addr *addr,
			 __u32 ifindex, __u8 mac[6])
{
	__u32 a;

	(void)dev;
	(void)family;
	(void)ifindex;
	memcpy(&a, &addr->s6_addr[12], 4);
	pthread_mutex_lock(&asked_lock);
	if (nasked < 64)
		asked[nasked++] = ntohl(a);
	pthread_mutex_unlock(&asked_lock);
	memcpy(mac, resolved_mac, 6);
	return 0;
}

static bool was_asked(__u32 addr)
{
	bool yes = false;

	pthread_mutex_lock(&asked_lock);
	for (int i = 0; i < nasked; i++)
		yes |= asked[i] == addr;
	pthread_mutex_unlock(&asked_lock);
	return yes;
}

static __thread bool eintr_on;
static __thread unsigned int eintr_calls[6], eintr_hits;

/* Every other call of each socket function, in a thread that turned this on, fails with EINTR. */
static bool eintr(int fn)
{
	if (!eintr_on || eintr_calls[fn]++ % 2)
		return false;
	eintr_hits++;
	errno = EINTR;
	return true;
}

#define REAL(fn, ret, name, ...)						\
	static ret (*real)(__VA_ARGS__);					\
	if (!real)								\
		real = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name);		\
	if (eintr(fn))								\
		return -1

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	REAL(0, ssize_t, recv, int, void *, size_t, int);
	return real(fd, buf, len, flags);
}

/*
 * A client thread that set hold_confirm stops before its one-byte
 * confirmation: it posts confirm_reached (the server's answer is in and
 * taken) and goes on only once the test posts confirm_gate.
 */
static __thread bool hold_confirm;
static sem_t confirm_reached, confirm_gate;

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	REAL(1, ssize_t, send, int, const void *, size_t, int);
	if (hold_confirm && len == 1) {
		hold_confirm = false;
		sem_post(&confirm_reached);
		while (sem_wait(&confirm_gate) && errno == EINTR)
			;
	}
	return real(fd, buf, len, flags);
}

int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	REAL(2, int, accept4, int, struct sockaddr *, socklen_t *, int);
	return real(fd, sa, len, flags);
}

int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	REAL(3, int, connect, int, const struct sockaddr *, socklen_t);
	return real(fd, sa, len);
}

int poll(struct pollfd *pfd, nfds_t n, int timeout)
{
	REAL(4, int, poll, struct pollfd *, nfds_t, int);
	return real(pfd, n, timeout);
}

int epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout)
{
	REAL(5, int, epoll_wait, int, struct epoll_event *, int, int);
	return real(epfd, ev, n, timeout);
}

/* ---- fixtures ------------------------------------------------------------ */

struct env {
	struct sim_net		*net;
	struct mroce_dev	*ds, *dc;	/* server, client */
	struct mroce_cq		*cqs, *cqc;
	struct mroce_listener	*l;
	__u16			port;
};

static long ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct mroce_dev *loop_dev(struct sim_port *port, __u8 id)
{
	MROCE_OPTS(mroce_dev_opts, o, .no_thread = true);
	struct mroce_route local = {};
	struct mroce_dev *dev = NULL;

	local.family = AF_INET;
	local.src_mac[0] = 0x02;
	local.src_mac[5] = id;
	local.src.v4.s_addr = htonl(LOOP);
	assert_int_equal(mroce_dev_create(&sim_ops, port, NULL, &local, &o, &dev), 0);
	dev->attr.mtu = 1500;
	return dev;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	e->net = sim_new(1);
	e->ds = loop_dev(&e->net->a, 0x0a);
	e->dc = loop_dev(&e->net->b, 0x0b);
	assert_int_equal(mroce_create_cq(e->ds, 64, &e->cqs), 0);
	assert_int_equal(mroce_create_cq(e->dc, 64, &e->cqc), 0);
	for (int i = 0; i < 500; i++) {
		e->port = (__u16)(20000 + (getpid() * 7 + i) % 30000);
		if (!mroce_listen(e->ds, "127.0.0.1", e->port, &e->l))
			break;
	}
	assert_non_null(e->l);
	pthread_mutex_lock(&asked_lock);
	nasked = 0;
	pthread_mutex_unlock(&asked_lock);
	sem_init(&confirm_reached, 0, 0);
	sem_init(&confirm_gate, 0, 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	mroce_listener_close(e->l);
	for (__u32 i = 0; i < MROCE_MAX_QPS; i++) {
		if (e->ds->qps[i])
			mroce_destroy_qp(e->ds->qps[i]);
		if (e->dc->qps[i])
			mroce_destroy_qp(e->dc->qps[i]);
	}
	mroce_destroy_cq(e->cqs);
	mroce_destroy_cq(e->cqc);
	mroce_dev_close(e->ds);
	mroce_dev_close(e->dc);
	sim_free_net(e->net);
	free(e);
	return 0;
}

static int nqps(struct mroce_dev *dev)
{
	int n = 0;

	for (__u32 i = 0; i < MROCE_MAX_QPS; i++)
		n += dev->qps[i] != NULL;
	return n;
}

static struct mroce_qp_attr qp_attr(struct mroce_cq *cq)
{
	MROCE_OPTS(mroce_qp_attr, a, .send_cq = cq, .recv_cq = cq);
	return a;
}

static struct mroce_listener_stats lstats(struct env *e)
{
	MROCE_OPTS(mroce_listener_stats, st);

	assert_int_equal(mroce_listener_stats(e->l, &st), 0);
	return st;
}

/* A QP info as a peer at addr would send it. */
static void info_wire(__u8 out[MROCE_QP_INFO_WIRE_LEN], __u32 addr)
{
	struct mroce_qp_info i = { .qpn = 5, .psn = 100, .secret = 0x1111, .udp_port = MROCE_DEFAULT_PORT,
				   .family = AF_INET, .mtu = 1500 };

	memcpy(i.mac, claimed_mac, 6);
	i.addr.s6_addr[10] = i.addr.s6_addr[11] = 0xff;
	addr = htonl(addr);
	memcpy(&i.addr.s6_addr[12], &addr, 4);
	mroce_qp_info_pack(&i, out);
}

/* A raw TCP peer from 127.0.0.1, blocking, with a receive timeout. */
static int raw_connect(__u16 port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(LOOP) };
	struct timeval tv = { .tv_sec = 4 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Wait for fd to see the server close it; returns when (ms), -1 if not within limit_ms. */
static long closed_at(int fd, int limit_ms)
{
	long end = ms() + limit_ms;
	char c[64];

	while (ms() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, (int)(end - ms())) == 1) {
			ssize_t n = recv(fd, c, sizeof(c), MSG_DONTWAIT);

			if (n == 0 || (n < 0 && errno != EAGAIN))
				return ms();
		}
	}
	return -1;
}

struct client {
	struct env		*e;
	int			timeout_ms, err, delay_ms;
	__u32			streams;	/* attr.streams of the client's QP (0: 1) */
	bool			eintr;
	bool			hold_confirm;	/* stop before confirming: confirm_gate */
	unsigned int		eintr_hits;
	struct mroce_qp		*qp;
	pthread_t		t;
};

static void *client_run(void *arg)
{
	struct client *c = arg;
	struct mroce_qp_attr a = qp_attr(c->e->cqc);

	a.streams = c->streams;
	if (c->delay_ms)
		usleep((useconds_t)c->delay_ms * 1000);
	eintr_on = c->eintr;
	hold_confirm = c->hold_confirm;
	c->err = mroce_connect(c->e->dc, "127.0.0.1", c->e->port, &a, c->timeout_ms, &c->qp);
	eintr_on = false;
	c->eintr_hits = eintr_hits;
	return NULL;
}

static void client_start(struct client *c, struct env *e, int timeout_ms)
{
	c->e = e;
	c->timeout_ms = timeout_ms;
	assert_int_equal(pthread_create(&c->t, NULL, client_run, c), 0);
}

static int server_accept(struct env *e, int timeout_ms, struct mroce_qp **qp)
{
	struct mroce_qp_attr a = qp_attr(e->cqs);

	*qp = NULL;
	return mroce_accept(e->l, &a, timeout_ms, qp);
}

static __u32 route_dst(const struct mroce_qp *qp)
{
	return ntohl(qp->route.dst.v4.s_addr);
}

/* ---- a legitimate handshake ---------------------------------------------- */

struct written { struct mroce_cq *cq; struct mroce_wc wc; int n; };

static bool got_wc(void *arg)
{
	struct written *w = arg;

	w->n += mroce_poll_cq(w->cq, 1, &w->wc);
	return w->n > 0;
}

static void test_connect_accept(void **state)
{
	struct env *e = *state;
	struct client c = {};
	struct mroce_qp *qp;
	static __u8 src[4096], dst[4096];
	struct mroce_mr *ms_, *md;
	struct written w = { .cq = e->cqc };

	client_start(&c, e, 2000);
	assert_int_equal(server_accept(e, 3000, &qp), 0);
	pthread_join(c.t, NULL);
	assert_int_equal(c.err, 0);
	assert_int_equal(mroce_qp_state(qp), MROCE_QPS_RTS);
	assert_int_equal(mroce_qp_state(c.qp), MROCE_QPS_RTS);
	/* both sides send to the TCP peer, through the resolved next hop */
	assert_int_equal(route_dst(qp), LOOP);
	assert_int_equal(route_dst(c.qp), LOOP);
	assert_memory_equal(qp->route.dst_mac, resolved_mac, 6);
	assert_memory_equal(c.qp->route.dst_mac, resolved_mac, 6);
	assert_int_equal(lstats(e).accepted, 1);
	assert_int_equal(lstats(e).failed, 0);
	/* and the pair carries data */
	for (int i = 0; i < 4096; i++)
		src[i] = (__u8)(i * 13);
	assert_int_equal(mroce_reg_mr(e->dc, src, sizeof(src), MROCE_ACCESS_LOCAL_WRITE, &ms_), 0);
	assert_int_equal(mroce_reg_mr(e->ds, dst, sizeof(dst), MROCE_ACCESS_LOCAL_WRITE |
				      MROCE_ACCESS_REMOTE_WRITE, &md), 0);
	{
		struct mroce_sge sge = { (__u64)(unsigned long)src, sizeof(src), mroce_mr_lkey(ms_) };
		struct mroce_send_wr wr = { .wr_id = 1, .opcode = MROCE_WR_RDMA_WRITE, .sg_list = &sge,
					    .num_sge = 1, .remote_addr = (__u64)(unsigned long)dst,
					    .rkey = mroce_mr_rkey(md) };

		assert_int_equal(mroce_post_send(c.qp, &wr), 0);
	}
	assert_int_equal(sim_run(e->net, e->dc, e->ds, got_wc, &w, 1000000), 0);
	assert_int_equal(w.wc.status, MROCE_WC_SUCCESS);
	assert_memory_equal(dst, src, sizeof(src));
	mroce_dereg_mr(ms_);
	mroce_dereg_mr(md);
}

/* Peers whose QPs number their streams differently: refused, clearly, at both ends. */
static void test_connect_streams_mismatch(void **state)
{
	struct env *e = *state;
	struct client c = { .streams = 4 };
	struct mroce_qp *qp;
	int err;

	client_start(&c, e, 2000);
	err = server_accept(e, 3000, &qp);
	pthread_join(c.t, NULL);
	/* the client says why; the server counts the failed handshake and waits on */
	assert_int_equal(c.err, -MROCE_ERR_STREAMS);
	assert_int_equal(err, -ETIMEDOUT);
	assert_null(c.qp);
	assert_int_equal(lstats(e).failed, 1);
	assert_int_equal(lstats(e).last_err, -MROCE_ERR_STREAMS);
}

/* ---- 18: reflection through the CM --------------------------------------- */

struct liar {
	__u16		port;
	__u32		claim;
	int		got_reply;	/* bytes of the server's info that arrived */
	bool		closed;		/* the server closed the connection */
	pthread_t	t;
};

static void *liar_run(void *arg)
{
	struct liar *lr = arg;
	__u8 msg[MROCE_QP_INFO_WIRE_LEN], reply[MROCE_QP_INFO_WIRE_LEN];
	int fd = raw_connect(lr->port);
	ssize_t n;

	info_wire(msg, lr->claim);
	n = send(fd, msg, sizeof(msg), MSG_NOSIGNAL);
	assert_int_equal(n, sizeof(msg));
	n = recv(fd, reply, sizeof(reply), MSG_WAITALL);
	lr->got_reply = n > 0 ? (int)n : 0;
	if (n == sizeof(reply))
		send(fd, "R", 1, MSG_NOSIGNAL);
	lr->closed = closed_at(fd, 3000) >= 0;
	close(fd);
	return NULL;
}

static void test_reflection_refused(void **state)
{
	struct env *e = *state;
	struct liar lr = { .port = e->port, .claim = VICTIM };
	struct mroce_qp *qp;
	int err;

	assert_int_equal(pthread_create(&lr.t, NULL, liar_run, &lr), 0);
	err = server_accept(e, 1000, &qp);
	pthread_join(lr.t, NULL);
	/* no QP toward the victim, no ARP for it, nothing sent back, connection closed */
	assert_int_equal(err, -ETIMEDOUT);
	assert_null(qp);
	assert_false(was_asked(VICTIM));
	assert_int_equal(lr.got_reply, 0);
	assert_true(lr.closed);
	assert_int_equal(nqps(e->ds), 0);
	assert_int_equal(lstats(e).refused_addr, 1);
	assert_int_equal(lstats(e).failed, 1);
	assert_int_equal(lstats(e).last_err, -MROCE_ERR_PEER_ADDR);
}

/* The claimed MAC never steers traffic: the next hop comes from the neighbour table. */
static void test_claimed_mac_ignored(void **state)
{
	struct env *e = *state;
	struct liar lr = { .port = e->port, .claim = LOOP };
	struct mroce_qp *qp;

	assert_int_equal(pthread_create(&lr.t, NULL, liar_run, &lr), 0);
	assert_int_equal(server_accept(e, 3000, &qp), 0);
	pthread_join(lr.t, NULL);
	assert_int_equal(route_dst(qp), LOOP);
	assert_memory_equal(qp->route.dst_mac, resolved_mac, 6);
	assert_true(was_asked(LOOP));
}

/* A fake server answering with an info of another host: the client refuses. */
struct fake_server {
	int		lfd;
	__u8		answer[MROCE_QP_INFO_WIRE_LEN];
	size_t		answer_len;
	bool		close_early;	/* close after reading the client's info */
	bool		no_answer;	/* never answer */
	__u8		ack;		/* the byte answering a confirmation, 0: none, closed */
	int		confirm;	/* the byte the client sent last, -1: none (closed) */
	long		took_ms;	/* how long mroce_connect took (fake_connect) */
	pthread_t	t;
};

static void *fake_run(void *arg)
{
	struct fake_server *f = arg;
	__u8 msg[MROCE_QP_INFO_WIRE_LEN], c;
	int fd = accept(f->lfd, NULL, NULL);
	struct timeval tv = { .tv_sec = 3 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	f->confirm = -1;
	if (recv(fd, msg, sizeof(msg), MSG_WAITALL) == sizeof(msg) && !f->close_early) {
		if (f->no_answer)
			sleep(1);
		else if (send(fd, f->answer, f->answer_len, MSG_NOSIGNAL) == (ssize_t)f->answer_len &&
			 f->answer_len == sizeof(msg) && recv(fd, &c, 1, 0) == 1) {
			f->confirm = c;
			if (f->ack)
				send(fd, &f->ack, 1, MSG_NOSIGNAL);
		}
	}
	close(fd);
	return NULL;
}

static __u16 fake_start(struct fake_server *f)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(LOOP) };
	socklen_t sl = sizeof(sin);

	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&sin, &sl), 0);
	assert_int_equal(pthread_create(&f->t, NULL, fake_run, f), 0);
	return ntohs(sin.sin_port);
}

static int fake_connect(struct env *e, struct fake_server *f, int timeout_ms)
{
	struct mroce_qp_attr a = qp_attr(e->cqc);
	struct mroce_qp *qp = NULL;
	__u16 port = fake_start(f);
	char addr[] = "127.0.0.1";
	long t0 = ms();
	int err = mroce_connect(e->dc, addr, port, &a, timeout_ms, &qp);

	f->took_ms = ms() - t0;
	pthread_join(f->t, NULL);
	close(f->lfd);
	if (!err) {
		assert_non_null(qp);
		mroce_destroy_qp(qp);
	}
	return err;
}

static void test_connect_refuses_foreign_info(void **state)
{
	struct env *e = *state;
	struct fake_server f = { .answer_len = MROCE_QP_INFO_WIRE_LEN };
	char msg[256];

	info_wire(f.answer, VICTIM);
	assert_int_equal(fake_connect(e, &f, 2000), -MROCE_ERR_PEER_ADDR);
	/* what a tool prints for it names the refusal, not a missing privilege */
	assert_int_equal(mroce_strerror(-MROCE_ERR_PEER_ADDR, msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "address other than the connection's"));
	assert_null(strstr(msg, "root"));
	assert_int_equal(f.confirm, -1);	/* never confirmed */
	assert_false(was_asked(VICTIM));
	assert_int_equal(nqps(e->dc), 0);
}

static void test_connect_malformed_answers(void **state)
{
	struct env *e = *state;
	struct fake_server f = { .answer_len = MROCE_QP_INFO_WIRE_LEN };

	info_wire(f.answer, LOOP);
	f.answer[0] = 'X';				/* magic */
	assert_int_equal(fake_connect(e, &f, 2000), -EPROTO);
	info_wire(f.answer, LOOP);
	f.answer[1] = 1;				/* a version 1 server */
	assert_int_equal(fake_connect(e, &f, 2000), -MROCE_ERR_VERSION);
	info_wire(f.answer, LOOP);
	f.answer[1]++;					/* a later version */
	assert_int_equal(fake_connect(e, &f, 2000), -MROCE_ERR_VERSION);
	info_wire(f.answer, LOOP);
	f.answer[3] = 0;				/* an earlier layout: room for 4 planes ... */
	f.answer_len = 120;				/* ... in 120 bytes, then closed */
	assert_int_equal(fake_connect(e, &f, 2000), -MROCE_ERR_VERSION);
	f.answer_len = MROCE_QP_INFO_WIRE_LEN;
	info_wire(f.answer, LOOP);
	f.answer_len = 20;				/* truncated, then closed */
	assert_int_equal(fake_connect(e, &f, 2000), -ECONNRESET);
	f.answer_len = MROCE_QP_INFO_WIRE_LEN;
	f.close_early = true;				/* closed mid-handshake */
	assert_int_equal(fake_connect(e, &f, 2000), -ECONNRESET);
	assert_int_equal(nqps(e->dc), 0);
}

/*
 * The client returns success on the server's ack alone: confirmed, then
 * closed, or answered with another byte, is no connection; a server of the
 * earlier handshake (info byte 95 0, it would never ack) is refused before
 * the confirmation, clearly.
 */
static void test_connect_needs_the_ack(void **state)
{
	struct env *e = *state;
	struct fake_server f = { .answer_len = MROCE_QP_INFO_WIRE_LEN };

	info_wire(f.answer, LOOP);
	f.ack = 'A';
	assert_int_equal(fake_connect(e, &f, 2000), 0);
	assert_int_equal(f.confirm, 'R');
	f.ack = 0;					/* confirmed, then closed */
	assert_int_equal(fake_connect(e, &f, 2000), -ECONNRESET);
	assert_int_equal(f.confirm, 'R');
	f.ack = 'X';					/* another byte */
	assert_int_equal(fake_connect(e, &f, 2000), -EPROTO);
	f.ack = 'A';
	f.answer[MROCE_QP_INFO_CM_BYTE] = 0;		/* the earlier handshake's server */
	assert_int_equal(fake_connect(e, &f, 2000), -MROCE_ERR_VERSION);
	assert_int_equal(f.confirm, -1);		/* never confirmed: it holds no QP either */
	assert_int_equal(nqps(e->dc), 0);
}

/* ---- 19: idle connections must not lock others out ----------------------- */

static void test_idle_connections_no_lockout(void **state)
{
	struct env *e = *state;
	enum { IDLE = MROCE_CM_PENDING + 4 };
	int fds[IDLE];
	struct client c = {};
	struct mroce_qp *qp;
	long t0, last_open, t_closed;

	for (int i = 0; i < IDLE; i++)
		fds[i] = raw_connect(e->port);
	last_open = ms();
	client_start(&c, e, 1500);
	t0 = ms();
	assert_int_equal(server_accept(e, 3000, &qp), 0);
	pthread_join(c.t, NULL);
	assert_int_equal(c.err, 0);
	assert_true(ms() - t0 < 1500);
	assert_int_equal(lstats(e).accepted, 1);
	assert_true(lstats(e).evicted >= IDLE - MROCE_CM_PENDING + 1);
	assert_true(lstats(e).pending <= MROCE_CM_PENDING);
	/* the rest are closed at their deadline, not before, while accept runs */
	assert_int_equal(server_accept(e, MROCE_CM_HANDSHAKE_MS + 300, &qp), -ETIMEDOUT);
	t_closed = closed_at(fds[IDLE - 1], 100);
	assert_true(t_closed >= 0);
	assert_true(lstats(e).timed_out >= 1);
	assert_int_equal(lstats(e).pending, 0);
	assert_int_equal(lstats(e).last_err, -ETIMEDOUT);
	for (int i = 0; i < IDLE; i++) {
		assert_true(closed_at(fds[i], 100) >= 0);
		close(fds[i]);
	}
	(void)last_open;
}

/* An idle peer expires exactly at its deadline. */
static void test_idle_deadline_exact(void **state)
{
	struct env *e = *state;
	struct mroce_qp *qp;
	int fd = raw_connect(e->port);
	long t0 = ms(), t;

	assert_int_equal(server_accept(e, MROCE_CM_HANDSHAKE_MS - 300, &qp), -ETIMEDOUT);
	assert_true(closed_at(fd, 0) < 0);		/* still open before its deadline */
	assert_int_equal(server_accept(e, 600, &qp), -ETIMEDOUT);
	t = closed_at(fd, 100);
	assert_true(t >= 0);
	assert_int_equal(lstats(e).timed_out, 1);
	assert_true(t - t0 >= MROCE_CM_HANDSHAKE_MS - 50 && t - t0 <= MROCE_CM_HANDSHAKE_MS + 700);
	close(fd);
}

/* A slowloris peer far slower than the deadline does not hold up a real client. */
struct slow { __u16 port; int gap_ms; bool closed; long t_close; pthread_t t; };

static void *slow_run(void *arg)
{
	struct slow *s = arg;
	__u8 msg[MROCE_QP_INFO_WIRE_LEN], reply[MROCE_QP_INFO_WIRE_LEN];
	int fd = raw_connect(s->port);

	info_wire(msg, LOOP);
	for (size_t i = 0; i < sizeof(msg); i++) {
		if (send(fd, &msg[i], 1, MSG_NOSIGNAL) != 1) {
			s->closed = true;
			break;
		}
		usleep((useconds_t)s->gap_ms * 1000);
	}
	if (!s->closed && recv(fd, reply, sizeof(reply), MSG_WAITALL) == sizeof(reply))
		send(fd, "R", 1, MSG_NOSIGNAL);
	s->t_close = closed_at(fd, 3000);
	close(fd);
	return NULL;
}

static void test_slowloris(void **state)
{
	struct env *e = *state;
	struct slow s = { .port = e->port, .gap_ms = 100 };	/* 5.6 s for one message */
	struct slow fast = { .port = e->port, .gap_ms = 5 };	/* 0.3 s: slow but in time */
	struct client c = { .delay_ms = 100 };
	struct mroce_qp *qp1, *qp2;
	long t0 = ms();

	assert_int_equal(pthread_create(&s.t, NULL, slow_run, &s), 0);
	client_start(&c, e, 1500);
	assert_int_equal(server_accept(e, 1500, &qp1), 0);
	pthread_join(c.t, NULL);
	assert_int_equal(c.err, 0);
	assert_true(ms() - t0 < 1500);
	assert_int_equal(pthread_create(&fast.t, NULL, slow_run, &fast), 0);
	assert_int_equal(server_accept(e, 1500, &qp2), 0);	/* byte by byte, assembled */
	pthread_join(fast.t, NULL);
	assert_int_equal(server_accept(e, MROCE_CM_HANDSHAKE_MS + 300 - (int)(ms() - t0), &qp2),
			 -ETIMEDOUT);
	pthread_join(s.t, NULL);
	assert_true(s.t_close >= 0 && s.t_close - t0 <= MROCE_CM_HANDSHAKE_MS + 700);
	assert_int_equal(lstats(e).accepted, 2);
	assert_int_equal(lstats(e).timed_out, 1);
}

/* ---- the class: malformed, truncated, oversized, closed, wrong confirm ---- */

struct bad {
	const char	*what;
	int		mutate;		/* byte index to corrupt, -1: none */
	size_t		len;		/* bytes sent (> wire len: oversized) */
	bool		close_after;	/* close right after sending */
	bool		confirm_wrong;	/* read the reply, confirm with 'X' */
	bool		close_at_confirm; /* read the reply, then close */
	int		err;		/* last_err expected */
	bool		confirm_close;	/* read the reply, confirm, close before the ack */
};

static void test_bad_handshakes(void **state)
{
	static const struct bad cases[] = {
		{ "bad magic", 0, MROCE_QP_INFO_WIRE_LEN, false, false, false, -EPROTO, false },
		{ "a version 1 client", 1, MROCE_QP_INFO_WIRE_LEN, false, false, false, -MROCE_ERR_VERSION,
		  false },
		/* byte 3 0: an earlier version 2 library's 120 bytes, room for 4 planes */
		{ "an earlier layout's client", 3, 120, false, false, false, -MROCE_ERR_VERSION, false },
		/* byte 95 0: a client of the earlier handshake, which returns on confirming */
		{ "an earlier handshake's client", MROCE_QP_INFO_CM_BYTE, MROCE_QP_INFO_WIRE_LEN,
		  false, false, false, -MROCE_ERR_VERSION, false },
		{ "bad family", 2, MROCE_QP_INFO_WIRE_LEN, false, false, false, -EPROTO, false },
		{ "qpn 0", 7, MROCE_QP_INFO_WIRE_LEN, false, false, false, -EPROTO, false },
		{ "truncated, closed", -1, 30, true, false, false, -ECONNRESET, false },
		{ "nothing, closed", -1, 0, true, false, false, -ECONNRESET, false },
		{ "oversized", -1, MROCE_QP_INFO_WIRE_LEN + 8, false, false, false, -EPROTO, false },
		{ "wrong confirmation", -1, MROCE_QP_INFO_WIRE_LEN, false, true, false, -EPROTO, false },
		{ "closed before confirming", -1, MROCE_QP_INFO_WIRE_LEN, false, false, true, -ECONNRESET,
		  false },
		/* a client that gave up after confirming: it will never read the ack */
		{ "confirmed, then closed", -1, MROCE_QP_INFO_WIRE_LEN, false, false, false, -ECONNRESET,
		  true },
	};
	struct env *e = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad *b = &cases[i];
		__u8 msg[MROCE_QP_INFO_WIRE_LEN + 8] = {}, reply[MROCE_QP_INFO_WIRE_LEN];
		struct mroce_listener_stats st;
		struct mroce_qp *qp;
		int fd = raw_connect(e->port), err;

		info_wire(msg, LOOP);
		if (b->mutate >= 0)
			/* qpn 5 -> 0, version 2 -> 1, layout 8 -> 0, handshake 1 -> 0 */
			msg[b->mutate] ^= b->mutate == 7 ? 5 : b->mutate == 1 ? 3 :
					  b->mutate == 3 ? MROCE_MAX_PLANES :
					  b->mutate == MROCE_QP_INFO_CM_BYTE ? MROCE_CM_REVISION : 0x55;
		assert_int_equal(send(fd, msg, b->len, MSG_NOSIGNAL), (ssize_t)b->len);
		if (b->close_after)
			close(fd);
		err = server_accept(e, 300, &qp);
		if (b->confirm_wrong || b->close_at_confirm || b->confirm_close) {
			assert_int_equal(recv(fd, reply, sizeof(reply), MSG_WAITALL), sizeof(reply));
			if (b->confirm_wrong)
				send(fd, "X", 1, MSG_NOSIGNAL);
			if (b->confirm_close)
				send(fd, "R", 1, MSG_NOSIGNAL);
			if (!b->confirm_wrong)
				close(fd);
			err = server_accept(e, 300, &qp);
		}
		st = lstats(e);
		print_message("%s: accept %d, last_err %d\n", b->what, err, st.last_err);
		assert_int_equal(err, -ETIMEDOUT);
		assert_int_equal(st.failed, i + 1);
		assert_int_equal(st.last_err, b->err);
		assert_int_equal(st.pending, 0);
		assert_int_equal(nqps(e->ds), 0);
		if (!b->close_after && !b->close_at_confirm && !b->confirm_close) {
			assert_true(closed_at(fd, 200) >= 0);
			close(fd);
		}
	}
	assert_int_equal(lstats(e).malformed, 5);
	assert_int_equal(lstats(e).bad_version, 3);
	assert_int_equal(lstats(e).closed, 4);
}

/* ---- success means both ends are connected -------------------------------- */

/* Run the listener until the held client has taken the server's answer. */
static void answer_held_client(struct env *e)
{
	struct mroce_qp *qp;

	for (int i = 0; i < 100 && sem_trywait(&confirm_reached); i++)
		assert_int_equal(server_accept(e, 30, &qp), -ETIMEDOUT);
	assert_int_equal(lstats(e).pending, 1);
	assert_int_equal(nqps(e->ds), 1);	/* answered: the server made its QP */
}

/* A peer that sends a good info, takes the answer and never confirms. */
static int rogue_answered(struct env *e)
{
	__u8 msg[MROCE_QP_INFO_WIRE_LEN];
	int fd = raw_connect(e->port);

	info_wire(msg, LOOP);
	assert_int_equal(send(fd, msg, sizeof(msg), MSG_NOSIGNAL), sizeof(msg));
	return fd;
}

static void rogue_take_answer(int fd)
{
	__u8 reply[MROCE_QP_INFO_WIRE_LEN];

	assert_int_equal(recv(fd, reply, sizeof(reply), MSG_WAITALL), sizeof(reply));
}

/* The client of a handshake the listener dropped after answering must not report success. */
static void held_client_fails(struct env *e, struct client *c)
{
	sem_post(&confirm_gate);
	pthread_join(c->t, NULL);
	print_message("connect %d, evicted %llu, timed out %llu\n", c->err,
		      (unsigned long long)(e->l ? lstats(e).evicted : 0),
		      (unsigned long long)(e->l ? lstats(e).timed_out : 0));
	assert_int_equal(c->err, -ECONNRESET);
	assert_null(c->qp);
	assert_int_equal(nqps(e->dc), 0);
}

/*
 * A full table of answered handshakes (each peer holds our answer and never
 * confirms): a newcomer pushes out the oldest, a real client's, after our
 * answer reached it. It learns: no success without the server's QP.
 */
static void test_answered_then_evicted(void **state)
{
	struct env *e = *state;
	struct client c = { .hold_confirm = true };
	int fds[MROCE_CM_PENDING];
	struct mroce_qp *qp;

	client_start(&c, e, 3000);
	answer_held_client(e);
	for (int i = 0; i < MROCE_CM_PENDING - 1; i++)
		fds[i] = rogue_answered(e);
	for (int i = 0; i < 5; i++)
		assert_int_equal(server_accept(e, 30, &qp), -ETIMEDOUT);
	for (int i = 0; i < MROCE_CM_PENDING - 1; i++)
		rogue_take_answer(fds[i]);
	assert_int_equal(lstats(e).pending, MROCE_CM_PENDING);
	assert_int_equal(lstats(e).evicted, 0);
	/* one more: every handshake holds a QP, the client's is the oldest */
	fds[MROCE_CM_PENDING - 1] = rogue_answered(e);
	for (int i = 0; i < 5; i++)
		assert_int_equal(server_accept(e, 30, &qp), -ETIMEDOUT);
	rogue_take_answer(fds[MROCE_CM_PENDING - 1]);
	assert_int_equal(lstats(e).evicted, 1);
	assert_int_equal(nqps(e->ds), MROCE_CM_PENDING);	/* the rogues' */
	held_client_fails(e, &c);
	/* the bounds held: never more than the table, and the rogues get nothing */
	assert_int_equal(server_accept(e, 200, &qp), -ETIMEDOUT);
	assert_true(lstats(e).pending <= MROCE_CM_PENDING);
	assert_int_equal(lstats(e).accepted, 0);
	for (int i = 0; i < MROCE_CM_PENDING; i++)
		close(fds[i]);
}

/* Answered, then the listener closes before the confirmation is read. */
static void test_answered_then_listener_closed(void **state)
{
	struct env *e = *state;
	struct client c = { .hold_confirm = true };

	client_start(&c, e, 3000);
	answer_held_client(e);
	mroce_listener_close(e->l);
	e->l = NULL;
	assert_int_equal(nqps(e->ds), 0);
	held_client_fails(e, &c);
}

/*
 * Answered and confirmed in time, but the application calls mroce_accept()
 * again only after the handshake's deadline: the listener closes it unread.
 */
static void test_answered_then_expired(void **state)
{
	struct env *e = *state;
	struct client c = { .hold_confirm = true };
	struct mroce_qp *qp;

	client_start(&c, e, MROCE_CM_HANDSHAKE_MS + 2000);
	answer_held_client(e);
	sem_post(&confirm_gate);	/* the confirmation goes out, nobody reads it yet */
	usleep(MROCE_CM_HANDSHAKE_MS * 1000);
	assert_int_equal(server_accept(e, 200, &qp), -ETIMEDOUT);
	assert_int_equal(lstats(e).timed_out, 1);
	assert_int_equal(nqps(e->ds), 0);
	pthread_join(c.t, NULL);
	print_message("connect %d\n", c.err);
	assert_int_equal(c.err, -ECONNRESET);
	assert_null(c.qp);
	assert_int_equal(nqps(e->dc), 0);
}

/*
 * A second thread floods the listener, FLOOD_RATE connections a second, while
 * real clients connect; every client must connect, within its timeout,
 * to a QP the server holds. FLOOD_CLOSE: each flood connection is closed at
 * once; FLOOD_IDLE: it stays open, sending nothing, until FLOOD_KEEP newer
 * ones are open. Three in four end in a reset.
 */
enum flood_kind { FLOOD_CLOSE, FLOOD_IDLE };
#define FLOOD_KEEP	(2 * MROCE_CM_PENDING)
#define FLOOD_RATE	8000	/* connections a second at most */

struct flood {
	__u16			port;
	enum flood_kind		kind;
	volatile bool		stop;
	unsigned long		conns;
	pthread_t		t;
};

/* Connect, waiting at most 10 ms: a full backlog must not stop the flood for a SYN's retry. */
static bool flood_open(int fd, const struct sockaddr_in *sin)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	fcntl(fd, F_SETFL, O_NONBLOCK);
	if (!connect(fd, (const struct sockaddr *)sin, sizeof(*sin)))
		return true;
	if (errno != EINPROGRESS || poll(&p, 1, 10) != 1)
		return false;
	return !getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) && !soerr;
}

static void *flood_run(void *arg)
{
	struct flood *f = arg;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(f->port),
				   .sin_addr.s_addr = htonl(LOOP) };
	int keep[FLOOD_KEEP];

	unsigned long n0 = f->conns;
	long t0 = ms();

	for (int i = 0; i < FLOOD_KEEP; i++)
		keep[i] = -1;
	while (!f->stop) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };
		int fd;

		if ((long)(f->conns - n0) > (ms() - t0) * FLOOD_RATE / 1000) {
			usleep(100);	/* paced: the local ports must last the whole test */
			continue;
		}
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			break;
		if (!flood_open(fd, &sin)) {
			close(fd);
			continue;
		}
		/*
		 * Most end in a reset, not a close: no TIME_WAIT, so that the
		 * local ports last while tests run back to back.
		 */
		if (f->conns % 4)
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		if (f->kind == FLOOD_IDLE) {
			int *slot = &keep[f->conns % FLOOD_KEEP];

			if (*slot >= 0)
				close(*slot);
			*slot = fd;
		} else {
			close(fd);
		}
		f->conns++;
	}
	for (int i = 0; i < FLOOD_KEEP; i++)
		if (keep[i] >= 0)
			close(keep[i]);
	return NULL;
}

/*
 * ROUNDS times: a flood for at least FLOOD_MS, and within it CLIENTS real
 * clients, one every GAP_MS, while the server accepts all along, busy
 * BUSY_MS between its calls. Every
 * client must connect within TIMEOUT, each to a QP the server handed out.
 */
static void connects_under_flood(struct env *e, enum flood_kind kind)
{
	enum { ROUNDS = 6, CLIENTS = 5, GAP_MS = 40, FLOOD_MS = 300, TIMEOUT = 2000, BUSY_MS = 5 };
	struct flood f = { .port = e->port, .kind = kind };
	int ok = 0, bad = 0;

	for (int r = 0; r < ROUNDS; r++) {
		struct client c[CLIENTS] = {};
		struct mroce_qp *sqp[CLIENTS] = {};
		unsigned long c0 = f.conns;
		int accepted = 0;
		long t0 = ms(), rate, longest = 0;

		f.stop = false;
		assert_int_equal(pthread_create(&f.t, NULL, flood_run, &f), 0);
		for (int i = 0; i < CLIENTS; i++) {
			c[i].delay_ms = 20 + GAP_MS * i;
			client_start(&c[i], e, TIMEOUT);
		}
		/*
		 * A server that has other work too: between its calls of
		 * mroce_accept() the kernel queues what arrives.
		 */
		while (ms() - t0 < FLOOD_MS || (accepted < CLIENTS && ms() - t0 < TIMEOUT + 500)) {
			struct mroce_qp *qp;
			long ta = ms();

			if (!server_accept(e, 2, &qp)) {
				assert_true(accepted < CLIENTS);
				sqp[accepted++] = qp;
			}
			if (ms() - ta > longest)
				longest = ms() - ta;
			usleep(BUSY_MS * 1000);
		}
		f.stop = true;
		pthread_join(f.t, NULL);
		rate = (long)(f.conns - c0) * 1000 / (ms() - t0);
		for (int i = 0; i < CLIENTS; i++) {
			bool paired = false;

			pthread_join(c[i].t, NULL);
			if (c[i].err) {
				print_message("round %d client %d: connect %d\n", r, i, c[i].err);
				bad++;
				continue;
			}
			ok++;
			/* success at the client means a QP at the server, its peer */
			for (int k = 0; k < accepted; k++)
				paired |= c[i].qp->rqpn == mroce_qp_num(sqp[k]) &&
					  sqp[k]->rqpn == mroce_qp_num(c[i].qp);
			assert_true(paired);
			mroce_destroy_qp(c[i].qp);
		}
		print_message("round %d: %ld flood connections a second for %ld ms; %d accepted; "
			      "the longest mroce_accept(2 ms) %ld ms; evicted %llu, closed %llu, "
			      "pending %u\n", r, rate, ms() - t0, accepted, longest,
			      (unsigned long long)lstats(e).evicted,
			      (unsigned long long)lstats(e).closed, lstats(e).pending);
		for (int k = 0; k < accepted; k++)
			mroce_destroy_qp(sqp[k]);
		/* the flood really ran beside the clients, faster than the one reported */
		assert_true(rate >= 1000);
	}
	assert_int_equal(bad, 0);
	assert_int_equal(ok, ROUNDS * CLIENTS);
	assert_int_equal(lstats(e).accepted, ROUNDS * CLIENTS);
	assert_true(lstats(e).pending <= MROCE_CM_PENDING);
	assert_int_equal(nqps(e->ds), 0);
}

static void test_connect_close_flood(void **state)
{
	connects_under_flood(*state, FLOOD_CLOSE);
}

static void test_idle_flood(void **state)
{
	connects_under_flood(*state, FLOOD_IDLE);
}

/* ---- EINTR on every socket call ------------------------------------------- */

static void test_eintr_everywhere(void **state)
{
	struct env *e = *state;
	struct client c = { .eintr = true };
	struct mroce_qp *qp;
	int err;

	client_start(&c, e, 2000);
	eintr_on = true;
	memset(eintr_calls, 0, sizeof(eintr_calls));
	eintr_hits = 0;
	err = server_accept(e, 3000, &qp);
	eintr_on = false;
	pthread_join(c.t, NULL);
	print_message("accept %d (%u EINTR), connect %d (%u EINTR)\n", err, eintr_hits, c.err,
		      c.eintr_hits);
	assert_int_equal(err, 0);
	assert_int_equal(c.err, 0);
	assert_true(eintr_hits >= 3);
	assert_true(c.eintr_hits >= 3);
	assert_int_equal(mroce_qp_state(qp), MROCE_QPS_RTS);
	assert_int_equal(mroce_qp_state(c.qp), MROCE_QPS_RTS);
}

/* ---- refused and silent ports, exact timeouts ----------------------------- */

static void test_connect_refused_port(void **state)
{
	struct env *e = *state;
	struct mroce_qp_attr a = qp_attr(e->cqc);
	struct mroce_qp *qp = NULL;
	__u16 port = e->port;
	long t0;

	mroce_listener_close(e->l);	/* nobody listens there now */
	e->l = NULL;
	t0 = ms();
	assert_int_equal(mroce_connect(e->dc, "127.0.0.1", port, &a, 2000, &qp), -ECONNREFUSED);
	assert_true(ms() - t0 < 500);
	assert_null(qp);
	assert_int_equal(nqps(e->dc), 0);
	assert_int_equal(mroce_listen(e->ds, "127.0.0.1", port, &e->l), 0);
}

static void test_timeouts_exact(void **state)
{
	struct env *e = *state;
	struct fake_server f = { .no_answer = true };
	struct mroce_qp *qp;
	long t0 = ms(), t;
	int err;

	assert_int_equal(server_accept(e, 300, &qp), -ETIMEDOUT);
	t = ms() - t0;
	assert_true(t >= 290 && t <= 600);	/* slack for a loaded 2-core host */
	assert_int_equal(server_accept(e, 0, &qp), -ETIMEDOUT);
	err = fake_connect(e, &f, 300);	/* accepted by TCP, never answered */
	assert_int_equal(err, -ETIMEDOUT);
	/* its own timeout, not the fake server's 1 s silence (timed without the join) */
	assert_true(f.took_ms >= 290 && f.took_ms <= 800);
	assert_int_equal(nqps(e->dc), 0);
}

static void test_bad_args(void **state)
{
	struct env *e = *state;
	struct mroce_qp_attr a = qp_attr(e->cqc);
	MROCE_OPTS(mroce_listener_stats, st);
	struct mroce_qp *qp;

	assert_int_equal(mroce_accept(NULL, &a, 0, &qp), -EINVAL);
	assert_int_equal(mroce_accept(e->l, NULL, 0, &qp), -EINVAL);
	assert_int_equal(mroce_connect(e->dc, "not-an-address", 1, &a, 0, &qp), -EINVAL);
	assert_int_equal(mroce_listener_stats(NULL, &st), -EINVAL);
	st.sz = 0;
	assert_int_equal(mroce_listener_stats(e->l, &st), -EINVAL);
	assert_true(mroce_listener_fd(e->l) >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_connect_accept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_streams_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reflection_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claimed_mac_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_refuses_foreign_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_malformed_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_needs_the_ack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_connections_no_lockout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_deadline_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slowloris, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_handshakes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answered_then_evicted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answered_then_listener_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answered_then_expired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_close_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eintr_everywhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_refused_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeouts_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
