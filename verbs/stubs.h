/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How mroce's libibverbs says "not supported" (verbs/stubs*.c, compat.c).
 * Every export of rdma-core 44 has a definition in the stub files, marked
 * weak: a real implementation elsewhere in verbs/ (an ordinary strong,
 * MRV_EXPORT definition) replaces it at link time, and whatever nobody
 * implements fails the way libibverbs documents for that call, never
 * crashes. EOPNOTSUPP is what libibverbs itself returns for a verb the
 * provider lacks.
 */
#ifndef MROCE_VERBS_STUBS_H
#define MROCE_VERBS_STUBS_H

#include <errno.h>
#include <stddef.h>

/* exported (the version script then names the version), replaceable */
#define MRV_STUB	__attribute__((weak, visibility("default")))

/* a call that returns an object: NULL, errno says why */
static inline void *mrv_unsupported_ptr(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

/* a call documented to return 0 or "the value of errno" (most of them):
 * errno is set as well, for callers that print errno whatever the call said */
static inline int mrv_unsupported_err(void)
{
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* a call documented to return 0 or -1 with errno */
static inline int mrv_unsupported_neg(void)
{
	errno = EOPNOTSUPP;
	return -1;
}

#endif /* MROCE_VERBS_STUBS_H */
