// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnccl-net-mroce: listen / connect / accept, none of which ever blocks.
 *
 * listen() opens a TCP socket on the device's IPv4 address (port chosen by
 * the kernel) and writes a handle: magic, version, address, port, a random
 * nonce, and room for the connecting side's progress (NCCL calls connect()
 * again with the same handle until it returns a comm, as its IB transport
 * relies on). The handshake over that socket:
 *
 *   connector -> acceptor   magic, nonce, the sender QP's packed info (132 B)
 *   acceptor  -> connector  magic, the receiver QP's packed info     (124 B)
 *   connector -> acceptor   'R': the sender QP is connected          (1 B)
 *
 * Each side creates its QP (and posts its receives) before it sends its
 * info, and the receiver sends nothing on the QP before 'R', so no packet
 * ever reaches a QP that does not exist or is not connected yet. The TCP
 * socket then stays open for the comm's life: when the peer process dies
 * the kernel closes it, and test() reports the error (xfer.c).
 *
 * Each side connects its QP with the next hop's MAC it looked up itself
 * (nexthop.c): when the kernel has not resolved it yet, the call returns no
 * comm and the next call looks again, instead of waiting in libmroce.
 *
 * The listener takes one handshake at a time. Until a connection's hello
 * has arrived and carries this listener's nonce, anything going wrong with
 * it (closed, reset, bad bytes, or silent for MN_HELLO_MS while another
 * connection waits behind it) means it is not our peer (a port scan, a
 * stray client): it is dropped and accept() goes on to the next one in the
 * backlog.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plugin.h"

#define MN_MAGIC	0x4d524e43u	/* "MRNC" */
#define MN_VERSION	2	/* 2: 64 receive slots, the immediate's layout changed */
#define HELLO_LEN	(4 + 8 + MROCE_QP_INFO_WIRE_LEN)
#define REPLY_LEN	(4 + MROCE_QP_INFO_WIRE_LEN)

enum stage_state { ST_CONNECTING, ST_SEND_HELLO, ST_RECV_REPLY, ST_CONNECT_QP, ST_SEND_READY,
		   ST_RECV_HELLO, ST_ACCEPT_QP, ST_SEND_REPLY, ST_RECV_READY };

/* A handshake in progress, on either side. */
struct mn_stage {
	enum stage_state state;
	int		fd;
	struct mn_comm	*c;
	__u8		buf[HELLO_LEN];
	size_t		off;
	__u64		deadline;
	bool		poked;		/* the next hop's resolution was started */
};

struct mn_handle {
	__u32		magic;
	__u8		version;
	__u8		pad[3];
	__u32		addr;		/* network order */
	__u16		port;		/* network order */
	__u16		pad2;
	__u64		nonce;
	struct mn_stage	*stage;		/* the connecting side's own progress; NULL in transit */
};
_Static_assert(sizeof(struct mn_handle) <= NCCL_NET_HANDLE_MAXSIZE, "handle too large");

struct mn_listen {
	struct mn_dev	*d;
	int		fd;
	__u64		nonce;
	struct mn_stage	*hs;
};

/* ---- small pieces ---------------------------------------------------------- */

static void put32(__u8 *p, __u32 v) { memcpy(p, &v, 4); }
static __u32 get32(const __u8 *p) { __u32 v; memcpy(&v, p, 4); return v; }

/* Move bytes [*off, len) without blocking: 1 when all moved, 0 to be called
 * again, or a negative errno (-ECONNRESET when the peer closed). */
static int io_step(int fd, __u8 *buf, size_t len, size_t *off, bool out)
{
	while (*off < len) {
		ssize_t n = out ? send(fd, buf + *off, len - *off, MSG_NOSIGNAL | MSG_DONTWAIT) :
				  recv(fd, buf + *off, len - *off, MSG_DONTWAIT);

		if (n == 0 && !out)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		*off += (size_t)n;
	}
	return 1;
}

