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

step "two hosts: $NS_A ($IP_A, $IF_A) <-> $NS_B ($IP_B, $IF_B) on a veth pair, MTU 3498"
setup_pair 3498 || fail "could not create the namespaces"
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
echo "($(( (end - start) / 1000000 )) ms, paced block by block by the receiver)"

step "datapath counters: mroce status $IF_B"
b "$MROCE" status "$IF_B"
dup=$(counter "$IF_B" duplicate)
rx=$(counter "$IF_B" rx)
[ "$rx" = "$COUNT" ] || fail "rx counter $rx, want $COUNT"
[ "${dup:-0}" -gt 0 ] || fail "no duplicate was dropped by XDP"

SIZE=${SIZE:-67108864}
FAULTS="reorder=200000,drop=10000"
step "libmroce: WRITE then READ of $((SIZE >> 20)) MiB from A to B, with 20% of packets held back (reordered) and 1% lost on each side (test-only fault injection)"
rm -f "$TMP/srv.log"
bg b "$BUILD/selftests/rdma_test" server --dev "$IF_B" --addr "$IP_B" --faults "$FAULTS,seed=2" >"$TMP/srv.log" 2>&1
spid=$!
wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; fail "server did not start"; }
a "$BUILD/selftests/rdma_test" client --dev "$IF_A" --addr "$IP_B" --sizes "$SIZE" \
	--faults "$FAULTS,seed=1" | tee "$TMP/cli.log" || fail "transfer"
wait "$spid" || { cat "$TMP/srv.log"; fail "server"; }
sed -n 's/^server: packets/server: packets/p' "$TMP/srv.log"
echo "(the server verified every byte it received; the client verified every byte it read back)"

step "detach: mroce detach $IF_B"
b "$MROCE" detach "$IF_B" || fail "detach"
b ip link show "$IF_B" | grep -E "^[0-9]+:|prog/xdp"
echo
echo "demo: ok ($rx crafted MetaRoCE packets delivered, $dup duplicates dropped in XDP;" \
	"$(sed -n 's/.*size [0-9]*: \(WRITE [^;]*\);.*/\1/p' "$TMP/cli.log") under reordering and loss)"
