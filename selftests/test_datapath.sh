#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftests of the XDP datapath on a veth pair between two namespaces:
# attach with the CLI, `ip link` and libxdp's loader; crafted MetaRoCE frames
# from A reach an AF_XDP socket on B exactly when valid; ping and TCP keep
# working over the same link; detach leaves the link clean.
. "$(dirname "$0")/lib.sh"

# The full crafted suite: every opcode over IPv4 and IPv6 delivered once and
# placed; duplicates, spoofed, unknown-QP, out-of-window and malformed frames
# dropped, each under its own counter (peer.c checks the exact deltas).
crafted_suite() {
	rm -f "$TMP/sync"
	bg b "$PEER" recv --dev "$IF_B" --suite --sync "$TMP/sync" >"$TMP/recv.log" 2>&1
	local rpid=$!
	wait_for "$TMP/sync" ready 10 || { cat "$TMP/recv.log"; return 1; }
	a "$PEER" send --dev "$IF_A" --dst-mac "$MAC_B" --suite --sync "$TMP/sync" || return 1
	wait "$rpid"
	local rc=$?
	cat "$TMP/recv.log"
	return $rc
}

t_attach_cli_native() {
	b "$MROCE" attach "$IF_B" || return 1
	b "$MROCE" status "$IF_B" | tee "$TMP/status"
	grep -q "prog id [1-9][0-9]* mroce_xdp, native mode, UDP port 4792" "$TMP/status" || return 1
	b ip -d link show "$IF_B" | grep -q "prog/xdp id" || { echo "no native XDP program on $IF_B"; return 1; }
	b "$MROCE" status "$IF_B" --json | grep -q '"mode":"native","udp_port":4792' || return 1
}

t_crafted_frames_and_normal_traffic() {
	b "$MROCE" attach "$IF_B" || return 1
	normal_traffic_ok 5201 || return 1
	crafted_suite || return 1
	normal_traffic_ok 5202 || return 1
	local pass
	pass=$(counter "$IF_B" pass)
	echo "kernel-bound frames passed by XDP: $pass"
	[ "${pass:-0}" -gt 10 ] || { echo "ping/TCP frames did not go through the program"; return 1; }
	b "$MROCE" status "$IF_B"
}

# Packets the program accepted but the socket could not take (no fill
# buffers) must not look received: their retransmissions are accepted.
t_fill_ring_starvation() {
	b "$MROCE" attach "$IF_B" || return 1
	rm -f "$TMP/sync"
	bg b "$PEER" recv --dev "$IF_B" --count 10 --psn 5000 --starve 10 --sync "$TMP/sync" \
		>"$TMP/recv.log" 2>&1
	local rpid=$!
	wait_for "$TMP/sync" ready 10 || { cat "$TMP/recv.log"; return 1; }
	a "$PEER" send --dev "$IF_A" --dst-mac "$MAC_B" --count 10 --psn 5000 || return 1
	wait_for "$TMP/sync" starved 10 || { cat "$TMP/recv.log"; return 1; }
	cat "$TMP/sync"
	a "$PEER" send --dev "$IF_A" --dst-mac "$MAC_B" --count 10 --psn 5000 || return 1
	wait "$rpid" || { cat "$TMP/recv.log"; return 1; }
	cat "$TMP/recv.log"
	grep -q "received=10 placed=10 dup=0 .* rx_base=5010" "$TMP/recv.log" || return 1
	local rx dup
	rx=$(counter "$IF_B" rx)
	dup=$(counter "$IF_B" duplicate)
	echo "datapath: rx=$rx duplicate=$dup"
	[ "$rx" = 20 ] && [ "$dup" = 0 ]
}

t_detach_leaves_link_clean() {
	# One shell: every `ip netns exec` mounts its own /sys (and a bpffs, if
	# pinning needs one), so pins made there live as long as that shell.
	b sh -c "'$MROCE' attach '$IF_B' --pin && ls /sys/fs/bpf/mroce/$IF_B/ &&
		 '$MROCE' detach '$IF_B' && ! ls /sys/fs/bpf/mroce 2>/dev/null" ||
		{ echo "pins not created or not removed"; return 1; }
	if b ip -d link show "$IF_B" | grep -q xdp; then
		echo "XDP still attached after detach:"; b ip -d link show "$IF_B"; return 1
	fi
	b "$MROCE" detach "$IF_B" 2>"$TMP/err"
	[ $? -eq 1 ] && grep -q "mroce: detach $IF_B: mroce datapath is not attached" "$TMP/err" || return 1
	normal_traffic_ok 5203
}

t_attach_with_ip_link() {
	b ip link set dev "$IF_B" xdp obj "$BUILD/mroce.bpf.o" sec xdp.frags || return 1
	b "$MROCE" status "$IF_B" | grep -q "mroce_xdp, native mode" || { echo "mroce status cannot find it"; return 1; }
	normal_traffic_ok 5204 || return 1
	# Standalone, no flows: MetaRoCE is dropped as unknown QP, nothing else touched.
	a "$PEER" send --dev "$IF_A" --dst-mac "$MAC_B" --count 3 --qpn 99 || return 1
	sleep 0.2
	[ "$(counter "$IF_B" unknown_qp)" = 3 ] || { echo "unknown_qp: $(counter "$IF_B" unknown_qp), want 3"; return 1; }
	crafted_suite || return 1
	b ip link set dev "$IF_B" xdp off || return 1
	! b ip -d link show "$IF_B" | grep -q xdp
}

