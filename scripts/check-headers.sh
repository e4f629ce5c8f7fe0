#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Every installed header compiles on its own, warning-free (make headers):
#   application headers (mroce.h verbs.h coll.h stats.h): strict C11 and C++11,
#     and they pull in neither the wire format nor kernel network headers;
#   wire headers (wire.h proto.h dp_maps.h parse.h): GNU C11, the dialect the
#     BPF program shares them in (they do pointer arithmetic on void *).
set -u
cd "$(dirname "$0")/.."
CC=${CC:-gcc}
CXX=${CXX:-g++}
APP="mroce verbs coll stats"
WIRE="wire proto dp_maps parse"
WARN="-Wall -Wextra -Werror"
fail=0

check() {	# what, compiler and flags...
	local what=$1
	shift
	if ! out=$(printf '#include <mroce/%s.h>\n' "$h" | "$@" -Iinclude $WARN -fsyntax-only - 2>&1); then
		echo "FAIL $h.h ($what):"
		echo "$out" | head -20
		fail=1
	else
		echo "ok   $h.h ($what)"
	fi
}

for h in $APP; do
	check "C11" "$CC" -x c -std=c11 -pedantic
	check "C++11" "$CXX" -x c++ -std=c++11 -pedantic
	deps=$(printf '#include <mroce/%s.h>\n' "$h" | "$CC" -x c -Iinclude -M - 2>&1)
	bad=$(echo "$deps" | tr ' ' '\n' | grep -E 'linux/(if_[a-z_]*|ip|ipv6|udp|tcp|in|in6)\.h$|mroce/(wire|proto|dp_maps|parse)\.h$')
	if [ -n "$bad" ]; then
		echo "FAIL $h.h pulls in:" $bad
		fail=1
	fi
done
for h in $WIRE; do
	check "GNU C11" "$CC" -x c -std=gnu11
done
[ $fail = 0 ] && echo "headers: all compile alone" || echo "headers: FAILED"
exit $fail
