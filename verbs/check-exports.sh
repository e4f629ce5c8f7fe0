#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# mroce's libibverbs.so.1 exports exactly rdma-core 44's versioned symbols
# (verbs/libibverbs-44.exports) plus mroce's extension calls in MROCEDV_1.0
# (verbs/mrocedv.exports): the Makefile runs this after the link, and a
# difference fails the build. An application linked against Debian's library
# finds every name@version it imports, and no name of libmroce leaks out.
#
#   verbs/check-exports.sh SO          compare SO with the two lists
#   verbs/check-exports.sh --list SO   print SO's exports in the lists' format
#                                      ("name version default|compat", sorted);
#                                      libibverbs-44.exports is this run on
#                                      Debian 12's libibverbs.so.1.14.44.0.
set -euo pipefail
here=$(dirname "$0")

# objdump -T prints a defined versioned symbol as "... VERSION name" and a
# non-default (compat, name@VERSION) one as "... (VERSION) name"; a version
# node's own symbol is "VERSION VERSION". Unversioned exports would print as
# "Base": reported as version "Base", so they show up in the diff.
list() {
	objdump -T "$1" | awk '
		$0 ~ /\*UND\*/ || NF < 2 { next }
		$1 ~ /^[0-9a-f]+$/ && ($2 == "g" || $2 == "w" || $2 == "u") {
			v = $(NF-1); n = $NF; k = "default"
			if (v ~ /^\(.*\)$/) { gsub(/[()]/, "", v); k = "compat" }
			print n, v, k
		}' | LC_ALL=C sort -u
}

expected() {
	cat "$here/libibverbs-44.exports" "$here/mrocedv.exports" |
		sed -e 's/#.*//' -e '/^[[:space:]]*$/d' | LC_ALL=C sort -u
}

if [ "${1:-}" = --list ]; then
	[ $# -eq 2 ] || { echo "usage: $0 --list SO" >&2; exit 2; }
	list "$2"
	exit 0
fi
[ $# -eq 1 ] || { echo "usage: $0 SO | --list SO" >&2; exit 2; }
so=$1
[ -r "$so" ] || { echo "check-exports: cannot read $so" >&2; exit 2; }
got=$(list "$so")
if ! d=$(diff <(expected) <(printf '%s\n' "$got")); then
	echo "check-exports: $so does not export exactly rdma-core 44's symbols + MROCEDV_1.0" >&2
	echo "  '<' expected (verbs/libibverbs-44.exports, verbs/mrocedv.exports) but missing," >&2
	echo "  '>' exported but not in the lists (a hidden implementation, a leak, a wrong version):" >&2
	printf '%s\n' "$d" | grep '^[<>]' | sed 's/^/  /' >&2
	exit 1
fi
echo "check-exports: $so: $(printf '%s\n' "$got" | wc -l) versioned symbols, as listed"
