/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command line of the mroce tool: parsing is separate so tests run it without root. */
#ifndef MROCE_CLI_H
#define MROCE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "mroce/mroce.h"
#include "mroce/wire.h"

enum mroce_cli_cmd {
	MROCE_CLI_HELP,
	MROCE_CLI_VERSION,
	MROCE_CLI_ATTACH,
	MROCE_CLI_DETACH,
	MROCE_CLI_STATUS,
	MROCE_CLI_FLOWS,
	MROCE_CLI_FLOW_ADD,
	MROCE_CLI_FLOW_DEL,
};

struct mroce_cli {
	enum mroce_cli_cmd	cmd;
	const char		*dev;
	const char		*obj;
	enum mroce_xdp_mode	mode;
	__u16			port;
	__u32			qpn;
	__u32			psn;
	__u32			peer_qpn;
	__u64			token;
	bool			pin;
	__u32			dm_mb;		/* attach: device memory pool, MiB; 0: the default */
	bool			json;
	bool			prometheus;	/* status: Prometheus text exposition */
	bool			verbose;
	bool			go_back_n;
};

/* Exit codes of the tool. */
#define MROCE_EXIT_OK		0
#define MROCE_EXIT_FAIL		1	/* the operation failed */
#define MROCE_EXIT_USAGE	2	/* bad command line */

/* Parse argv (argv[0] is the program). 0, or -EINVAL with a one-line reason in err. */
int mroce_cli_parse(int argc, char **argv, struct mroce_cli *cli, char *err, size_t errlen);

/* Run a parsed command; messages go to out/errout. Returns an exit code. */
int mroce_cli_run(const struct mroce_cli *cli, FILE *out, FILE *errout);

extern const char mroce_cli_usage[];

/*
 * The transport's counters, summed over the active flows: the libraries that
 * own them publish them in the flows map (struct mroce_flow_tx).
 */
#define MROCE_CLI_TOTALS(X)						\
	X(tx_pkts,       "data packets sent by this interface's QPs")	\
	X(retx_pkts,     "of those, resends")				\
	X(acked_bytes,   "payload bytes acknowledged by peers")		\
	X(ecn_ce,        "CE marks echoed by peers")			\
	X(cc_cuts,       "congestion window reductions")		\
	X(paths_retired, "path slots moved to a fresh entropy value")

struct mroce_cli_totals {
#define X(n, d) __u64 n;
	MROCE_CLI_TOTALS(X)
#undef X
};

/*
 * The AF_XDP sockets' own kernel counters (XDP_STATISTICS), summed over the
 * sockets of the network namespace: fields of struct mroce_dev_stats.
 */
#define MROCE_CLI_XSK(X)							\
	X(xsk_rx_dropped,         "received frames dropped (no fill buffer, RX ring full)") \
	X(xsk_rx_invalid_descs,   "invalid fill ring entries")		\
	X(xsk_tx_invalid_descs,   "invalid TX ring entries")		\
	X(xsk_rx_ring_full,       "of the dropped: RX ring full")		\
	X(xsk_rx_fill_ring_empty, "frames that met an empty fill ring")	\
	X(xsk_tx_ring_empty,      "transmit wakeups with an empty TX ring")

/* Everything `mroce status` reports, gathered once and printed in one of three forms. */
struct mroce_cli_status {
	struct mroce_dp_info	info;
	__u64			stats[MROCE_STAT_MAX];	/* enum mroce_stat */
	struct mroce_cli_totals	tt;
	int			xsk_sockets;	/* AF_XDP sockets found; < 0: not scanned (-errno) */
	struct mroce_dev_stats	xsk;		/* their xsk_* counters, summed */
	__u32			queue_pid[MROCE_MAX_QUEUES];	/* process serving each queue, 0: none */
};

/* `status --json`, built with json-c (names are escaped); NULL without memory. */
struct json_object;
struct json_object *mroce_cli_status_json(const struct mroce_cli_status *st);

/*
 * `status --prometheus`: the Prometheus text exposition format 0.0.4, every
 * sample labelled dev="IFNAME" (escaped as the format says). An exit code.
 */
int mroce_cli_status_prom(FILE *out, const struct mroce_cli_status *st);
/* Print o as one line and release it; an exit code. */
int mroce_cli_print_json(FILE *out, struct json_object *o);

#endif /* MROCE_CLI_H */
