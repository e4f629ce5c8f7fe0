#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The libraries export exactly what the public headers declare (make api-check):
#   libmroce.so      = the MROCE_API functions of mroce.h, verbs.h, wire.h
#   libmroce-coll.so = the MROCE_API functions of coll.h
#   verbs/libibverbs.so.1 = rdma-core 44's symbols + the mrocedv.h calls (MROCEDV_1.0)
# and libmroce.a defines no global name without the mroce_ prefix.
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
I=include/mroce
fail=0

declared() {	# MROCE_API functions of the headers given
	sed -n 's/^MROCE_API[^(]*[ *]\(mroce_[a-z0-9_]*\)(.*/\1/p' "$@" | sort -u
}

declared_dv() {	# MROCEDV_API functions of mrocedv.h
	sed -n 's/^MROCEDV_API[^(]*[ *]\(mrocedv_[a-z0-9_]*\)(.*/\1/p' "$@" | sort -u
}

exported() {	# functions and objects the shared library exports
	nm -D --defined-only "$1" | awk '$2 ~ /^[TDBRVWi]$/ { sub(/@.*/, "", $3); print $3 }' | sort -u
}

compare() {	# library, headers...
	local so=$1
	shift
	local d
	d=$(diff <(declared "$@") <(exported "$so"))
	if [ -n "$d" ]; then
		echo "FAIL $so: '<' declared but not exported, '>' exported but not declared"
		echo "$d" | grep '^[<>]'
		fail=1
	else
		echo "ok   $so exports the $(declared "$@" | wc -l) functions its headers declare"
	fi
}

compare "$B/libmroce.so" $I/mroce.h $I/verbs.h $I/wire.h
compare "$B/libmroce-coll.so" $I/coll.h

# mroce's libibverbs: exactly rdma-core 44's versioned symbols plus the MROCEDV_1.0
# calls of verbs/mrocedv.exports, which are the MROCE_API functions of
# include/mroce/mrocedv.h.
if out=$(verbs/check-exports.sh "$B/verbs/libibverbs.so.1" 2>&1); then
	echo "ok   $out"
else
	echo "FAIL $out"
	fail=1
fi
dv_listed=$(sed -e 's/#.*//' verbs/mrocedv.exports | awk 'NF == 3 && $1 != $2 { print $1 }' | sort -u)
dv_declared=
[ -f $I/mrocedv.h ] && dv_declared=$(declared_dv $I/mrocedv.h)
if [ "$dv_listed" != "$dv_declared" ]; then
	echo "FAIL verbs/mrocedv.exports and $I/mrocedv.h differ ('<' listed, '>' declared):"
	diff <(printf '%s\n' $dv_listed | grep .) <(printf '%s\n' $dv_declared | grep .) | grep '^[<>]'
	fail=1
else
	echo "ok   verbs/mrocedv.exports lists the $(printf '%s\n' $dv_listed | grep -c .) MROCEDV calls $I/mrocedv.h declares"
fi

bad=$(nm "$B/libmroce.a" | awk 'NF == 3 && $2 ~ /^[TDBRC]$/ { print $3 }' | grep -v '^mroce_' | sort -u)
if [ -n "$bad" ]; then
	echo "FAIL $B/libmroce.a defines global names without the mroce_ prefix:"
	nm -A "$B/libmroce.a" | awk 'NF == 3 && $2 ~ /^[TDBRC]$/ && $3 !~ /^mroce_/ {
		split($1, f, ":"); print "  " $3 " (" f[2] ")" }'
	fail=1
else
	echo "ok   $B/libmroce.a: every global name starts with mroce_"
fi
exit $fail
