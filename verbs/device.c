// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device list: one verbs device per interface (mroce_<ifname>), the
 * interfaces named in MROCE_VERBS_DEVICES or, unset, every up non-loopback
 * Ethernet interface with an IPv4 address. Devices are shared between the
 * lists and contexts that hold them (refcnt): a pointer from an earlier list
 * stays valid while a context of it is open, and two contexts of one
 * interface share one mroce device. Nothing here touches the datapath until
 * mrv_dev_get(): listing and querying need no privilege.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mrv.h"

#define MRV_MAX_DEVICES	64

static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mrv_device *devs[MRV_MAX_DEVICES];	/* every device some list or context holds */

struct mrv_device *mrv_dev_of(struct ibv_device *ibdev)
{
	return ibdev ? mrv_of(ibdev, struct mrv_device, ibdev) : NULL;
}

/* Fill what identifies the interface: index, MAC (Ethernet only), MTU, IPv4. */
static int if_probe(const char *ifname, struct mrv_device *d)
{
	struct ifreq ifr;
	int fd, err = 0;

	if (strlen(ifname) >= IF_NAMESIZE)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, ifname);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	d->ifindex = ifr.ifr_ifindex;
	/* mroce's datapath is XDP over Ethernet frames: nothing else can be a device */
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0 || ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		err = -ENODEV;
		goto out;
	}
	memcpy(d->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
		d->mtu = ifr.ifr_mtu;
	if (ioctl(fd, SIOCGIFADDR, &ifr) == 0 && ifr.ifr_addr.sa_family == AF_INET)
		d->ipv4 = ((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr;
	strcpy(d->ifname, ifname);
out:
	close(fd);
	return err;
}

static bool name_listed(char (*names)[IF_NAMESIZE], int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* The interface names to present, at most max; how many, or a negative errno. */
static int candidates(char (*names)[IF_NAMESIZE], int max)
{
	const char *env = getenv("MROCE_VERBS_DEVICES");
	struct ifaddrs *ifa, *i;
	int n = 0;

	if (env && *env) {
		/* an explicit list: exactly those names, in that order (unknown ones skipped) */
		const char *p = env;

		while (*p && n < max) {
			size_t len = strcspn(p, ",");

			while (len && (*p == ' ' || *p == '\t'))
				p++, len--;
			while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
				len--;
			if (len && len < IF_NAMESIZE) {
				memcpy(names[n], p, len);
				names[n][len] = '\0';
				if (!name_listed(names, n, names[n]))
					n++;
			}
			p += strcspn(p, ",");
			if (*p == ',')
				p++;
		}
		return n;
	}
	if (getifaddrs(&ifa) < 0)
		return -errno;
	for (i = ifa; i && n < max; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK) ||
		    strlen(i->ifa_name) >= IF_NAMESIZE || name_listed(names, n, i->ifa_name))
			continue;
		strcpy(names[n++], i->ifa_name);
	}
	freeifaddrs(ifa);
	return n;
}

/* devs_lock held: the device of this interface, made if there is none yet. */
static struct mrv_device *dev_find_or_make(const struct mrv_device *probe)
{
	struct mrv_device *d;
	int free_slot = -1;

	for (int i = 0; i < MRV_MAX_DEVICES; i++) {
		d = devs[i];
		if (!d) {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		/* same name and index: the same interface (a recreated one is another device) */
		if (!strcmp(d->ifname, probe->ifname) && d->ifindex == probe->ifindex) {
			d->ipv4 = probe->ipv4;
			d->mtu = probe->mtu;
			return d;
		}
	}
	if (free_slot < 0)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	*d = *probe;
	pthread_mutex_init(&d->lock, NULL);
	d->ibdev.node_type = IBV_NODE_CA;
	d->ibdev.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->ibdev.name, sizeof(d->ibdev.name), "mroce_%s", d->ifname);
	snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "mroce_%s", d->ifname);
	/* no /sys or /dev entries: nothing an unprivileged process could not read; the paths stay empty */
	devs[free_slot] = d;
	return d;
}

/* Drop one reference (a list's or a context's); the last frees the device. */
static void dev_unref(struct mrv_device *d)
{
	pthread_mutex_lock(&devs_lock);
	if (--d->refcnt == 0) {
		for (int i = 0; i < MRV_MAX_DEVICES; i++)
			if (devs[i] == d)
				devs[i] = NULL;
		pthread_mutex_destroy(&d->lock);
		free(d);
	}
	pthread_mutex_unlock(&devs_lock);
}

MRV_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	char (*names)[IF_NAMESIZE];
	struct ibv_device **list;
	int n, got = 0;

	if (num_devices)
		*num_devices = 0;
	names = calloc(MRV_MAX_DEVICES, IF_NAMESIZE);
	if (!names) {
		errno = ENOMEM;
		return NULL;
	}
	n = candidates(names, MRV_MAX_DEVICES);
	if (n < 0) {
		free(names);
		errno = -n;
		return NULL;
	}
	list = calloc(n + 1, sizeof(*list));
	if (!list) {
		free(names);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&devs_lock);
	for (int i = 0; i < n; i++) {
		struct mrv_device probe = { 0 }, *d;

		if (if_probe(names[i], &probe))
			continue;	/* gone, or not Ethernet */
		d = dev_find_or_make(&probe);
		if (!d)
			continue;
		d->refcnt++;
		list[got++] = &d->ibdev;
	}
	pthread_mutex_unlock(&devs_lock);
	free(names);
	if (num_devices)
		*num_devices = got;
	/* as libibverbs: no device is an empty list, not a failure; errno says why */
	if (!got)
		errno = ENODEV;
	return list;
}

