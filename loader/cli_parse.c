// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Command line parsing for the mroce tool, table-driven. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char mroce_cli_usage[] =
"Usage: mroce [-v] COMMAND DEV [OPTIONS]\n"
"\n"
"  attach DEV [--mode native|skb] [--port N] [--obj FILE] [--pin] [--dm-mb N]\n"
"                      attach the MetaRoCE XDP datapath (default: native mode,\n"
"                      UDP port 4792, the object built into the tool, a device\n"
"                      memory pool of 256 MiB: --dm-mb 4-65536, in 4 MiB chunks)\n"
"  detach DEV          detach it; never touches another XDP program\n"
"  status DEV [--json | --prometheus]\n"
"                      program, mode, port, flows, drop counters and the AF_XDP\n"
"                      sockets' kernel counters (--prometheus: text exposition)\n"
"  flows DEV [--json]  active flows: receive windows and transport counters\n"
"  flow add DEV QPN --token HEX [--psn N] [--peer-qpn N] [--go-back-n]\n"
"  flow del DEV QPN    add or remove a flow by hand (tests, debugging)\n"
"\n"
"  -v, --verbose       show libbpf's and libxdp's log\n"
"  -h, --help          this text;  -V, --version  the version\n"
"\n"
"Exit status: 0 success, 1 the operation failed, 2 bad command line.\n"
"The whole description: man 8 mroce; the library: man 7 libmroce\n";

enum opt_id { OPT_MODE, OPT_PORT, OPT_OBJ, OPT_PIN, OPT_JSON, OPT_TOKEN, OPT_PSN,
	      OPT_PEER_QPN, OPT_GBN, OPT_DM_MB, OPT_PROM };

#define CMD(c) (1u << (c))

static const struct {
	const char	*name;
	enum opt_id	id;
	bool		has_arg;
	unsigned int	cmds;	/* commands that accept it */
} opts[] = {
	{ "mode",	OPT_MODE,	true,  CMD(MROCE_CLI_ATTACH) },
	{ "port",	OPT_PORT,	true,  CMD(MROCE_CLI_ATTACH) },
	{ "obj",	OPT_OBJ,	true,  CMD(MROCE_CLI_ATTACH) },
	{ "pin",	OPT_PIN,	false, CMD(MROCE_CLI_ATTACH) },
	{ "dm-mb",	OPT_DM_MB,	true,  CMD(MROCE_CLI_ATTACH) },
	{ "json",	OPT_JSON,	false, CMD(MROCE_CLI_STATUS) | CMD(MROCE_CLI_FLOWS) },
	{ "prometheus",	OPT_PROM,	false, CMD(MROCE_CLI_STATUS) },
	{ "token",	OPT_TOKEN,	true,  CMD(MROCE_CLI_FLOW_ADD) },
	{ "psn",	OPT_PSN,	true,  CMD(MROCE_CLI_FLOW_ADD) },
	{ "peer-qpn",	OPT_PEER_QPN,	true,  CMD(MROCE_CLI_FLOW_ADD) },
	{ "go-back-n",	OPT_GBN,	false, CMD(MROCE_CLI_FLOW_ADD) },
};

