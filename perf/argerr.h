/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The perf tools' argument errors (args.c, coll_args.c): the message into err, then -1. */
#ifndef MROCE_PERF_ARGERR_H
#define MROCE_PERF_ARGERR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline int __attribute__((format(printf, 3, 4)))
perf_bad(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

#endif /* MROCE_PERF_ARGERR_H */
