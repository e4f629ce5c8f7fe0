#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The README's demo: two hosts in network namespaces on a veth pair, the
# MetaRoCE datapath attached on B, normal traffic and MetaRoCE packets
# flowing side by side, counters shown. Everything is removed on exit.
. "$(dirname "$0")/lib.sh"

COUNT=${COUNT:-4096}
PSN=${PSN:-4294965000}	# close to 2^32: the window wraps during the run

step() { printf '\n== %s\n' "$*"; }
fail() { echo "demo: FAILED: $*"; exit 1; }

if [ "$(id -u)" != 0 ]; then
	echo "demo: needs root (network namespaces, XDP)"
	exit 1
fi
[ -x "$MROCE" ] && [ -x "$PEER" ] || fail "build first: make"

step "two hosts: $NS_A ($IP_A, $IF_A) <-> $NS_B ($IP_B, $IF_B) on a veth pair"
setup_pair 1500 || fail "could not create the namespaces"
b ip link show "$IF_B" | grep -E "^[0-9]+:|prog/xdp"

step "attach the datapath on B: mroce attach $IF_B"
b "$MROCE" attach "$IF_B" || fail "attach"
b ip link show "$IF_B" | grep -E "^[0-9]+:|prog/xdp"

step "normal traffic keeps flowing through the program: ping and a 1 MiB TCP echo"
normal_traffic_ok 5201 || fail "ping/TCP"
tail -n 1 "$TMP/ping.log"

step "$COUNT MetaRoCE WRITE packets A -> B: shuffled in blocks of 256, 10% duplicated, PSNs wrapping past 2^32"
rm -f "$TMP/sync"
bg b "$PEER" recv --dev "$IF_B" --count "$COUNT" --psn "$PSN" --sync "$TMP/sync" >"$TMP/recv.log" 2>&1
rpid=$!
wait_for "$TMP/sync" ready 10 || { cat "$TMP/recv.log"; fail "receiver did not start"; }
start=$(date +%s%N)
a "$PEER" send --dev "$IF_A" --dst-mac "$MAC_B" --count "$COUNT" --psn "$PSN" \
	--shuffle-block 256 --dup-pct 10 --seed 1 --sync "$TMP/sync" || fail "sender"
wait "$rpid"
rc=$?
end=$(date +%s%N)
cat "$TMP/recv.log"
[ $rc -eq 0 ] || fail "receiver"
echo "every packet placed once, in whatever order it came; duplicates never reached user space"
echo "($(( (end - start) / 1000000 )) ms including the block-by-block handshake; throughput figures come with the transport)"

step "datapath counters: mroce status $IF_B"
b "$MROCE" status "$IF_B"
dup=$(counter "$IF_B" duplicate)
rx=$(counter "$IF_B" rx)
[ "$rx" = "$COUNT" ] || fail "rx counter $rx, want $COUNT"
[ "${dup:-0}" -gt 0 ] || fail "no duplicate was dropped by XDP"

step "detach: mroce detach $IF_B"
b "$MROCE" detach "$IF_B" || fail "detach"
b ip link show "$IF_B" | grep -E "^[0-9]+:|prog/xdp"
echo
echo "demo: ok ($rx MetaRoCE packets delivered, $dup duplicates dropped in XDP)"