MRV_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	if (!list)
		return;
	for (struct ibv_device **p = list; *p; p++)
		dev_unref(mrv_dev_of(*p));
	free(list);
}

MRV_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	if (!device) {
		errno = EINVAL;
		return NULL;
	}
	return device->name;
}

/* The EUI-64 of the MAC (universal/local bit flipped, ff:fe in the middle), network order. */
MRV_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct mrv_device *d = mrv_dev_of(device);
	uint8_t g[8];
	__be64 guid;

	if (!d) {
		errno = EINVAL;
		return 0;
	}
	g[0] = d->mac[0] ^ 0x02;
	g[1] = d->mac[1];
	g[2] = d->mac[2];
	g[3] = 0xff;
	g[4] = 0xfe;
	g[5] = d->mac[3];
	g[6] = d->mac[4];
	g[7] = d->mac[5];
	memcpy(&guid, g, sizeof(guid));
	return guid;
}

/* The interface's index: unique among devices, as the kernel's device index is. */
MRV_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	struct mrv_device *d = mrv_dev_of(device);

	return d ? (int)d->ifindex : -1;
}

MRV_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct mrv_device *d = mrv_dev_of(device);
	struct mrv_context *ctx;
	int err;

	if (!d) {
		errno = EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->dev = d;
	err = mrv_ctx_init(ctx);
	if (err) {
		free(ctx);
		errno = err;
		return NULL;
	}
	pthread_mutex_lock(&devs_lock);
	d->refcnt++;
	pthread_mutex_unlock(&devs_lock);
	return &ctx->vctx.context;
}

MRV_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct mrv_context *ctx;
	struct mrv_device *d;

	if (!context)
		return -1;
	ctx = mrv_ctx(context);
	d = ctx->dev;
	if (ctx->mdev)
		mrv_dev_put(d);
	mrv_ctx_fini(ctx);
	free(ctx);
	dev_unref(d);
	return 0;
}

int mrv_errno(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case MROCE_ERR_CAP_NET_ADMIN: case MROCE_ERR_CAP_BPF: case MROCE_ERR_CAP_PERFMON:
	case MROCE_ERR_CAP_SYS_ADMIN: case MROCE_ERR_CAP_NET_RAW: case MROCE_ERR_CAP_SYS_PTRACE:
		return EPERM;
	case MROCE_ERR_MEMLOCK:
		return ENOMEM;
	case MROCE_ERR_QUEUES_BUSY: case MROCE_ERR_FOREIGN_PROG: case MROCE_ERR_ATTACHED:
		return EBUSY;
	case MROCE_ERR_NOT_ATTACHED:
		return ENODEV;
	case MROCE_ERR_VERSION:
		return EPROTO;
	case MROCE_ERR_STREAMS: case MROCE_ERR_PEER_ADDR:
		return EINVAL;
	default:
		/* libbpf's and libxdp's own codes mean nothing to an ibverbs caller */
		return err >= 4000 ? EIO : err;
	}
}

int mrv_dev_get(struct mrv_context *ctx)
{
	struct mrv_device *d = ctx->dev;
	struct mroce_dev_attr attr;
	struct mroce_faults faults;
	int err = 0;

	pthread_mutex_lock(&d->lock);
	if (ctx->mdev) {	/* under the lock: two threads' first PDs of one context count once */
		pthread_mutex_unlock(&d->lock);
		return 0;
	}
	if (!d->mdev) {
		int nf = mrv_parse_faults(getenv("MROCE_VERBS_TEST_FAULTS"), &faults);
		const char *planes[MROCE_MAX_PLANES - 1];

		for (uint32_t i = 0; i < ctx->n_planes; i++)
			planes[i] = ctx->planes[i];
		MROCE_OPTS(mroce_dev_opts, opts, .test_faults = nf > 0 ? &faults : NULL,
			   .planes = ctx->n_planes ? planes : NULL, .n_planes = ctx->n_planes);

		err = nf < 0 ? nf : mroce_dev_open(d->ifname, &opts, &d->mdev);
		if (err) {
			d->mdev = NULL;
		} else {
			memcpy(d->planes, ctx->planes, sizeof(d->planes));
			d->n_planes = ctx->n_planes;
		}
	} else if (ctx->n_planes && (ctx->n_planes != d->n_planes ||
				     memcmp(ctx->planes, d->planes, sizeof(d->planes)))) {
		err = -EBUSY;	/* one mroce device per interface in a process, over one set of planes */
	}
	if (!err) {
		err = mroce_dev_query(d->mdev, &attr);
		if (!err) {
			d->mdev_users++;
			ctx->mdev = d->mdev;
			ctx->queue = attr.queue;
		} else if (!d->mdev_users) {
			mroce_dev_close(d->mdev);
			d->mdev = NULL;
		}
	}
	pthread_mutex_unlock(&d->lock);
	return err ? -mrv_errno(err) : 0;
}

void mrv_dev_put(struct mrv_device *d)
{
	pthread_mutex_lock(&d->lock);
	if (d->mdev_users && --d->mdev_users == 0) {
		mroce_dev_close(d->mdev);
		d->mdev = NULL;
	}
	pthread_mutex_unlock(&d->lock);
}
