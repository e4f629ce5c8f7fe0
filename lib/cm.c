// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Connection manager over a TCP side channel (docs/protocol.md, "Connection
 * setup"):
 *   client -> server  its QP info (QPN, first PSN, token half, MAC, address)
 *   server            creates a QP, connects it, and answers with its info
 *   client            connects its QP, then confirms with one byte ('R')
 *   server            takes the QP (mroce_accept() returns it), then acks ('A')
 *   client            returns on the ack, never before
 * so both QPs are ready to receive before either side returns, and a client
 * returns success only once the server holds the QP: a handshake the server
 * drops at any point before (a full table, its deadline, the listener
 * closed) is a closed connection to the client. Next-hop MACs come from the
 * kernel's route and neighbour tables.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

#define CM_LEN		MROCE_QP_INFO_WIRE_LEN
#define CM_FOREVER	86400000L
#define CM_LISTEN_TAG	UINT32_MAX	/* epoll tag of the listening socket */
#define CM_CONFIRM	'R'		/* client: my QP is connected */
#define CM_ACK		'A'		/* server: and mine is yours (mroce_accept() returned it) */
#define CM_BACKLOG	1024		/* the kernel's queue of connections not yet taken */

/* One handshake in progress on the server side. */
enum hs_stage { HS_FREE, HS_INFO, HS_REPLY, HS_CONFIRM, HS_ACK };

struct hs {
	enum hs_stage		stage;
	int			fd;
	long			deadline;
	__u32			got, sent, len;		/* len: bytes of out to send */
	__u8			buf[CM_LEN + 1];	/* one more: a longer message shows */
	__u8			out[CM_LEN];		/* our info, then the ack */
	int			family;			/* the TCP peer's own address */
	struct in6_addr		addr;
	struct mroce_qp		*qp;
	int			fail_after;	/* fails with this once the answer is out */
};

struct mroce_listener {
	struct mroce_dev	*dev;
	int			fd;	/* listening socket */
	int			epfd;	/* it and every pending handshake: the fd handed out */
	struct hs		hs[MROCE_CM_PENDING];
	struct mroce_listener_stats st;
};

static int parse_addr(const char *addr, __u16 port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (void *)ss;
	struct sockaddr_in6 *sin6 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (addr && inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
		return 0;
	}
	if (addr && inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*len = sizeof(*sin6);
		return 0;
	}
	return -EINVAL;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on fd until deadline; EINTR is retried with the time left. */
static int wait_fd(int fd, short events, long deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events };
		long left = deadline - now_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Move exactly len bytes, or fail with -ETIMEDOUT / -ECONNRESET / -errno. */
static int xfer(int fd, void *buf, size_t len, bool out, long deadline)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n;
		int err = wait_fd(fd, out ? POLLOUT : POLLIN, deadline);

		if (err)
			return err;
		n = out ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT)
			: recv(fd, (char *)buf + done, len - done, MSG_DONTWAIT);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		done += (size_t)n;
	}
	return 0;
}

static void local_info(struct mroce_qp *qp, struct mroce_qp_info *info)
{
	const struct mroce_route *l = &qp->dev->local;
	struct in6_addr a = {};

	if (l->family == AF_INET) {
		a.s6_addr[10] = a.s6_addr[11] = 0xff;
		memcpy(&a.s6_addr[12], &l->src.v4, 4);
	} else {
		a = l->src.v6;
	}
	mroce_qp_local_info(qp, &a, l->family, info);
}

/* A socket address as a QP info names it: IPv4 (also v4-mapped IPv6) as ::ffff:a.b.c.d. */
static void sock_addr(const struct sockaddr_storage *ss, int *family, struct in6_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		a->s6_addr[10] = a->s6_addr[11] = 0xff;
		memcpy(&a->s6_addr[12], &((const struct sockaddr_in *)ss)->sin_addr, 4);
		*family = AF_INET;
		return;
	}
	*a = ((const struct sockaddr_in6 *)ss)->sin6_addr;
	*family = IN6_IS_ADDR_V4MAPPED(a) ? AF_INET : AF_INET6;
}

