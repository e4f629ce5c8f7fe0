// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * An interface's hardware facts (MAC address, MTU, receive queues, driver),
 * for the datapath and the AF_XDP port.
 */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "internal.h"

/* One request about ifname on a throwaway socket (the GET ones need no capability). */
static int if_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	if (ioctl(fd, req, ifr) < 0)
		err = -errno;
	close(fd);
	return err;
}

int mroce_if_hw(const char *ifname, __u8 mac[6], __u32 *mtu)
{
	struct ifreq ifr = {};
	int err = if_ioctl(ifname, SIOCGIFHWADDR, &ifr);

	if (!err && ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);	/* else left as it is (lo: zero) */
	if (!err && mtu && !(err = if_ioctl(ifname, SIOCGIFMTU, &ifr)))
		*mtu = (__u32)ifr.ifr_mtu;
	return err;
}

/* One ethtool query on ifname. */
static int ethtool_get(const char *ifname, void *cmd)
{
	struct ifreq ifr = { .ifr_data = cmd };

	return if_ioctl(ifname, SIOCETHTOOL, &ifr);
}

__u32 mroce_if_rx_queues(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	char path[64 + IF_NAMESIZE];
	struct dirent *e;
	__u32 n = 0;
	DIR *d;

	if (!ethtool_get(ifname, &ch) && ch.rx_count + ch.combined_count)
		return ch.rx_count + ch.combined_count;
	/* A driver without channels: its queue directories in sysfs. */
	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	d = opendir(path);
	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, "rx-", 3);
	if (d)
		closedir(d);
	return n ? n : 1;
}

bool mroce_if_driver_is(const char *ifname, const char *driver)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };

	return !ethtool_get(ifname, &info) && !strcmp(info.driver, driver);
}
