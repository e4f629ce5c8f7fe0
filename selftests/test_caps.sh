#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftest of the capability table (libmroce(7), CAPABILITIES): each
# operation run as user nobody holding exactly the capabilities the table
# gives it (setpriv, ambient set), asserting it works; then once more for
# each of those capabilities, without it, asserting it fails and that the
# message names that capability.
#
# The test runs in a mount namespace of its own with a fresh bpffs on
# /sys/fs/bpf (pins made here never reach the host's), and enters the
# network namespaces with nsenter --net so every command sees that bpffs;
# and in a PID namespace of its own, so that `mroce status` scans only the
# test's processes (a host's may be guarded beyond capabilities).
# In a chroot whose root is not a mount point (a fresh machine's build
# root) the root's propagation cannot be changed: the namespace is then made
# with it unchanged, and /sys made a slave before the bpffs goes on it, so
# that nothing mounted here reaches the host's namespace either way
# (CAPS_PROPAGATION_UNCHANGED=1 takes that way on a host too).
UNSHARE=(unshare --mount --propagation private --pid --fork --mount-proc)
UNSHARE_CHROOT=(unshare --mount --propagation unchanged --pid --fork --mount-proc)
if [ "$(id -u)" = 0 ] && [ -z "${CAPS_MNTNS:-}" ]; then
	if [ -z "${CAPS_PROPAGATION_UNCHANGED:-}" ] && "${UNSHARE[@]}" true 2>/dev/null; then
		CAPS_MNTNS=1 exec "${UNSHARE[@]}" "$BASH" "$0" "$@"
	fi
	if "${UNSHARE_CHROOT[@]}" true 2>/dev/null; then
		CAPS_MNTNS=1 CAPS_SLAVE_SYS=1 exec "${UNSHARE_CHROOT[@]}" "$BASH" "$0" "$@"
	fi
	CAPS_MNTNS=none
fi
export NETNS_EXEC=nsenter MROCE_NETNS_EXEC=nsenter
. "$(dirname "$0")/lib.sh"

PERF=$BUILD/mroce-perf
CPERF=$BUILD/mroce-coll-perf
RT=$BUILD/selftests/rdma_test
LAUNCH=$ROOT/tools/mroce-launch
export BUILD

# The table's rows, as setpriv names capabilities.
CAPS_ATTACH="net_admin bpf perfmon net_raw ipc_lock"	# opens a device, attaching it if need be
CAPS_OPEN_PINNED="net_raw ipc_lock"			# opens a device attached with --pin
CAPS_STATUS_PINNED=""					# mroce status of a device attached with --pin
CAPS_DETACH_PINNED="net_admin"				# mroce detach of a device attached with --pin

# setpriv_argv "CAPS": the command prefix running what follows as user
# nobody with exactly CAPS (effective, permitted, inheritable, ambient and
# bounding: nothing else to regain), in SP.
setpriv_argv() {
	local list="" c
	for c in $1; do list="$list,+$c"; done
	SP=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups
	    --inh-caps="-all$list" --ambient-caps="-all$list" --bounding-set="-all$list" --)
}
# a_caps / b_caps "CAPS" CMD...: CMD on host A / B as nobody with CAPS.
a_caps() { local SP; setpriv_argv "$1"; shift; a "${SP[@]}" "$@"; }
# a_caps_timeout SECS "CAPS" CMD...: a_caps under timeout(1), which runs as
# root and execs setpriv, the way every other command here starts: in a
# fresh machine's chroot (/root 0700, the build under it) a wrapper run as
# nobody (timeout, prlimit) cannot execute CMD, though setpriv can. Every
# wrapper goes before setpriv.
a_caps_timeout() { local SP s=$1; setpriv_argv "$2"; shift 2; a timeout "$s" "${SP[@]}" "$@"; }
b_caps() { local SP; setpriv_argv "$1"; shift; b "${SP[@]}" "$@"; }

# without "CAPS" CAP: CAPS less CAP.
without() { local c out=""; for c in $1; do [ "$c" = "$2" ] || out="$out $c"; done; echo "$out"; }

# The name the message must carry for a setpriv capability name.
cap_name() { echo "CAP_$1" | tr '[:lower:]' '[:upper:]'; }

# Pins made by root are root's: give the user the device's pin directory.
grant_pins() {
	chmod 755 /sys/fs/bpf/mroce && chown -R nobody "/sys/fs/bpf/mroce/$1"
}

