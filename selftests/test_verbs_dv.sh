#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# mroce's Verbs extension calls (include/mroce/mrocedv.h) between two
# namespaces: a device over two planes (two veth pairs) whose QP sprays a
# WRITE stream over both, every byte checked at the server and the second
# plane's interface seen carrying its share; a QP with its own paths and no
# congestion control on one plane; and each call's refusals.
#
#   selftests/test_verbs_dv.sh
. "$(dirname "$0")/lib.sh"

VLIB=$BUILD/verbs
DV=$BUILD/selftests/verbs_dv
IF_A1=va1
IF_B1=vb1
IP_A1=198.18.12.1
IP_B1=198.18.12.2
T=${VERBS_DV_TIMEOUT:-90}

dv() {	# a|b ARGS...: verbs_dv on host A or B over mroce's libibverbs
	local host=$1
	shift
	"$host" timeout -k 5 "$T" env LD_LIBRARY_PATH="$VLIB" MROCE_VERBS_DEVICES="$IF_A,$IF_B" \
		"$DV" "$@"
}


# tx_bytes IF: bytes host A sent on IF (/proc/net/dev is the reader's
# namespace's; /sys need not be, see netns.sh)
tx_bytes() { a sed -n "s/^ *$1: *//p" /proc/net/dev | awk '{ print $9 }'; }

# A stream of BYTES over the planes given (-P for each end), PATHS paths, CC.
stream() {
	local bytes=$1 paths=$2 cc=$3 pa=${4:-} pb=${5:-} spid rc
	rm -f "$TMP/srv.log"
	dv b -d "mroce_$IF_B" ${pb:+-P "$pb"} -p "$paths" -c "$cc" -b "$bytes" >"$TMP/srv.log" 2>&1 &
	spid=$!
	wait_for "$TMP/srv.log" listening 20 || { cat "$TMP/srv.log"; kill $spid; return 1; }
	dv a -d "mroce_$IF_A" ${pa:+-P "$pa"} -p "$paths" -c "$cc" -b "$bytes" "$IP_B" >"$TMP/cli.log" 2>&1
	rc=$?
	wait $spid
	local src=$?
	cat "$TMP/cli.log" "$TMP/srv.log"
	[ $rc -eq 0 ] && [ $src -eq 0 ] || { echo "client exit $rc, server exit $src"; return 1; }
	grep -q "server: $bytes bytes checked" "$TMP/srv.log" || { echo "the server checked nothing"; return 1; }
}

two_planes() {
	local bytes=$((64 << 20)) t0 t1 share
	t0=$(tx_bytes "$IF_A1")
	stream $bytes 8 ecn "$IF_A1" "$IF_B1" || return 1
	grep -q "planes 2+2" "$TMP/cli.log" || { echo "the client did not see two planes at both ends"; return 1; }
	t1=$(tx_bytes "$IF_A1")
	share=$((t1 - t0))
	echo "plane 1 ($IF_A1) carried $share bytes of the $bytes written"
	# A new packet goes to the plane with the shortest queue for its delivery
	# rate (protocol.md, "Planes"): on two veth pairs sharing a 2-CPU host's
	# softirqs that is seldom half. The bar: plane 1 was proven and carried
	# data (1 MiB: far beyond the 16 packets an unproven plane may carry).
	[ "$share" -ge $((1 << 20)) ] || { echo "plane 1 carried less than 1 MiB"; return 1; }
}

one_plane_no_cc() {
	stream $((16 << 20)) 3 none || return 1
}

refusals() {
	dv a -d "mroce_$IF_A" --refusals
}

require_root test_verbs_dv
[ -x "$DV" ] || { echo "FAIL: test_verbs_dv: $DV is not built (make all)"; exit 1; }
TEST_SETUP=setup_planes
run_test "mrocedv: a WRITE stream over two planes, every byte checked, plane 1 carries its share" two_planes
run_test "mrocedv: 3 paths, no congestion control, one plane" one_plane_no_cc
run_test "mrocedv: each extension call's refusals" refusals
summary test_verbs_dv
