#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make install` into a scratch DESTDIR (PREFIX=/usr), then: every file in its
# place and nothing else, the installed launcher from outside the source tree
# (also moved elsewhere: it finds its helpers relative to itself), every tool's
# --help / --version / bad command line, each man page rendering without a
# warning and found by `man`, a program built and run against the installed
# headers, libraries and pkg-config files, the bash completion, and (root) the
# installed launcher running 2-rank jobs on a bridge and on the emulated
# fabric with the installed tools, the NCCL plugin dlopened by its name, no
# --help or command-line error naming a path of the source tree, and (where
# /usr/bin/python3 has torch) the PyTorch backend imported from the installed
# tree only and, as root, running a 2-rank all-reduce there. Then `make
# uninstall` leaves no file.
#   BUILD=build/x selftests/test_install.sh [TEST...]
. "$(dirname "$0")/lib.sh"

# The Makefile's VERSION, however it is defined there.
VERSION=$(make -s --no-print-directory -C "$ROOT" BUILD=/nonexistent \
	--eval 'print-mroce-version: ; @echo $(VERSION)' print-mroce-version 2>/dev/null)
DEST=$TMP/dest
JOB=${MROCE_TEST_JOB:-inst$$}	# the launcher's namespaces are mrl-JOB-*, mrf-JOB-*
TOOLS=(mroce mroce-perf mroce-coll-perf mroce-launch)
TORCH_PY=/usr/bin/python3
# make install installs the PyTorch backend where this python imports torch (PYTORCH=auto).
if "$TORCH_PY" -c 'import torch' >/dev/null 2>&1; then HAVE_TORCH=1; else HAVE_TORCH=; fi
PYDIR=usr/lib/python3/dist-packages	# Debian's python3 for PREFIX=/usr