precheck() {
	[ "${CAPS_MNTNS:-}" = 1 ] || { echo "cannot make mount and PID namespaces (unshare)"; return $SKIP; }
	setpriv --help 2>&1 | grep -q -- --ambient-caps || { echo "setpriv without --ambient-caps"; return $SKIP; }
	id nobody >/dev/null 2>&1 || { echo "no user nobody"; return $SKIP; }
	if [ "${CAPS_SLAVE_SYS:-}" = 1 ]; then
		mount --make-rslave /sys || { echo "cannot make /sys a slave mount"; return 1; }
	fi
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null || { echo "cannot mount a bpffs on /sys/fs/bpf"; return $SKIP; }
	chmod 755 /sys/fs/bpf
}

# expect_refusal CAP LOG: the command whose output is LOG failed naming CAP.
expect_refusal() {
	grep -q "needs $(cap_name "$1")" "$2" ||
		{ echo "without $1: no message naming $(cap_name "$1"):"; sed 's/^/    /' "$2"; return 1; }
	echo "without $1: $(head -n 1 "$2")"
}

# server_refused CAPS CAP: mroce-perf server on B with CAPS less CAP must
# fail naming CAP (ipc_lock: the UMEM, 8 MiB, over a 4 MiB locked-memory limit).
server_refused() {
	local lim=() SP
	[ "$2" = ipc_lock ] && lim=(prlimit --memlock=$((4 << 20)))
	# prlimit as root, execing setpriv (see a_caps_timeout), the limit inherited
	setpriv_argv "$(without "$1" "$2")"
	b "${lim[@]}" "${SP[@]}" "$PERF" server -d "$IF_B" "$IP_B" \
		>"$TMP/no.log" 2>&1 && { echo "without $2: the server started"; return 1; }
	expect_refusal "$2" "$TMP/no.log"
}

# perf_pair CAPS: mroce-perf server (B) and client (A) with CAPS, WRITE of
# 200 x 64 KiB; the client's row, and B's datapath counters moved by as much.
perf_pair() {
	local caps=$1 rx0 rx1
	rx0=$(b "$MROCE" status "$IF_B" --json 2>/dev/null | sed -n 's/.*"rx_bytes":\([0-9]*\).*/\1/p')
	rm -f "$TMP/srv.log"
	bg b_caps "$caps" "$PERF" server -d "$IF_B" "$IP_B" >"$TMP/srv.log" 2>&1
	wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; return 1; }
	a_caps_timeout 60 "$caps" "$PERF" client -d "$IF_A" --test write_bw -s 64k -n 200 "$IP_B" \
		>"$TMP/cli.log" 2>&1 || { echo "client failed:"; cat "$TMP/cli.log" "$TMP/srv.log"; return 1; }
	awk '$1 == 65536 && $2 == 200 && $4 > 0 { found = 1 } END { exit !found }' "$TMP/cli.log" ||
		{ echo "no 65536-byte row of 200 iterations:"; cat "$TMP/cli.log"; return 1; }
	rx1=$(b "$MROCE" status "$IF_B" --json | sed -n 's/.*"rx_bytes":\([0-9]*\).*/\1/p')
	[ $((rx1 - ${rx0:-0})) -ge $((200 * 65536)) ] ||
		{ echo "B's datapath redirected $((rx1 - ${rx0:-0})) bytes, < 200 x 64 KiB"; return 1; }
	echo "mroce-perf with [$caps]: $(tail -n 1 "$TMP/cli.log")"
	teardown_procs
}

# rdma_test's exchange, every byte checked by the client, with CAPS.
rdma_pair() {
	local caps=$1
	rm -f "$TMP/srv.log"
	bg b_caps "$caps" "$RT" server --dev "$IF_B" --addr "$IP_B" >"$TMP/srv.log" 2>&1
	wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; return 1; }
	a_caps_timeout 120 "$caps" "$RT" client --dev "$IF_A" --addr "$IP_B" >"$TMP/rt.log" 2>&1 ||
		{ echo "rdma_test client failed:"; tail -n 20 "$TMP/rt.log"; return 1; }
	echo "rdma_test (content checked) with [$caps]: ok"
	teardown_procs
}

# Stop whatever the test left running in the namespaces.
teardown_procs() {
	local ns p
	for ns in "$NS_A" "$NS_B"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill "$p" 2>/dev/null; done
	done
	for p in "${BG_PIDS[@]+"${BG_PIDS[@]}"}"; do wait "$p" 2>/dev/null; done
	BG_PIDS=()
}

