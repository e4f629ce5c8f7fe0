#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Build the Debian packages, install them on this machine, check what a user
# gets, and remove them again (root; the machine is left as it was).
#   scripts/test-debs.sh            build with dpkg-buildpackage -us -uc -b, then test
#   scripts/test-debs.sh DIR        test the .debs already in DIR
# The .debs (and .buildinfo, .changes) are moved out of the parent directory,
# where dpkg-buildpackage writes them, into $OUT (default: a new /tmp/mroce-debs.*),
# and kept there. Refuses to run if any of the packages is installed already.
set -u
cd "$(dirname "$0")/.."
SRC=$PWD	# the source tree (run() below works from /)

PKGS=(libmroce0 libmroce-coll0 libmroce-dev mroce-tools libnccl-net-mroce)
# python3-mroce-torch (the PyTorch backend) where Debian's python3 has torch; otherwise
# the packages are built without it (the build profile pkg.mroce.nopytorch).
PROFILE=()
if /usr/bin/python3 -I -c 'import torch' >/dev/null 2>&1; then	# -I: not the tree's torch/
	PKGS+=(python3-mroce-torch)
else
	echo "test-debs: /usr/bin/python3 cannot import torch: no python3-mroce-torch (scripts/deps.sh torch)"
	PROFILE=(--build-profiles=pkg.mroce.nopytorch)
fi
has_pkg() { [[ " ${PKGS[*]} " == *" $1 "* ]]; }
# The Makefile's VERSION, however it is defined there.
VERSION=$(make -s --no-print-directory BUILD=/nonexistent \
	--eval 'print-mroce-version: ; @echo $(VERSION)' print-mroce-version 2>/dev/null)
PASSED=0 FAILED=0
JOB=${MROCE_TEST_JOB:-deb$$}

[ -n "$VERSION" ] || { echo "test-debs: cannot read VERSION from the Makefile" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "test-debs: needs root (dpkg -i)" >&2; exit 1; }
for p in "${PKGS[@]}"; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		echo "test-debs: $p is installed already; remove it first (this script removes what it installs)" >&2
		exit 1
	fi
done