t_generic_mode() {
	b "$MROCE" attach "$IF_B" --mode skb || return 1
	b ip -d link show "$IF_B" | grep -q "prog/xdp id" || true
	b ip link show "$IF_B" | grep -q xdpgeneric || { echo "not attached in generic mode"; return 1; }
	b "$MROCE" status "$IF_B" | grep -q "skb mode" || return 1
	crafted_suite || return 1
	normal_traffic_ok 5205 || return 1
	b "$MROCE" detach "$IF_B" && ! b ip link show "$IF_B" | grep -q xdp
}

t_attach_with_libxdp() {
	command -v xdp-loader >/dev/null || { echo "xdp-loader (xdp-tools) not installed"; return $SKIP; }
	b xdp-loader load -m native "$IF_B" "$BUILD/mroce.bpf.o" || return 1
	b "$MROCE" status "$IF_B" | grep -q "mroce_xdp, native mode" || { echo "mroce status cannot find it"; return 1; }
	crafted_suite || return 1
	b xdp-loader unload "$IF_B" --all || return 1
	! b ip link show "$IF_B" | grep -q xdp
}

# expect_fail RC PATTERN CMD...: CMD exits RC with PATTERN in its one-line error.
expect_fail() {
	local want=$1 pat=$2 rc
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -ne "$want" ] || ! grep -q -- "$pat" "$TMP/err"; then
		echo "'$*' exited $rc (want $want), stderr: $(cat "$TMP/err")"
		return 1
	fi
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || { echo "'$*' printed more than one line:"; cat "$TMP/err"; return 1; }
	echo "ok: $* -> $(cat "$TMP/err")"
}

t_cli_errors() {
	expect_fail 1 "attach nosuch0: no such device" b "$MROCE" attach nosuch0 || return 1
	expect_fail 1 "object file '/nonexistent.o' not found" b "$MROCE" attach "$IF_B" --obj /nonexistent.o || return 1
	expect_fail 1 "XDP native mode is not supported by this device (try --mode skb)" b "$MROCE" attach lo || return 1
	expect_fail 1 "status $IF_B: mroce datapath is not attached" b "$MROCE" status "$IF_B" || return 1
	expect_fail 2 "unknown command" b "$MROCE" bogus || return 1
	expect_fail 2 "--mode must be native or skb" b "$MROCE" attach "$IF_B" --mode fast || return 1
	cp "$MROCE" "$TMP/mroce" && chmod 755 "$TMP/mroce"
	expect_fail 1 "needs root" b setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/mroce" attach "$IF_B" || return 1

	b "$MROCE" attach "$IF_B" >/dev/null || return 1
	expect_fail 1 "already attached" b "$MROCE" attach "$IF_B" || return 1
	expect_fail 1 "QPN 5 has no flow" b "$MROCE" flow del "$IF_B" 5 || return 1
	b "$MROCE" flow add "$IF_B" 5 --token 1 >/dev/null || return 1
	expect_fail 1 "QPN 5 already has a flow" b "$MROCE" flow add "$IF_B" 5 --token 2 || return 1
	b "$MROCE" flows "$IF_B" --json | grep -q '"qpn":5' || return 1
	b "$MROCE" detach "$IF_B" >/dev/null || return 1

	b ip link set dev "$IF_B" xdp obj "$BUILD/selftests/foreign.bpf.o" sec xdp || return 1
	expect_fail 1 "another XDP program is already attached" b "$MROCE" attach "$IF_B" || return 1
	expect_fail 1 "another XDP program is attached" b "$MROCE" detach "$IF_B" || return 1
	expect_fail 1 "another XDP program is attached" b "$MROCE" status "$IF_B" || return 1
	b ip link show "$IF_B" | grep -q "prog/xdp" || { echo "the foreign program was removed"; return 1; }
	b ip link set dev "$IF_B" xdp off
}

# JSON output escapes what it prints: an interface named q"x\y (legal on
# Linux) round-trips through `mroce status --json` and a JSON parser.
t_status_json_odd_ifname() {
	local odd='q"x\y'
	b ip link add "$odd" type veth peer name qxpeer || return 1
	b ip link set "$odd" up && b ip link set qxpeer up || return 1
	b "$MROCE" attach "$odd" || return 1
	b "$MROCE" status "$odd" --json >"$TMP/odd.json" || return 1
	cat "$TMP/odd.json"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print("ifname:", repr(d["ifname"])); sys.exit(d["ifname"] != sys.argv[2] or d["mode"] != "native")' \
		"$TMP/odd.json" "$odd" || { echo "the interface name did not round-trip"; return 1; }
	b "$MROCE" detach "$odd" >/dev/null
}

require_root datapath
run_test "attach with the CLI in native mode" t_attach_cli_native
run_test "crafted frames reach AF_XDP exactly when valid; ping and TCP unharmed" t_crafted_frames_and_normal_traffic
run_test "fill-ring starvation: lost packets are accepted again" t_fill_ring_starvation
run_test "detach leaves the link clean" t_detach_leaves_link_clean
run_test "standalone attach with ip link" t_attach_with_ip_link
run_test "generic (skb) mode" t_generic_mode
run_test "attach with libxdp's loader (single-program fallback)" t_attach_with_libxdp
run_test "CLI errors" t_cli_errors
run_test "status --json escapes an interface name with a quote and a backslash" t_status_json_odd_ifname
summary datapath
