// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Port 1 of a verbs device: the interface as RoCEv2 presents it (link layer
 * Ethernet, one GID, ::ffff:<IPv4>, one P_Key). Everything is read from the
 * interface at each query (ioctls on an AF_INET socket, no privilege, no
 * /sys), so ibv_devinfo shows the port as it is now, without the datapath.
 */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/ip.h>
#include <linux/sockios.h>
#include <linux/udp.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mroce/proto.h>

#include "mrv.h"

/* rdma-core's private ibv_query_gid_type() (its driver.h, which Debian does not ship) */
enum mrv_gid_type_sysfs {
	MRV_GID_TYPE_SYSFS_IB_ROCE_V1,
	MRV_GID_TYPE_SYSFS_ROCE_V2,
};
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum mrv_gid_type_sysfs *type);
struct _compat_ibv_port_attr;

int mrv_ifstate(const struct mrv_device *dev, struct mrv_ifstate *st)
{
	struct ethtool_cmd ecmd = { .cmd = ETHTOOL_GSET };
	struct ifreq ifr;
	int fd, err = 0;

	memset(st, 0, sizeof(*st));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, dev->ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		err = -errno;	/* the interface went away */
		goto out;
	}
	st->up = (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
		st->mtu = ifr.ifr_mtu;
	if (ioctl(fd, SIOCGIFADDR, &ifr) == 0 && ifr.ifr_addr.sa_family == AF_INET)
		st->ipv4 = ((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr;
	/* ETHTOOL_GSET is one of the queries the kernel answers without privilege */
	ifr.ifr_data = (char *)&ecmd;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
		__u32 speed = ethtool_cmd_speed(&ecmd);

		if (speed != (__u32)SPEED_UNKNOWN)
			st->speed_mbps = speed;
	}
out:
	close(fd);
	return err;
}

/*
 * A verbs MTU is the payload of one packet. RoCE devices report the largest
 * IBV_MTU_* that fits the Ethernet MTU after RoCE's headers (1500: 1024);
 * mroce's packets carry more headers than RoCE's (IPv4, UDP and the largest
 * data header stack: BTH, RETH, DETH, IMMETH), so the same rule on its own
 * header room. Below 256 nothing fits; mroce refuses such an MTU anyway.
 */
enum ibv_mtu mrv_mtu_of(uint32_t ip_mtu)
{
	uint32_t room = ip_mtu > MRV_HDR_ROOM ? ip_mtu - (uint32_t)MRV_HDR_ROOM : 0;

	if (room >= 4096)
		return IBV_MTU_4096;
	if (room >= 2048)
		return IBV_MTU_2048;
	if (room >= 1024)
		return IBV_MTU_1024;
	if (room >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

/* An IB width x per-lane speed whose product is the link's rate (ibv_devinfo prints it). */
static void ib_speed(uint32_t mbps, uint8_t *width, uint8_t *speed)
{
	static const struct { uint32_t mbps; uint8_t width, speed; } t[] = {
		{ 400000, 2, 128 },	/* 4X NDR */
		{ 200000, 2, 64 },	/* 4X HDR */
		{ 100000, 2, 32 },	/* 4X EDR */
		{ 50000, 1, 64 },	/* 1X HDR */
		{ 40000, 2, 4 },	/* 4X QDR */
		{ 25000, 1, 32 },	/* 1X EDR */
		{ 10000, 1, 4 },	/* 1X QDR */
		{ 5000, 1, 2 },		/* 1X DDR */
		{ 0, 1, 1 },		/* 1X SDR */
	};

	if (!mbps)
		mbps = 100000;	/* not reported (veth, some virtual NICs): say 100 Gb/s */
	for (unsigned int i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (mbps >= t[i].mbps) {
			*width = t[i].width;
			*speed = t[i].speed;
			return;
		}
}

static int port_fill(struct mrv_context *ctx, uint8_t port_num, struct ibv_port_attr *a)
{
	struct mrv_ifstate st;
	int err;

	if (port_num != 1)
		return EINVAL;
	err = mrv_ifstate(ctx->dev, &st);
	if (err)
		return -err;
	memset(a, 0, sizeof(*a));
	a->state = st.up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a->max_mtu = mrv_mtu_of(st.mtu);
	a->active_mtu = a->max_mtu;
	a->gid_tbl_len = 1;
	a->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a->max_msg_sz = MRV_MAX_MSG;
	a->pkey_tbl_len = 1;
	a->max_vl_num = 1;	/* VL0 only */
	ib_speed(st.speed_mbps, &a->active_width, &a->active_speed);
	a->phys_state = st.up ? 5 : 3;	/* IB PortPhysicalState: LinkUp, Disabled */
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}

/* verbs_context.query_port: what ibv_query_port() (an inline of verbs.h) calls. */
int mrv_query_port_op(struct ibv_context *context, uint8_t port_num,
		      struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	struct ibv_port_attr a;
	int err;

	if (!context || !port_attr)
		return EINVAL;
	err = port_fill(mrv_ctx(context), port_num, &a);
	if (err)
		return err;
	memcpy(port_attr, &a, port_attr_len < sizeof(a) ? port_attr_len : sizeof(a));
	return 0;
}

/*
 * The exported ibv_query_port: binaries built against verbs.h call the op
 * above; older ones call this with the struct as it was before `flags`
 * (rdma-core's _compat_ibv_port_attr: up to link_layer, and a reserved byte).
 */
#undef ibv_query_port
MRV_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			      struct _compat_ibv_port_attr *port_attr)
{
	return mrv_query_port_op(context, port_num, (struct ibv_port_attr *)port_attr,
				 offsetof(struct ibv_port_attr, flags) + 1);
}

static int gid_of(struct mrv_context *ctx, union ibv_gid *gid)
{
	struct mrv_ifstate st;
	int err = mrv_ifstate(ctx->dev, &st);

	if (err)
		return -err;
	memset(gid, 0, sizeof(*gid));
	if (st.ipv4) {	/* no address: the entry is empty (all zero), as a RoCE table's */
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &st.ipv4, 4);
	}
	return 0;
}

MRV_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
			     union ibv_gid *gid)
{
	int err;

	if (!context || !gid || port_num != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	err = gid_of(mrv_ctx(context), gid);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

MRV_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				  unsigned int index, enum mrv_gid_type_sysfs *type)
{
	if (!context || !type || port_num != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*type = MRV_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

static int gid_entry(struct mrv_context *ctx, struct ibv_gid_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->gid_index = 0;
	e->port_num = 1;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = ctx->dev->ifindex;
	return gid_of(ctx, &e->gid);
}

MRV_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				 uint32_t gid_index, struct ibv_gid_entry *entry,
				 uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	int err;

	if (!context || !entry || flags || entry_size < sizeof(e) || port_num != 1 ||
	    gid_index != 0)
		return EINVAL;
	err = gid_entry(mrv_ctx(context), &e);
	if (err)
		return err;
	memcpy(entry, &e, sizeof(e));
	return 0;
}

MRV_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					struct ibv_gid_entry *entries, size_t max_entries,
					uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	int err;

	if (!context || !entries || flags || entry_size < sizeof(e))
		return -EINVAL;
	if (max_entries < 1)
		return -EINVAL;	/* one port, one GID: the table does not fit */
	err = gid_entry(mrv_ctx(context), &e);
	if (err)
		return -err;
	if (!e.gid.global.interface_id && !e.gid.global.subnet_prefix)
		return 0;	/* only valid entries are listed */
	memcpy(entries, &e, sizeof(e));
	return 1;
}

MRV_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
			      __be16 *pkey)
{
	if (!context || !pkey || port_num != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = 0xffff;	/* the default full-membership P_Key, the one RoCE uses */
	return 0;
}