/* Keepalive probes find a peer host that vanished without closing (about 5 s). */
static void tune_socket(int fd)
{
	int one = 1, idle = 2, intvl = 1, cnt = 3;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static void v4_mapped(struct in_addr a, struct in6_addr *a6)
{
	memset(a6, 0, sizeof(*a6));
	a6->s6_addr[10] = a6->s6_addr[11] = 0xff;
	memcpy(&a6->s6_addr[12], &a, 4);
}

void mn_comm_free(struct mn_comm *c)
{
	if (!c)
		return;
	__atomic_fetch_sub(&mn_open_objs, 1, __ATOMIC_RELEASE);
	if (c->qp)
		mroce_destroy_qp(c->qp);	/* flushes what is outstanding */
	if (c->cq)
		mroce_destroy_cq(c->cq);
	if (c->ctl_mr)
		mroce_dereg_mr(c->ctl_mr);
	free(c->ctl);
	free(c->reqs);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

/* A comm's QP, CQ and control buffers, its receives posted; not connected. */
static int comm_create(struct mn_dev *d, enum mn_kind kind, struct mn_comm **out)
{
	MROCE_OPTS(mroce_qp_attr, attr, .sq_depth = MN_QP_DEPTH, .rq_depth = MN_QP_DEPTH,
		   .order = MROCE_ORDERED, .paths = 4);
	struct mn_comm *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	__atomic_fetch_add(&mn_open_objs, 1, __ATOMIC_RELEASE);	/* mn_comm_free() takes it back */
	c->kind = kind;
	c->d = d;
	c->fd = -1;
	c->nreqs = kind == MN_SEND ? MN_SEND_REQS : MN_RECV_SLOTS;
	c->reqs = calloc((size_t)c->nreqs, sizeof(*c->reqs));
	c->ctl = calloc(MN_CTS_BUFS, MN_CTS_LEN);
	err = c->reqs && c->ctl ? 0 : -ENOMEM;
	if (!err)
		err = mroce_reg_mr(d->dev, c->ctl, (size_t)MN_CTS_BUFS * MN_CTS_LEN,
				   MROCE_ACCESS_LOCAL_WRITE, &c->ctl_mr);
	if (!err)
		err = mroce_create_cq(d->dev, 2 * MN_QP_DEPTH, &c->cq);
	if (!err) {
		attr.send_cq = attr.recv_cq = c->cq;
		err = mroce_create_qp(d->dev, &attr, &c->qp);
	}
	for (int i = 0; !err && i < c->nreqs; i++)
		c->reqs[i].c = c;
	if (!err)
		err = mn_comm_post_initial(c);
	if (err) {
		mn_comm_free(c);
		return err;
	}
	*out = c;
	return 0;
}

static int local_info(struct mn_comm *c, __u8 out[MROCE_QP_INFO_WIRE_LEN])
{
	struct mroce_qp_info info;
	struct in6_addr a6;
	int err;

	v4_mapped(c->d->addr, &a6);
	err = mroce_qp_local_info(c->qp, &a6, AF_INET, &info);
	if (!err)
		mroce_qp_info_pack(&info, out);
	return err;
}

/*
 * Connect the stage's QP to the peer's packed info through the next hop's
 * MAC: 1 done, 0 when that MAC is not resolved yet (call again), or a
 * negative error.
 */
static int connect_qp(struct mn_stage *s, const __u8 in[MROCE_QP_INFO_WIRE_LEN])
{
	struct mroce_qp_info info;
	__u8 mac[6];
	int err = mn_next_hop_mac(s->fd, s->c->d->ifindex, mac, !s->poked);

	if (err == -EAGAIN) {
		if (!s->poked)
			MN_INFO("the next hop toward the peer is not resolved yet: retrying");
		s->poked = true;
		return 0;
	}
	if (!err)
		err = mroce_qp_info_unpack(in, &info);
	if (!err)
		err = mroce_qp_connect(s->c->qp, &info, mac);
	return err ? err : 1;
}

static void stage_free(struct mn_stage *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	mn_comm_free(s->c);
	free(s);
}

static struct mn_stage *stage_new(int fd, enum stage_state st, unsigned int ms)
{
	struct mn_stage *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fd = fd;
	s->state = st;
	s->deadline = mn_now_ns() + (__u64)ms * 1000000ull;
	return s;
}

/* What an error on the side channel means for NCCL. */
static ncclResult_t hs_error(int err, const char *what)
{
	char buf[96];

	mroce_strerror(err, buf, sizeof(buf));	/* errno values and libmroce's own codes */
	MN_WARN("handshake: %s: %s", what, buf);
	return err == -ECONNRESET || err == -EPIPE || err == -EPROTO || err == -ETIMEDOUT ||
	       err == -ECONNREFUSED ? ncclRemoteError : ncclSystemError;
}

/* ---- listen ------------------------------------------------------------- */

ncclResult_t mn_listen(int dev, void *handle, void **listen_comm)
{
	struct mn_dev *d = mn_dev_get(dev);
	struct mn_handle *h = handle;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	struct mn_listen *l;
	int fd;

	if (!d || !h || !listen_comm)
		return ncclInternalError;
	l = calloc(1, sizeof(*l));
	if (!l)
		return ncclSystemError;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	sa.sin_addr = d->addr;
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) ||
	    getrandom(&l->nonce, sizeof(l->nonce), 0) != sizeof(l->nonce)) {
		MN_WARN("listen on %s: %s", d->ifname, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(l);
		return ncclSystemError;
	}
	l->d = d;
	l->fd = fd;
	__atomic_fetch_add(&mn_open_objs, 1, __ATOMIC_RELEASE);
	memset(h, 0, NCCL_NET_HANDLE_MAXSIZE);
	h->magic = MN_MAGIC;
	h->version = MN_VERSION;
	h->addr = sa.sin_addr.s_addr;
	h->port = sa.sin_port;
	h->nonce = l->nonce;
	h->stage = NULL;
	*listen_comm = l;
	return ncclSuccess;
}

ncclResult_t mn_close_listen(void *listen_comm)
{
	struct mn_listen *l = listen_comm;

	if (!l)
		return ncclInternalError;
	stage_free(l->hs);
	close(l->fd);
	free(l);
	__atomic_fetch_sub(&mn_open_objs, 1, __ATOMIC_RELEASE);
	return ncclSuccess;
}

/* ---- connect (the sending side) ----------------------------------------------- */

static int connect_start(const struct mn_handle *h, struct mn_stage **out)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = h->port,
				  .sin_addr.s_addr = h->addr };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	tune_socket(fd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS &&
	    errno != EINTR) {
		int err = -errno;

		close(fd);
		return err;
	}
	*out = stage_new(fd, ST_CONNECTING, MN_HANDSHAKE_MS);
	if (!*out) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