/*
 * The one rule against reflection: the data path goes only to the host at
 * the other end of the TCP connection, which completed the handshake
 * itself. An info naming any other address is refused
 * (-MROCE_ERR_PEER_ADDR, not -EPERM: nothing lacks a privilege); the
 * claimed MAC is never used, mroce_qp_connect() resolves the next hop of
 * the real address in the kernel's tables.
 */
static int connect_peer(struct mroce_qp *qp, const __u8 *wire, int family, const struct in6_addr *addr)
{
	struct mroce_qp_info remote;
	int err = mroce_qp_info_unpack(wire, &remote);

	if (err)
		return err == -MROCE_ERR_VERSION ? err : -EPROTO;
	/* another handshake revision: its client would not wait for our ack, its server not send it */
	if (wire[MROCE_QP_INFO_CM_BYTE] != MROCE_CM_REVISION)
		return -MROCE_ERR_VERSION;
	if (remote.family != family || memcmp(&remote.addr, addr, sizeof(*addr)))
		return -MROCE_ERR_PEER_ADDR;
	return mroce_qp_connect(qp, &remote, NULL);
}

int mroce_listen(struct mroce_dev *dev, const char *addr, __u16 port, struct mroce_listener **lp)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = CM_LISTEN_TAG };
	struct sockaddr_storage ss;
	struct mroce_listener *l;
	socklen_t len;
	int one = 1, err;

	if (!dev || !lp || !port || parse_addr(addr, port, &ss, &len))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->dev = dev;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->epfd < 0 || l->fd < 0 ||
	    setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l->fd, (struct sockaddr *)&ss, len) || listen(l->fd, CM_BACKLOG) ||
	    epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->fd, &ev)) {
		err = -errno;
		if (l->fd >= 0)
			close(l->fd);
		if (l->epfd >= 0)
			close(l->epfd);
		free(l);
		return err;
	}
	*lp = l;
	return 0;
}

static void hs_close(struct mroce_listener *l, struct hs *h)
{
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, h->fd, NULL);
	close(h->fd);
	if (h->qp)
		mroce_destroy_qp(h->qp);
	memset(h, 0, sizeof(*h));
	l->st.pending--;
}

/* A handshake ends unfinished: close it and count why. */
static void hs_fail(struct mroce_listener *l, struct hs *h, int err)
{
	struct mroce_listener_stats *st = &l->st;

	hs_close(l, h);
	st->failed++;
	st->last_err = err;
	switch (err) {
	case -MROCE_ERR_PEER_ADDR:	st->refused_addr++; break;
	case -EPROTO:		st->malformed++; break;
	case -MROCE_ERR_VERSION:	st->bad_version++; break;
	case -ETIMEDOUT:	st->timed_out++; break;
	case -ECONNRESET:	st->closed++; break;
	case -ECONNABORTED:	st->evicted++; break;
	default:		break;
	}
}

void mroce_listener_close(struct mroce_listener *l)
{
	if (!l)
		return;
	for (int i = 0; i < MROCE_CM_PENDING; i++)
		if (l->hs[i].stage != HS_FREE)
			hs_close(l, &l->hs[i]);
	close(l->fd);
	close(l->epfd);
	free(l);
}

int mroce_listener_stats(const struct mroce_listener *l, struct mroce_listener_stats *st)
{
	size_t sz;

	if (!l || !st || st->sz < sizeof(st->sz))
		return -EINVAL;
	sz = st->sz < sizeof(*st) ? st->sz : sizeof(*st);
	memcpy((char *)st + sizeof(st->sz), (const char *)&l->st + sizeof(st->sz), sz - sizeof(st->sz));
	return 0;
}

int mroce_listener_fd(const struct mroce_listener *l)
{
	return l ? l->epfd : -EINVAL;
}