# A fresh interface: the process attaches, with CAPS_ATTACH and no more.
t_attach_and_open() {
	local c
	precheck || return $?
	perf_pair "$CAPS_ATTACH" || return 1
	b "$MROCE" detach "$IF_B" >/dev/null && a "$MROCE" detach "$IF_A" >/dev/null || return 1
	rdma_pair "$CAPS_ATTACH" || return 1
	for c in $CAPS_ATTACH; do
		b "$MROCE" detach "$IF_B" >/dev/null 2>&1
		server_refused "$CAPS_ATTACH" "$c" || return 1
	done
	# and `mroce attach` itself: the same three capabilities to load and attach
	for c in net_admin bpf perfmon; do
		b "$MROCE" detach "$IF_B" >/dev/null 2>&1
		b_caps "$(without "net_admin bpf perfmon" "$c")" "$MROCE" attach "$IF_B" \
			>"$TMP/no.log" 2>&1 && { echo "attach without $c succeeded"; return 1; }
		expect_refusal "$c" "$TMP/no.log" || return 1
	done
	b_caps "net_admin bpf perfmon" "$MROCE" attach "$IF_B" || return 1
	# without pins, status and detach find the program by id: CAP_SYS_ADMIN
	b_caps "net_admin bpf perfmon net_raw" "$MROCE" status "$IF_B" >"$TMP/no.log" 2>&1 &&
		{ echo "status without pins or CAP_SYS_ADMIN succeeded"; return 1; }
	expect_refusal sys_admin "$TMP/no.log" || return 1
	b_caps "net_admin" "$MROCE" detach "$IF_B" >"$TMP/no.log" 2>&1 &&
		{ echo "detach without pins or CAP_SYS_ADMIN succeeded"; return 1; }
	expect_refusal sys_admin "$TMP/no.log" || return 1
	b_caps "sys_admin" "$MROCE" status "$IF_B" >/dev/null || { echo "status with CAP_SYS_ADMIN failed"; return 1; }
	b_caps "sys_admin" "$MROCE" detach "$IF_B" >"$TMP/no.log" 2>&1 &&
		{ echo "detach without CAP_NET_ADMIN succeeded"; return 1; }
	expect_refusal net_admin "$TMP/no.log" || return 1
	b_caps "net_admin sys_admin" "$MROCE" detach "$IF_B" || return 1
}

# Attached with --pin (by root, pins given to the user): status with no
# capability, devices opened with CAPS_OPEN_PINNED, detach with net_admin.
t_pinned() {
	local c
	precheck || return $?
	a "$MROCE" attach "$IF_A" --pin >/dev/null && b "$MROCE" attach "$IF_B" --pin >/dev/null || return 1
	grant_pins "$IF_A" && grant_pins "$IF_B" || return 1
	b_caps "$CAPS_STATUS_PINNED" "$MROCE" status "$IF_B" >"$TMP/st.log" 2>&1 ||
		{ echo "status with no capability failed:"; cat "$TMP/st.log"; return 1; }
	grep -q "^$IF_B (ifindex [0-9]*): prog id [0-9]* mroce_xdp, .*maps pinned in /sys/fs/bpf/mroce/$IF_B" \
		"$TMP/st.log" || { echo "status: no device line"; cat "$TMP/st.log"; return 1; }
	grep -q '^  rx  *[0-9]' "$TMP/st.log" || { echo "status: no counters"; return 1; }
	# flow add / flows / flow del write and read the pinned flows map
	b_caps "" "$MROCE" flow add "$IF_B" 77 --token 0x1234 >"$TMP/fl.log" 2>&1 &&
		b_caps "" "$MROCE" flows "$IF_B" >>"$TMP/fl.log" 2>&1 && grep -q '^ *77  *0  *sack ' "$TMP/fl.log" &&
		b_caps "" "$MROCE" flow del "$IF_B" 77 >>"$TMP/fl.log" 2>&1 &&
		! b "$MROCE" flows "$IF_B" | grep -q '^ *77 ' ||
		{ echo "flow add/flows/flow del with no capability failed:"; cat "$TMP/fl.log"; return 1; }
	# the sockets' counters (a root server's socket in B): not read, and why
	rm -f "$TMP/srv.log"
	bg b "$PERF" server -d "$IF_B" "$IP_B" >"$TMP/srv.log" 2>&1
	wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; return 1; }
	for c in "" sys_ptrace dac_read_search; do
		b_caps "$c" "$MROCE" status "$IF_B" >"$TMP/st.log" 2>&1 || { cat "$TMP/st.log"; return 1; }
		grep -q "AF_XDP sockets' kernel counters: not read (.*needs CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH" \
			"$TMP/st.log" || { echo "status with [$c] does not say the sockets' counters need" \
				"CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH:"; cat "$TMP/st.log"; return 1; }
	done
	echo "status, sockets' counters without both: $(grep "AF_XDP sockets'" "$TMP/st.log")"
	b_caps "" "$MROCE" status "$IF_B" --json | grep -q '"xsk_error":"[^"]*CAP_SYS_PTRACE' ||
		{ echo "status --json: no xsk_error naming CAP_SYS_PTRACE"; return 1; }
	b_caps "sys_ptrace dac_read_search" "$MROCE" status "$IF_B" >"$TMP/st.log" 2>&1 &&
		grep -q '^AF_XDP sockets in this network namespace: 1,' "$TMP/st.log" ||
		{ echo "status with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH did not read the server's socket:"
		  cat "$TMP/st.log"; return 1; }
	teardown_procs
	echo "status of a pinned device with no capability: ok; the socket's counters with both: ok"
	perf_pair "$CAPS_OPEN_PINNED" || return 1
	rdma_pair "$CAPS_OPEN_PINNED" || return 1
	for c in $CAPS_OPEN_PINNED; do
		server_refused "$CAPS_OPEN_PINNED" "$c" || return 1
	done
	b_caps "" "$MROCE" detach "$IF_B" >"$TMP/no.log" 2>&1 && { echo "detach with nothing succeeded"; return 1; }
	expect_refusal net_admin "$TMP/no.log" || return 1
	b_caps "$CAPS_DETACH_PINNED" "$MROCE" detach "$IF_B" || return 1
	[ -z "$(ls /sys/fs/bpf/mroce/$IF_B 2>/dev/null)" ] || { echo "pins left after detach"; return 1; }
	b "$MROCE" status "$IF_B" 2>&1 | grep -q 'not attached' || { echo "still attached"; return 1; }
}

