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
}

static const struct {
	const char *line;
	const char *msg;
} bad[] = {
	{ "",					"no command" },
	{ "frobnicate eth0",			"unknown command 'frobnicate'" },
	{ "--bogus attach eth0",		"unknown option '--bogus'" },
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
	for (int e = __MROCE_ERR_START; e < __MROCE_ERR_END; e++) {
		assert_int_equal(mroce_strerror(-e, buf, sizeof(buf)), 0);
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
	struct mroce_cli_totals tt = { .tx_pkts = 1ull << 40, .cc_cuts = 7 };
	__u64 stats[MROCE_STAT_MAX] = { 0 };

	(void)state;
	stats[0] = 18446744073709551615ull;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct mroce_dp_info info = { .ifindex = 3, .prog_id = 9, .udp_port = 4791 };
		struct json_object *o, *v;
		char *buf = NULL, cmd[160];
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len), *py;

		snprintf(info.ifname, sizeof(info.ifname), "%s", names[i]);
		snprintf(info.pin_dir, sizeof(info.pin_dir), "/sys/fs/bpf/mroce/%s", names[i]);
		assert_int_equal(mroce_cli_print_json(out, mroce_cli_status_json(&info, stats, &tt)),
				 MROCE_EXIT_OK);
		fclose(out);
		o = json_tokener_parse(buf);
		if (!o)
			fail_msg("invalid JSON: %s", buf);
		assert_true(json_object_object_get_ex(o, "ifname", &v));
		assert_string_equal(json_object_get_string(v), info.ifname);
		assert_true(json_object_object_get_ex(o, "pin_dir", &v));
		assert_string_equal(json_object_get_string(v), info.pin_dir);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_run_without_root),
		cmocka_unit_test(test_strerror_ranges),
		cmocka_unit_test(test_status_json_escapes),
		cmocka_unit_test(test_attach_not_bpf),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
