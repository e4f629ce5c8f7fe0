// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The mroce tool's commands. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "cli.h"

#ifndef MROCE_TOOL_VERSION
#error "MROCE_TOOL_VERSION is the Makefile's VERSION, passed with -D"
#endif

static const char *mode_name(enum mroce_xdp_mode mode)
{
	return mode == MROCE_XDP_SKB ? "skb" : "native";
}

/* One line per failure: what was tried, on what, and why (plus a hint). */
static int report(FILE *errout, const struct mroce_cli *cli, const char *what, int err)
{
	char msg[128];

	mroce_strerror(err, msg, sizeof(msg));
	if (err == -ENODEV)
		snprintf(msg, sizeof(msg), "no such device");
	else if (err == -EOPNOTSUPP && cli->cmd == MROCE_CLI_ATTACH)
		snprintf(msg, sizeof(msg), "XDP %s mode is not supported by this device%s",
			 mode_name(cli->mode), cli->mode == MROCE_XDP_NATIVE ? " (try --mode skb)" : "");
	else if (err == -ENOENT && cli->obj)
		snprintf(msg, sizeof(msg), "object file '%s' not found", cli->obj);
	else if (err == -MROCE_ERR_FOREIGN_PROG && cli->cmd == MROCE_CLI_ATTACH)
		snprintf(msg, sizeof(msg), "another XDP program is already attached (see 'ip link show %s')",
			 cli->dev);
	else if (err == -EEXIST && cli->cmd == MROCE_CLI_FLOW_ADD)
		snprintf(msg, sizeof(msg), "QPN %u already has a flow", cli->qpn);
	else if (err == -ENOENT && cli->cmd == MROCE_CLI_FLOW_DEL)
		snprintf(msg, sizeof(msg), "QPN %u has no flow", cli->qpn);
	fprintf(errout, "mroce: %s %s: %s%s\n", what, cli->dev, msg,
		err == -EINVAL && !cli->verbose && cli->cmd == MROCE_CLI_ATTACH ?
		" (run with -v for libbpf's log)" : "");
	return MROCE_EXIT_FAIL;
}

static int cmd_attach(const struct mroce_cli *cli, FILE *out, FILE *errout)
{
	MROCE_OPTS(mroce_attach_opts, opts, .mode = cli->mode, .udp_port = cli->port,
		   .obj_path = cli->obj, .pin = cli->pin, .dm_bytes = (__u64)cli->dm_mb << 20);
	int err = mroce_dp_attach(cli->dev, &opts);

	if (err)
		return report(errout, cli, "attach", err);
	fprintf(out, "mroce: attached to %s (%s mode, UDP port %u)\n", cli->dev,
		mode_name(cli->mode), cli->port ? cli->port : MROCE_DEFAULT_PORT);
	return MROCE_EXIT_OK;
}

static int cmd_detach(const struct mroce_cli *cli, FILE *out, FILE *errout)
{
	int err = mroce_dp_detach(cli->dev);

	if (err)
		return report(errout, cli, "detach", err);
	fprintf(out, "mroce: detached from %s\n", cli->dev);
	return MROCE_EXIT_OK;
}

static void transport_totals(struct mroce_dp *dp, struct mroce_cli_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (__u32 q = 1; q < MROCE_MAX_QPS; q++) {
		const struct mroce_flow *f = mroce_dp_flow(dp, q);

		if (__atomic_load_n(&f->state, __ATOMIC_ACQUIRE) != MROCE_FLOW_ACTIVE)
			continue;
#define X(n, d) t->n += f->tx.n;
		MROCE_CLI_TOTALS(X)
#undef X
	}
}

