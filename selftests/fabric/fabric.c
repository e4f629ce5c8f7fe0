// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fabric: the switch of the emulated fabric, and its control client.
 *
 *   fabric run --sock PATH --paths K [--queues N] [--steer-base B] [--seed N] [--slots N] IFNAME...
 *       runs in the switch namespace; port i is the i-th interface, each
 *       with N receive and transmit queues
 *   fabric ctl --sock PATH COMMAND...
 *       path, pin, steer, hash, rxq, show, stats [json], reset, stop (see docs/fabric.md)
 *
 * Frames reach the switch through XDP and AF_XDP (copy mode on veth, a
 * socket per queue of each port), wait in user space for their path's
 * serialisation and delay, and leave through the egress port's AF_XDP socket
 * of the queue the host's NIC would receive them on (veth delivers what is
 * sent on transmit queue q to the peer's receive queue q). One thread,
 * sleeping in ppoll() until the next frame is due or a frame or command arrives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "port.h"
#include "switch.h"

#define RX_BATCH	64

struct fabric {
	struct fab_switch	sw;
	struct xport		ports[FAB_MAX_PORTS][FAB_MAX_QUEUES];
	__u32			nports, nqueues;
	struct xport_ingress	in;
	int			listen_fd;
	const char		*sock_path;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static int port_tx(void *ctx, __u32 port, __u32 queue, const void *frame, __u32 len)
{
	return xport_tx(&((struct fabric *)ctx)->ports[port][queue], frame, len);
}

struct rx_ctx {
	struct fabric	*f;
	__u32		port, queue;
	__u64		now;
};

static void on_frame(void *ctx, const __u8 *frame, __u32 len)
{
	struct rx_ctx *r = ctx;

	fab_ingress(&r->f->sw, r->port, r->queue, frame, len, r->now);
}

static int port_rx(struct fabric *f, __u32 i, __u32 q)
{
	struct rx_ctx r = { f, i, q, now_ns() };

	return xport_rx(&f->ports[i][q], on_frame, &r, RX_BATCH);
}

static void fabric_close(struct fabric *f)
{
	/* Queue 0's socket detaches the program: the others go first. */
	for (__u32 i = 0; i < FAB_MAX_PORTS; i++)
		for (int q = FAB_MAX_QUEUES - 1; q >= 0; q--)
			xport_close(&f->ports[i][q]);
	if (f->listen_fd >= 0) {
		close(f->listen_fd);
		unlink(f->sock_path);
	}
	xport_ingress_close(&f->in);
	fab_switch_free(&f->sw);
}

static int unix_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* One connection, one command line, one reply. */
static bool serve_command(struct fabric *f)
{
	static char reply[65536];
	char line[512];
	int fd = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC), rc;
	struct pollfd pfd = { .events = POLLIN };
	ssize_t n = 0, r;

	if (fd < 0)
		return false;
	pfd.fd = fd;
	while (n < (ssize_t)sizeof(line) - 1 && !memchr(line, '\n', (size_t)n) && poll(&pfd, 1, 1000) > 0 &&
	       (r = read(fd, line + n, sizeof(line) - 1 - (size_t)n)) > 0)
		n += r;
	line[n] = '\0';
	rc = fab_command(&f->sw, line, now_ns(), reply, sizeof(reply));
	if (write(fd, reply, strlen(reply)) < 0)
		fprintf(stderr, "fabric: reply lost: %s\n", strerror(errno));
	close(fd);
	if (rc == 0 && strncmp(line, "stats", 5) && strncmp(line, "show", 4) && strncmp(line, "hash", 4) &&
	    strncmp(line, "rxq", 3)) {
		printf("fabric: %s", reply);
		printf("fabric: applied: %s%s", line, strchr(line, '\n') ? "" : "\n");
		fflush(stdout);
	}
	return rc == 1;
}

