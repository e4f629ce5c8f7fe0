// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The mroce tool's command line: what it accepts and the one-line errors it gives. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sched.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>
#include <cmocka.h>

#include "cli.h"

static int parse(struct mroce_cli *cli, char *err, const char *line)
{
	static char copy[512];	/* cli keeps pointers into argv */
	char *argv[32];
	int argc = 0;

	snprintf(copy, sizeof(copy), "mroce %s", line);
	for (char *t = strtok(copy, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return mroce_cli_parse(argc, argv, cli, err, 256);
}

static void test_accepts(void **state)
{
	struct mroce_cli cli;
	char err[256];

	(void)state;
	assert_int_equal(parse(&cli, err, "attach eth0"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_ATTACH);
	assert_string_equal(cli.dev, "eth0");
	assert_int_equal(cli.mode, MROCE_XDP_NATIVE);
	assert_int_equal(cli.port, 0);

	assert_int_equal(parse(&cli, err, "-v attach veth1 --mode skb --port=5000 --obj x.o --pin"), 0);
	assert_true(cli.verbose);
	assert_int_equal(cli.mode, MROCE_XDP_SKB);
	assert_int_equal(cli.port, 5000);
	assert_int_equal(cli.dm_mb, 0);
	assert_string_equal(cli.obj, "x.o");
	assert_true(cli.pin);
	assert_int_equal(parse(&cli, err, "attach veth1 --dm-mb 64"), 0);
	assert_int_equal(cli.dm_mb, 64);

	assert_int_equal(parse(&cli, err, "status veth1 --json"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_STATUS);
	assert_true(cli.json);
	assert_false(cli.prometheus);
	assert_int_equal(parse(&cli, err, "status veth1 --prometheus"), 0);
	assert_true(cli.prometheus);
	assert_false(cli.json);

	assert_int_equal(parse(&cli, err, "flow add veth1 12 --token 0xABCDEF --psn 0xffffffff --peer-qpn 3 --go-back-n"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_FLOW_ADD);
	assert_int_equal(cli.qpn, 12);
	assert_int_equal(cli.token, 0xabcdef);
	assert_int_equal(cli.psn, 0xffffffffu);
	assert_int_equal(cli.peer_qpn, 3);
	assert_true(cli.go_back_n);

	assert_int_equal(parse(&cli, err, "flow del veth1 1023"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_FLOW_DEL);
	assert_int_equal(parse(&cli, err, "--help"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_HELP);
	assert_int_equal(parse(&cli, err, "--version"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_VERSION);
	/* -h, -V and -v, as the other tools take them: before or after the command */
	assert_int_equal(parse(&cli, err, "-V"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_VERSION);
	assert_int_equal(parse(&cli, err, "status eth0 -V"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_VERSION);
	assert_int_equal(parse(&cli, err, "attach --version"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_VERSION);
	assert_int_equal(parse(&cli, err, "attach eth0 -h"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_HELP);
	assert_int_equal(parse(&cli, err, "flow add -h"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_HELP);
	assert_int_equal(parse(&cli, err, "attach -v eth0 --mode skb"), 0);
	assert_int_equal(cli.cmd, MROCE_CLI_ATTACH);
	assert_true(cli.verbose);
	assert_string_equal(cli.dev, "eth0");
}

static const struct {
	const char *line;
	const char *msg;
} bad[] = {
	{ "",					"no command" },
	{ "frobnicate eth0",			"unknown command 'frobnicate'" },
	{ "--bogus attach eth0",		"unknown option '--bogus'" },
	{ "-q attach eth0",			"unknown option '-q'" },
	{ "attach -x eth0",			"unknown option '-x'" },	/* not taken for DEV */
	{ "attach eth0 -zz X",			"unknown option '-zz'" },
	{ "flow add eth0 5 --token 1 -p 3",	"unknown option '-p'" },
	{ "flow add eth0 -5 --token 1",		"QPN must be 1-1023, not '-5'" },
	{ "attach",				"needs a device" },
	{ "attach eth0 eth1",			"unexpected argument 'eth1'" },
	{ "attach eth0 --mode turbo",		"--mode must be native or skb" },
	{ "attach eth0 --mode",			"needs a value" },
	{ "attach eth0 --port 0",		"--port must be" },
	{ "attach eth0 --dm-mb 3",		"--dm-mb must be 4-65536" },
	{ "attach eth0 --dm-mb 65537",		"--dm-mb must be 4-65536" },
	{ "status eth0 --dm-mb 64",		"not valid for 'status'" },
	{ "attach eth0 --port 65536",		"--port must be" },
	{ "attach eth0 --port 12ab",		"--port must be" },
	{ "attach eth0 --port -1",		"--port must be" },
	{ "attach eth0 --json",			"not valid for 'attach'" },
	{ "attach eth0 --pin=yes",		"takes no value" },
	{ "attach averyveryverylongifname",	"not a valid interface name" },
	{ "status eth0 --mode skb",		"not valid for 'status'" },
	{ "detach",				"needs a device" },
	{ "flow eth0",				"needs 'add' or 'del'" },
	{ "flow add eth0 --token 1",		"needs a QPN" },
	{ "flow add eth0 0 --token 1",		"QPN must be 1-1023" },
	{ "flow add eth0 1024 --token 1",	"QPN must be 1-1023" },
	{ "flow add eth0 5",			"needs --token" },
	{ "flow add eth0 5 --token xyz",	"--token must be" },
	{ "flow add eth0 5 --token 1ffffffffffffffff", "--token must be" },
	{ "flow add eth0 5 --token 1 --psn 4294967296", "--psn must be" },
	{ "flow del eth0 5 --token 1",		"not valid for 'flow'" },
	{ "status eth0 --json --prometheus",	"--json and --prometheus exclude each other" },
	{ "flows eth0 --prometheus",		"not valid for 'flows'" },
	{ "status eth0 --prometheus=1",		"takes no value" },
};

static void test_rejects(void **state)
{
	struct mroce_cli cli;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(&cli, err, bad[i].line) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i].line);
		if (!strstr(err, bad[i].msg))
			fail_msg("'%s': error '%s' lacks '%s'", bad[i].line, err, bad[i].msg);
		assert_null(strchr(err, '\n'));
		if (strstr(err, "--help"))	/* main adds the one pointer to --help */
			fail_msg("'%s': error '%s' carries its own --help hint", bad[i].line, err);
	}
}

/* Commands that need no kernel access produce their text and exit code. */
static void test_run_without_root(void **state)
{
	struct mroce_cli cli;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(parse(&cli, err, "--help"), 0);
	assert_int_equal(mroce_cli_run(&cli, out, out), MROCE_EXIT_OK);
	fflush(out);
	assert_non_null(strstr(buf, "attach DEV"));
	assert_int_equal(parse(&cli, err, "attach nosuchdev0"), 0);
	assert_int_equal(mroce_cli_run(&cli, out, out), MROCE_EXIT_FAIL);
	fflush(out);
	assert_non_null(strstr(buf, "mroce: attach nosuchdev0: no such device"));
	assert_int_equal(parse(&cli, err, "status nosuchdev0"), 0);
	assert_int_equal(mroce_cli_run(&cli, out, out), MROCE_EXIT_FAIL);
	fflush(out);
	assert_non_null(strstr(buf, "mroce: status nosuchdev0: no such device"));
	fclose(out);
	free(buf);
}

/* libbpf's codes get libbpf's text, mroce's its own, and the ranges are apart
 * (libxdp's start at 5000). */
static void test_strerror_ranges(void **state)
{
	static const char *const mine[] = {
		[MROCE_ERR_NOT_ATTACHED - __MROCE_ERR_START] = "not attached",
		[MROCE_ERR_FOREIGN_PROG - __MROCE_ERR_START] = "another XDP program",
		[MROCE_ERR_BAD_OBJ - __MROCE_ERR_START] = "does not hold a matching mroce program",
		[MROCE_ERR_ATTACHED - __MROCE_ERR_START] = "already attached",
		[MROCE_ERR_VERSION - __MROCE_ERR_START] = "another MetaRoCE wire protocol version",
		[MROCE_ERR_STREAMS - __MROCE_ERR_START] = "another number of ordered streams",
		[MROCE_ERR_PEER_ADDR - __MROCE_ERR_START] = "address other than the connection's",
		[MROCE_ERR_CAP_NET_ADMIN - __MROCE_ERR_START] = "needs CAP_NET_ADMIN",
		[MROCE_ERR_CAP_BPF - __MROCE_ERR_START] = "needs CAP_BPF",
		[MROCE_ERR_CAP_PERFMON - __MROCE_ERR_START] = "needs CAP_PERFMON",
		[MROCE_ERR_CAP_SYS_ADMIN - __MROCE_ERR_START] = "needs CAP_SYS_ADMIN",
		[MROCE_ERR_CAP_NET_RAW - __MROCE_ERR_START] = "needs CAP_NET_RAW",
		[MROCE_ERR_MEMLOCK - __MROCE_ERR_START] = "needs CAP_IPC_LOCK",
		[MROCE_ERR_CAP_SYS_PTRACE - __MROCE_ERR_START] = "needs CAP_SYS_PTRACE",
		[MROCE_ERR_QUEUES_BUSY - __MROCE_ERR_START] = "taken by other processes",
	};
	char buf[128], want[128];

	(void)state;
	assert_true((int)__MROCE_ERR_START >= (int)__LIBBPF_ERRNO__END);
	assert_true(__MROCE_ERR_END <= 5000);
	for (int e = __LIBBPF_ERRNO__START; e < __LIBBPF_ERRNO__END; e++) {
		libbpf_strerror(e, want, sizeof(want));
		assert_int_equal(mroce_strerror(-e, buf, sizeof(buf)), 0);
		assert_string_equal(buf, want);
		assert_null(strstr(buf, "mroce"));
	}
	assert_int_equal(sizeof(mine) / sizeof(mine[0]), __MROCE_ERR_END - __MROCE_ERR_START);
	for (int e = __MROCE_ERR_START; e < __MROCE_ERR_END; e++) {
		assert_int_equal(mroce_strerror(-e, buf, sizeof(buf)), 0);
		/* whole in the tools' buffers (128 bytes; the NCCL plugin's 96) */
		assert_true(strlen(buf) < 90);
		if (!strstr(buf, mine[e - __MROCE_ERR_START]))
			fail_msg("%d: '%s' lacks '%s'", e, buf, mine[e - __MROCE_ERR_START]);
	}
}

/* A file that is not a BPF object says so, not that a program is attached.
 * As root it runs in a network namespace of its own (a clean lo). */
static void test_attach_not_bpf(void **state)
{
	struct mroce_cli cli;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *out;
	int rc;

	(void)state;
	if (!geteuid())
		assert_int_equal(unshare(CLONE_NEWNET), 0);
	out = open_memstream(&buf, &len);
	assert_int_equal(parse(&cli, err, "attach lo --mode skb --obj /etc/passwd"), 0);
	rc = mroce_cli_run(&cli, out, out);
	fclose(out);
	if (geteuid() && strstr(buf, "not permitted")) {
		free(buf);
		skip();
	}
	assert_int_equal(rc, MROCE_EXIT_FAIL);
	if (strstr(buf, "another XDP program") || !strstr(buf, "mroce: attach lo: ") ||
	    !strstr(buf, "BPF object format invalid"))
		fail_msg("unexpected message: %s", buf);
	free(buf);
}

/* Interface names may hold quotes, backslashes, control bytes and UTF-8:
 * the JSON stays valid and parses back (json-c and Python) to the same name. */
static void test_status_json_escapes(void **state)
{
	static const char *const names[] = { "q\"x\\y", "\"\\\b\x01\x1f\x7f", "caf\xc3\xa9\t\n\"}", "" };
	static struct mroce_cli_status st = {
		.info = { .ifindex = 3, .prog_id = 9, .udp_port = 4791 },
		.tt = { .tx_pkts = 1ull << 40, .cc_cuts = 7 },
		.xsk_sockets = 2, .xsk = { .xsk_rx_dropped = 11, .xsk_tx_ring_empty = 5 },
	};
	struct mroce_dp_info *info = &st.info;

	(void)state;
	st.stats[0] = 18446744073709551615ull;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct json_object *o, *v, *x;
		char *buf = NULL, cmd[160];
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len), *py;

		snprintf(info->ifname, sizeof(info->ifname), "%s", names[i]);
		snprintf(info->pin_dir, sizeof(info->pin_dir), "/sys/fs/bpf/mroce/%s", names[i]);
		assert_int_equal(mroce_cli_print_json(out, mroce_cli_status_json(&st)), MROCE_EXIT_OK);
		fclose(out);
		o = json_tokener_parse(buf);
		if (!o)
			fail_msg("invalid JSON: %s", buf);
		assert_true(json_object_object_get_ex(o, "ifname", &v));
		assert_string_equal(json_object_get_string(v), info->ifname);
		assert_true(json_object_object_get_ex(o, "pin_dir", &v));
		assert_string_equal(json_object_get_string(v), info->pin_dir);
		/* who places device-memory WRITEs, a number as the counters are (0 here) */
		assert_true(json_object_object_get_ex(o, "xdp_places", &v));
		assert_true(json_object_is_type(v, json_type_int));
		assert_int_equal(json_object_get_uint64(v), 0);
		assert_true(json_object_object_get_ex(o, "counters", &v));
		assert_true(json_object_object_get_ex(v, "pass", &v));
		assert_true(json_object_get_uint64(v) == 18446744073709551615ull);
		assert_true(json_object_object_get_ex(o, "xsk", &x));
		assert_true(json_object_object_get_ex(x, "sockets", &v));
		assert_int_equal(json_object_get_uint64(v), 2);
		assert_true(json_object_object_get_ex(x, "xsk_rx_dropped", &v));
		assert_int_equal(json_object_get_uint64(v), 11);
		assert_true(json_object_object_get_ex(x, "xsk_tx_ring_empty", &v));
		assert_int_equal(json_object_get_uint64(v), 5);
		assert_true(json_object_object_get_ex(o, "transport", &v));
		assert_true(json_object_object_get_ex(v, "tx_pkts", &v));
		assert_true(json_object_get_uint64(v) == 1ull << 40);
		json_object_put(o);
		/* A second, independent parser, when there is one. */
		snprintf(cmd, sizeof(cmd), "python3 -c 'import json,sys; "
			 "sys.stdout.write(json.load(sys.stdin)[\"ifname\"])' >/dev/null");
		py = popen(cmd, "w");
		if (py) {
			fputs(buf, py);
			assert_int_equal(pclose(py), 0);
		}
		free(buf);
	}
}

/* With no AF_XDP socket scan (xsk_sockets < 0) the JSON has no "xsk" object. */
static void test_status_json_no_xsk(void **state)
{
	struct mroce_cli_status st = { .info = { .ifname = "eth0" }, .xsk_sockets = -EPERM };
	struct json_object *o = mroce_cli_status_json(&st), *v;

	(void)state;
	assert_non_null(o);
	assert_false(json_object_object_get_ex(o, "xsk", &v));
	assert_true(json_object_object_get_ex(o, "counters", &v));
	assert_int_equal(json_object_object_length(v), MROCE_STAT_MAX);
	json_object_put(o);
}

/*
 * Undo the exposition format's label escaping (\\, \", \n) of the value that
 * starts after dev=" in line; NULL if it is malformed (an unknown escape, a
 * raw newline, no closing quote). *end: just past the closing quote.
 */
static char *prom_label(const char *line, const char **end)
{
	const char *p = strstr(line, "{dev=\"");
	static char v[64];
	size_t n = 0;

	if (!p || memchr(line, '\n', (size_t)(p - line)))
		return NULL;	/* not on this line */
	for (p += 6; *p && *p != '"' && n < sizeof(v) - 1; p++) {
		if (*p == '\n')
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'n')
				v[n++] = '\n';
			else if (*p == '\\' || *p == '"')
				v[n++] = *p;
			else
				return NULL;
		} else {
			v[n++] = *p;
		}
	}
	if (*p != '"')
		return NULL;
	v[n] = '\0';
	*end = p + 1;
	return v;
}

/* The sample line of metric name: "name{dev=..." at a line start, or NULL. */
static const char *prom_sample(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == '{')
			return l;
	return NULL;
}

/*
 * `status --prometheus` for awkward interface names (quote, backslash,
 * control bytes, UTF-8, a newline): every line is HELP, TYPE or a sample;
 * each counter's family says its type and description, its sample carries
 * the name (unescaped it is the interface's) and the right value. A second,
 * independent parser (Python's prometheus_client) reads the same text.
 */
static void test_status_prometheus(void **state)
{
	static const char *const names[] = { "q\"x\\y", "\"\\\b\x01\x1f\x7f", "caf\xc3\xa9\t\n\"}", "" };
	static struct mroce_cli_status st = {
		.info = { .ifindex = 3, .prog_id = 9, .udp_port = 4791, .flows = 4,
			  .mode = MROCE_XDP_SKB, .xdp_places = 1 },
		.tt = { .tx_pkts = 1ull << 40, .cc_cuts = 7 },
		.xsk_sockets = 2, .xsk = { .xsk_rx_dropped = 11, .xsk_tx_ring_empty = 5 },
	};

	(void)state;
	for (int s = 0; s < MROCE_STAT_MAX; s++)
		st.stats[s] = 1000u * (unsigned)s + 7;
	st.stats[MROCE_STAT_PASS] = 18446744073709551615ull;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *buf = NULL, name[64], want[512], hex[64] = "", cmd[900];
		const char *l, *end, *v;
		size_t len = 0, samples = 0;
		FILE *out = open_memstream(&buf, &len), *py;
		int rc;

		snprintf(st.info.ifname, sizeof(st.info.ifname), "%s", names[i]);
		assert_int_equal(mroce_cli_status_prom(out, &st), MROCE_EXIT_OK);
		fclose(out);
		assert_true(len > 0 && buf[len - 1] == '\n');
		for (l = buf; *l; l = strchr(l, '\n') + 1) {
			if (!strncmp(l, "# HELP mroce_", 13) || !strncmp(l, "# TYPE mroce_", 13))
				continue;
			if (strncmp(l, "mroce_", 6) || !(v = prom_label(l, &end)))
				fail_msg("name %zu: bad line: %.*s", i, (int)strcspn(l, "\n"), l);
			assert_string_equal(v, st.info.ifname);
			samples++;
		}
		assert_int_equal(samples, 3 + MROCE_STAT_MAX + 6 + 1 + 6);
		for (int s = 0; s < MROCE_STAT_MAX; s++) {
			snprintf(name, sizeof(name), "mroce_xdp_%s_total", mroce_stat_name(s));
			snprintf(want, sizeof(want), "# HELP %s %s\n# TYPE %s counter\n%s{", name,
				 mroce_stat_desc(s), name, name);
			if (!strstr(buf, want))
				fail_msg("no HELP/TYPE for %s", name);
			l = prom_sample(buf, name);
			assert_non_null(l);
			assert_non_null(prom_label(l, &end));
			snprintf(want, sizeof(want), "} %llu\n", (unsigned long long)st.stats[s]);
			assert_memory_equal(end, want, strlen(want));
		}
		l = prom_sample(buf, "mroce_xdp_rx_total");
		assert_non_null(l);
		assert_non_null(prom_label(l, &end));
		assert_memory_equal(end, "} 1007\n", 7);
		assert_non_null(l = prom_sample(buf, "mroce_xsk_rx_dropped"));
		assert_non_null(prom_label(l, &end));
		assert_memory_equal(end, "} 11\n", 5);
		assert_non_null(l = prom_sample(buf, "mroce_xdp_places"));	/* who places device memory */
		assert_non_null(prom_label(l, &end));
		assert_memory_equal(end, "} 1\n", 4);
		assert_non_null(l = prom_sample(buf, "mroce_xdp_attached_info"));
		assert_non_null(strstr(l, "\",mode=\"skb\",prog_id=\"9\",udp_port=\"4791\"} 1\n"));
		assert_non_null(strstr(buf, "# TYPE mroce_transport_tx_pkts gauge\n"));

		/* The second parser: Debian's python3-prometheus-client (scripts/deps.sh). */
		for (size_t k = 0; names[i][k]; k++)
			snprintf(hex + 2 * k, 3, "%02x", (unsigned char)names[i][k]);
		snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c '\n"
			 "import sys\n"
			 "try:\n"
			 "    from prometheus_client.parser import text_string_to_metric_families as p\n"
			 "except ImportError:\n"
			 "    sys.exit(77)\n"
			 "dev = bytes.fromhex(sys.argv[1]).decode(\"utf-8\", \"surrogateescape\")\n"
			 "got = {s.name: s for f in p(sys.stdin.read()) for s in f.samples}\n"
			 "rx = got[\"mroce_xdp_rx_total\"]\n"
			 "ok = rx.labels[\"dev\"] == dev and rx.value == 1007 and len(got) == %d\n"
			 "ok = ok and got[\"mroce_xsk_rx_dropped\"].value == 11\n"
			 "sys.exit(0 if ok else 1)' '%s'", 3 + MROCE_STAT_MAX + 6 + 1 + 6, hex);
		py = popen(cmd, "w");
		assert_non_null(py);
		fputs(buf, py);
		rc = pclose(py);
		if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77)
			print_message("python3-prometheus-client missing: second parser not run\n");
		else if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
			fail_msg("name %zu: prometheus_client rejected or misread:\n%s", i, buf);
		free(buf);
	}
}

/*
 * --help and --version print to the output stream, not the error stream,
 * and succeed; the version is the Makefile's and the header's.
 */
static void test_help_version(void **state)
{
	struct mroce_cli cli;
	char err[256], *o = NULL, *e = NULL;
	size_t olen = 0, elen = 0;
	FILE *out, *errout;

	(void)state;
	assert_string_equal(MROCE_TOOL_VERSION, MROCE_VERSION_STRING);
	assert_int_equal(parse(&cli, err, "--version"), 0);
	out = open_memstream(&o, &olen);
	errout = open_memstream(&e, &elen);
	assert_int_equal(mroce_cli_run(&cli, out, errout), MROCE_EXIT_OK);
	fclose(out);
	fclose(errout);
	assert_string_equal(o, "mroce " MROCE_TOOL_VERSION " (wire protocol version 2)\n");
	assert_int_equal(elen, 0);
	free(o);
	free(e);
	for (int k = 0; k < 3; k++) {
		o = e = NULL;
		assert_int_equal(parse(&cli, err, k == 0 ? "--help" : k == 1 ? "-h" :
				       "status eth0 --help"), 0);
		assert_int_equal(cli.cmd, MROCE_CLI_HELP);
		out = open_memstream(&o, &olen);
		errout = open_memstream(&e, &elen);
		assert_int_equal(mroce_cli_run(&cli, out, errout), MROCE_EXIT_OK);
		fclose(out);
		fclose(errout);
		assert_string_equal(o, mroce_cli_usage);
		assert_non_null(strstr(o, "status DEV [--json | --prometheus]"));
		assert_int_equal(elen, 0);
		free(o);
		free(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_run_without_root),
		cmocka_unit_test(test_strerror_ranges),
		cmocka_unit_test(test_status_json_escapes),
		cmocka_unit_test(test_status_json_no_xsk),
		cmocka_unit_test(test_status_prometheus),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_attach_not_bpf),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