/* Whether the peer has sent what we have not read (1), nothing (0), or closed (-errno). */
static int hs_peek(const struct hs *h)
{
	__u8 c;
	ssize_t n;

	do
		n = recv(h->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		return n ? 1 : -ECONNRESET;
	return errno == EAGAIN ? 0 : errno == EPIPE ? -ECONNRESET : -errno;
}

/*
 * A free slot. When all are taken, the handshakes whose peers have closed
 * end now; if none has, the one that has come least far makes room, the
 * oldest of those: one that has sent nothing, else one whose info is on its
 * way, and only if every one has been answered (each holds a QP) the oldest
 * of those. Its client learns: the connection closes before our ack.
 */
static struct hs *hs_slot(struct mroce_listener *l)
{
	struct hs *victim = NULL, *free_slot = NULL;
	int vrank = 3;

	for (int i = 0; i < MROCE_CM_PENDING; i++)
		if (l->hs[i].stage == HS_FREE)
			return &l->hs[i];
	for (int i = 0; i < MROCE_CM_PENDING; i++) {
		struct hs *h = &l->hs[i];
		int p = hs_peek(h), rank;

		if (p < 0) {
			hs_fail(l, h, p);
			free_slot = h;
			continue;
		}
		rank = h->stage != HS_INFO ? 2 : h->got || p ? 1 : 0;
		if (rank < vrank || (rank == vrank && h->deadline < victim->deadline)) {
			victim = h;
			vrank = rank;
		}
	}
	if (free_slot)
		return free_slot;
	hs_fail(l, victim, -ECONNABORTED);
	return victim;
}

/*
 * Take the connections the kernel has queued into the handshake table, at
 * most a table's worth at a time: those taken get their turn to advance
 * before the next ones may push them out.
 */
static int admit(struct mroce_listener *l)
{
	for (int k = 0; k < MROCE_CM_PENDING; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct epoll_event ev = { .events = EPOLLIN };
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct hs *h;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		h = hs_slot(l);
		sock_addr(&ss, &h->family, &h->addr);
		ev.data.u32 = (__u32)(h - l->hs);
		if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			return -errno;
		}
		h->fd = fd;
		h->stage = HS_INFO;
		h->deadline = now_ms() + MROCE_CM_HANDSHAKE_MS;
		l->st.pending++;
	}
	return 0;
}

/* Read what has arrived, up to want bytes in all; 0, -EAGAIN, or the error. */
static int hs_read(struct hs *h, __u32 want)
{
	for (;;) {
		ssize_t n = recv(h->fd, h->buf + h->got, want - h->got, MSG_DONTWAIT);

		if (n > 0) {
			h->got += (__u32)n;
			if (h->got == want)
				return 0;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		return errno == EAGAIN ? -EAGAIN : -errno;
	}
}

/* Send what is left of out; 0 when all is out, -EAGAIN, or the error. */
static int hs_write(struct mroce_listener *l, struct hs *h)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (__u32)(h - l->hs) };

	while (h->sent < h->len) {
		ssize_t n = send(h->fd, h->out + h->sent, h->len - h->sent, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			h->sent += (__u32)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			ev.events |= EPOLLOUT;
			epoll_ctl(l->epfd, EPOLL_CTL_MOD, h->fd, &ev);
			return -EAGAIN;
		}
		return n < 0 && errno != EPIPE ? -errno : -ECONNRESET;
	}
	epoll_ctl(l->epfd, EPOLL_CTL_MOD, h->fd, &ev);
	return 0;
}

/* The whole info is in: create and connect the QP, queue our answer. */
static int hs_serve(struct mroce_listener *l, struct hs *h, const struct mroce_qp_attr *attr)
{
	struct mroce_qp_info info;
	int err;

	if (h->got > CM_LEN)
		return -EPROTO;		/* more than one message before our answer */
	err = mroce_create_qp(l->dev, attr, &h->qp);
	if (err)
		return err;
	err = connect_peer(h->qp, h->buf, h->family, &h->addr);
	/*
	 * Streams numbered otherwise: our answer still goes out, so that the
	 * client finds the mismatch itself and says so (else it sees only a
	 * closed connection); then the handshake fails.
	 */
	if (err == -MROCE_ERR_STREAMS)
		h->fail_after = err;
	else if (err)
		return err;
	local_info(h->qp, &info);
	mroce_qp_info_pack(&info, h->out);
	h->len = CM_LEN;
	h->sent = 0;
	h->stage = HS_REPLY;
	h->got = 0;
	return 0;
}