# The files `make install DESTDIR=$DEST PREFIX=/usr` must make, and their modes
# (l: a symbolic link that resolves).
EXPECTED="
755 usr/bin/mroce
755 usr/bin/mroce-perf
755 usr/bin/mroce-coll-perf
755 usr/bin/mroce-launch
755 usr/bin/mroce-verbs
644 usr/libexec/mroce/netns.sh
644 usr/libexec/mroce/fabric/lib.sh
755 usr/libexec/mroce/fabric/fabric
644 usr/libexec/mroce/fabric/fabric.bpf.o
755 usr/lib/libmroce.so.$VERSION
l usr/lib/libmroce.so.0
l usr/lib/libmroce.so
644 usr/lib/libmroce.a
755 usr/lib/libmroce-coll.so.$VERSION
l usr/lib/libmroce-coll.so.0
l usr/lib/libmroce-coll.so
644 usr/lib/libmroce-coll.a
755 usr/lib/libnccl-net-mroce.so
644 usr/lib/mroce/mroce.bpf.o
755 usr/lib/mroce/verbs/libibverbs.so.1
644 usr/lib/pkgconfig/mroce.pc
644 usr/lib/pkgconfig/mroce-coll.pc
644 usr/share/man/man8/mroce.8
644 usr/share/man/man1/mroce-perf.1
644 usr/share/man/man1/mroce-coll-perf.1
644 usr/share/man/man1/mroce-launch.1
644 usr/share/man/man1/mroce-verbs.1
644 usr/share/man/man7/libmroce.7
644 usr/share/bash-completion/completions/mroce
l usr/share/bash-completion/completions/mroce-perf
l usr/share/bash-completion/completions/mroce-coll-perf
l usr/share/bash-completion/completions/mroce-launch
$(cd "$ROOT/include" && for h in mroce/*.h; do echo "644 usr/include/$h"; done)
${HAVE_TORCH:+644 $PYDIR/mroce_torch/__init__.py
644 $PYDIR/mroce_torch/_mroce_torch.so}"

# A clean environment: no source tree on PATH, no FABRIC_BIN or BUILD from the caller.
clean_env() { env -i PATH="$1:/usr/sbin:/usr/bin:/sbin:/bin" HOME=/root LANG=C "${@:2}"; }

do_install() {
	rm -rf "$DEST"
	make -s -C "$ROOT" BUILD="$BUILD" install DESTDIR="$DEST" PREFIX=/usr >"$TMP/install.log" 2>&1 ||
		{ echo "make install failed:"; cat "$TMP/install.log"; return 1; }
}

t_files() {
	local mode path got want bad=0
	while read -r mode path; do
		[ -n "$path" ] || continue
		if [ "$mode" = l ]; then
			[ -L "$DEST/$path" ] && [ -e "$DEST/$path" ] || { echo "not a working link: /$path"; bad=1; }
			continue
		fi
		[ -f "$DEST/$path" ] && [ ! -L "$DEST/$path" ] || { echo "missing: /$path"; bad=1; continue; }
		got=$(stat -c %a "$DEST/$path")
		[ "$got" = "$mode" ] || { echo "/$path: mode $got, not $mode"; bad=1; }
	done <<<"$EXPECTED"
	# Nothing installed that is not listed.
	want=$(awk 'NF == 2 { print $2 }' <<<"$EXPECTED" | sort)
	got=$(cd "$DEST" && find . \( -type f -o -type l \) -not -path '*/__pycache__/*' | sed 's|^\./||' | sort)
	if [ "$got" != "$want" ]; then
		echo "installed files differ from the list (< listed, > installed):"
		diff <(echo "$want") <(echo "$got")
		bad=1
	fi
	# The shared libraries' names and the pkg-config paths.
	readelf -d "$DEST/usr/lib/libmroce.so.$VERSION" | grep -q 'SONAME.*\[libmroce\.so\.0\]' ||
		{ echo "libmroce.so: wrong SONAME"; bad=1; }
	readelf -d "$DEST/usr/lib/libmroce-coll.so.$VERSION" | grep -q 'SONAME.*\[libmroce-coll\.so\.0\]' ||
		{ echo "libmroce-coll.so: wrong SONAME"; bad=1; }
	grep -qx 'libdir=/usr/lib' "$DEST/usr/lib/pkgconfig/mroce.pc" &&
		grep -qx "Version: $VERSION" "$DEST/usr/lib/pkgconfig/mroce.pc" ||
		{ echo "mroce.pc:"; cat "$DEST/usr/lib/pkgconfig/mroce.pc"; bad=1; }
	return $bad
}

# The NCCL plugin: under the name NCCL dlopens (NCCL_NET_PLUGIN=mroce), without a SONAME,
# libmroce linked in (no libmroce*.so NEEDED), ncclNetPlugin_v8 its only export; a
# program dlopens it by that name from the installed library directory and finds the
# table named "mroce".
t_nccl_plugin() {
	local so=$DEST/usr/lib/libnccl-net-mroce.so out bad=0
	readelf -d "$so" >"$TMP/dyn" || return 1
	! grep -q SONAME "$TMP/dyn" || { echo "has a SONAME:"; grep SONAME "$TMP/dyn"; bad=1; }
	! grep -q 'NEEDED.*libmroce' "$TMP/dyn" || { echo "needs a libmroce .so:"; grep NEEDED "$TMP/dyn"; bad=1; }
	out=$(nm -D --defined-only "$so" | awk '{ print $NF }')
	[ "$out" = ncclNetPlugin_v8 ] || { echo "exports '$out', not only ncclNetPlugin_v8"; bad=1; }
	cc -Wall -Wextra -Werror -o "$TMP/dl" "$ROOT/selftests/nccl_dlopen.c" -ldl || return 1
	out=$(cd / && clean_env /nonexistent LD_LIBRARY_PATH="$DEST/usr/lib" "$TMP/dl" 2>&1) ||
		{ echo "dlopen: $out"; return 1; }
	[ "$out" = mroce ] || { echo "the plugin's name: '$out', not 'mroce'"; bad=1; }
	return $bad
}

# The installed scripts name no path of the source tree; the launcher's helper
# directory and version were filled in.
t_launcher_no_tree() {
	local f bad=0
	for f in usr/bin/mroce-launch usr/libexec/mroce/netns.sh usr/libexec/mroce/fabric/lib.sh; do
		if grep -n -F "$ROOT" "$DEST/$f"; then echo "/$f names the source tree"; bad=1; fi
	done
	grep -qx 'HELPERS=../libexec/mroce' "$DEST/usr/bin/mroce-launch" || { echo "HELPERS not set"; bad=1; }
	grep -qx "VERSION=$VERSION" "$DEST/usr/bin/mroce-launch" || { echo "VERSION not set"; bad=1; }
	return $bad
}

# help_ok TOOL BINDIR: --help on stdout, exit 0; --version and -V; a bad option: stderr, exit 2.
help_ok() {
	local t=$1 bin=$2 rc v
	(cd / && clean_env "$bin" "$t" --help >"$TMP/out" 2>"$TMP/err")
	rc=$?
	[ $rc -eq 0 ] || { echo "$t --help: exit $rc"; cat "$TMP/err"; return 1; }
	[ -s "$TMP/out" ] || { echo "$t --help: nothing on stdout"; return 1; }
	[ ! -s "$TMP/err" ] || { echo "$t --help wrote to stderr:"; cat "$TMP/err"; return 1; }
	grep -qi 'usage\|mroce' "$TMP/out" || { echo "$t --help: no usage text"; return 1; }
	for v in --version -V; do
		(cd / && clean_env "$bin" "$t" $v >"$TMP/out" 2>"$TMP/err")
		rc=$?
		[ $rc -eq 0 ] || { echo "$t $v: exit $rc"; cat "$TMP/err"; return 1; }
		grep -q "^$t $VERSION" "$TMP/out" || { echo "$t $v: '$(cat "$TMP/out")', not '$t $VERSION...'"; return 1; }
	done
	(cd / && clean_env "$bin" "$t" --no-such-option >"$TMP/out" 2>"$TMP/err")
	rc=$?
	[ $rc -eq 2 ] || { echo "$t --no-such-option: exit $rc, not 2"; return 1; }
	[ -s "$TMP/err" ] || { echo "$t --no-such-option: no message on stderr"; return 1; }
	[ ! -s "$TMP/out" ] || { echo "$t --no-such-option wrote to stdout"; return 1; }
}

# No text a tool prints for its user names a path of the source tree (docs/...,
# selftests/..., tools/..., README, a .md file): --help, the usage after a bad
# option, and the errors that point to other tools; man pages are named instead.
t_help_no_tree() {
	local t bad=0 n
	: >"$TMP/texts"
	for t in "${TOOLS[@]}"; do
		n=$TMP/texts.$t
		{ (cd / && clean_env "$DEST/usr/bin" "$t" --help)
		  (cd / && clean_env "$DEST/usr/bin" "$t" --no-such-option); } >"$n" 2>&1
		grep -q "man .*$t" "$n" || { echo "$t --help names no man page"; bad=1; }
		sed "s|^|$t: |" "$n" >>"$TMP/texts"
	done
	# mroce-coll-perf's errors about how it is started.
	{ (cd / && clean_env "$DEST/usr/bin" mroce-coll-perf -g 2)
	  (cd / && clean_env "$DEST/usr/bin" mroce-coll-perf -t 2)
	  (cd / && clean_env "$DEST/usr/bin" mroce-coll-perf)
	  (cd / && clean_env "$DEST/usr/bin" WORLD_SIZE=2 mroce-coll-perf); } 2>&1 | sed 's|^|mroce-coll-perf: |' >>"$TMP/texts"
	if grep -n -E '(docs|selftests|tools|scripts|examples|build|torch)/|README|[A-Za-z]\.md\b' "$TMP/texts"; then
		echo "the lines above name the source tree"; bad=1
	fi
	[ "$(wc -l <"$TMP/texts")" -gt 100 ] || { echo "too few lines read: $(wc -l <"$TMP/texts")"; bad=1; }
	return $bad
}

# The PyTorch backend, installed: /usr/bin/python3 from / imports mroce_torch and its
# extension from the installed tree alone (only the staging root on PYTHONPATH, no BUILD,
# no MROCE_TORCH_LIB); the extension carries libmroce(-coll) inside and names no
# directory of the source tree.
need_torch() { [ -n "$HAVE_TORCH" ] || { echo "$TORCH_PY cannot import torch: nothing installed"; return "$SKIP"; }; }
t_torch_import() {
	local so=$DEST/$PYDIR/mroce_torch/_mroce_torch.so out
	need_torch || return
	readelf -d "$so" >"$TMP/dyn" || return 1
	! grep -q 'NEEDED.*libmroce' "$TMP/dyn" || { echo "needs a libmroce .so:"; grep NEEDED "$TMP/dyn"; return 1; }
	! grep -E 'R(UN)?PATH' "$TMP/dyn" | grep -e "$ROOT" -e build || { echo "a search path into the tree"; return 1; }
	out=$(cd / && clean_env /nonexistent PYTHONPATH="$DEST/$PYDIR" "$TORCH_PY" -c '
import mroce_torch, torch.distributed as dist
print(mroce_torch.__file__)
print(mroce_torch._ext.__file__)
print(dist.Backend.MROCE, callable(mroce_torch.env_from_mpi))' 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	[ "$out" = "$DEST/$PYDIR/mroce_torch/__init__.py
$so
MROCE True" ] || { echo "not loaded from the installed tree"; return 1; }
}

# The installed backend in a 2-rank job of the installed launcher: an all-reduce, checked.
t_torch_job() {
	local out
	need_torch || return
	need_root || return
	out=$(launch_installed -n 2 --env PYTHONPATH="$DEST/$PYDIR" -- "$TORCH_PY" -c '
import torch, mroce_torch, torch.distributed as dist
dist.init_process_group("mroce")
t = torch.arange(4, dtype=torch.float64) + 10 * dist.get_rank()
dist.all_reduce(t)
assert t.tolist() == [10.0, 12.0, 14.0, 16.0], t
print("rank %d all_reduce ok from %s" % (dist.get_rank(), mroce_torch._ext.__file__))
dist.destroy_process_group()' 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	grep -q "^rank 0 all_reduce ok from $DEST/" <<<"$out" &&
		grep -q "^\[1\] rank 1 all_reduce ok from $DEST/" <<<"$out" || return 1
}

t_launcher_help() { help_ok mroce-launch "$DEST/usr/bin"; }
t_mroce_help() { help_ok mroce "$DEST/usr/bin"; }
t_perf_help() { help_ok mroce-perf "$DEST/usr/bin"; }
t_coll_perf_help() { help_ok mroce-coll-perf "$DEST/usr/bin"; }

# The installed tree moved elsewhere still works: the launcher looks for its
# helpers relative to itself. Without them it says so and exits 1.
t_launcher_relocated() {
	local moved=$TMP/moved rc
	rm -rf "$moved"
	cp -a "$DEST" "$moved" || return 1
	help_ok mroce-launch "$moved/usr/bin" || return 1
	(cd / && clean_env "$moved/usr/bin" mroce-launch list >"$TMP/out" 2>"$TMP/err") ||
		{ echo "relocated mroce-launch list failed:"; cat "$TMP/err"; return 1; }
	rm -rf "$moved/usr/libexec/mroce"
	(cd / && clean_env "$moved/usr/bin" mroce-launch list >"$TMP/out" 2>"$TMP/err")
	rc=$?
	[ $rc -eq 1 ] && grep -q "helper directory is missing" "$TMP/err" ||
		{ echo "without its helpers: exit $rc, '$(cat "$TMP/err")'"; return 1; }
}

t_man_pages() {
	local m name bad=0
	for m in man8/mroce.8 man1/mroce-perf.1 man1/mroce-coll-perf.1 man1/mroce-launch.1 man7/libmroce.7; do
		name=$(basename "$m"); name=${name%.*}
		groff -man -ww -z "$DEST/usr/share/man/$m" >"$TMP/err" 2>&1
		[ ! -s "$TMP/err" ] || { echo "groff -ww on $m:"; cat "$TMP/err"; bad=1; }
		MANWIDTH=80 man --warnings -l "$DEST/usr/share/man/$m" >"$TMP/out" 2>"$TMP/err"
		[ ! -s "$TMP/err" ] || { echo "man --warnings on $m:"; cat "$TMP/err"; bad=1; }
		grep -q "^NAME" "$TMP/out" && grep -Eq "^ +$name(, +[a-z-]+)* +- " "$TMP/out" ||
			{ echo "$m: no NAME section for $name"; bad=1; }
		# `man NAME` finds it in the installed tree (as `man mroce` will in /usr/share/man).
		man -M "$DEST/usr/share/man" -w "$name" 2>/dev/null | grep -q "$DEST/usr/share/man/$m" ||
			{ echo "man -w $name does not find $m"; bad=1; }
	done
	return $bad
}

# Every option in a tool's --help text is described in its man page.
t_man_covers_options() {
	local t page opt bad=0
	for t in mroce:man8/mroce.8 mroce-perf:man1/mroce-perf.1 mroce-coll-perf:man1/mroce-coll-perf.1 \
		 mroce-launch:man1/mroce-launch.1; do
		page=$DEST/usr/share/man/${t#*:}
		"$DEST/usr/bin/${t%%:*}" --help 2>/dev/null | grep -o -- '--[a-z][a-z_-]*' | sort -u >"$TMP/opts"
		[ -s "$TMP/opts" ] || { echo "${t%%:*} --help lists no option"; bad=1; continue; }
		while read -r opt; do
			MANWIDTH=200 man -l "$page" 2>/dev/null | grep -q -- "$opt\b" ||
				{ echo "${t%%:*}: $opt is in --help but not in ${t#*:}"; bad=1; }
		done <"$TMP/opts"
	done
	return $bad
}

# A program against the installed headers and libraries, through pkg-config.
t_pkg_config_build() {
	local pc=(env PKG_CONFIG_PATH="$DEST/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$DEST" pkg-config) flags out
	cat >"$TMP/app.c" <<-'EOF'
		#include <stdio.h>
		#include <errno.h>
		#include <mroce/mroce.h>
		int main(void)
		{
			char buf[128];
			mroce_strerror(-EINVAL, buf, sizeof(buf));
			printf("%s|%s|%zu\n", buf, mroce_coll_redop_str(MROCE_COLL_SUM),
			       mroce_coll_dtype_size(MROCE_COLL_FLOAT64));
			return 0;
		}
	EOF
	flags=$("${pc[@]}" --cflags --libs mroce-coll) || { echo "pkg-config mroce-coll failed"; return 1; }
	echo "pkg-config: $flags"
	case " $flags " in
	*" -I$DEST/usr/include "*" -lmroce-coll "*) ;;
	*) echo "unexpected flags"; return 1 ;;
	esac
	"${pc[@]}" --exists 'mroce = '"$VERSION" || { echo "pkg-config: mroce is not version $VERSION"; return 1; }
	# shellcheck disable=SC2086
	cc -Wall -Wextra -Werror -o "$TMP/app" "$TMP/app.c" $flags -lmroce || return 1
	# The dynamic build, as installed: it needs the two .so.0 files.
	readelf -d "$TMP/app" | grep -q 'NEEDED.*libmroce-coll\.so\.0' || { echo "not linked to libmroce-coll.so.0"; return 1; }
	out=$(LD_LIBRARY_PATH="$DEST/usr/lib" "$TMP/app") || return 1
	echo "app: $out"
	[ "$(cut -d'|' -f2- <<<"$out")" = "sum|8" ] && [ -n "$(cut -d'|' -f1 <<<"$out")" ] || return 1
	# The static libraries link too, with what pkg-config --static adds for them.
	# shellcheck disable=SC2086
	cc -o "$TMP/app-static" "$TMP/app.c" $("${pc[@]}" --cflags mroce-coll) \
		"$DEST/usr/lib/libmroce-coll.a" "$DEST/usr/lib/libmroce.a" \
		$("${pc[@]}" --static --libs mroce-coll | tr ' ' '\n' | grep -v -e '^-L' -e '^-lmroce') ||
		return 1
	[ "$("$TMP/app-static")" = "$out" ] || { echo "static build printed something else"; return 1; }
}

# comp WORDS...: what the installed completion offers for the last word.
comp() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		fn=$(complete -p "$1" | sed "s/.*-F \([^ ]*\) .*/\1/"); "$fn"
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ \
		"$DEST/usr/share/bash-completion/completions/mroce" "$@"
}

