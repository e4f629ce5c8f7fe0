// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xsk_raw: the bare datapath's ceiling, no transport logic. One AF_XDP
 * sender blasts identical UDP frames of a given size; one AF_XDP receiver
 * behind an XDP redirect counts them. What it measures is what any
 * transport on this datapath (copy-mode AF_XDP on veth here) can at best
 * reach at that frame size.
 *
 *   xsk_raw rx --dev DEV [--queue Q] [--seconds T] [--token N] [--copy]
 *   xsk_raw tx --dev DEV [--queue Q] --dst-mac MAC --src IP --dst IP --size BYTES [--seconds T] [--token N]
 *   xsk_raw memcpy --size BYTES [--seconds T]
 *
 * rx prints, once the flow has stopped for 200 ms (or T has passed):
 *   rx: FRAMES frames BYTES bytes in SECONDS s: MPPS Mpps, GBPS Gbit/s (STRAY stray)
 *   rx: window FIRST LAST
 * FIRST and LAST: the first and last counted frame's arrival, CLOCK_MONOTONIC
 * seconds (a caller counts the machine's CPU over that span, not start-up).
 * Only the sender's frames count: UDP to port 9 whose payload starts with
 * "xsk_raw" and the run's token. Anything else the redirect brings (a
 * neighbour solicitation, a frame of the run before) is counted as stray
 * and starts nothing: a stray frame before the sender began used to open the
 * measurement and end it 200 ms later, with no figure.
 *
 * rx reads only a frame's headers. With --copy it also copies each frame's
 * payload into a 64 MiB buffer, as any receiver that delivers data must:
 * the bare datapath plus the one copy a transport cannot avoid on it. The
 * copy costs more than its own cycles: the receiver's core now holds the
 * receive buffers' cache lines, which the kernel's copy into them (on the
 * sender's core, veth's softirq) must take back.
 *
 * --queue Q (default 0): the queue of DEV to bind: rx counts only what
 * arrives on receive queue Q, tx sends on transmit queue Q.
 *
 * memcpy is the other ceiling: one core copying BYTES at a time from a
 * 256 MiB buffer into another, beyond any cache, as a transport that copies
 * each byte once more would:
 *   memcpy: BYTES-byte copies: GBPS Gbit/s
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>

#include "../fabric/port.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define MAGIC		"xsk_raw"	/* 8 bytes with its NUL */
#define HDRS		(sizeof(struct ethhdr) + sizeof(struct iphdr) + sizeof(struct udphdr))
#define MARK_LEN	(sizeof(MAGIC) + 8)	/* the magic, then the 64-bit token */
_Static_assert(HDRS + MARK_LEN <= 64, "the smallest frame (--size 64) holds the mark");

struct count {
	__u64	frames, bytes, stray, token;
	__u8	*dst;		/* --copy: each frame's payload lands here, as a receiver places it */
	size_t	off;
};

#define COPY_AREA	(64u << 20)	/* beyond the caches, as a receiver's memory is */

static bool ours(const __u8 *f, __u32 len, __u64 token)
{
	const struct ethhdr *eth = (const void *)f;
	const struct iphdr *ip = (const void *)(f + sizeof(*eth));
	const struct udphdr *udp = (const void *)(ip + 1);

	return len >= HDRS + MARK_LEN && eth->h_proto == htons(ETH_P_IP) && ip->ihl == 5 &&
	       ip->protocol == IPPROTO_UDP && udp->dest == htons(9) &&
	       !memcmp(f + HDRS, MAGIC, sizeof(MAGIC)) && !memcmp(f + HDRS + sizeof(MAGIC), &token, 8);
}

static void on_frame(void *ctx, const __u8 *frame, __u32 len)
{
	struct count *c = ctx;

	if (!ours(frame, len, c->token)) {
		c->stray++;
		return;
	}
	c->frames++;
	c->bytes += len;
	if (c->dst) {
		if (c->off + len > COPY_AREA)
			c->off = 0;
		memcpy(c->dst + c->off, frame + HDRS, len - HDRS);
		c->off += len;
	}
}