/*
 * Advance one handshake as far as its socket allows; the QP once confirmed
 * and acknowledged. The ack goes out only here, right before the QP is
 * handed over, so nothing can take the QP from the client's peer after it.
 */
static struct mroce_qp *hs_step(struct mroce_listener *l, struct hs *h, const struct mroce_qp_attr *attr)
{
	struct mroce_qp *qp;
	int err = 0;

	if (h->stage == HS_INFO) {
		err = hs_read(h, CM_LEN + 1);
		if (err == -EAGAIN && h->got == CM_LEN)
			err = 0;
		/*
		 * Another version's info, or another layout's (byte 3), may be
		 * shorter than ours: say so as soon as it shows.
		 */
		if (err && h->got >= 2 && h->buf[0] == 'M' &&
		    (h->buf[1] != MROCE_VERSION || (h->got >= 4 && h->buf[3] != MROCE_MAX_PLANES)))
			err = -MROCE_ERR_VERSION;
		if (!err)
			err = hs_serve(l, h, attr);
	}
	if (!err && h->stage == HS_REPLY) {
		err = hs_write(l, h);
		if (!err)
			h->stage = HS_CONFIRM;
		if (!err && h->fail_after)
			err = h->fail_after;
	}
	if (!err && h->stage == HS_CONFIRM) {
		err = hs_read(h, 2);	/* a second byte would be a protocol error */
		if (err == -EAGAIN && h->got == 1)
			err = h->buf[0] == CM_CONFIRM ? 0 : -EPROTO;
		else if (!err)
			err = -EPROTO;
		/* confirmed, then closed: the client gave up before our ack, -ECONNRESET */
		if (err == -ECONNRESET && h->got == 1 && h->buf[0] != CM_CONFIRM)
			err = -EPROTO;
		if (!err) {
			h->out[0] = CM_ACK;
			h->len = 1;
			h->sent = 0;
			h->stage = HS_ACK;
		}
	}
	if (!err && h->stage == HS_ACK)
		err = hs_write(l, h);
	if (err) {
		if (err != -EAGAIN)
			hs_fail(l, h, err);
		return NULL;
	}
	qp = h->qp;
	h->qp = NULL;
	hs_close(l, h);
	l->st.accepted++;
	return qp;
}

/* Close handshakes past their deadline; the time until the next one ends. */
static long expire(struct mroce_listener *l, long now)
{
	long next = CM_FOREVER;

	for (int i = 0; i < MROCE_CM_PENDING; i++) {
		struct hs *h = &l->hs[i];

		if (h->stage == HS_FREE)
			continue;
		if (h->deadline <= now)
			hs_fail(l, h, -ETIMEDOUT);
		else if (h->deadline - now < next)
			next = h->deadline - now;
	}
	return next;
}

int mroce_accept(struct mroce_listener *l, const struct mroce_qp_attr *attr, int timeout_ms,
		 struct mroce_qp **qpp)
{
	long deadline = now_ms() + (timeout_ms < 0 ? CM_FOREVER : timeout_ms);

