#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Every installed header compiles on its own, warning-free (make headers):
#   application headers (mroce.h verbs.h coll.h stats.h): strict C11 and C++11,
#     and they pull in neither the wire format nor kernel network headers;
#   wire headers (wire.h proto.h dp_maps.h parse.h): GNU C11, the dialect the
#     BPF program shares them in (they do pointer arithmetic on void *);
#   the C snippets of README.md, docs/*.md and man/*: C11 and C++20.
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

# The C snippets of README.md, docs/*.md (```c blocks) and the man pages
# (.EX blocks that call mroce_ functions) compile as C11 and as
# C++20 (designators in member order, no narrowing): a reader copies them into
# either. Their #include lines go first; the rest is the body of a function
# whose parameters are the caller's variables the snippets use.
SNIP_VARS="void *buf, size_t len, __u64 raddr, __u32 rkey, float *grads, size_t n"
snippets() {	# file: each ```c block (a man page: each .EX block of C), NUL-terminated
	case $1 in
	*.md) awk '/^```c$/ { on = 1; next } on && /^```/ { on = 0; printf "%c", 0; next } on' "$1" ;;
	*) awk '/^\.EX/ { on = 1; b = ""; next }
		on && /^\.EE/ { on = 0; if (b ~ /mroce_[a-z_]*\(/) printf "%s%c", b, 0; next }
		on { gsub(/\\-/, "-"); gsub(/\\e/, "\\"); b = b $0 "\n" }' "$1" ;;
	esac
}
for f in README.md docs/*.md man/*.[0-9]; do
	i=0
	while IFS= read -r -d '' snip; do
		i=$((i + 1))
		src=$(printf '%s\n' "$snip" | grep '^#include'
		      printf '#include <stdio.h>\n#include <stdint.h>\n#include <mroce/mroce.h>\n'
		      printf 'int snippet(%s);\nint snippet(%s)\n{\n' "$SNIP_VARS" "$SNIP_VARS"
		      printf '%s\n' "$snip" | grep -v '^#include'
		      printf 'return 0;\n}\n')
		# C++ warns of every member MROCE_OPTS leaves out (-Wextra): its point, so not here.
		for lang in "C11|$CC -x c -std=gnu11" \
			    "C++20|$CXX -x c++ -std=c++20 -Wno-missing-field-initializers"; do
			# shellcheck disable=SC2086
			if ! out=$(printf '%s\n' "$src" | ${lang#*|} -Iinclude $WARN -Wno-unused-parameter \
					-Wno-unused-variable -Wno-unused-but-set-variable -fsyntax-only - 2>&1); then
				echo "FAIL $f, C snippet $i (${lang%%|*}):"
				echo "$out" | head -20
				fail=1
			else
				echo "ok   $f, C snippet $i (${lang%%|*})"
			fi
		done
	done < <(snippets "$f")
done
[ $fail = 0 ] && echo "headers: all compile alone, and the docs' C snippets as C and C++" ||
	echo "headers: FAILED"
exit $fail