# expect_comp "WANT" WORDS...
expect_comp() {
	local want=$1 got
	shift
	got=$(comp "$@")
	[ "$got" = "$want" ] || { echo "completing '$*': '$got', not '$want'"; return 1; }
}

t_completion() {
	local c bad=0
	for c in mroce-perf mroce-coll-perf mroce-launch; do
		[ "$(readlink "$DEST/usr/share/bash-completion/completions/$c")" = mroce ] ||
			{ echo "completion $c is not a link to mroce"; bad=1; }
	done
	expect_comp "attach " mroce at || bad=1
	expect_comp "add del " mroce flow "" || bad=1
	expect_comp "--mode " mroce attach lo --mo || bad=1
	expect_comp "native skb " mroce attach lo --mode "" || bad=1
	expect_comp "lo " mroce status l || bad=1
	expect_comp "write_bw write_lat " mroce-perf client --test write || bad=1
	expect_comp "client " mroce-perf cl || bad=1
	expect_comp "allgather allreduce alltoall " mroce-coll-perf -c all || bad=1
	expect_comp "fabric " mroce-launch -n 2 --net f || bad=1
	expect_comp "down " mroce-launch do || bad=1
	return $bad
}

need_root() { [ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; return "$SKIP"; }; }

# launch_installed ARGS...: the installed launcher, from /, with only the installed tools on PATH.
launch_installed() { (cd / && clean_env "$DEST/usr/bin" mroce-launch --name "$JOB" --timeout 120 "$@"); }

