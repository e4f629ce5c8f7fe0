// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Next-hop MAC resolution from the kernel's tables: ask the route for the
 * destination (gateway or on-link), then the neighbour table for its
 * link-layer address. If the neighbour is not resolved yet, one datagram to
 * the destination's discard port makes the kernel resolve it. The device's
 * own address is its own MAC.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "engine.h"

struct nl_req {
	struct nlmsghdr	nh;
	union {
		struct rtmsg	rt;
		struct ndmsg	nd;
	};
	char		attrs[64];
};

static int nl_talk(int fd, struct nl_req *req, char *buf, size_t size)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	ssize_t n;

	if (sendto(fd, req, req->nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	n = recv(fd, buf, size, 0);
	return n < 0 ? -errno : (int)n;
}

static void add_attr(struct nl_req *req, __u16 type, const void *data, __u16 len)
{
	struct rtattr *rta = (struct rtattr *)((char *)req + NLMSG_ALIGN(req->nh.nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = (__u16)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	req->nh.nlmsg_len = NLMSG_ALIGN(req->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/* Route lookup: the next hop toward dst (dst itself when on-link) and its interface. */
static int route_get(int fd, int family, const void *dst, void *nexthop, int *oif)
{
	struct nl_req req = {};
	char buf[8192];
	int alen = family == AF_INET ? 4 : 16, n;

	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.rt.rtm_family = (unsigned char)family;
	req.rt.rtm_dst_len = (unsigned char)(alen * 8);
	add_attr(&req, RTA_DST, dst, (__u16)alen);
	n = nl_talk(fd, &req, buf, sizeof(buf));
	if (n < 0)
		return n;
	memcpy(nexthop, dst, (size_t)alen);
	*oif = 0;
	for (struct nlmsghdr *nh = (void *)buf; NLMSG_OK(nh, (unsigned int)n); nh = NLMSG_NEXT(nh, n)) {
		struct rtmsg *rt = NLMSG_DATA(nh);
		int len = (int)RTM_PAYLOAD(nh);

		if (nh->nlmsg_type == NLMSG_ERROR)
			return ((struct nlmsgerr *)NLMSG_DATA(nh))->error ?: -EHOSTUNREACH;
		if (nh->nlmsg_type != RTM_NEWROUTE)
			continue;
		for (struct rtattr *a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
			if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == (unsigned int)alen)
				memcpy(nexthop, RTA_DATA(a), (size_t)alen);
			else if (a->rta_type == RTA_OIF)
				memcpy(oif, RTA_DATA(a), sizeof(*oif));
		}
		return *oif ? 0 : -EHOSTUNREACH;
	}
	return -EHOSTUNREACH;
}

#define NEIGH_BUF	65536	/* one netlink dump batch */

/*
 * Neighbour table dump for one interface; 0 and mac filled when nexthop is
 * resolved. buf holds NEIGH_BUF bytes: the caller's, so that threads
 * resolving at once never share one.
 */
static int neigh_get(int fd, int family, int oif, const void *nexthop, __u8 mac[6], char *buf)
{
	const size_t size = NEIGH_BUF;
	struct nl_req req = {};
	int alen = family == AF_INET ? 4 : 16, n;
	bool done = false;

	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	req.nh.nlmsg_type = RTM_GETNEIGH;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nd.ndm_family = (__u8)family;
	req.nd.ndm_ifindex = oif;
	n = nl_talk(fd, &req, buf, size);
	while (n > 0 && !done) {
		for (struct nlmsghdr *nh = (void *)buf; NLMSG_OK(nh, (unsigned int)n); nh = NLMSG_NEXT(nh, n)) {
			struct ndmsg *nd = NLMSG_DATA(nh);
			int len = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
			const void *dst = NULL, *ll = NULL;

			if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			if (nh->nlmsg_type != RTM_NEWNEIGH || nd->ndm_ifindex != oif ||
			    (nd->ndm_state & (NUD_INCOMPLETE | NUD_FAILED | NUD_NOARP)))
				continue;
			for (struct rtattr *a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd)));
			     RTA_OK(a, len); a = RTA_NEXT(a, len)) {
				if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == (unsigned int)alen)
					dst = RTA_DATA(a);
				else if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6)
					ll = RTA_DATA(a);
			}
			if (dst && ll && !memcmp(dst, nexthop, (size_t)alen)) {
				memcpy(mac, ll, 6);
				/* drain the rest of the dump */
				while (!done && (n = (int)recv(fd, buf, size, MSG_DONTWAIT)) > 0)
					;
				return 0;
			}
		}
		if (!done)
			n = (int)recv(fd, buf, size, 0);
	}
	return -ENOENT;
}

static void poke(int family, const void *dst)
{
	struct sockaddr_storage ss = {};
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	if (family == AF_INET) {
		struct sockaddr_in *sin = (void *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(9);	/* discard */
		memcpy(&sin->sin_addr, dst, 4);
	} else {
		struct sockaddr_in6 *sin6 = (void *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(9);
		memcpy(&sin6->sin6_addr, dst, 16);
	}
	if (sendto(fd, "", 0, 0, (struct sockaddr *)&ss, sizeof(ss)) < 0) {
		/* resolution failing shows up as the lookup timing out */
	}
	close(fd);
}

int mroce_resolve_mac_on(struct mroce_dev *dev, int family, const struct in6_addr *addr,
			 __u32 ifindex, __u8 mac[6])
{
	const void *dst = family == AF_INET ? (const void *)&addr->s6_addr[12] : (const void *)addr;
	__u8 nexthop[16];
	int fd, oif, err;
	char *buf;

	/*
	 * One of the device's own addresses (another process on this host, on
	 * queues of its own): the frame goes out to our own MAC, for a switch
	 * port in hairpin mode to bring back (docs/datapath.md, "Queues"). The
	 * kernel's route would name the loopback device.
	 */
	for (__u32 i = 0; dev && i < dev->nplanes; i++) {
		const struct mroce_route *l = &dev->plane_local[i];

		if (l->family != family || (ifindex && dev->plane_ifindex[i] != ifindex) ||
		    memcmp(family == AF_INET ? (const void *)&l->src.v4 : (const void *)&l->src.v6,
			   dst, family == AF_INET ? 4 : 16))
			continue;
		memcpy(mac, l->src_mac, 6);
		return 0;
	}
	buf = malloc(NEIGH_BUF);
	if (!buf)
		return -ENOMEM;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	err = route_get(fd, family, dst, nexthop, &oif);
	if (!err && ifindex && (__u32)oif != ifindex)
		err = -ENETUNREACH;	/* the route leaves through another interface */
	for (int i = 0; !err && i < 100; i++) {
		err = neigh_get(fd, family, oif, nexthop, mac, buf);
		if (err != -ENOENT)
			break;
		if (i == 0)
			poke(family, nexthop);
		usleep(10000);
		err = 0;
		if (i == 99)
			err = -EHOSTUNREACH;
	}
	close(fd);
	free(buf);
	return err;
}
