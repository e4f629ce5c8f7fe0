#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftests of Verbs-created QPs (mroce's libibverbs, build/verbs) against
# off-path injection, and of the fabric key that protects them.
#
# Verbs applications exchange only QPN, PSN and GID; the library derives the
# connection's token and each direction's start PSN from them with SipHash
# keyed by the fabric key (MROCE_VERBS_KEY_FILE; docs/security.md). Here three
# hosts share one Ethernet segment (a bridge in a namespace of its own): A and
# B run unmodified Debian Verbs programs (ibv_rc_pingpong, ib_write_bw) over
# mroce, and R, the rogue, is told what an off-path attacker can learn (the
# GIDs, the QPNs, even the target region's address and rkey) but not the PSNs
# or the key. R's port on the bridge gets no unknown unicast (flood off), so
# it never sees the victims' frames: it is off path. While the transfer runs,
# R sends WRITE, SEND and ACK frames at both ends' live QPs with a fresh
# guessed token and PSN each, spoofing the other end's address. Asserted:
# the transfer completes with the programs' own checks passing, every frame
# R sent dies in the victim's XDP program as a bad token (counted there, so
# never placed in memory nor seen by the library), none as an unknown QP
# (R aimed at live QPs: the test cannot pass by missing them).
# Then the key itself: the same key file at both ends connects; different
# keys carry no data (the sender's completions fail, nobody crashes or hangs
# past the timeout, the receiver drops the frames as bad tokens); a key file
# readable by others is refused (QP creation fails with EPERM).
#
#   BLAST_MS (default 600): how long R floods each end, RATE (default 50000)
#   frames a second at most (0: as fast as it can; on 2 CPUs that starves the
#   programs, which is denial of service, not injection); ITERS (default
#   timed): ibv_rc_pingpong's exchanges, VC_ROUNDS (default timed):
#   verbs_check's rounds; timed: enough to outlast both floods twice over at
#   the pace of a short run without a flood.
. "$(dirname "$0")/lib.sh"

VERBS=$BUILD/verbs
VC=$BUILD/selftests/verbs_check
TOKEN=$BUILD/selftests/verbs_token
BLAST_MS=${BLAST_MS:-600}
RATE=${RATE:-50000}
ITERS=${ITERS:-}
VC_ROUNDS=${VC_ROUNDS:-}
NS_R=mroce-r-$$
NS_S=mroce-s-$$
IF_R=vr
IP_R=198.18.0.3
r() { in_ns "$NS_R" "$@"; }
s() { in_ns "$NS_S" "$@"; }

# Three hosts on one segment: va, vb, vr, each a veth to a port of bridge
# br0 in namespace S. mroce's datapath attached at A and B first, as a
# deployment does (`mroce attach`), so its counters outlive the programs.
setup_segment() {
	local mtu=${1:-1500} ns if ip port
	for ns in "$NS_A" "$NS_B" "$NS_R" "$NS_S"; do ip netns add "$ns" || return 1; done
	netns_pick_exec "$NS_A"
	s ip link add br0 type bridge && s ip link set br0 up && s ip link set lo up || return 1
	for ns in A B R; do
		case $ns in
		A) if=$IF_A ip=$IP_A port=pa n=$NS_A ;;
		B) if=$IF_B ip=$IP_B port=pb n=$NS_B ;;
		R) if=$IF_R ip=$IP_R port=pr n=$NS_R ;;
		esac
		ip link add "$if" netns "$n" numtxqueues 1 numrxqueues 1 type veth \
			peer name "$port" netns "$NS_S" numtxqueues 1 numrxqueues 1 || return 1
		s ip link set "$port" mtu "$mtu" master br0 up &&
		in_ns "$n" ip link set lo up && in_ns "$n" ip link set "$if" mtu "$mtu" up &&
		in_ns "$n" ip addr add "$ip/24" dev "$if" || return 1
	done
	# The rogue's port: no frame for an address the bridge has not learnt
	# (it learns A's and B's from their ARP): R sees none of their traffic.
	s bridge link set dev pr flood off || return 1
	MAC_A=$(mac_of a "$IF_A")
	MAC_B=$(mac_of b "$IF_B")
	a ping -c 1 -W 2 "$IP_B" >/dev/null && b ping -c 1 -W 2 "$IP_A" >/dev/null || return 1
	a "$MROCE" attach "$IF_A" >/dev/null && b "$MROCE" attach "$IF_B" >/dev/null
}

