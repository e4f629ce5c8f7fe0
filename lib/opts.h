/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The options-struct rules, shared by libmroce and libmroce-coll (which sits
 * on the public API and includes no other private header). Not installed.
 */
#ifndef MROCE_OPTS_H
#define MROCE_OPTS_H

#include <stddef.h>
#include <string.h>

/*
 * An options struct is usable if it is NULL, or if every byte a newer caller
 * set beyond the fields this library knows is zero (libbpf's rule).
 */
static inline int mroce_opts_valid(const void *opts, size_t user_sz, size_t known_sz)
{
	const char *p = opts;

	if (!opts)
		return 1;
	if (user_sz < sizeof(size_t))
		return 0;
	for (size_t i = known_sz; i < user_sz; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Field of opts if the caller's struct is big enough to hold it, else dflt. */
#define MROCE_OPT(opts, field, dflt)						\
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) +	\
			       sizeof((opts)->field) ? (opts)->field : (dflt))

#endif /* MROCE_OPTS_H */