static const struct {
	const char		*name;
	const char		*sub;		/* second word, or NULL */
	enum mroce_cli_cmd	cmd;
	int			positionals;	/* DEV [QPN] */
} cmds[] = {
	{ "attach", NULL,  MROCE_CLI_ATTACH,   1 },
	{ "detach", NULL,  MROCE_CLI_DETACH,   1 },
	{ "status", NULL,  MROCE_CLI_STATUS,   1 },
	{ "flows",  NULL,  MROCE_CLI_FLOWS,    1 },
	{ "flow",   "add", MROCE_CLI_FLOW_ADD, 2 },
	{ "flow",   "del", MROCE_CLI_FLOW_DEL, 2 },
};

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Whole-string unsigned number in [min, max]; base 0 accepts 0x.. too. */
static int parse_u64(const char *s, int base, unsigned long long min, unsigned long long max,
		     unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int set_opt(struct mroce_cli *cli, enum opt_id id, const char *name, const char *val,
		   char *err, size_t len)
{
	unsigned long long v;

	switch (id) {
	case OPT_MODE:
		if (!strcmp(val, "native") || !strcmp(val, "drv"))
			cli->mode = MROCE_XDP_NATIVE;
		else if (!strcmp(val, "skb") || !strcmp(val, "generic"))
			cli->mode = MROCE_XDP_SKB;
		else
			return fail(err, len, "--mode must be native or skb, not '%s'", val);
		return 0;
	case OPT_PORT:
		if (parse_u64(val, 10, 1, 65535, &v))
			return fail(err, len, "--port must be a UDP port 1-65535, not '%s'", val);
		cli->port = (__u16)v;
		return 0;
	case OPT_DM_MB:
		if (parse_u64(val, 10, 4, 65536, &v))
			return fail(err, len, "--dm-mb must be 4-65536 (MiB of device memory), not '%s'", val);
		cli->dm_mb = (__u32)v;
		return 0;
	case OPT_OBJ:
		if (!*val)
			return fail(err, len, "--obj needs a file name");
		cli->obj = val;
		return 0;
	case OPT_TOKEN:
		if (parse_u64(val, 16, 0, ULLONG_MAX, &v) || strlen(val) > 18)
			return fail(err, len, "--token must be a 64-bit hex number, not '%s'", val);
		cli->token = v;
		return 0;
	case OPT_PSN:
		if (parse_u64(val, 0, 0, UINT32_MAX, &v))
			return fail(err, len, "--psn must be 0-4294967295, not '%s'", val);
		cli->psn = (__u32)v;
		return 0;
	case OPT_PEER_QPN:
		if (parse_u64(val, 0, 0, UINT32_MAX, &v))
			return fail(err, len, "--peer-qpn must be a 32-bit number, not '%s'", val);
		cli->peer_qpn = (__u32)v;
		return 0;
	case OPT_PIN:
		cli->pin = true;
		return 0;
	case OPT_JSON:
		cli->json = true;
		return 0;
	case OPT_PROM:
		cli->prometheus = true;
		return 0;
	case OPT_GBN:
		cli->go_back_n = true;
		return 0;
	}
	return fail(err, len, "unhandled option --%s", name);
}

int mroce_cli_parse(int argc, char **argv, struct mroce_cli *cli, char *err, size_t len)
{
	const char *pos[2] = { NULL, NULL };
	bool token_set = false;
	int i = 1, npos = 0, want = 0;
	size_t c;

	memset(cli, 0, sizeof(*cli));
	err[0] = '\0';
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			cli->verbose = true;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return cli->cmd = MROCE_CLI_HELP, 0;
		else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version"))
			return cli->cmd = MROCE_CLI_VERSION, 0;
		else
			return fail(err, len, "unknown option '%s'", argv[i]);
	}
	if (i >= argc)
		return fail(err, len, "no command given");

	for (c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		if (strcmp(argv[i], cmds[c].name))
			continue;
		if (!cmds[c].sub)
			break;
		if (i + 1 < argc && !strcmp(argv[i + 1], cmds[c].sub))
			break;
	}
	if (c == sizeof(cmds) / sizeof(cmds[0])) {
		if (!strcmp(argv[i], "flow"))
			return fail(err, len, "'flow' needs 'add' or 'del'");
		if (!strcmp(argv[i], "help"))
			return cli->cmd = MROCE_CLI_HELP, 0;
		return fail(err, len, "unknown command '%s'", argv[i]);
	}
	cli->cmd = cmds[c].cmd;
	want = cmds[c].positionals;
	i += cmds[c].sub ? 2 : 1;

	for (; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq;
		size_t o, nlen;

		/* -h, -V and -v mean what they mean before the command, anywhere */
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return cli->cmd = MROCE_CLI_HELP, 0;
		if (!strcmp(a, "--version") || !strcmp(a, "-V"))
			return cli->cmd = MROCE_CLI_VERSION, 0;
		if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			cli->verbose = true;
			continue;
		}
		/* no short options but those; -5 is a (bad) number, not an option */
		if (a[0] == '-' && a[1] != '-' && a[1] && !isdigit((unsigned char)a[1]))
			return fail(err, len, "unknown option '%s'", a);
		if (strncmp(a, "--", 2) || !a[2]) {
			if (npos >= want)
				return fail(err, len, "unexpected argument '%s'", a);
			pos[npos++] = a;
			continue;
		}
		a += 2;
		eq = strchr(a, '=');
		nlen = eq ? (size_t)(eq - a) : strlen(a);
		for (o = 0; o < sizeof(opts) / sizeof(opts[0]); o++)
			if (strlen(opts[o].name) == nlen && !strncmp(opts[o].name, a, nlen))
				break;
		if (o == sizeof(opts) / sizeof(opts[0]) || !(opts[o].cmds & CMD(cli->cmd)))
			return fail(err, len, "option '--%.*s' is not valid for '%s'",
				    (int)nlen, a, cmds[c].sub ? "flow" : cmds[c].name);
		if (opts[o].has_arg) {
			if (eq)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				return fail(err, len, "option '--%s' needs a value", opts[o].name);
		} else if (eq) {
			return fail(err, len, "option '--%s' takes no value", opts[o].name);
		}
		if (set_opt(cli, opts[o].id, opts[o].name, val, err, len))
			return -EINVAL;
		token_set |= opts[o].id == OPT_TOKEN;
	}

	if (npos < 1)
		return fail(err, len, "'%s' needs a device name", cmds[c].name);
	if (strlen(pos[0]) >= 16 || !*pos[0])
		return fail(err, len, "'%s' is not a valid interface name", pos[0]);
	cli->dev = pos[0];
	if (want == 2) {
		unsigned long long v;

		if (npos < 2)
			return fail(err, len, "'flow %s' needs a QPN", cmds[c].sub);
		if (parse_u64(pos[1], 0, 1, MROCE_MAX_QPS - 1, &v))
			return fail(err, len, "QPN must be 1-%d, not '%s'", MROCE_MAX_QPS - 1, pos[1]);
		cli->qpn = (__u32)v;
	}
	if (cli->cmd == MROCE_CLI_FLOW_ADD && !token_set)
		return fail(err, len, "'flow add' needs --token");
	if (cli->json && cli->prometheus)
		return fail(err, len, "--json and --prometheus exclude each other");
	return 0;
}
