// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnccl-net-mroce: the next hop's MAC toward a connected TCP peer, looked
 * up without ever waiting (connect/accept must not block). One netlink
 * route query, one neighbour query (RTM_GETNEIGH for one entry), both
 * answered by the kernel inside the sendto() call. The TCP handshake that
 * just finished has normally left the entry there; when it is not (flushed,
 * expired), one datagram to the discard port starts its resolution and the
 * caller asks again on its next call. libmroce's own resolver (lib/neigh.c)
 * waits up to a second for that instead, which is why the plugin passes
 * the MAC to mroce_qp_connect() itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "plugin.h"

struct nl_msg {
	struct nlmsghdr	nh;
	union {
		struct rtmsg	rt;
		struct ndmsg	nd;
	};
	char		attrs[32];
};

static void add_attr(struct nl_msg *m, __u16 type, const void *data, __u16 len)
{
	struct rtattr *a = (struct rtattr *)((char *)m + NLMSG_ALIGN(m->nh.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (__u16)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	m->nh.nlmsg_len = NLMSG_ALIGN(m->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* One request, its answer; -EAGAIN if the answer is not queued yet (never waits). */
static int nl_ask(int fd, struct nl_msg *m, void *buf, size_t size)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	ssize_t n;

	if (sendto(fd, m, m->nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	n = recv(fd, buf, size, MSG_DONTWAIT);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return (int)n;
}

/* The answer's first message: its type, or a negative errno from NLMSG_ERROR. */
static int first_msg(void *buf, int n, struct nlmsghdr **out)
{
	struct nlmsghdr *nh = buf;

	if (!NLMSG_OK(nh, (unsigned int)n))
		return -EPROTO;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nh);

		return e->error ? e->error : -EPROTO;
	}
	*out = nh;
	return 0;
}

static int route_next_hop(int fd, struct in_addr dst, struct in_addr *hop, int *oif)
{
	struct nl_msg m = { .nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)),
			    .nh.nlmsg_type = RTM_GETROUTE, .nh.nlmsg_flags = NLM_F_REQUEST,
			    .rt.rtm_family = AF_INET, .rt.rtm_dst_len = 32 };
	char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nh;
	int n, len;

	add_attr(&m, RTA_DST, &dst, 4);
	n = nl_ask(fd, &m, buf, sizeof(buf));
	if (n < 0)
		return n;
	n = first_msg(buf, n, &nh);
	if (n)
		return n;
	if (nh->nlmsg_type != RTM_NEWROUTE)
		return -EPROTO;
	*hop = dst;
	*oif = 0;
	len = (int)RTM_PAYLOAD(nh);
	for (struct rtattr *a = RTM_RTA((struct rtmsg *)NLMSG_DATA(nh)); RTA_OK(a, len);
	     a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == 4)
			memcpy(hop, RTA_DATA(a), 4);
		else if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) == 4)
			memcpy(oif, RTA_DATA(a), 4);
	}
	return *oif ? 0 : -EHOSTUNREACH;
}

/* 0 and mac when the kernel has hop's link-layer address on oif; -EAGAIN when not. */
static int neigh_lookup(int fd, struct in_addr hop, int oif, __u8 mac[6])
{
	struct nl_msg m = { .nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
			    .nh.nlmsg_type = RTM_GETNEIGH, .nh.nlmsg_flags = NLM_F_REQUEST,
			    .nd.ndm_family = AF_INET, .nd.ndm_ifindex = oif };
	char buf[1024] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nh;
	struct ndmsg *nd;
	int n, len;

	add_attr(&m, NDA_DST, &hop, 4);
	n = nl_ask(fd, &m, buf, sizeof(buf));
	if (n < 0)
		return n;
	n = first_msg(buf, n, &nh);
	if (n == -ENOENT)
		return -EAGAIN;		/* no entry (yet) */
	if (n)
		return n;
	nd = NLMSG_DATA(nh);
	if (nh->nlmsg_type != RTM_NEWNEIGH)
		return -EPROTO;
	if (!nd->ndm_state || (nd->ndm_state & (NUD_INCOMPLETE | NUD_FAILED | NUD_NOARP)))
		return -EAGAIN;		/* being resolved, or no address to use */
	len = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	for (struct rtattr *a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd)));
	     RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			return 0;
		}
	return -EAGAIN;
}

/* One datagram toward hop (discard port): the kernel starts resolving it. */
static void poke(struct in_addr hop)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(9), .sin_addr = hop };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	if (sendto(fd, "", 0, MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		/* an unresolvable next hop shows as the handshake's deadline passing */
	}
	close(fd);
}

int mn_next_hop_mac(int tcp_fd, int ifindex, __u8 mac[6], bool start)
{
	struct sockaddr_in peer;
	socklen_t sl = sizeof(peer);
	struct in_addr hop;
	int fd, oif, err;

	if (getpeername(tcp_fd, (struct sockaddr *)&peer, &sl))
		return -errno;
	if (peer.sin_family != AF_INET)
		return -EAFNOSUPPORT;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	err = route_next_hop(fd, peer.sin_addr, &hop, &oif);
	if (!err && ifindex && oif != ifindex)
		err = -ENETUNREACH;	/* the peer is reached through another interface */
	if (!err)
		err = neigh_lookup(fd, hop, oif, mac);
	close(fd);
	if (err == -EAGAIN && start)
		poke(hop);
	return err;
}
