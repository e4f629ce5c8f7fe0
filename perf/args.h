/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mroce-perf's command line, parsed without side effects so it can be unit-tested. */
#ifndef MROCE_PERF_ARGS_H
#define MROCE_PERF_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum perf_test {
	PERF_WRITE_BW, PERF_WRITE_LAT, PERF_READ_BW, PERF_READ_LAT, PERF_SEND_BW, PERF_SEND_LAT,
	PERF_TESTS
};

#define PERF_MAX_QPS	128
#define PERF_MAX_SIZES	32
#define PERF_MIN_SIZE	1
#define PERF_MAX_SIZE	(64u << 20)
/* -b: each end's buffer holds what arrives and what it sends, apart: half each */
#define PERF_MAX_BIDIR_SIZE	(PERF_MAX_SIZE / 2)

struct perf_args {
	bool		server;
	const char	*dev;
	const char	*addr;		/* server: listen address; client: the server's */
	__u16		port;		/* connection manager's TCP port */
	enum perf_test	test;
	__u32		sizes[PERF_MAX_SIZES];
	__u32		nsizes;		/* one size, or a sweep */
	__u32		qps;
	__u32		paths;
	__u32		depth;		/* bandwidth tests: requests in flight per QP */
	__u32		window;		/* packets in flight per QP (max_inflight); 0: library default */
	bool		no_cc, cc_ecn, cc_delay;	/* --cc; all false: the library's default */
	bool		unordered;
	bool		go_back_n;
	double		duration_s;	/* per size, unless iters is set */
	__u64		iters;
	bool		json;
	bool		poll;		/* drive the transport from this thread, busy-polling */
	bool		dm;		/* buffers in device memory (XDP places WRITEs), not the heap */
	bool		umem;		/* buffers in the UMEM's transmit pool (sent without a copy) */
	bool		gbits;		/* perftest's --report_gbits: Gbit/s columns instead of MB/sec */
	bool		bidir;		/* perftest's -b: both ends run the test toward each other at once */
	int		gid_index;	/* perftest's -x: validated, not used (mroce addresses by IP); -1 unset */
	__u32		queue;		/* the device's first receive queue (mroce_dev_opts) */
	__u32		queues;		/* receive queues it serves; 0: the library's default */
};

bool perf_test_is_bw(enum perf_test t);
const char *perf_test_name(enum perf_test t);

/*
 * Fill *a from argv (argv[0] is the program). Returns 0, or -1 with a
 * one-line reason in err (the caller prints it and exits 2); "help",
 * --help or -h asks for the usage text (returns PERF_ARGS_HELP), --version
 * or -V for the version (PERF_ARGS_VERSION).
 */
#define PERF_ARGS_HELP		1
#define PERF_ARGS_VERSION	2
int perf_parse_args(int argc, char **argv, struct perf_args *a, char *err, size_t errlen);
extern const char perf_usage[];

#endif