/* Advance as far as possible: 1 done, 0 again later, negative errno. */
static int connect_step(struct mn_dev *d, struct mn_stage *s, __u64 nonce)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLOUT };
	int soerr = 0, err;
	socklen_t sl = sizeof(soerr);

	switch (s->state) {
	case ST_CONNECTING:
		if (poll(&pfd, 1, 0) <= 0)
			return 0;
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl))
			return -errno;
		if (soerr)
			return -soerr;
		err = comm_create(d, MN_SEND, &s->c);
		if (err)
			return err;
		put32(s->buf, MN_MAGIC);
		memcpy(s->buf + 4, &nonce, 8);
		err = local_info(s->c, s->buf + 12);
		if (err)
			return err;
		s->state = ST_SEND_HELLO;
		s->off = 0;
		/* fall through */
	case ST_SEND_HELLO:
		err = io_step(s->fd, s->buf, HELLO_LEN, &s->off, true);
		if (err <= 0)
			return err;
		s->state = ST_RECV_REPLY;
		s->off = 0;
		/* fall through */
	case ST_RECV_REPLY:
		err = io_step(s->fd, s->buf, REPLY_LEN, &s->off, false);
		if (err <= 0)
			return err;
		if (get32(s->buf) != MN_MAGIC)
			return -EPROTO;
		s->state = ST_CONNECT_QP;
		/* fall through */
	case ST_CONNECT_QP:
		err = connect_qp(s, s->buf + 4);
		if (err <= 0)
			return err;
		s->buf[0] = 'R';
		s->state = ST_SEND_READY;
		s->off = 0;
		/* fall through */
	case ST_SEND_READY:
		return io_step(s->fd, s->buf, 1, &s->off, true);
	default:
		return -EINVAL;
	}
}

ncclResult_t mn_connect(int dev, void *handle, void **send_comm, ncclNetDeviceHandle_v8_t **dc)
{
	struct mn_dev *d = mn_dev_get(dev);
	struct mn_handle *h = handle;
	struct mn_stage *s;
	int err;

	(void)dc;	/* no device offload */
	if (!d || !h || !send_comm)
		return ncclInternalError;
	*send_comm = NULL;
	if (h->magic != MN_MAGIC || h->version != MN_VERSION) {
		MN_WARN("connect: not an mroce handle (magic %#x version %u)", h->magic, h->version);
		return ncclInternalError;
	}
	if (!h->stage) {
		err = connect_start(h, &h->stage);
		if (err)
			return hs_error(err, "connect");
	}
	s = h->stage;
	err = connect_step(d, s, h->nonce);
	if (!err && mn_now_ns() > s->deadline)
		err = -ETIMEDOUT;
	if (err < 0) {
		h->stage = NULL;
		stage_free(s);
		return hs_error(err, "connect");
	}
	if (err == 1) {
		s->c->fd = s->fd;
		*send_comm = s->c;
		h->stage = NULL;
		free(s);
	}
	return ncclSuccess;
}