static int rx(const char *dev, __u32 queue, double seconds, __u64 token, bool copy)
{
	struct xport_ingress in;
	struct xport p;
	struct count c = { .token = token };
	double first = 0, last = 0, start = now_s();
	int err;

	if (copy) {
		if (!(c.dst = malloc(COPY_AREA))) {
			fprintf(stderr, "xsk_raw: rx --copy: no memory for the destination\n");
			return 1;
		}
		memset(c.dst, 0, COPY_AREA);	/* faulted in before the transfer */
	}

	if ((err = xport_ingress_load(&in, NULL)) || (err = xport_open_queue(&p, dev, queue, 0, &in))) {
		xport_close(&p);
		xport_ingress_close(&in);
		return 1;
	}
	printf("rx: ready on %s\n", dev);
	fflush(stdout);
	for (;;) {
		__u64 before = c.frames;
		double now;

		xport_rx(&p, on_frame, &c, 256);
		now = now_s();
		if (c.frames != before) {
			if (!first)
				first = now;
			last = now;
		} else {
			struct pollfd pfd = { .fd = p.fd, .events = POLLIN };

			if ((first && now - last > 0.2) || now - start > seconds + 10)
				break;
			poll(&pfd, 1, 1);
		}
		if (first && now - first > seconds)
			break;
	}
	xport_close(&p);
	xport_ingress_close(&in);
	free(c.dst);
	if (c.frames < 2 || last <= first) {
		printf("rx: nothing from the sender arrived (%llu frames, %llu stray)\n",
		       (unsigned long long)c.frames, (unsigned long long)c.stray);
		return 1;
	}
	printf("rx: %llu frames %llu bytes in %.3f s: %.4f Mpps, %.3f Gbit/s (%llu stray)\n",
	       (unsigned long long)c.frames, (unsigned long long)c.bytes, last - first,
	       (double)c.frames / (last - first) / 1e6, (double)c.bytes * 8 / (last - first) / 1e9,
	       (unsigned long long)c.stray);
	/* the transfer's span on CLOCK_MONOTONIC: a caller counts CPU over it, not start-up */
	printf("rx: window %.6f %.6f\n", first, last);
	return 0;
}

static int copy_ceiling(__u32 size, double seconds)
{
	const size_t area = 256u << 20;
	__u8 *src = malloc(area), *dst = malloc(area);
	double t0, t;
	__u64 copied = 0;
	size_t off = 0;

	if (!src || !dst || size < 64 || size > area) {
		fprintf(stderr, "xsk_raw: memcpy: --size 64..%zu, and memory for two 256 MiB buffers\n", area);
		free(src);
		free(dst);
		return 2;
	}
	memset(src, 0x5a, area);	/* fault both in before timing */
	memset(dst, 0, area);
	t0 = now_s();
	do {
		for (int i = 0; i < 256; i++) {
			if (off + size > area)
				off = 0;
			memcpy(dst + off, src + off, size);
			off += size;
			copied += size;
		}
		t = now_s();
	} while (t - t0 < seconds);
	/* Read something back, so the copies cannot be optimised away. */
	printf("memcpy: %u-byte copies: %.3f Gbit/s (check %u)\n", size, (double)copied * 8 / (t - t0) / 1e9,
	       dst[off ? off - 1 : 0]);
	free(src);
	free(dst);
	return 0;
}

