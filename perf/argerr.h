/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The perf tools' argument errors (args.c, coll_args.c): the message into err,
 * then -1. The message says what is wrong with which argument; the tool adds
 * the one hint to --help when it prints it.
 */
#ifndef MROCE_PERF_ARGERR_H
#define MROCE_PERF_ARGERR_H

#include <ctype.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static inline int __attribute__((format(printf, 3, 4)))
perf_bad(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * getopt_long() just returned '?' or ':' (opterr = 0, ':' first in the
 * short options) for argv: say which argument, as the user wrote it. A long
 * option's error leaves optind past its element ("--name[=value]"), optopt
 * 0 if it is unknown, else its val; a short one's sets optopt to the letter,
 * wherever it sits in a cluster (-zq): argv[optind - 1] is then not always
 * its element, so the letter alone names it.
 */
static inline int perf_bad_option(char *err, size_t len, int argc, char *const argv[],
				  const struct option *lopts, int ret)
{
	const char *prev = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;

	if (prev && prev[0] == '-' && prev[1] == '-' && prev[2]) {
		const char *name = prev + 2;
		int n = (int)strcspn(name, "="), matches = 0;
		const struct option *hit = NULL;

		for (const struct option *o = lopts; o->name; o++) {
			if (strncmp(o->name, name, (size_t)n))
				continue;
			if ((int)strlen(o->name) == n) {	/* exact: the one meant */
				hit = o;
				matches = 1;
				break;
			}
			if (!hit || hit->val != o->val)
				matches++;
			hit = o;
		}
		if (!optopt && matches > 1)
			return perf_bad(err, len, "option '--%.*s' is ambiguous (an abbreviation of "
					"more than one option)", n, name);
		if (!optopt)
			return perf_bad(err, len, "unknown option '--%.*s'", n, name);
		if (hit && hit->val == optopt) {
			if (ret == ':')
				return perf_bad(err, len, "--%s needs a value", hit->name);
			if (name[n] == '=' && hit->has_arg == no_argument)
				return perf_bad(err, len, "--%s takes no value", hit->name);
			return perf_bad(err, len, "unknown option '--%.*s'", n, name);
		}
	}
	if (optopt > 0 && optopt < 256 && isgraph(optopt))
		return ret == ':' ? perf_bad(err, len, "-%c needs a value", optopt) :
				    perf_bad(err, len, "unknown option '-%c'", optopt);
	return perf_bad(err, len, "unknown option '%s'", prev ? prev : "?");
}

#endif /* MROCE_PERF_ARGERR_H */
