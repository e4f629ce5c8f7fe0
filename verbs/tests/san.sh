# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced by verbs/tests/*.sh after LIB is set: for a sanitizer build of the
# library (make asan's BUILD=build/asan), SAN holds the environment that
# preloads its runtimes into the test programs, which are not built with
# them; any report fails the program. SAN_THIRD: the same for programs not
# ours (ibverbs-utils), without leak detection: they do not free everything
# before they exit (their leaks, not the library's; ours are checked with
# leak detection on). Both empty for a normal build.
SAN=()
SAN_THIRD=()
if ldd "$LIB/libibverbs.so.1" | grep -q libasan; then
	SAN=(LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
	     ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
	SAN_THIRD=("${SAN[0]}" ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 "${SAN[2]}")
	echo "sanitizers: ${SAN[*]}"
fi