static int tx(const char *dev, __u32 queue, const char *mac, const char *src, const char *dst,
	      __u32 size, double seconds, __u64 token)
{
	static __u8 frame[XPORT_FRAME];
	struct ethhdr *eth;
	struct iphdr *ip;
	struct udphdr *udp;
	struct ifreq ifr = {};
	struct xport p;
	__u64 sent = 0;
	double start, end;
	int fd;

	if (size < 64 || size > XPORT_FRAME) {
		fprintf(stderr, "xsk_raw: --size %u: 64..%u\n", size, XPORT_FRAME);
		return 2;
	}
	eth = (void *)frame;
	ip = (void *)(frame + sizeof(*eth));
	udp = (void *)((__u8 *)ip + sizeof(*ip));
	if (sscanf(mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &eth->h_dest[0], &eth->h_dest[1], &eth->h_dest[2],
		   &eth->h_dest[3], &eth->h_dest[4], &eth->h_dest[5]) != 6 ||
	    inet_pton(AF_INET, src, &ip->saddr) != 1 || inet_pton(AF_INET, dst, &ip->daddr) != 1) {
		fprintf(stderr, "xsk_raw: bad --dst-mac, --src or --dst\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		fprintf(stderr, "xsk_raw: %s: %s\n", dev, strerror(errno));
		return 1;
	}
	close(fd);
	memcpy(eth->h_source, ifr.ifr_hwaddr.sa_data, 6);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons((__u16)(size - sizeof(*eth)));
	{
		const __u8 *b = (const __u8 *)ip;
		__u32 sum = 0;

		for (int i = 0; i < 20; i += 2)
			sum += (__u32)(b[i] << 8 | b[i + 1]);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		ip->check = htons((__u16)~sum);
	}
	udp->source = htons(9);
	udp->dest = htons(9);
	udp->len = htons((__u16)(size - sizeof(*eth) - sizeof(*ip)));
	memcpy(frame + HDRS, MAGIC, sizeof(MAGIC));
	memcpy(frame + HDRS + sizeof(MAGIC), &token, 8);
	if (xport_open_queue(&p, dev, queue, 0, NULL)) {
		xport_close(&p);
		return 1;
	}
	start = now_s();
	end = start + seconds;
	while (now_s() < end) {
		for (int i = 0; i < 64; i++) {
			if (xport_tx(&p, frame, size))
				break;
			sent++;
		}
		xport_kick(&p);
	}
	xport_close(&p);
	printf("tx: %llu frames of %u bytes in %.3f s: %.4f Mpps offered\n", (unsigned long long)sent, size,
	       seconds, (double)sent / seconds / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", 1, 0, 'd' }, { "dst-mac", 1, 0, 'm' }, { "src", 1, 0, 's' }, { "dst", 1, 0, 't' },
		{ "size", 1, 0, 'z' }, { "seconds", 1, 0, 'T' }, { "token", 1, 0, 'k' }, { "copy", 0, 0, 'c' },
		{ "queue", 1, 0, 'q' }, { 0, 0, 0, 0 },
	};
	__u64 token = 1;
	const char *dev = NULL, *mac = NULL, *src = NULL, *dst = NULL;
	double seconds = 2;
	__u32 size = 0, queue = 0;
	bool copy = false;
	int c;

	if (argc < 2 || (strcmp(argv[1], "rx") && strcmp(argv[1], "tx") && strcmp(argv[1], "memcpy"))) {
		fprintf(stderr, "usage: xsk_raw rx --dev DEV [--queue Q] [--seconds T] [--token N] [--copy]\n"
				"       xsk_raw tx --dev DEV [--queue Q] --dst-mac MAC --src IP --dst IP --size BYTES [--seconds T] "
				"[--token N]\n"
				"       xsk_raw memcpy --size BYTES [--seconds T]\n");
		return 2;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'm': mac = optarg; break;
		case 's': src = optarg; break;
		case 't': dst = optarg; break;
		case 'z': size = (__u32)atoi(optarg); break;
		case 'T': seconds = atof(optarg); break;
		case 'k': token = strtoull(optarg, NULL, 0); break;
		case 'c': copy = true; break;
		case 'q': queue = (__u32)atoi(optarg); break;
		default: return 2;
		}
	}
	if (seconds <= 0) {
		fprintf(stderr, "xsk_raw: --seconds must be positive\n");
		return 2;
	}
	if (!strcmp(argv[1], "memcpy"))
		return copy_ceiling(size, seconds);
	if (!dev) {
		fprintf(stderr, "xsk_raw: --dev is required\n");
		return 2;
	}
	if (!strcmp(argv[1], "rx"))
		return rx(dev, queue, seconds, token, copy);
	if (!mac || !src || !dst || !size) {
		fprintf(stderr, "xsk_raw: tx needs --dst-mac, --src, --dst and --size\n");
		return 2;
	}
	return tx(dev, queue, mac, src, dst, size, seconds, token);
}