# Each rank pings the other, then a small all-reduce with the installed mroce-coll-perf.
peer_ping() { echo 'ping -c 1 -W 2 '"$1"'$((2 - RANK)) >/dev/null && echo "rank $RANK reached its peer"'; }

t_launch_bridge() {
	local out
	need_root || return
	out=$(launch_installed -n 2 -- sh -c "$(peer_ping 198.18.2.)" 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	grep -q "^rank 0 reached" <<<"$out" && grep -q "^\[1\] rank 1 reached" <<<"$out" || return 1
	out=$(launch_installed -n 2 -- mroce-coll-perf -b 8 -e 64K -f 8 -n 2 -w 1 --warmup-ms 0 2>&1) ||
		{ echo "$out"; return 1; }
	echo "$out"
	# Five sizes (8 B .. 32 KiB), a row each; the exit status says every element was right.
	[ "$(grep -c -E '^ +[0-9]+ +[0-9]+ +float ' <<<"$out")" -eq 5 ] || { echo "expected 5 rows"; return 1; }
	# MROCE_LAUNCH_DIAG=1 runs the installed mroce (next to the launcher) in each rank.
	out=$(cd / && clean_env "$DEST/usr/bin" MROCE_LAUNCH_DIAG=1 mroce-launch --name "$JOB" --timeout 60 \
		-n 2 -- sh -c 'exit $RANK' 2>&1) && { echo "a failing rank gave exit 0"; return 1; }
	grep -q "rank 1's XDP counters" <<<"$out" && grep -q "^mroce: status eth0: " <<<"$out" ||
		{ echo "$out"; return 1; }
	! ip netns list | grep -q -- "-$JOB-" || { echo "namespaces left behind"; return 1; }
}

t_launch_fabric() {
	local out
	need_root || return
	out=$(launch_installed -n 2 --net fabric --paths 2 --fabric-ctl 'path all delay=20' \
		-- sh -c "$(peer_ping 198.18.1.)" 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	grep -q "^rank 0 reached" <<<"$out" && grep -q "^\[1\] rank 1 reached" <<<"$out" || return 1
	# The fabric rejects a bad control command, and the launch fails cleanly.
	out=$(launch_installed -n 2 --net fabric --fabric-ctl 'path 9 delay=1' -- true 2>&1) &&
		{ echo "a bad --fabric-ctl was accepted"; return 1; }
	grep -q "fabric rejected" <<<"$out" || { echo "$out"; return 1; }
	! ip netns list | grep -q -- "-$JOB-" || { echo "namespaces left behind"; return 1; }
}

t_uninstall() {
	local left
	make -s -C "$ROOT" BUILD="$BUILD" uninstall DESTDIR="$DEST" PREFIX=/usr >"$TMP/uninstall.log" 2>&1 ||
		{ cat "$TMP/uninstall.log"; return 1; }
	left=$(cd "$DEST" && find . \( -type f -o -type l \))
	[ -z "$left" ] || { echo "left after make uninstall:"; echo "$left"; return 1; }
}

TESTS=(files nccl_plugin launcher_no_tree launcher_help mroce_help perf_help coll_perf_help help_no_tree
	launcher_relocated man_pages man_covers_options pkg_config_build completion launch_bridge launch_fabric
	torch_import torch_job uninstall)
[ $# -gt 0 ] && TESTS=("$@")

no_hosts() { :; }
TEST_SETUP=no_hosts TEST_TEARDOWN=no_hosts
if [ -z "$VERSION" ]; then
	echo "FAIL: install: cannot read VERSION from the Makefile"
	FAILED=1
elif ! do_install; then
	echo "FAIL: install: make install DESTDIR=... PREFIX=/usr"
	sed 's/^/    /' "$TMP/install.log" | tail -n 20
	FAILED=1
else
	for t in "${TESTS[@]}"; do run_test "$t" "t_$t"; done
fi
summary test_install