static void put_u64(struct json_object *o, const char *key, __u64 v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void put_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

/* One compact line; the names in it come from the kernel and are escaped. */
int mroce_cli_print_json(FILE *out, struct json_object *o)
{
	const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;

	if (s)
		fprintf(out, "%s\n", s);
	json_object_put(o);
	return s ? MROCE_EXIT_OK : MROCE_EXIT_FAIL;
}

struct json_object *mroce_cli_status_json(const struct mroce_cli_status *st)
{
	const struct mroce_dp_info *info = &st->info;
	const struct mroce_cli_totals *tt = &st->tt;
	struct json_object *o = json_object_new_object(), *c = json_object_new_object(),
			   *t = json_object_new_object(), *x = json_object_new_object();

	if (!o || !c || !t || !x) {
		json_object_put(o);
		json_object_put(c);
		json_object_put(t);
		json_object_put(x);
		return NULL;
	}
	put_str(o, "ifname", info->ifname);
	put_u64(o, "ifindex", info->ifindex);
	put_u64(o, "prog_id", info->prog_id);
	put_str(o, "mode", mode_name(info->mode));
	put_u64(o, "udp_port", info->udp_port);
	put_u64(o, "udp_ports", info->udp_ports);
	put_u64(o, "flows", info->flows);
	put_u64(o, "xdp_places", info->xdp_places);
	put_str(o, "pin_dir", info->pin_dir);
	{
		struct json_object *q = json_object_new_array();

		/* the processes serving receive queues: [{queue, pid}] */
		for (__u32 i = 0; q && i < MROCE_MAX_QUEUES; i++) {
			struct json_object *e;

			if (!st->queue_pid[i] || !(e = json_object_new_object()))
				continue;
			put_u64(e, "queue", i);
			put_u64(e, "pid", st->queue_pid[i]);
			json_object_array_add(q, e);
		}
		if (q)
			json_object_object_add(o, "queues", q);
	}
	for (int s = 0; s < MROCE_STAT_MAX; s++)
		put_u64(c, mroce_stat_name(s), st->stats[s]);
	json_object_object_add(o, "counters", c);
#define X(n, d) put_u64(t, #n, tt->n);
	MROCE_CLI_TOTALS(X)
#undef X
	json_object_object_add(o, "transport", t);
	/* The sockets' counters, when they could be read (see print_xsk_stats). */
	if (st->xsk_sockets >= 0) {
		put_u64(x, "sockets", (__u64)st->xsk_sockets);
#define X(f, d) put_u64(x, #f, st->xsk.f);
		MROCE_CLI_XSK(X)
#undef X
		json_object_object_add(o, "xsk", x);
	} else {
		char why[160];

		json_object_put(x);
		mroce_strerror(st->xsk_sockets, why, sizeof(why));
		put_str(o, "xsk_error", why);	/* why not, e.g. the capability it needs */
	}
	return o;
}

static struct json_object *flow_json(__u32 q, const struct mroce_flow *f, const char *mode,
				     __u32 base)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	put_u64(o, "qpn", q);
	put_u64(o, "peer_qpn", f->peer_qpn);
	put_str(o, "mode", mode);
	put_u64(o, "rx_base", base);
	put_u64(o, "placed", mroce_rxwin_count(f));
	put_u64(o, "tx_pkts", f->tx.tx_pkts);
	put_u64(o, "retx_pkts", f->tx.retx_pkts);
	put_u64(o, "acked_bytes", f->tx.acked_bytes);
	put_u64(o, "ecn_ce", f->tx.ecn_ce);
	put_u64(o, "cc_cuts", f->tx.cc_cuts);
	put_u64(o, "paths_retired", f->tx.paths_retired);
	put_u64(o, "paths", f->tx.paths);
	put_u64(o, "cwnd_pkts", f->tx.cwnd_pkts);
	put_u64(o, "srtt_us", f->tx.srtt_us);
	put_u64(o, "worst_path_srtt_us", f->tx.worst_path_srtt_us);
	return o;
}

/*
 * The AF_XDP sockets' own counters (they live in other processes' sockets);
 * nothing when they could not be scanned (no /proc, no CAP_SYS_PTRACE).
 */
