// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The print hook. The library never writes to stdout or stderr; libbpf and
 * libxdp would (their default prints warnings to stderr), so their print
 * functions are pointed at a shim that forwards to the application's hook,
 * or drops the message while there is none.
 */
#include <pthread.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "mroce/mroce.h"
#include "internal.h"

/* The library's only process-wide mutable state (documented in mroce.h). */
static mroce_print_fn_t mroce_print_fn;

mroce_print_fn_t mroce_set_print(mroce_print_fn_t fn)
{
	return __atomic_exchange_n(&mroce_print_fn, fn, __ATOMIC_ACQ_REL);
}

static int mroce_vprint(enum mroce_print_level level, const char *fmt, va_list ap)
{
	mroce_print_fn_t fn = __atomic_load_n(&mroce_print_fn, __ATOMIC_ACQUIRE);

	return fn ? fn(level, fmt, ap) : 0;
}

static enum mroce_print_level level_of(int lib_level, int warn, int info)
{
	return lib_level == warn ? MROCE_WARN : lib_level == info ? MROCE_INFO : MROCE_DEBUG;
}

static int libbpf_shim(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return mroce_vprint(level_of(level, LIBBPF_WARN, LIBBPF_INFO), fmt, ap);
}

static int libxdp_shim(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return mroce_vprint(level_of(level, LIBXDP_WARN, LIBXDP_INFO), fmt, ap);
}

static void install(void)
{
	libbpf_set_print(libbpf_shim);
	libxdp_set_print(libxdp_shim);
}

/*
 * Once per process, at the first entry that can make libbpf or libxdp talk:
 * an application that sets its own libbpf print function afterwards keeps it.
 */
void mroce_print_install(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install);
}