# Pins are trusted only while their program is the one attached: a stale
# pin (the program replaced behind mroce's back) is not followed, and
# without ids the refusal names CAP_SYS_ADMIN.
t_stale_pins_untrusted() {
	precheck || return $?
	b "$MROCE" attach "$IF_B" --pin >/dev/null || return 1
	grant_pins "$IF_B" || return 1
	b ip link set dev "$IF_B" xdp off || return 1
	b "$MROCE" attach "$IF_B" >/dev/null || return 1	# a new program, its pins the old one's
	b_caps "" "$MROCE" status "$IF_B" >"$TMP/no.log" 2>&1 && { echo "status followed a stale pin"; return 1; }
	expect_refusal sys_admin "$TMP/no.log" || return 1
	b_caps "$CAPS_OPEN_PINNED" "$PERF" server -d "$IF_B" "$IP_B" >"$TMP/no.log" 2>&1 &&
		{ echo "a device opened through a stale pin"; return 1; }
	expect_refusal sys_admin "$TMP/no.log" || return 1
	b_caps "sys_admin" "$MROCE" status "$IF_B" >/dev/null || { echo "status with CAP_SYS_ADMIN failed"; return 1; }
}

# A 2-rank collective, each rank attaching its fresh interface with CAPS_ATTACH.
t_collective() {
	local out
	precheck || return $?
	local SP
	setpriv_argv "$CAPS_ATTACH"
	out=$("$LAUNCH" run -n 2 --name "caps$$" --timeout 120 -- "${SP[@]}" \
		"$CPERF" -b 8 -e 64K -f 8 -n 2 -w 1 -c 1 --warmup-ms 0 2>&1) || { echo "$out"; return 1; }
	printf '%s\n' "$out"
	# 8, 64, 512, 4096, 32768 bytes: #wrong 0 out of place and in place
	[ "$(printf '%s\n' "$out" | awk '!/^#/ && NF == 13 && $9 == 0 && $13 == 0' | wc -l)" -eq 5 ] ||
		{ echo "expected 5 checked rows, #wrong 0"; return 1; }
	setpriv_argv "$(without "$CAPS_ATTACH" net_raw)"
	out=$("$LAUNCH" run -n 2 --name "caps$$" --timeout 120 -- "${SP[@]}" \
		"$CPERF" -b 8 -e 64K -f 8 -n 2 -w 1 -c 1 --warmup-ms 0 2>&1) &&
		{ echo "the collective ran without CAP_NET_RAW"; return 1; }
	printf '%s\n' "$out" | grep -q 'needs CAP_NET_RAW' ||
		{ echo "without net_raw: no message naming CAP_NET_RAW:"; printf '%s\n' "$out"; return 1; }
	echo "without net_raw: $(printf '%s\n' "$out" | grep -m1 'needs CAP_NET_RAW')"
}

require_root test_caps
if [ $# -gt 0 ]; then TESTS=("$@"); else
	TESTS=(t_attach_and_open t_pinned t_stale_pins_untrusted t_collective)
fi
for t in "${TESTS[@]}"; do
	run_test "caps ${t#t_}" "$t"
done
summary test_caps
