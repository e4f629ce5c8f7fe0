#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftests of the XDP datapath on a veth pair between two namespaces:
# attach with the CLI (through libxdp), `ip link` and libxdp's loader; named
# counters in `mroce status` (text, JSON, Prometheus) and bpftool; crafted MetaRoCE frames
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

# mroce attaches through libxdp, which tries its multi-program dispatcher
# first (with a bpffs: it needs one) and, refused on this kernel (EPERM),
# attaches mroce's program alone; on a kernel that allows the dispatcher,
# mroce runs behind it and status and detach find it there. One shell: the
# bpffs mounted inside `ip netns exec` lives as long as that command. At
# MTU 9000 the attach also shows the program kept its frags support.
t_attach_through_libxdp() {
	b sh -c "[ \"\$(stat -f -c %T /sys/fs/bpf 2>/dev/null)\" = bpf_fs ] || mount -t bpf bpf /sys/fs/bpf || exit 1
		 '$MROCE' -v attach '$IF_B' 2>'$TMP/libxdp.log' >/dev/null || exit 1
		 ip -d link show '$IF_B' >'$TMP/link'
		 '$MROCE' status '$IF_B' >'$TMP/status' || exit 1
		 '$MROCE' detach '$IF_B'" || { cat "$TMP/libxdp.log"; return 1; }
	grep -E "^libxdp: .*(dispatcher|Falling back|not permitted)" "$TMP/libxdp.log"
	grep -q "^libxdp: " "$TMP/libxdp.log" || { echo "libxdp was not used"; return 1; }
	grep -q "mroce_xdp, native mode" "$TMP/status" || { cat "$TMP/status"; return 1; }
	if grep -q "prog/xdp id [0-9]* name xdp_dispatcher" "$TMP/link"; then
		echo "this kernel allows libxdp's dispatcher: mroce ran behind it"
	else
		grep -q "prog/xdp id [0-9]* name mroce_xdp " "$TMP/link" || { cat "$TMP/link"; return 1; }
		echo "single-program path: $(grep -o 'prog/xdp id [0-9]* name mroce_xdp' "$TMP/link")"
	fi
	! b ip link show "$IF_B" | grep -q xdp || { echo "XDP still attached after detach"; return 1; }
}

# The counters have names in the map's BTF: bpftool prints them, and their
# per-CPU sums are what `mroce status` says.
bpftool_counters() {	# DEV FILE: the stats map of DEV's program, as bpftool dumps it
	local prog map
	prog=$(counter "$1" prog_id)
	for map in $(b bpftool -j prog show id "$prog" | python3 -c 'import json,sys; print(*json.load(sys.stdin)["map_ids"])'); do
		if b bpftool -j map show id "$map" | grep -q '"name":"mroce_stats"'; then
			b bpftool map dump id "$map" >"$2"
			return
		fi
	done
	echo "no mroce_stats map on program $prog"
	return 1
}

# prom_value FILE METRIC: the value of METRIC's sample in an exposition.
prom_value() { sed -n "s/^$2{[^}]*} \([0-9]*\)\$/\1/p" "$1"; }

# status --prometheus on a real attach: counters move with the traffic
# (ping through the program, three frames to an unknown QP), bpftool's
# named dump agrees, and a Prometheus parser reads the whole exposition.
t_status_prometheus() {
	b "$MROCE" attach "$IF_B" >/dev/null || return 1
	b "$MROCE" status "$IF_B" --prometheus >"$TMP/p0" || return 1
	a ping -c 3 -i 0.2 -W 2 "$IP_B" >/dev/null || { echo "ping failed"; return 1; }
	a "$PEER" send --dev "$IF_A" --dst-mac "$MAC_B" --count 3 --qpn 99 || return 1
	sleep 0.2
	b "$MROCE" status "$IF_B" --prometheus >"$TMP/p1" || return 1
	grep -E "^mroce_xdp_(pass|unknown_qp)_total|^mroce_xdp_attached_info|^mroce_xsk_sockets" "$TMP/p1"
	local p0 p1 u0 u1
	p0=$(prom_value "$TMP/p0" mroce_xdp_pass_total)
	p1=$(prom_value "$TMP/p1" mroce_xdp_pass_total)
	u0=$(prom_value "$TMP/p0" mroce_xdp_unknown_qp_total)
	u1=$(prom_value "$TMP/p1" mroce_xdp_unknown_qp_total)
	[ -n "$p0" ] && [ -n "$p1" ] && [ "$p1" -ge $((p0 + 3)) ] ||
		{ echo "mroce_xdp_pass_total went $p0 -> $p1 across a ping of 3"; return 1; }
	[ "$u0" = 0 ] && [ "$u1" = 3 ] || { echo "mroce_xdp_unknown_qp_total $u0 -> $u1, want 0 -> 3"; return 1; }
	grep -qx '# TYPE mroce_xdp_unknown_qp_total counter' "$TMP/p1" || return 1
	grep -q "^mroce_xdp_attached_info{dev=\"$IF_B\",mode=\"native\",prog_id=\"[1-9][0-9]*\",udp_port=\"4792\"} 1\$" "$TMP/p1" || return 1
	grep -q "^mroce_xsk_rx_dropped{dev=\"$IF_B\"} [0-9]*\$" "$TMP/p1" || { echo "no AF_XDP socket counters"; return 1; }
	/usr/bin/python3 - "$TMP/p1" "$IF_B" <<'PY' || return 1
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))
samples = [s for f in fams for s in f.samples]
assert all(s.labels["dev"] == sys.argv[2] for s in samples), "a sample lacks dev"
uq = [s.value for s in samples if s.name == "mroce_xdp_unknown_qp_total"]
assert uq == [3.0], uq
print("prometheus_client parsed %d families, %d samples" % (len(fams), len(samples)))
PY
	bpftool_counters "$IF_B" "$TMP/bpftool.json" || return 1
	python3 - "$TMP/bpftool.json" "$u1" "$p1" <<'PY' || { head -30 "$TMP/bpftool.json"; return 1; }