static int run(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "sock", 1, 0, 's' }, { "paths", 1, 0, 'k' }, { "seed", 1, 0, 'r' },
		{ "slots", 1, 0, 'n' }, { "bpf", 1, 0, 'b' }, { "queues", 1, 0, 'q' },
		{ "steer-base", 1, 0, 'B' }, { 0, 0, 0, 0 },
	};
	struct fabric *f = calloc(1, sizeof(*f));
	__u32 npaths = 4, nslots = 32768, nqueues = 1;
	long steer_base = -1;
	__u64 seed = 1;
	const char *bpf_path = NULL;
	struct sockaddr_un sa;
	int c, err = 0, rc = 1;

	if (!f)
		return 1;
	f->listen_fd = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': f->sock_path = optarg; break;
		case 'k': npaths = (__u32)atoi(optarg); break;
		case 'r': seed = strtoull(optarg, NULL, 0); break;
		case 'n': nslots = (__u32)atoi(optarg); break;
		case 'b': bpf_path = optarg; break;
		case 'q':
		case 'B': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (end == optarg || *end || v < 0 || v > 65535) {
				fprintf(stderr, "fabric: --%s %s: not a number in range\n",
					c == 'q' ? "queues" : "steer-base", optarg);
				return 2;
			}
			if (c == 'q')
				nqueues = (__u32)v;
			else
				steer_base = v;
			break;
		}
		default: return 2;
		}
	}
	f->nports = (__u32)(argc - optind);
	if (!f->sock_path || f->nports < 2 || f->nports > FAB_MAX_PORTS) {
		fprintf(stderr, "usage: fabric run --sock PATH [--paths K] [--queues N] [--steer-base B] [--seed N] "
				"IFNAME IFNAME...\n  (2 to %d ports)\n", FAB_MAX_PORTS);
		return 2;
	}
	f->nqueues = nqueues;
	err = fab_switch_init(&f->sw, f->nports, npaths, nqueues, nslots, seed, port_tx, f);
	if (err) {
		fprintf(stderr, "fabric: bad switch size (1..%d paths, 2..%d ports, 1..%d queues): %s\n",
			FAB_MAX_PATHS, FAB_MAX_PORTS, FAB_MAX_QUEUES, strerror(-err));
		return 2;
	}
	if (steer_base >= 0 && (steer_base > 65535 || fab_steer_base(&f->sw, (__u32)steer_base))) {
		fprintf(stderr, "fabric: --steer-base %ld: UDP ports B..B+%u must be 0..65535\n", steer_base,
			nqueues - 1);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	/* Frames fall due microseconds apart: sleep no later than asked. */
	prctl(PR_SET_TIMERSLACK, 1UL);

	if (xport_ingress_load(&f->in, bpf_path))
		goto out;
	for (__u32 i = 0; i < f->nports; i++) {
		const char *name = argv[optind + (int)i];
		int have = xport_rx_queues(name);

		/* Frames on a queue without a socket would be lost without a count. */
		if (have > 0 && (__u32)have != nqueues) {
			fprintf(stderr, "fabric: %s has %d receive queues, --queues is %u: they must match\n", name,
				have, nqueues);
			goto out;
		}
		for (__u32 q = 0; q < nqueues; q++)
			if (xport_open_queue(&f->ports[i][q], name, q, i, &f->in))
				goto out;
	}
	if ((err = unix_addr(f->sock_path, &sa))) {
		fprintf(stderr, "fabric: socket path too long\n");
		goto out;
	}
	unlink(f->sock_path);
	f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (f->listen_fd < 0 || bind(f->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(f->listen_fd, 16)) {
		fprintf(stderr, "fabric: control socket %s: %s\n", f->sock_path, strerror(errno));
		goto out;
	}
	printf("fabric: ready: %u ports, %u paths, %u queues, control socket %s\n", f->nports, npaths, nqueues,
	       f->sock_path);
	fflush(stdout);

	for (__u64 last_ctl = 0; !stop_signal;) {
		struct pollfd pfd[FAB_MAX_PORTS * FAB_MAX_QUEUES + 1];
		__u32 nfd = f->nports * f->nqueues;
		struct timespec ts;
		bool kick = false;
		__u64 next, now;
		int got = 0;

		for (__u32 i = 0; i < f->nports; i++)
			for (__u32 q = 0; q < f->nqueues; q++)
				got += port_rx(f, i, q);
		now = now_ns();
		next = fab_egress(&f->sw, now);
		for (__u32 i = 0; i < f->nports; i++)
			for (__u32 q = 0; q < f->nqueues; q++)
				if (f->ports[i][q].kick)
					xport_kick(&f->ports[i][q]);
		/* Commands are answered under full load too, within a millisecond. */
		if (now - last_ctl > 1000000) {
			last_ctl = now;
			if (serve_command(f))
				break;
		}
		if (got)
			continue;	/* more may be waiting: drain before sleeping */
		for (__u32 i = 0; i < f->nports; i++) {
			for (__u32 q = 0; q < f->nqueues; q++) {
				pfd[i * f->nqueues + q] = (struct pollfd){ .fd = f->ports[i][q].fd, .events = POLLIN };
				kick |= f->ports[i][q].kick;
			}
		}
		pfd[nfd] = (struct pollfd){ .fd = f->listen_fd, .events = POLLIN };
		now = now_ns();
		/* A port whose device was busy is kicked again soon (xport_kick()). */
		if (kick && next > now + 50000)
			next = now + 50000;
		if (next <= now + 2000)
			continue;	/* due within 2 us: not worth a sleep */
		next -= now;
		if (next > 100000000)
			next = 100000000;
		ts = (struct timespec){ .tv_sec = (time_t)(next / 1000000000), .tv_nsec = (long)(next % 1000000000) };
		if (ppoll(pfd, nfd + 1, &ts, NULL) > 0 && pfd[nfd].revents & POLLIN &&
		    serve_command(f))
			break;
	}
	rc = 0;
	printf("fabric: stopping%s\n", stop_signal ? " on a signal" : "");
out:
	fabric_close(f);
	free(f);
	return rc;
}

static int ctl(int argc, char **argv)
{
	const char *sock = NULL;
	char line[512] = "", buf[4096];
	struct sockaddr_un sa;
	size_t off = 0;
	ssize_t n;
	int i = 2, fd, rc = 0;

	if (argc > 3 && !strcmp(argv[2], "--sock")) {
		sock = argv[3];
		i = 4;
	}
	if (!sock || i >= argc) {
		fprintf(stderr, "usage: fabric ctl --sock PATH COMMAND...\n");
		return 2;
	}
	for (; i < argc; i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s", argv[i], i + 1 < argc ? " " : "\n");
	if (off >= sizeof(line) || unix_addr(sock, &sa)) {
		fprintf(stderr, "fabric: command or socket path too long\n");
		return 2;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "fabric: no switch at %s: %s\n", sock, strerror(errno));
		return 1;
	}
	if (write(fd, line, strlen(line)) < 0) {
		fprintf(stderr, "fabric: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		fwrite(buf, 1, (size_t)n, stdout);
		if (!strncmp(buf, "error:", 6))
			rc = 1;
	}
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return run(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "ctl"))
		return ctl(argc, argv);
	fprintf(stderr, "usage: fabric run --sock PATH [--paths K] [--queues N] [--steer-base B] [--seed N] "
			"IFNAME IFNAME...\n"
			"       fabric ctl --sock PATH path|pin|steer|hash|rxq|show|stats|reset|stop ...\n");
	return 2;
}
