// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An interface's hardware facts (MAC address, MTU), for the datapath and the AF_XDP port. */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"

int mroce_if_hw(const char *ifname, __u8 mac[6], __u32 *mtu)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		err = -errno;
	else if (ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);	/* else left as it is (lo: zero) */
	if (!err && mtu) {
		if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
			err = -errno;
		else
			*mtu = (__u32)ifr.ifr_mtu;
	}
	close(fd);
	return err;
}