import json, sys
d = json.load(open(sys.argv[1]))
cpus = d[0]["values"]
uq = sum(c["value"]["unknown_qp"] for c in cpus)
names = list(cpus[0]["value"])
print("bpftool: %d named counters per CPU (%s ... %s), unknown_qp summed %d" % (len(names), names[0], names[-1], uq))
assert uq == int(sys.argv[2]) and "dup_retx_limit" in names and "placed_bytes" in names
assert sum(c["value"]["pass"] for c in cpus) >= int(sys.argv[3])
PY
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
	# The object as built has placement in XDP off (any kernel loads it).
	[ "$(counter "$IF_B" xdp_places)" = 0 ] || { echo "xdp_places: '$(counter "$IF_B" xdp_places)', want 0 for ip link's load"; return 1; }
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
	[ "$(counter "$IF_B" xdp_places)" = 0 ] || { echo "xdp_places: '$(counter "$IF_B" xdp_places)', want 0 for xdp-loader's load"; return 1; }
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
	expect_fail 2 "--json and --prometheus exclude each other" b "$MROCE" status "$IF_B" --json --prometheus || return 1
	# --help and --version: stdout, exit 0, nothing on stderr; the Makefile's version.
	b "$MROCE" --help >"$TMP/out" 2>"$TMP/err" && [ ! -s "$TMP/err" ] &&
		grep -q "^Usage: mroce" "$TMP/out" || { echo "--help: $(cat "$TMP/err")"; return 1; }
	b "$MROCE" status --help >"$TMP/out" 2>"$TMP/err" && [ ! -s "$TMP/err" ] &&
		grep -q "status DEV \[--json | --prometheus\]" "$TMP/out" || return 1
	local ver
	# the Makefile's VERSION, however it is defined there (it reads the public header)
	ver=$(make -s --no-print-directory -C "$ROOT" BUILD=/nonexistent \
		--eval 'print-mroce-version: ; @echo $(VERSION)' print-mroce-version 2>/dev/null)
	[ -n "$ver" ] || { echo "cannot read VERSION from the Makefile"; return 1; }
	b "$MROCE" --version >"$TMP/out" 2>"$TMP/err" && [ ! -s "$TMP/err" ] &&
		grep -qx "mroce $ver (wire protocol version [0-9]*)" "$TMP/out" ||
		{ echo "--version printed '$(cat "$TMP/out")', want mroce $ver"; return 1; }
	echo "ok: --help, --version -> $(cat "$TMP/out")"
	expect_fail 2 "--mode must be native or skb" b "$MROCE" attach "$IF_B" --mode fast || return 1
	cp "$MROCE" "$TMP/mroce" && chmod 755 "$TMP/mroce"
	expect_fail 1 "needs CAP_NET_ADMIN" b setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/mroce" attach "$IF_B" || return 1

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
	b "$MROCE" status "$odd" --prometheus >"$TMP/odd.prom" || return 1
	grep '^mroce_xdp_rx_total' "$TMP/odd.prom"
	/usr/bin/python3 -c 'import sys; from prometheus_client.parser import text_string_to_metric_families as p; s = [x for f in p(open(sys.argv[1]).read()) for x in f.samples]; sys.exit(not s or any(x.labels["dev"] != sys.argv[2] for x in s))' \
		"$TMP/odd.prom" "$odd" || { echo "the interface name did not round-trip through the exposition"; return 1; }
	b "$MROCE" detach "$odd" >/dev/null
}

require_root datapath
run_test "attach with the CLI in native mode" t_attach_cli_native
run_test "the CLI attaches through libxdp (single program here)" t_attach_through_libxdp
run_test "the CLI attaches through libxdp at MTU 9000 (frags kept)" t_attach_through_libxdp 9000
run_test "status --prometheus: counters move, bpftool names them" t_status_prometheus
run_test "crafted frames reach AF_XDP exactly when valid; ping and TCP unharmed" t_crafted_frames_and_normal_traffic
run_test "fill-ring starvation: lost packets are accepted again" t_fill_ring_starvation
run_test "detach leaves the link clean" t_detach_leaves_link_clean
run_test "standalone attach with ip link" t_attach_with_ip_link
run_test "generic (skb) mode" t_generic_mode
run_test "attach with libxdp's loader (single-program fallback)" t_attach_with_libxdp
run_test "CLI errors" t_cli_errors
run_test "status --json and --prometheus escape an interface name with a quote and a backslash" t_status_json_odd_ifname
summary datapath
