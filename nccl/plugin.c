// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libnccl-net-mroce: the exported ncclNetPlugin_v8 table, initialisation,
 * devices and their properties, memory registration.
 *
 * Devices: the interfaces named in MROCE_IFNAME (comma-separated, at most
 * MN_MAX_DEVS), or else the first interface that is up, not loopback and
 * has an IPv4 address. Each is opened once, at init(), with libmroce's own
 * progress thread running its transport.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin.h"

ncclDebugLogger_t mn_log;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mn_dev devs[MN_MAX_DEVS];
static int ndevs = -1;	/* -1: init() has not succeeded */

__u64 mn_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

struct mn_dev *mn_dev_get(int dev)
{
	return dev >= 0 && dev < ndevs ? &devs[dev] : NULL;
}

/* The IPv4 address of ifname; or, with ifname empty, the first usable interface. */
static int find_if(char ifname[16], struct in_addr *addr)
{
	struct ifaddrs *ifa, *i;
	int err = -ENODEV;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)i->ifa_addr;

		if (!sin || sin->sin_family != AF_INET)
			continue;
		if (ifname[0] ? strcmp(i->ifa_name, ifname) != 0 :
		    (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP))
			continue;
		snprintf(ifname, 16, "%s", i->ifa_name);
		*addr = sin->sin_addr;
		err = 0;
		break;
	}
	freeifaddrs(ifa);
	return err;
}

static int read_speed(const char *ifname)
{
	char path[64];
	FILE *f;
	int v = -1;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v > 0 ? v : 10000;	/* virtual links report none: say 10 Gbit/s */
}