static void print_xsk_stats(FILE *out, const struct mroce_cli_status *st)
{
	char why[160];

	if (st->xsk_sockets < 0) {
		mroce_strerror(st->xsk_sockets, why, sizeof(why));
		fprintf(out, "AF_XDP sockets' kernel counters: not read (%s)\n", why);
		return;
	}
	fprintf(out, "AF_XDP sockets in this network namespace: %d, kernel counters summed:\n",
		st->xsk_sockets);
#define X(f, d) fprintf(out, "  %-22s %12llu  %s\n", #f, (unsigned long long)st->xsk.f, d);
	MROCE_CLI_XSK(X)
#undef X
}

static int cmd_status(const struct mroce_cli *cli, struct mroce_dp *dp, FILE *out, FILE *errout)
{
	struct mroce_cli_status st;
	const struct mroce_dp_info *i = &st.info;
	int err;

	memset(&st, 0, sizeof(st));
	err = mroce_dp_info(dp, &st.info);
	if (!err)
		err = mroce_dp_stats(dp, st.stats);
	if (err)
		return report(errout, cli, "status", err);
	transport_totals(dp, &st.tt);
	for (__u32 q = 0; q < MROCE_MAX_QUEUES; q++) {
		__u32 id;

		mroce_dp_queue_get(dp, q, &id, &st.queue_pid[q]);
		/* a dead process's entry: its socket went with it, the queue is free */
		if (st.queue_pid[q] && kill((pid_t)st.queue_pid[q], 0) && errno == ESRCH)
			st.queue_pid[q] = 0;
	}
	st.xsk_sockets = mroce_xsk_scan_stats(&st.xsk);
	if (cli->json)
		return mroce_cli_print_json(out, mroce_cli_status_json(&st));
	if (cli->prometheus)
		return mroce_cli_status_prom(out, &st);
	fprintf(out, "%s (ifindex %u): prog id %u %s, %s mode, UDP port %u, %u flow%s%s%s\n",
		i->ifname, i->ifindex, i->prog_id, MROCE_PROG_NAME, mode_name(i->mode),
		i->udp_port, i->flows, i->flows == 1 ? "" : "s",
		i->pin_dir[0] ? ", maps pinned in " : "", i->pin_dir);
	fprintf(out, "receive queues: %u, the device on queue q receiving on UDP port %u + q;",
		i->udp_ports, i->udp_port);
	for (__u32 q = 0, any = 0; q < MROCE_MAX_QUEUES; q++) {
		if (st.queue_pid[q])
			fprintf(out, "%s queue %u: pid %u", any++ ? "," : "", q, st.queue_pid[q]);
		if (q + 1 == MROCE_MAX_QUEUES && !any)
			fprintf(out, " none served");
	}
	fputc('\n', out);
	fprintf(out, "device memory: %s\n", i->xdp_places ? "XDP places WRITE payloads" :
		"user space places WRITE payloads (XDP placement off: the kernel refuses "
		"bpf_xdp_adjust_meta, or the object was loaded without libmroce)");
	for (int s = 0; s < MROCE_STAT_MAX; s++)
		fprintf(out, "  %-14s %12llu  %s\n", mroce_stat_name(s),
			(unsigned long long)st.stats[s], mroce_stat_desc(s));
	fprintf(out, "transport, summed over the active flows:\n");
#define X(n, d) fprintf(out, "  %-14s %12llu  %s\n", #n, (unsigned long long)st.tt.n, d);
	MROCE_CLI_TOTALS(X)
#undef X
	print_xsk_stats(out, &st);
	return MROCE_EXIT_OK;
}

