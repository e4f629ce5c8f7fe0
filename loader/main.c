// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mroce: attach, inspect and detach the MetaRoCE XDP datapath. */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

/* -v: libmroce's messages (libbpf's and libxdp's among them) on stderr. */
static int print_stderr(enum mroce_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	struct mroce_cli cli;
	char err[256];

	if (mroce_cli_parse(argc, argv, &cli, err, sizeof(err))) {
		fprintf(stderr, "mroce: %s (mroce --help)\n", err);
		return MROCE_EXIT_USAGE;
	}
	mroce_set_print(cli.verbose ? print_stderr : NULL);
	return mroce_cli_run(&cli, stdout, stderr);
}