/* ---- accept (the receiving side) ----------------------------------------------- */

static int accept_step(struct mn_listen *l, struct mn_stage *s)
{
	int err;

	switch (s->state) {
	case ST_RECV_HELLO:
		err = io_step(s->fd, s->buf, HELLO_LEN, &s->off, false);
		/* Wrong bytes are dropped as soon as they are there, not at the deadline. */
		if (err >= 0 && ((s->off >= 4 && get32(s->buf) != MN_MAGIC) ||
				 (s->off >= 12 && memcmp(s->buf + 4, &l->nonce, 8))))
			return -EPROTO;
		if (err <= 0)
			return err;
		/* Our peer: from here on, failures are the connection's. */
		s->deadline = mn_now_ns() + (__u64)MN_HANDSHAKE_MS * 1000000ull;
		s->state = ST_ACCEPT_QP;
		err = comm_create(l->d, MN_RECV, &s->c);
		if (err)
			return err;
		/* fall through */
	case ST_ACCEPT_QP:
		err = connect_qp(s, s->buf + 12);
		if (err <= 0)
			return err;
		put32(s->buf, MN_MAGIC);
		err = local_info(s->c, s->buf + 4);
		if (err)
			return err;
		s->state = ST_SEND_REPLY;
		s->off = 0;
		/* fall through */
	case ST_SEND_REPLY:
		err = io_step(s->fd, s->buf, REPLY_LEN, &s->off, true);
		if (err <= 0)
			return err;
		s->state = ST_RECV_READY;
		s->off = 0;
		/* fall through */
	case ST_RECV_READY:
		err = io_step(s->fd, s->buf, 1, &s->off, false);
		if (err <= 0)
			return err;
		return s->buf[0] == 'R' ? 1 : -EPROTO;
	default:
		return -EINVAL;
	}
}

/* Another connection is waiting in the listener's backlog. */
static bool backlog_waiting(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

ncclResult_t mn_accept(void *listen_comm, void **recv_comm, ncclNetDeviceHandle_v8_t **dc)
{
	struct mn_listen *l = listen_comm;
	int err;

	(void)dc;
	if (!l || !recv_comm)
		return ncclInternalError;
	*recv_comm = NULL;
	if (!l->hs) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
			       errno == ECONNABORTED ? ncclSuccess : hs_error(-errno, "accept");
		tune_socket(fd);
		l->hs = stage_new(fd, ST_RECV_HELLO, MN_HELLO_MS);
		if (!l->hs) {
			close(fd);
			return ncclSystemError;
		}
	}
	err = accept_step(l, l->hs);
	/*
	 * A silent connection past the hello deadline is dropped only when
	 * another one waits behind it: a real peer slow to say hello (a loaded
	 * machine, ASan) is never dropped for being slow alone.
	 */
	if (!err && mn_now_ns() > l->hs->deadline &&
	    (l->hs->state != ST_RECV_HELLO || backlog_waiting(l->fd)))
		err = -ETIMEDOUT;
	if (err < 0 && l->hs->state == ST_RECV_HELLO) {
		/* No valid hello (yet): not our peer. Drop it, keep listening. */
		char why[96];

		mroce_strerror(err, why, sizeof(why));
		if (err == -EPROTO)
			MN_WARN("accept: dropped a connection that is not this listener's peer "
				"(wrong magic or nonce)");
		else
			MN_INFO("accept: dropped a connection that sent no hello: %s", why);
		stage_free(l->hs);
		l->hs = NULL;
		return ncclSuccess;
	}
	if (err < 0) {
		stage_free(l->hs);
		l->hs = NULL;
		return hs_error(err, "accept");
	}
	if (err == 1) {
		l->hs->c->fd = l->hs->fd;
		*recv_comm = l->hs->c;
		free(l->hs);
		l->hs = NULL;
	}
	return ncclSuccess;
}