static int cmd_flows(const struct mroce_cli *cli, struct mroce_dp *dp, FILE *out)
{
	struct json_object *arr = NULL;

	if (cli->json && !(arr = json_object_new_array()))
		return MROCE_EXIT_FAIL;
	if (!cli->json)
		fprintf(out, "%6s %10s %5s %10s %7s %10s %8s %10s %8s %6s %6s %5s %8s %8s\n", "qpn",
			"peer_qpn", "mode", "rx_base", "placed", "tx_pkts", "retx", "acked_MiB", "ecn_ce",
			"cuts", "retire", "cwnd", "srtt_us", "worst_us");
	for (__u32 q = 1; q < MROCE_MAX_QPS; q++) {
		const struct mroce_flow *f = mroce_dp_flow(dp, q);
		const char *mode;
		__u32 base;

		if (__atomic_load_n(&f->state, __ATOMIC_ACQUIRE) != MROCE_FLOW_ACTIVE)
			continue;
		mode = f->flags & MROCE_FLOW_GO_BACK_N ? "gbn" : "sack";
		base = __atomic_load_n(&f->rx_base, __ATOMIC_ACQUIRE);
		if (cli->json)
			json_object_array_add(arr, flow_json(q, f, mode, base));
		else
			fprintf(out, "%6u %10u %5s %10u %7u %10llu %8llu %10.1f %8llu %6u %6u %5u %8u %8u\n",
				q, f->peer_qpn, mode, base, mroce_rxwin_count(f),
				(unsigned long long)f->tx.tx_pkts, (unsigned long long)f->tx.retx_pkts,
				(double)f->tx.acked_bytes / (1 << 20), (unsigned long long)f->tx.ecn_ce,
				f->tx.cc_cuts, f->tx.paths_retired, f->tx.cwnd_pkts, f->tx.srtt_us,
				f->tx.worst_path_srtt_us);
	}
	return cli->json ? mroce_cli_print_json(out, arr) : MROCE_EXIT_OK;
}

static int cmd_flow(const struct mroce_cli *cli, struct mroce_dp *dp, FILE *out, FILE *errout)
{
	int err;

	if (cli->cmd == MROCE_CLI_FLOW_ADD) {
		MROCE_OPTS(mroce_flow_cfg, cfg, .token = cli->token, .rx_psn = cli->psn,
			   .peer_qpn = cli->peer_qpn,
			   .flags = cli->go_back_n ? MROCE_FLOW_GO_BACK_N : 0);

		err = mroce_dp_flow_add(dp, cli->qpn, &cfg);
		if (err)
			return report(errout, cli, "flow add", err);
		fprintf(out, "mroce: flow for QPN %u on %s, first PSN %u\n", cli->qpn, cli->dev, cli->psn);
		return MROCE_EXIT_OK;
	}
	err = mroce_dp_flow_del(dp, cli->qpn);
	if (err)
		return report(errout, cli, "flow del", err);
	fprintf(out, "mroce: removed flow for QPN %u on %s\n", cli->qpn, cli->dev);
	return MROCE_EXIT_OK;
}

int mroce_cli_run(const struct mroce_cli *cli, FILE *out, FILE *errout)
{
	struct mroce_dp *dp;
	int err, rc;

	switch (cli->cmd) {
	case MROCE_CLI_HELP:
		fputs(mroce_cli_usage, out);
		return MROCE_EXIT_OK;
	case MROCE_CLI_VERSION:
		fprintf(out, "mroce %s (wire protocol version %d)\n", MROCE_TOOL_VERSION, MROCE_VERSION);
		return MROCE_EXIT_OK;
	case MROCE_CLI_ATTACH:
		return cmd_attach(cli, out, errout);
	case MROCE_CLI_DETACH:
		return cmd_detach(cli, out, errout);
	default:
		break;
	}
	err = mroce_dp_open(cli->dev, &dp);
	if (err)
		return report(errout, cli, cli->cmd == MROCE_CLI_STATUS ? "status" :
			      cli->cmd == MROCE_CLI_FLOWS ? "flows" : "flow", err);
	if (cli->cmd == MROCE_CLI_STATUS)
		rc = cmd_status(cli, dp, out, errout);
	else if (cli->cmd == MROCE_CLI_FLOWS)
		rc = cmd_flows(cli, dp, out);
	else
		rc = cmd_flow(cli, dp, out, errout);
	mroce_dp_close(dp);
	return rc;
}