static char *pci_path(const char *ifname)
{
	char path[64], real[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/class/net/%s/device", ifname);
	return realpath(path, real) ? strdup(real) : NULL;	/* veth and the like: none */
}

static void close_devs(int n)
{
	for (int i = 0; i < n; i++) {
		if (devs[i].dev)
			mroce_dev_close(devs[i].dev);
		free(devs[i].pci_path);
		memset(&devs[i], 0, sizeof(devs[i]));
	}
}

static int open_dev(struct mn_dev *d, const char *want)
{
	char err_buf[96];
	int err;

	snprintf(d->ifname, sizeof(d->ifname), "%s", want);
	err = find_if(d->ifname, &d->addr);
	if (err) {
		MN_WARN("interface '%s' has no IPv4 address (MROCE_IFNAME)", want);
		return err;
	}
	d->ifindex = (int)if_nametoindex(d->ifname);
	err = mroce_dev_open(d->ifname, NULL, &d->dev);
	if (err) {
		mroce_strerror(err, err_buf, sizeof(err_buf));
		MN_WARN("cannot open %s: %s (NCCL_DEBUG=INFO shows libmroce's messages)",
			d->ifname, err_buf);
		return err;
	}
	snprintf(d->name, sizeof(d->name), "mroce:%s", d->ifname);
	d->speed_mbps = read_speed(d->ifname);
	d->pci_path = pci_path(d->ifname);
	return 0;
}

/*
 * libmroce's diagnostics (libbpf's and libxdp's among them: why a device
 * would not open) go to NCCL's logger too, never to stderr, at INFO: they
 * are often harmless (libxdp falling back when there is no bpffs), and a
 * device that does fail to open gets the plugin's own warning. The plugin
 * has its own copy of libmroce linked in, so this hook is the plugin's alone.
 */
static int mn_print(enum mroce_print_level level, const char *fmt, va_list ap)
{
	ncclDebugLogger_t log = mn_log;
	char buf[512];
	size_t n;

	if (!log || level == MROCE_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	log(NCCL_LOG_INFO, NCCL_NET, "libmroce", 0, "NET/mroce: libmroce %s: %s",
	    level == MROCE_WARN ? "warning" : "info", buf);
	return (int)n;
}

static ncclResult_t mn_init(ncclDebugLogger_t log)
{
	const char *env = getenv("MROCE_IFNAME");
	char list[256], *save = NULL, *tok;
	int n = 0, err = 0;

	pthread_mutex_lock(&init_lock);
	mn_log = log;
	mroce_set_print(mn_print);
	if (ndevs > 0) {
		pthread_mutex_unlock(&init_lock);
		return ncclSuccess;
	}
	snprintf(list, sizeof(list), "%s", env && *env ? env : "");
	if (!list[0]) {
		err = open_dev(&devs[0], "");
		n = !err;
	}
	for (tok = strtok_r(list, ",", &save); !err && tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == MN_MAX_DEVS) {
			MN_WARN("MROCE_IFNAME names more than %d interfaces", MN_MAX_DEVS);
			err = -E2BIG;
			break;
		}
		err = open_dev(&devs[n], tok);
		if (!err)
			n++;
	}
	if (err || !n) {
		close_devs(n);
		pthread_mutex_unlock(&init_lock);
		return ncclSystemError;	/* NCCL falls back on its own transports */
	}
	ndevs = n;
	for (int i = 0; i < n; i++)
		MN_INFO("device %d: %s %s, %d Mbit/s", i, devs[i].ifname, inet_ntoa(devs[i].addr),
			devs[i].speed_mbps);
	pthread_mutex_unlock(&init_lock);
	return ncclSuccess;
}

int mn_open_objs;

/*
 * Unloading (v8 has no finalizer): the devices go, but only once every comm
 * and listener is closed. At exit() NCCL's proxy threads may still be using
 * open ones; those devices are left to the process's end.
 */
__attribute__((destructor)) static void mn_fini(void)
{
	if (ndevs > 0 && !__atomic_load_n(&mn_open_objs, __ATOMIC_ACQUIRE)) {
		close_devs(ndevs);
		ndevs = -1;
	}
}

static ncclResult_t mn_devices(int *ndev)
{
	if (!ndev || ndevs < 0)
		return ncclInternalError;
	*ndev = ndevs;
	return ncclSuccess;
}

static ncclResult_t mn_get_properties(int dev, ncclNetProperties_v8_t *p)
{
	struct mn_dev *d = mn_dev_get(dev);

	if (!d || !p)
		return ncclInternalError;
	memset(p, 0, sizeof(*p));
	p->name = d->name;
	p->pciPath = d->pci_path;
	p->guid = (uint64_t)dev;
	p->ptrSupport = NCCL_PTR_HOST;
	p->regIsGlobal = 0;
	p->speed = d->speed_mbps;
	p->port = 1;
	p->latency = 0;
	p->maxComms = 1024;
	p->maxRecvs = MN_MAX_RECVS;
	p->netDeviceType = NCCL_NET_DEVICE_HOST;
	p->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
	return ncclSuccess;
}

static ncclResult_t mn_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct mn_comm *c = comm;
	struct mn_mr *m;
	int err;

	if (!c || !mhandle || (size && !data))
		return ncclInternalError;
	if (type != NCCL_PTR_HOST) {
		MN_WARN("regMr: only host memory (NCCL_PTR_HOST), got type %d", type);
		return ncclInternalError;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return ncclSystemError;
	m->addr = (__u64)(uintptr_t)data;
	m->len = size;
	if (size) {
		err = mroce_reg_mr(c->d->dev, data, size,
				   MROCE_ACCESS_LOCAL_WRITE | MROCE_ACCESS_REMOTE_WRITE, &m->mr);
		if (err) {
			MN_WARN("regMr of %zu bytes: error %d", size, err);
			free(m);
			return ncclSystemError;
		}
	}
	*mhandle = m;
	return ncclSuccess;
}

static ncclResult_t mn_reg_mr_dmabuf(void *comm, void *data, size_t size, int type,
				     uint64_t offset, int fd, void **mhandle)
{
	(void)comm, (void)data, (void)size, (void)type, (void)offset, (void)fd, (void)mhandle;
	return ncclInternalError;	/* ptrSupport has no NCCL_PTR_DMABUF */
}

/* comm is not used: NCCL may deregister after closing the comm. */
static ncclResult_t mn_dereg_mr(void *comm, void *mhandle)
{
	struct mn_mr *m = mhandle;

	(void)comm;
	if (!m)
		return ncclInternalError;
	if (m->mr && mroce_dereg_mr(m->mr))
		return ncclSystemError;
	free(m);
	return ncclSuccess;
}

/* Host memory needs no flush: nothing to wait for (request NULL). */
static ncclResult_t mn_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
			      void **request)
{
	(void)recv_comm, (void)n, (void)data, (void)sizes, (void)mhandles;
	if (!request)
		return ncclInternalError;
	*request = NULL;
	return ncclSuccess;
}

static ncclResult_t mn_get_device_mr(void *comm, void *mhandle, void **dptr)
{
	(void)comm, (void)mhandle;
	if (dptr)
		*dptr = NULL;
	return ncclInternalError;	/* no device offload (NCCL_NET_DEVICE_HOST) */
}

static ncclResult_t mn_irecv_consumed(void *recv_comm, int n, void *request)
{
	(void)recv_comm, (void)n, (void)request;
	return ncclSuccess;	/* only device offload uses it */
}

__attribute__((visibility("default"))) const ncclNet_v8_t ncclNetPlugin_v8 = {
	.name		= "mroce",
	.init		= mn_init,
	.devices	= mn_devices,
	.getProperties	= mn_get_properties,
	.listen		= mn_listen,
	.connect	= mn_connect,
	.accept		= mn_accept,
	.regMr		= mn_reg_mr,
	.regMrDmaBuf	= mn_reg_mr_dmabuf,
	.deregMr	= mn_dereg_mr,
	.isend		= mn_isend,
	.irecv		= mn_irecv,
	.iflush		= mn_iflush,
	.test		= mn_test,
	.closeSend	= mn_close_comm,
	.closeRecv	= mn_close_comm,
	.closeListen	= mn_close_listen,
	.getDeviceMr	= mn_get_device_mr,
	.irecvConsumed	= mn_irecv_consumed,
};