teardown_segment() {
	local p
	for p in $(ip netns pids "$NS_R" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	teardown_pair
	ip netns del "$NS_R" 2>/dev/null
	ip netns del "$NS_S" 2>/dev/null
	return 0
}

# lib.sh's exit trap, for four namespaces instead of two.
cleanup_all() {
	[ -n "${TEST_PID:-}" ] && kill "$TEST_PID" 2>/dev/null
	teardown_segment
	rm -rf "$TMP"
}

# vrun NS KEYFILE CMD...: CMD in NS over mroce's libibverbs with that fabric key
# ("" for none), its devices the namespace's interface only.
vrun() {
	local ns=$1 key=$2 dev
	shift 2
	[ "$ns" = a ] && dev=$IF_A || dev=$IF_B
	# stdbuf: the programs' lines (their addresses) reach the log as printed
	"$ns" env LD_LIBRARY_PATH="$VERBS" MROCE_VERBS_DEVICES="$dev" ${key:+MROCE_VERBS_KEY_FILE="$key"} \
		stdbuf -oL "$@"
}

# stat_of NS DEV NAME: one counter of the device's XDP program (`mroce status --json`).
stat_of() {
	"$1" "$MROCE" status "$2" --json | sed -n "s/.*\"$3\":\([0-9]*\).*/\1/p"
}

# win_drops NS DEV: frames XDP dropped (or passed up as resent) for their PSN.
win_drops() {
	local n t=0
	for n in duplicate dup_retx dup_retx_limit out_of_window; do
		t=$((t + $(stat_of "$1" "$2" $n)))
	done
	echo $t
}

# A fresh fabric key of 32 random bytes, mode $2 (600 unless told).
new_key() {
	head -c 32 /dev/urandom >"$1" && chmod "${2:-600}" "$1"
}

# qpn_of LOG WHICH: the QPN a Debian Verbs program printed for its "local" or
# "remote" address (ibv_rc_pingpong: "QPN 0x000401,", perftest: "QPN 0x0401").
qpn_of() {
	sed -n "s/.*$2 address: .*QPN \(0x[0-9a-fA-F]*\).*/\1/p" "$1" | head -n 1
}

# blast VICTIM(a|b) VQPN [peer args...]: R floods the victim's QP with guessed
# WRITE, SEND and ACK frames from the other end's address for BLAST_MS ms.
# Sets SENT to what R sent and BT/UQ to the victim's bad-token and unknown-QP
# counters' growth over the flood.
blast() {
	local v=$1 vqpn=$2 mac ip src dev bt0 uq0 wd0 out
	shift 2
	if [ "$v" = a ]; then mac=$MAC_A ip=$IP_A src=$IP_B dev=$IF_A; else mac=$MAC_B ip=$IP_B src=$IP_A dev=$IF_B; fi
	bt0=$(stat_of "$v" "$dev" bad_token)
	uq0=$(stat_of "$v" "$dev" unknown_qp)
	wd0=$(win_drops "$v" "$dev")
	out=$(r "$PEER" send --dev "$IF_R" --dst-mac "$mac" --blast-ms "$BLAST_MS" \
		--qpn $((vqpn & 1023)) --queue $((vqpn >> 10)) --src-ip "$src" --dst-ip "$ip" \
		--rate "$RATE" --op write,send,ack ${GUESS---guess} --seed $((RANDOM + 1)) "$@" 2>&1) || { echo "$out"; return 1; }
	SENT=$(printf '%s\n' "$out" | sed -n 's/^send: blasted=//p')
	DATA=$(printf '%s\n' "$out" | sed -n 's/^send: opcode 0x0[13] blasted=//p' | paste -sd+ | bc)
	WD=$(($(win_drops "$v" "$dev") - wd0))
	BT=$(($(stat_of "$v" "$dev" bad_token) - bt0))
	UQ=$(($(stat_of "$v" "$dev" unknown_qp) - uq0))
	printf '%s\n' "$out" | sed -n 's/^send: opcode/rogue -> '"$v"': opcode/p'
	echo "rogue -> $v (QPN $vqpn): $SENT frames (${GUESS---guess}); bad_token +$BT, unknown_qp +$UQ, PSN outside the window +$WD"
}

# judge: R's frames at a live QP all died as bad tokens. veth may drop a few
# on the way in under the flood (its ring full): 90% must be counted.
judge() {
	[ -n "$SENT" ] && [ "$SENT" -gt 1000 ] || { echo "the rogue sent ${SENT:-no} frames: no flood"; return 1; }
	[ "$UQ" -eq 0 ] || { echo "$UQ frames met no QP: the rogue missed the live QPs"; return 1; }
	[ "$BT" -ge $((SENT * 9 / 10)) ] && [ "$BT" -le "$SENT" ] ||
		{ echo "$SENT frames sent, $BT counted as bad tokens: some got past the token check"; return 1; }
}

# The harness itself, without Verbs: flows added by hand (`mroce flow add`,
# token 1) at A and B. R's guesses reach both XDP programs and die there as
# bad tokens; the same frames with the right token do not (so judge can fail).
t_harness() {
	a "$MROCE" flow add "$IF_A" 6 --token 1 >/dev/null && b "$MROCE" flow add "$IF_B" 5 --token 1 >/dev/null || return 1
	blast b 5 || return 1
	judge || return 1
	blast a 6 || return 1
	judge || return 1
	GUESS=--guess-psn blast b 5 --token 1 || return 1
	judge >/dev/null && { echo "frames with the right token were counted as bad tokens"; return 1; }
	echo "with the right token: $BT of $SENT counted as bad tokens (judge refuses it)"
	judge_psn || return 1
}

# judge_psn: R had the right token (it computed it) but guessed the PSNs: no
# frame died as a bad token, 90% of its WRITEs and SENDs (the frames that
# carry a PSN) died for their PSN in XDP, and its ACKs went up to the library,
# which must ignore what acknowledges PSNs it never sent.
judge_psn() {
	[ -n "$SENT" ] && [ "$SENT" -gt 1000 ] || { echo "the rogue sent ${SENT:-no} frames: no flood"; return 1; }
	[ "$UQ" -eq 0 ] || { echo "$UQ frames met no QP: the rogue missed the live QPs"; return 1; }
	[ "$BT" -eq 0 ] || { echo "$BT frames with the computed token counted as bad tokens: the rogue's token is not the connection's"; return 1; }
	[ "$WD" -ge $((DATA * 9 / 10)) ] ||
		{ echo "$DATA WRITEs and SENDs with guessed PSNs sent, only $WD dropped for their PSN"; return 1; }
}

# flows_of NS DEV: "qpn peer_qpn" of each live flow (mroce QPNs), and
# queue_of NS DEV: the receive queue a process serves there: the attacker's
# knowledge of the QPNs, read off the victim (verbs QPN = queue << 10 | qpn).
flows_of() {
	"$1" "$MROCE" flows "$2" --json | grep -o '"qpn":[0-9]*,"peer_qpn":[0-9]*' | sed 's/"qpn":\([0-9]*\),"peer_qpn":\([0-9]*\)/\1 \2/'
}
queue_of() {
	"$1" "$MROCE" status "$2" --json | grep -o '"queue":[0-9]*' | head -n 1 | cut -d: -f2
}

# verbs_check PIDVAR LOG KEY "args": our own Verbs check (every completion and
# every byte, and nothing outside the spans written) between A and B in the
# background; the client's pid in $CPID, the server's in $SPID.
verbs_pair() {
	local key=$1 args=$2
	rm -f "$TMP/srv.log" "$TMP/cli.log"
	bg vrun b "$key" timeout -k 2 120 "$VC" -d "mroce_$IF_B" $args >"$TMP/srv.log" 2>&1
	SPID=$!
	wait_for "$TMP/srv.log" listening 20 || { cat "$TMP/srv.log"; return 1; }
	bg vrun a "$key" timeout -k 2 120 "$VC" -d "mroce_$IF_A" $args "$IP_B" >"$TMP/cli.log" 2>&1
	CPID=$!
	wait_for "$TMP/cli.log" "connected" 20 && wait_for "$TMP/srv.log" "connected" 20 ||
		{ cat "$TMP/cli.log" "$TMP/srv.log"; return 1; }
}

# vc_rounds QPS: verbs_check's rounds for a transfer that outlasts both floods
# with room to spare (VC_ROUNDS if set): runs of 2 and 10 rounds timed
# without a flood (their difference: 8 rounds without the set-up), then
# enough for 4x (both floods + 2 s) at that pace (a flood slows it down).
vc_rounds() {
	local t0 t1 t2 per
	if [ -n "${VC_ROUNDS:-}" ]; then echo "$VC_ROUNDS"; return; fi
	t0=$(date +%s%N)
	verbs_pair "$TMP/cal.key" "-q $1 -n 2" >/dev/null && verbs_done 1 >/dev/null || { echo 0; return; }
	t1=$(date +%s%N)
	verbs_pair "$TMP/cal.key" "-q $1 -n 10" >/dev/null && verbs_done 1 >/dev/null || { echo 0; return; }
	t2=$(date +%s%N)
	per=$(( ((t2 - t1) - (t1 - t0)) / 8000000 ))	# ms a round
	[ "$per" -ge 1 ] || per=1
	echo $(( 4 * (2 * BLAST_MS + 2000) / per + 10 ))
}

# verbs_done LIVE: wait for both ends; both must say ok; LIVE=0 means the
# check ended before the floods did (the test proved nothing).
verbs_done() {
	local live=$1 rc src
	wait "$CPID"
	rc=$?
	wait "$SPID"
	src=$?
	grep -h "ok:" "$TMP/cli.log" "$TMP/srv.log"
	[ $rc -eq 0 ] && [ $src -eq 0 ] || { echo "verbs_check: client exit $rc, server exit $src"; cat "$TMP/cli.log" "$TMP/srv.log"; return 1; }
	[ "$live" = 1 ] || { echo "verbs_check ended before the floods did: raise VC_ROUNDS"; return 1; }
}

# verbs_check on 4 QPs, every byte checked at both ends (and the regions'
# untouched bytes), while R floods all 4 QPs of each end with guessed tokens
# and PSNs.
t_rogue_verbs_check() {
	local qa qb live n
	[ -x "$VC" ] || { echo "$VC is not built"; return 1; }
	new_key "$TMP/key" && cp "$TMP/key" "$TMP/cal.key" || return 1
	n=$(vc_rounds 4)
	echo "verbs_check: $n rounds"
	[ "$n" -gt 0 ] || { echo "verbs_check failed without a flood"; cat "$TMP/cli.log" "$TMP/srv.log"; return 1; }
	verbs_pair "$TMP/key" "-q 4 -n $n" || return 1
	qb=$(flows_of b "$IF_B" | cut -d' ' -f1 | paste -sd,)
	qa=$(flows_of a "$IF_A" | cut -d' ' -f1 | paste -sd,)
	echo "live QPs (mroce QPNs): A $qa, B $qb"
	[ -n "$qa" ] && [ -n "$qb" ] || { echo "no flows"; return 1; }
	blast b 0 --qpn "$qb" || return 1
	judge || return 1
	blast a 0 --qpn "$qa" || return 1
	judge || return 1
	kill -0 "$CPID" 2>/dev/null && live=1 || live=0
	verbs_done $live
}

# computed_token_flood KEYFILE JUDGE: verbs_check between A and B (with
# KEYFILE, or none), while R floods each end with frames carrying the token
# the built-in key gives for their GIDs and QPNs (the derivation and the
# constant are public) at random PSNs; JUDGE says what must become of them.
computed_token_flood() {
	local key=$1 judge_fn=$2 qa qb queue_a queue_b qpa qpb tok live n
	[ -x "$VC" ] && [ -x "$TOKEN" ] || { echo "$VC or $TOKEN is not built"; return 1; }
	[ -e /etc/mroce/verbs.key ] && { echo "/etc/mroce/verbs.key exists: the built-in key is not the hosts' default"; return $SKIP; }
	[ -e "$TMP/cal.key" ] || new_key "$TMP/cal.key" || return 1	# vc_rounds' (any key: the pace is the same)
	n=$(vc_rounds 1)
	echo "verbs_check: $n rounds"
	[ "$n" -gt 0 ] || { echo "verbs_check failed without a flood"; cat "$TMP/cli.log" "$TMP/srv.log"; return 1; }
	verbs_pair "$key" "-q 1 -n $n" || return 1
	read -r qb qa < <(flows_of b "$IF_B")
	queue_a=$(queue_of a "$IF_A")
	queue_b=$(queue_of b "$IF_B")
	qpa=$(((queue_a << 10) | qa))
	qpb=$(((queue_b << 10) | qb))
	tok=$(env -u MROCE_VERBS_KEY_FILE "$TOKEN" "$IP_A" "$qpa" "$IP_B" "$qpb" | cut -d' ' -f2)
	echo "the built-in key's token for A $IP_A QPN $qpa, B $IP_B QPN $qpb, computed off path: $tok"
	[ -n "$tok" ] || return 1
	GUESS=--guess-psn blast b "$qpb" --token "${tok#0x}" || return 1
	"$judge_fn" || return 1
	GUESS=--guess-psn blast a "$qpa" --token "${tok#0x}" || return 1
	"$judge_fn" || return 1
	kill -0 "$CPID" 2>/dev/null && live=1 || live=0
	verbs_done $live
}

# The victims have a fabric key: every frame with the built-in key's token
# dies as a bad token.
t_rogue_builtin_key() {
	new_key "$TMP/key" && cp "$TMP/key" "$TMP/cal.key" || return 1
	computed_token_flood "$TMP/key" judge
}

# No fabric key anywhere: the attacker has the connection's token, and could
# compute its start PSNs too (docs/security.md: only a key protects a Verbs
# QP). What this shows: frames at PSNs picked at random die for their PSN
# (the window is 960 wide and moves), the forged ACKs are ignored, and every
# byte arrives right.
t_no_key_psn_only() {
	computed_token_flood "" judge_psn
}

# Two hosts with one key: ibv_rc_pingpong with its buffer check, 1 B to 1 MiB.
t_same_key() {
	local size
	new_key "$TMP/key" || return 1
	for size in 1 4096 1048576; do
		rm -f "$TMP/srv.log"
		bg vrun b "$TMP/key" timeout -k 2 60 ibv_rc_pingpong -g 0 -c -s $size -n 100 >"$TMP/srv.log" 2>&1
		local spid=$!
		wait_for "$TMP/srv.log" "local address" 20 || { cat "$TMP/srv.log"; return 1; }
		vrun a "$TMP/key" timeout -k 2 60 ibv_rc_pingpong -g 0 -c -s $size -n 100 "$IP_B" >"$TMP/cli.log" 2>&1
		local rc=$?
		wait "$spid"
		local src=$?
		grep -h "iters in" "$TMP/cli.log" "$TMP/srv.log" | sed "s/^/$size B: /"
		[ $rc -eq 0 ] && [ $src -eq 0 ] || { echo "size $size: client exit $rc, server exit $src"; cat "$TMP/cli.log" "$TMP/srv.log"; return 1; }
	done
}

# pp_iters KEY: ibv_rc_pingpong -s 4096 exchanges for 8x (both floods + 2 s)
# at the pace of 20 without a flood (0: it failed); 8x: its pace varies from
# run to run by 3x and more here.
pp_iters() {
	local per spid
	rm -f "$TMP/srv.log" "$TMP/cli.log"
	bg vrun b "$1" timeout -k 2 60 ibv_rc_pingpong -g 0 -s 4096 -n 20 >"$TMP/srv.log" 2>&1
	spid=$!
	wait_for "$TMP/srv.log" "local address" 20 >/dev/null || { echo 0; return; }
	vrun a "$1" timeout -k 2 60 ibv_rc_pingpong -g 0 -s 4096 -n 20 "$IP_B" >"$TMP/cli.log" 2>&1 || { echo 0; return; }
	wait "$spid" || { echo 0; return; }
	per=$(sed -n 's/.* = \([0-9]*\)\.[0-9]* usec\/iter$/\1/p' "$TMP/cli.log")
	echo $(( 8 * (2 * BLAST_MS + 2000) * 1000 / (${per:-1} + 1) + 20 ))
}

# ibv_rc_pingpong (SENDs, each checked by the program) while R floods both
# ends. Its pace varies from run to run (0.5 to 6 ms an exchange here): a run
# that ends before the floods do proved nothing and is tried again with twice
# the exchanges (three tries).
t_rogue_pingpong() {
	local iters try
	new_key "$TMP/key" || return 1
	iters=${ITERS:-$(pp_iters "$TMP/key")}
	[ "$iters" -gt 0 ] || { echo "ibv_rc_pingpong failed without a flood"; cat "$TMP/cli.log" "$TMP/srv.log"; return 1; }
	for try in 1 2 3; do
		echo "ibv_rc_pingpong: $iters exchanges"
		pp_flooded "$iters" && return 0
		[ "$PP_SHORT" = 1 ] || return 1
		iters=$((iters * 2))
	done
	return 1
}

# pp_flooded ITERS: one flooded ibv_rc_pingpong; PP_SHORT=1 if it passed but
# ended before the floods did.
pp_flooded() {
	local cpid spid rc src qa qb live
	PP_SHORT=0
	rm -f "$TMP/srv.log" "$TMP/cli.log"
	bg vrun b "$TMP/key" timeout -k 2 120 ibv_rc_pingpong -g 0 -c -s 4096 -n "$1" >"$TMP/srv.log" 2>&1
	spid=$!
	wait_for "$TMP/srv.log" "local address" 20 || { cat "$TMP/srv.log"; return 1; }
	bg vrun a "$TMP/key" timeout -k 2 120 ibv_rc_pingpong -g 0 -c -s 4096 -n "$1" "$IP_B" >"$TMP/cli.log" 2>&1
	cpid=$!
	wait_for "$TMP/cli.log" "remote address" 20 || { cat "$TMP/cli.log"; return 1; }
	qa=$(qpn_of "$TMP/cli.log" local)
	qb=$(qpn_of "$TMP/cli.log" remote)
	[ -n "$qa" ] && [ -n "$qb" ] || { echo "no QPNs printed"; cat "$TMP/cli.log"; return 1; }
	blast b "$qb" || return 1
	kill -0 "$cpid" 2>/dev/null && live=1 || live=0
	[ $live = 0 ] || judge || return 1
	if [ $live = 1 ]; then
		blast a "$qa" || return 1
		kill -0 "$cpid" 2>/dev/null || live=0
		[ $live = 0 ] || judge || return 1
	fi
	wait "$cpid"
	rc=$?
	wait "$spid"
	src=$?
	grep -h "iters in" "$TMP/cli.log" "$TMP/srv.log"
	[ $rc -eq 0 ] && [ $src -eq 0 ] || { echo "client exit $rc, server exit $src"; cat "$TMP/cli.log" "$TMP/srv.log"; return 1; }
	[ $live = 1 ] || { PP_SHORT=1; echo "the transfer ended before the floods did"; return 1; }
}

# ib_write_bw for 4 s while R aims WRITEs at the very region (address and rkey
# as the server printed them) and SENDs and ACKs at both QPs.
t_rogue_write_bw() {
	local cpid spid rc src qa qb rkey vaddr
	new_key "$TMP/key" || return 1
	rm -f "$TMP/srv.log" "$TMP/cli.log"
	bg vrun b "$TMP/key" timeout -k 2 60 ib_write_bw -x 0 -D 4 -s 65536 >"$TMP/srv.log" 2>&1
	spid=$!
	wait_port "$NS_B" 18515 || { cat "$TMP/srv.log"; return 1; }	# perftest's port
	bg vrun a "$TMP/key" timeout -k 2 60 ib_write_bw -x 0 -D 4 -s 65536 "$IP_B" >"$TMP/cli.log" 2>&1
	cpid=$!
	wait_for "$TMP/srv.log" "remote address" 20 || { cat "$TMP/srv.log" "$TMP/cli.log"; return 1; }
	qb=$(qpn_of "$TMP/srv.log" local)
	qa=$(qpn_of "$TMP/srv.log" remote)
	rkey=$(sed -n 's/.*local address: .*RKey \(0x[0-9a-fA-F]*\).*/\1/p' "$TMP/srv.log" | head -n 1)
	vaddr=$(sed -n 's/.*local address: .*VAddr \(0x[0-9a-fA-F]*\).*/\1/p' "$TMP/srv.log" | head -n 1)
	[ -n "$qa" ] && [ -n "$qb" ] && [ -n "$rkey" ] && [ -n "$vaddr" ] ||
		{ echo "cannot read QPNs, rkey and address from ib_write_bw"; cat "$TMP/srv.log"; return 1; }
	echo "the server's region: rkey $rkey at $vaddr; QPNs: server $qb, client $qa"
	blast b "$qb" --raddr "$vaddr" --rkey "$rkey" || return 1
	judge || return 1
	blast a "$qa" || return 1
	judge || return 1
	wait "$cpid"
	rc=$?
	wait "$spid"
	src=$?
	grep -h -A1 "#bytes" "$TMP/cli.log" | tail -n 1 | sed 's/^/ib_write_bw: /'
	[ $rc -eq 0 ] && [ $src -eq 0 ] || { echo "client exit $rc, server exit $src"; cat "$TMP/cli.log" "$TMP/srv.log"; return 1; }
}

# Different keys: no data. The client's sends fail (retries exhausted) within
# the timeout; the server, whose receives can only wait, is stopped by it; no
# crash either side; B's XDP dropped A's frames as bad tokens.
t_key_mismatch() {
	local spid rc src bt0 bt t0 t1
	new_key "$TMP/key_a" && new_key "$TMP/key_b" || return 1
	bt0=$(stat_of b "$IF_B" bad_token)
	rm -f "$TMP/srv.log"
	bg vrun b "$TMP/key_b" timeout -k 2 30 ibv_rc_pingpong -g 0 -c -s 4096 -n 10 >"$TMP/srv.log" 2>&1
	spid=$!
	wait_for "$TMP/srv.log" "local address" 20 || { cat "$TMP/srv.log"; return 1; }
	t0=$(date +%s)
	vrun a "$TMP/key_a" timeout -k 2 30 ibv_rc_pingpong -g 0 -c -s 4096 -n 10 "$IP_B" >"$TMP/cli.log" 2>&1
	rc=$?
	t1=$(date +%s)
	kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	bt=$(($(stat_of b "$IF_B" bad_token) - bt0))
	sed 's/^/client: /' "$TMP/cli.log"
	echo "client exit $rc after $((t1 - t0)) s, server exit $src; B's bad_token +$bt"
	[ $rc -ne 0 ] || { echo "mismatched keys, yet the exchange succeeded"; return 1; }
	[ $rc -ne 124 ] && [ $rc -ne 137 ] || { echo "the client hung until the timeout: no completion with an error"; return 1; }
	[ $rc -lt 128 ] && { [ $src -lt 128 ] || [ $src -eq 143 ]; } || { echo "a program died of a signal"; return 1; }
	grep -qi "failed status\|completion\|error" "$TMP/cli.log" || { echo "the client said nothing of a failed completion"; return 1; }
	grep -q "iters in" "$TMP/srv.log" && { echo "the server completed an exchange"; return 1; }
	[ "$bt" -gt 0 ] || { echo "B dropped nothing as a bad token: the frames were not the mismatched key's"; return 1; }
}

# A key file others can read is refused: QP creation fails with EPERM.
t_key_mode() {
	local out rc
	new_key "$TMP/key" 644 || return 1
	out=$(vrun a "$TMP/key" timeout -k 2 20 python3 "$ROOT/selftests/verbs_qp_errno.py" "mroce_$IF_A" 2>&1)
	rc=$?
	echo "mode 0644: $out"
	[ $rc -eq 1 ] && [[ $out == *"errno 1 (EPERM"* ]] || { echo "expected ibv_create_qp to fail with EPERM"; return 1; }
	out=$(vrun a "$TMP/key" timeout -k 2 20 ibv_rc_pingpong -g 0 -d "mroce_$IF_A" "$IP_B" 2>&1)
	rc=$?
	echo "ibv_rc_pingpong, mode 0644: exit $rc: $out"
	[ $rc -eq 1 ] && [[ $out == *"Couldn't create QP"* ]] || { echo "expected ibv_rc_pingpong to fail cleanly at QP creation"; return 1; }
	chmod 600 "$TMP/key" || return 1
	out=$(vrun a "$TMP/key" timeout -k 2 20 python3 "$ROOT/selftests/verbs_qp_errno.py" "mroce_$IF_A" 2>&1)
	echo "mode 0600: $out"
	[[ $out == "create_qp: ok" ]] || { echo "the same key at mode 0600 was refused"; return 1; }
}

require_root verbs_rogue
for t in ibv_rc_pingpong ib_write_bw; do
	command -v $t >/dev/null || { echo "SKIP: verbs_rogue: $t not installed (apt-get install ibverbs-utils perftest)"; echo "verbs_rogue: 0 passed, 0 failed, 1 skipped"; exit 0; }
done
[ -e "$VERBS/libibverbs.so.1" ] || { echo "FAIL: verbs_rogue: $VERBS/libibverbs.so.1 is not built (make verbs)"; exit 1; }
TEST_SETUP=setup_segment
TEST_TEARDOWN=teardown_segment
FIGURES='^rogue -> . \(|^client exit|^mode|iters in|token|ok:'

run_test "the harness: R's guesses reach A's and B's XDP and die as bad tokens, the right token does not" t_harness
run_test "one fabric key at both ends: ibv_rc_pingpong -c at 1 B, 4 KiB, 1 MiB" t_same_key
run_test "verbs_check on 4 QPs while a rogue floods them all with guessed WRITE/SEND/ACK: every byte right, all dropped as bad tokens" t_rogue_verbs_check
run_test "a rogue with the built-in key's token against QPs with a fabric key: all dropped as bad tokens" t_rogue_builtin_key
run_test "no fabric key: a rogue with the computed token but guessed PSNs: all dropped for their PSN, every byte right" t_no_key_psn_only
run_test "ibv_rc_pingpong while a rogue floods both QPs with guessed WRITE/SEND/ACK: all dropped as bad tokens" t_rogue_pingpong
run_test "ib_write_bw while a rogue aims guessed WRITEs at the region (rkey known): all dropped as bad tokens" t_rogue_write_bw
run_test "different fabric keys: no data, a failed completion, no crash, no hang" t_key_mismatch
run_test "a key file of mode 0644: ibv_create_qp fails with EPERM" t_key_mode
summary verbs_rogue
