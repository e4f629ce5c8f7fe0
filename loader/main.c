// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mroce: attach, inspect and detach the MetaRoCE XDP datapath. */
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>

#include "cli.h"

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int libbpf_verbose(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	struct mroce_cli cli;
	char err[256];

	if (mroce_cli_parse(argc, argv, &cli, err, sizeof(err))) {
		fprintf(stderr, "mroce: %s\n", err);
		return MROCE_EXIT_USAGE;
	}
	libbpf_set_print(cli.verbose ? libbpf_verbose : libbpf_quiet);
	return mroce_cli_run(&cli, stdout, stderr);
}
