// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Connection manager over a TCP side channel:
 *   client -> server  its QP info (QPN, first PSN, token half, MAC, address)
 *   server            creates a QP, connects it, and answers with its info
 *   client            connects its QP, then confirms with one byte
 * so both QPs are ready to receive before either side returns. Next-hop
 * MACs come from the kernel's route and neighbour tables.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

struct mroce_listener {
	struct mroce_dev	*dev;
	int			fd;
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

/* Move exactly len bytes, or fail with -ETIMEDOUT / -ECONNRESET / -errno. */
static int xfer(int fd, void *buf, size_t len, bool out, long deadline)
{
	size_t done = 0;

	while (done < len) {
		struct pollfd pfd = { .fd = fd, .events = out ? POLLOUT : POLLIN };
		long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = out ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT)
			: recv(fd, (char *)buf + done, len - done, MSG_DONTWAIT);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
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

int mroce_listen(struct mroce_dev *dev, const char *addr, __u16 port, struct mroce_listener **lp)
{
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
	l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0 ||
	    setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l->fd, (struct sockaddr *)&ss, len) || listen(l->fd, 64)) {
		err = -errno;
		if (l->fd >= 0)
			close(l->fd);
		free(l);
		return err;
	}
	*lp = l;
	return 0;
}

void mroce_listener_close(struct mroce_listener *l)
{
	if (l) {
		close(l->fd);
		free(l);
	}
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
	return l ? l->fd : -EINVAL;
}

/* Both sides: resolve the peer's next hop and connect the QP. */
static int finish(struct mroce_qp *qp, const __u8 *wire)
{
	struct mroce_qp_info remote;
	int err = mroce_qp_info_unpack(wire, &remote);

	return err ? err : mroce_qp_connect(qp, &remote, NULL);
}

int mroce_accept(struct mroce_listener *l, const struct mroce_qp_attr *attr, int timeout_ms,
		 struct mroce_qp **qpp)
{
	__u8 peer[MROCE_QP_INFO_WIRE_LEN], mine[MROCE_QP_INFO_WIRE_LEN], ok = 0;
	long deadline = now_ms() + (timeout_ms < 0 ? 86400000L : timeout_ms);
	struct mroce_qp_info info;
	struct mroce_qp *qp = NULL;
	struct pollfd pfd;
	int fd = -1, err;

	if (!l || !attr || !qpp)
		return -EINVAL;
	pfd = (struct pollfd){ .fd = l->fd, .events = POLLIN };
	while ((fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) < 0) {
		long left = deadline - now_ms();

		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if (left <= 0)
			return -ETIMEDOUT;
		poll(&pfd, 1, (int)left);
	}
	err = xfer(fd, peer, sizeof(peer), false, deadline);
	if (!err)
		err = mroce_create_qp(l->dev, attr, &qp);
	if (!err)
		err = finish(qp, peer);
	if (!err) {
		local_info(qp, &info);
		mroce_qp_info_pack(&info, mine);
		err = xfer(fd, mine, sizeof(mine), true, deadline);
	}
	if (!err)
		err = xfer(fd, &ok, 1, false, deadline);
	if (!err && ok != 'R')
		err = -EPROTO;
	close(fd);
	if (err) {
		if (qp)
			mroce_destroy_qp(qp);
		l->st.failed++;
		l->st.last_err = err;
		return err;
	}
	l->st.accepted++;
	*qpp = qp;
	return 0;
}

int mroce_connect(struct mroce_dev *dev, const char *addr, __u16 port,
		  const struct mroce_qp_attr *attr, int timeout_ms, struct mroce_qp **qpp)
{
	__u8 peer[MROCE_QP_INFO_WIRE_LEN], mine[MROCE_QP_INFO_WIRE_LEN], ok = 'R';
	long deadline = now_ms() + (timeout_ms < 0 ? 86400000L : timeout_ms);
	struct sockaddr_storage ss;
	struct mroce_qp_info info;
	struct mroce_qp *qp = NULL;
	socklen_t len;
	int fd, err;

	if (!dev || !attr || !qpp || parse_addr(addr, port, &ss, &len))
		return -EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	err = connect(fd, (struct sockaddr *)&ss, len) && errno != EINPROGRESS ? -errno : 0;
	if (!err) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		long left = deadline - now_ms();
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			err = -ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr)
			err = -(soerr ? soerr : errno);
	}
	if (!err)
		err = mroce_create_qp(dev, attr, &qp);
	if (!err) {
		local_info(qp, &info);
		mroce_qp_info_pack(&info, mine);
		err = xfer(fd, mine, sizeof(mine), true, deadline);
	}
	if (!err)
		err = xfer(fd, peer, sizeof(peer), false, deadline);
	if (!err)
		err = finish(qp, peer);
	if (!err)
		err = xfer(fd, &ok, 1, true, deadline);
	close(fd);
	if (err) {
		if (qp)
			mroce_destroy_qp(qp);
		return err;
	}
	*qpp = qp;
	return 0;
}