if [ $# -ge 1 ]; then
	OUT=$1
else
	OUT=${OUT:-$(mktemp -d /tmp/mroce-debs.XXXXXX)}
	echo "== dpkg-buildpackage -us -uc -b ${PROFILE[*]} (log: $OUT/build.log)"
	if ! dpkg-buildpackage -us -uc -b "${PROFILE[@]}" >"$OUT/build.log" 2>&1; then
		tail -n 30 "$OUT/build.log"
		echo "test-debs: the build failed"
		exit 1
	fi
	for f in ../*_"$VERSION"_*.deb ../mroce_"$VERSION"_*.buildinfo ../mroce_"$VERSION"_*.changes; do
		[ -e "$f" ] && mv "$f" "$OUT/"
	done
fi
ARCH=$(dpkg --print-architecture)
DEBS=()
for p in "${PKGS[@]}"; do
	f=$OUT/${p}_${VERSION}_$ARCH.deb
	[ -f "$f" ] || { echo "test-debs: $f is missing"; exit 1; }
	DEBS+=("$f")
done
echo "== packages in $OUT:"
ls -1 "$OUT"/*.deb

TMP=$(mktemp -d /tmp/mroce-debtest.XXXXXX)
remove_all() {
	dpkg -r "${PKGS[@]}" >"$TMP/remove.log" 2>&1 || cat "$TMP/remove.log"
	rm -rf "$TMP"
}
trap remove_all EXIT

check() {	# check NAME CMD...: one line, PASS or FAIL (with the output)
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "PASS: $name"
		PASSED=$((PASSED + 1))
	else
		echo "FAIL: $name"
		printf '%s\n' "$out" | sed 's/^/    /'
		FAILED=$((FAILED + 1))
	fi
}

lintian_ok() {	# no error or warning (the overrides in debian/ say why for each one)
	local out
	command -v lintian >/dev/null || { echo "lintian is not installed (scripts/deps.sh deb)"; return 1; }
	out=$(lintian --tag-display-limit 0 "$OUT"/mroce_"$VERSION"_"$ARCH".changes 2>&1 | grep -E '^[EW]: ')
	[ -z "$out" ] || { echo "$out"; return 1; }
}
check "lintian: no error, no warning" lintian_ok

# Each library package holds the one shared library it is named after (Policy 8.1):
# deb_so DEB: the basenames of the .so files in it, one a line.
deb_so() { dpkg-deb -c "$1" | awk '{ print $6 }' | grep -E '\.so(\.|$)' | xargs -r -n1 basename | sort; }
deb_of() { echo "$OUT/${1}_${VERSION}_$ARCH.deb"; }
split_ok() {
	local got
	got=$(deb_so "$(deb_of libmroce0)" | tr '\n' ' ')
	[ "$got" = "libmroce.so.0 libmroce.so.$VERSION " ] || { echo "libmroce0: $got"; return 1; }
	got=$(deb_so "$(deb_of libmroce-coll0)" | tr '\n' ' ')
	[ "$got" = "libmroce-coll.so.0 libmroce-coll.so.$VERSION " ] || { echo "libmroce-coll0: $got"; return 1; }
	got=$(deb_so "$(deb_of libnccl-net-mroce)" | tr '\n' ' ')
	[ "$got" = "libnccl-net-mroce.so " ] || { echo "libnccl-net-mroce: $got"; return 1; }
	# libmroce-coll0 needs libmroce0 (shlibs), libmroce-dev both; the plugin none of ours.
	got=$(dpkg-deb -f "$(deb_of libmroce-coll0)" Depends)
	[[ $got == *"libmroce0 (>= "* ]] || { echo "libmroce-coll0 Depends: $got"; return 1; }
	got=$(dpkg-deb -f "$(deb_of libmroce-dev)" Depends)
	[[ $got == *"libmroce0 (= $VERSION)"* && $got == *"libmroce-coll0 (= $VERSION)"* ]] ||
		{ echo "libmroce-dev Depends: $got"; return 1; }
	got=$(dpkg-deb -f "$(deb_of libnccl-net-mroce)" Depends)
	[[ -n $got && $got != *mroce* ]] || { echo "libnccl-net-mroce Depends: '$got'"; return 1; }
	has_pkg python3-mroce-torch || return 0
	# The backend: its extension alone, libmroce linked in (no mroce package needed), torch's.
	got=$(deb_so "$(deb_of python3-mroce-torch)" | tr '\n' ' ')
	[ "$got" = "_mroce_torch.so " ] || { echo "python3-mroce-torch: $got"; return 1; }
	got=$(dpkg-deb -f "$(deb_of python3-mroce-torch)" Depends)
	[[ $got == *"python3-torch (>= "* && $got == *"python3 (>= 3."* && $got != *mroce* ]] ||
		{ echo "python3-mroce-torch Depends: $got"; return 1; }
}
check "one shared library per package; the packages' Depends" split_ok

echo "== dpkg -i ${PKGS[*]}"
dpkg -i "${DEBS[@]}" >"$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; echo "test-debs: dpkg -i failed"; exit 1; }

# Outside the source tree, with a plain PATH.
run() { (cd / && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 MANPAGER=cat "$@"); }

man_ok() {
	local page=$1 path
	path=$(run man -w "$page") || return 1
	[[ $path == /usr/share/man/* ]] || { echo "man -w $page: $path"; return 1; }
	run man --warnings "$page" >"$TMP/man.out" 2>"$TMP/man.err" || { cat "$TMP/man.err"; return 1; }
	[ ! -s "$TMP/man.err" ] || { cat "$TMP/man.err"; return 1; }
	grep -q '^NAME' "$TMP/man.out" || { echo "man $page: no NAME"; return 1; }
}
for m in mroce mroce-perf mroce-coll-perf mroce-launch mroce-verbs libmroce; do check "man $m" man_ok "$m"; done

version_ok() { local out; out=$(run "$1" --version) && [[ $out == "$1 $VERSION"* ]] || { echo "$out"; return 1; }; }
# --help names the tool's man page, and no path of the source tree.
help_ok() {
	run "$1" --help >"$TMP/help" && [ -s "$TMP/help" ] || return 1
	grep -q "man .*$1" "$TMP/help" || { echo "names no man page"; return 1; }
	! grep -E '(docs|selftests|tools|scripts|examples)/|README|[A-Za-z]\.md\b' "$TMP/help"
}
for t in mroce mroce-perf mroce-coll-perf mroce-launch mroce-verbs; do
	check "$t --version" version_ok "$t"
	check "$t --help" help_ok "$t"
done

pc_ok() {
	local out
	out=$(run pkg-config --cflags --libs mroce) && echo "$out" && [[ " $out " == *" -lmroce "* ]] || return 1
	out=$(run pkg-config --modversion mroce-coll) && [ "$out" = "$VERSION" ]
}
check "pkg-config --cflags --libs mroce" pc_ok

app_ok() {
	cat >"$TMP/app.c" <<-'EOF'
		#include <errno.h>
		#include <stdio.h>
		#include <mroce/mroce.h>
		int main(void)
		{
			char buf[128];
			if (mroce_strerror(-ENODEV, buf, sizeof(buf)) < 0 || !buf[0])
				return 1;
			printf("%s %s\n", mroce_coll_dtype_str(MROCE_COLL_INT64), buf);
			return 0;
		}
	EOF
	# shellcheck disable=SC2046
	run sh -c "cc -Wall -Wextra -Werror -o $TMP/app $TMP/app.c \$(pkg-config --cflags --libs mroce-coll)" || return 1
	run ldd "$TMP/app" | grep -Eq "libmroce-coll.so.0 => (/usr)?/lib/" || { run ldd "$TMP/app"; return 1; }
	run "$TMP/app" | grep -q '^int64 ' || return 1
}
check "a program built with pkg-config mroce-coll" app_ok

# NCCL_NET_PLUGIN=mroce makes NCCL dlopen("libnccl-net-mroce.so"): with no LD_LIBRARY_PATH,
# the installed plugin is found, needs no libmroce .so and exports only its table, "mroce".
nccl_plugin_ok() {
	local so out
	so=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libnccl-net-mroce.so
	[ -f "$so" ] && [ ! -L "$so" ] || { echo "missing $so"; return 1; }
	! readelf -d "$so" | grep -E 'SONAME|NEEDED.*libmroce' || return 1
	out=$(nm -D --defined-only "$so" | awk '{ print $NF }')
	[ "$out" = ncclNetPlugin_v8 ] || { echo "exports '$out', not only ncclNetPlugin_v8"; return 1; }
	run cc -Wall -Wextra -Werror -o "$TMP/dl" "$SRC/selftests/nccl_dlopen.c" -ldl || return 1
	out=$(run "$TMP/dl" 2>&1) || { echo "dlopen: $out"; return 1; }
	[ "$out" = mroce ] || { echo "the plugin's name: '$out', not 'mroce'"; return 1; }
}
check "the NCCL plugin: dlopen(\"libnccl-net-mroce.so\") with no LD_LIBRARY_PATH" nccl_plugin_ok

files_ok() {
	local f
	for f in /usr/libexec/mroce/fabric/fabric /usr/libexec/mroce/fabric/fabric.bpf.o \
		 /usr/libexec/mroce/fabric/lib.sh /usr/libexec/mroce/netns.sh \
		 "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/mroce/mroce.bpf.o" \
		 /usr/share/bash-completion/completions/mroce-launch; do
		[ -e "$f" ] || { echo "missing $f"; return 1; }
	done
}
check "the launcher's helpers, the BPF object, completion" files_ok

# The PyTorch backend: Debian's python3, from / with no PYTHONPATH, imports it from the
# package's files; and the installed launcher runs a 2-rank all-reduce with it.
TORCH_PKG_DIR=/usr/lib/python3/dist-packages/mroce_torch
torch_import_ok() {
	local out
	out=$(run /usr/bin/python3 -c '
import mroce_torch, torch.distributed as dist
print(mroce_torch.__file__)
print(mroce_torch._ext.__file__)
print(dist.Backend.MROCE)' 2>&1) || { echo "$out"; return 1; }
	[ "$out" = "$TORCH_PKG_DIR/__init__.py
$TORCH_PKG_DIR/_mroce_torch.so
MROCE" ] || { echo "$out"; return 1; }
	! readelf -d "$TORCH_PKG_DIR/_mroce_torch.so" | grep -E 'NEEDED.*libmroce|RPATH|RUNPATH' || return 1
}
torch_job_ok() {
	local out
	out=$(run mroce-launch --name "$JOB" -n 2 --timeout 120 -- /usr/bin/python3 -c '
import torch, mroce_torch, torch.distributed as dist
dist.init_process_group("mroce")
t = torch.arange(4, dtype=torch.float64) + 10 * dist.get_rank()
dist.all_reduce(t)
assert t.tolist() == [10.0, 12.0, 14.0, 16.0], t
print("rank %d all_reduce ok" % dist.get_rank())
dist.destroy_process_group()' 2>&1) || { echo "$out"; return 1; }
	grep -q "^rank 0 all_reduce ok" <<<"$out" && grep -q "^\[1\] rank 1 all_reduce ok" <<<"$out" ||
		{ echo "$out"; return 1; }
}
if has_pkg python3-mroce-torch; then
	check "python3 -c 'import mroce_torch' from /, no PYTHONPATH" torch_import_ok
	check "installed mroce-launch: a 2-rank all-reduce with the installed PyTorch backend" torch_job_ok
fi

# bash-completion's loader finds each tool's completion by the tool's name.
completion_ok() {
	local t
	[ -f /usr/share/bash-completion/bash_completion ] || { echo "bash-completion is not installed"; return 1; }
	for t in mroce mroce-perf mroce-coll-perf mroce-launch; do
		run bash -c '. /usr/share/bash-completion/bash_completion; __load_completion "$1"; complete -p "$1"' \
			_ "$t" | grep -q -- "-F _mroce" || { echo "no completion loaded for $t"; return 1; }
	done
}
check "bash completion loads for every tool" completion_ok

# mroce's libibverbs, in no loader path: mroce-verbs finds it, the system's stays the default.
verbs_ok() {
	local dir out
	dir=$(run mroce-verbs --libdir) || return 1
	[ "$dir" = "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/mroce/verbs" ] || { echo "--libdir: $dir"; return 1; }
	"$SRC/verbs/check-exports.sh" "$dir/libibverbs.so.1" || return 1
	command -v ibv_devices >/dev/null || { echo "ibverbs-utils is not installed"; return 1; }
	out=$(run ldd /usr/bin/ibv_devices | grep 'libibverbs\.so\.1') && [[ $out != *"$dir"* ]] ||
		{ echo "without mroce-verbs: $out"; return 1; }
	out=$(run mroce-verbs ldd /usr/bin/ibv_devices | grep 'libibverbs\.so\.1') && [[ $out == *"$dir"* ]] ||
		{ echo "with mroce-verbs: $out"; return 1; }
	run mroce-verbs ibv_devices >/dev/null || return 1
}
check "installed mroce-verbs: its libibverbs exports rdma-core 44's ABI, ibv_devices runs on it" verbs_ok

launch_ok() {
	local out
	out=$(run mroce-launch --name "$JOB" -n 2 --timeout 120 -- mroce-coll-perf -b 8 -e 4K -f 8 -n 2 -w 1 \
		--warmup-ms 0 2>&1) || { echo "$out"; return 1; }
	out=$(run mroce-launch --name "$JOB" -n 2 --net fabric --timeout 60 -- \
		sh -c 'ping -c 1 -W 2 198.18.1.$((2 - RANK))' 2>&1) || { echo "$out"; return 1; }
}
check "installed mroce-launch: 2 ranks on a bridge (coll-perf) and on the fabric (ping)" launch_ok

remove_all
trap - EXIT
gone_ok() {
	local p
	for p in "${PKGS[@]}"; do
		! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || { echo "$p still installed"; return 1; }
	done
	[ ! -e /usr/bin/mroce ] && [ ! -e /usr/libexec/mroce ] && [ ! -e /usr/include/mroce ] &&
		[ ! -e "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/mroce" ] &&
		[ ! -e /usr/lib/python3/dist-packages/mroce_torch ] &&
		! compgen -G "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/lib*mroce*" >/dev/null
}
check "dpkg -r ${PKGS[*]} leaves nothing" gone_ok
echo "test-debs: the packages are kept in $OUT"
# the summary alone on its line: scripts/run-tests.sh reads it
echo "test-debs: $PASSED passed, $FAILED failed, 0 skipped"
[ "$FAILED" -eq 0 ]