	if (!l || !attr || !qpp)
		return -EINVAL;
	for (;;) {
		struct epoll_event ev[MROCE_CM_PENDING + 1];
		long now = now_ms(), wait = expire(l, now);
		int n;

		if (deadline - now < wait)
			wait = deadline - now > 0 ? deadline - now : 0;
		n = epoll_wait(l->epfd, ev, MROCE_CM_PENDING + 1, (int)wait);
		if (n < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < n; i++) {
			struct mroce_qp *qp;
			int err;

			if (ev[i].data.u32 == CM_LISTEN_TAG) {
				err = admit(l);
				if (err)
					return err;
				continue;
			}
			if (l->hs[ev[i].data.u32].stage == HS_FREE)
				continue;	/* evicted by admit() in this round */
			qp = hs_step(l, &l->hs[ev[i].data.u32], attr);
			if (qp) {
				*qpp = qp;
				return 0;
			}
		}
		if (n <= 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
	}
}

/* Client: open the TCP connection; EINTR and EALREADY mean it is on its way. */
static int tcp_open(const struct sockaddr_storage *ss, socklen_t len, long deadline)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int err = 0, soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return -errno;
	while (connect(fd, (const struct sockaddr *)ss, len)) {
		if (errno == EISCONN)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EINPROGRESS && errno != EALREADY) {
			err = -errno;
			break;
		}
		err = wait_fd(fd, POLLOUT, deadline);
		if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl))
			err = -errno;
		else if (!err && soerr)
			err = -soerr;
		break;
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Client: nothing may follow the server's info before our confirmation. */
static int nothing_more(int fd)
{
	__u8 extra;
	ssize_t n;

	do
		n = recv(fd, &extra, 1, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n > 0 ? -EPROTO : 0;
}

int mroce_connect(struct mroce_dev *dev, const char *addr, __u16 port,
		  const struct mroce_qp_attr *attr, int timeout_ms, struct mroce_qp **qpp)
{
	__u8 peer[CM_LEN], mine[CM_LEN], ok = CM_CONFIRM, ack = 0;
	long deadline = now_ms() + (timeout_ms < 0 ? CM_FOREVER : timeout_ms);
	struct sockaddr_storage ss;
	struct mroce_qp_info info;
	struct mroce_qp *qp = NULL;
	struct in6_addr a;
	socklen_t len;
	int fd, err, family;
	__u64 sent_us = 0;

	if (!dev || !attr || !qpp || parse_addr(addr, port, &ss, &len))
		return -EINVAL;
	sock_addr(&ss, &family, &a);
	/* the QP first: our info goes out the moment the connection is up */
	err = mroce_create_qp(dev, attr, &qp);
	if (err)
		return err;
	fd = tcp_open(&ss, len, deadline);
	if (fd < 0) {
		mroce_destroy_qp(qp);
		return fd;
	}
	local_info(qp, &info);
	mroce_qp_info_pack(&info, mine);
	sent_us = dev->ops->now_us(dev->port);
	err = xfer(fd, mine, sizeof(mine), true, deadline);
	/* the version and layout first: another's answer may be shorter than ours */
	if (!err)
		err = xfer(fd, peer, 4, false, deadline);
	if (!err)
		mroce_qp_handshake_rtt(qp, dev->ops->now_us(dev->port) - sent_us);
	if (!err && peer[0] == 'M' && (peer[1] != MROCE_VERSION || peer[3] != MROCE_MAX_PLANES))
		err = -MROCE_ERR_VERSION;
	if (!err)
		err = xfer(fd, peer + 4, sizeof(peer) - 4, false, deadline);
	if (!err)
		err = nothing_more(fd);
	if (!err)
		err = connect_peer(qp, peer, family, &a);	/* the server we dialled, only */
	if (!err)
		err = xfer(fd, &ok, 1, true, deadline);
	/*
	 * Connected only once the server says it holds its QP: a handshake it
	 * dropped after answering (a full table, its deadline) is a closed
	 * connection here, -ECONNRESET, never a success.
	 */
	if (!err) {
		err = xfer(fd, &ack, 1, false, deadline);
		if (err == -ETIMEDOUT && recv(fd, &ack, 1, MSG_DONTWAIT) == 1)
			err = 0;	/* it came as our time ran out: the server holds the QP */
	}
	if (!err && ack != CM_ACK)
		err = -EPROTO;
	close(fd);
	if (err) {
		mroce_destroy_qp(qp);
		return err;
	}
	*qpp = qp;
	return 0;
}
