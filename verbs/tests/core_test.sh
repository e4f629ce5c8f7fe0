#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The core of mroce's libibverbs (devices, queries, PD, MR, CQ, channels)
# through Debian's verbs.h, in a namespace on a veth pair (root). Also
# ibv_devices / ibv_devinfo unmodified, as root and as nobody, and the
# fault-spec parser refusing malformed input. Usage: core_test.sh [BUILD]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-${BUILD:-$ROOT/build}}
LIB=$BUILD/verbs
[ -e "$LIB/libibverbs.so.1" ] || { echo "no $LIB/libibverbs.so.1 (make verbs)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, XDP)"; exit 4; }
. "$ROOT/selftests/netns.sh"

NS=mrv-core-$$
BIN=$(mktemp -d /tmp/mrv-core.XXXXXX)
chmod 755 "$BIN"
cleanup() { ip netns del "$NS" 2>/dev/null; ip netns del "$NS-p" 2>/dev/null; rm -rf "$BIN"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -std=gnu11 -Wall -Wextra -Werror -O1 -g -o "$BIN/core_test" "$ROOT/verbs/tests/core_test.c" -libverbs || exit 1
ip netns add "$NS" && ip netns add "$NS-p" || exit 1
netns_pick_exec "$NS"
ip link add va netns "$NS" type veth peer name vb netns "$NS-p" || exit 1
in_ns "$NS" ip link set lo up
in_ns "$NS" ip link set va mtu 1500 up
in_ns "$NS-p" ip link set vb up
in_ns "$NS" ip addr add 198.18.0.1/24 dev va

fails=0
run() { echo "== $*"; "$@" || { echo "FAILED: $*"; fails=$((fails + 1)); }; }
. "$ROOT/verbs/tests/san.sh"
v() { in_ns "$NS" env LD_LIBRARY_PATH="$LIB" MROCE_VERBS_DEVICES=va "${SAN[@]}" "$@"; }
# vn CMD...: as user nobody. What it loads must be readable to it: the tree may sit
# under a directory only root enters (a fresh clone in /root), where the loader
# would quietly take the system's libibverbs instead. So a copy in $BIN (0755).
mkdir -p "$BIN/lib" && cp "$LIB/libibverbs.so.1" "$BIN/lib/" && chmod -R a+rX "$BIN/lib" || exit 1
vn() {
	in_ns "$NS" env LD_LIBRARY_PATH="$BIN/lib" MROCE_VERBS_DEVICES=va "${SAN[@]}" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

run v "$BIN/core_test" va 198.18.0.1 1500
in_ns "$NS" ip link set va mtu 9000
run v "$BIN/core_test" va 198.18.0.1 9000
in_ns "$NS" ip link set va mtu 1500

# Unmodified ibverbs-utils, root and not: the port as the interface is, no datapath.
out=$(v ibv_devinfo -v 2>&1); echo "$out" | grep -E "hca_id|state|active_mtu|GID|link_layer"
echo "$out" | grep -q "hca_id:.*mroce_va" && echo "$out" | grep -q "PORT_ACTIVE" &&
	echo "$out" | grep -q "GID\[  0\]:.*::ffff:198.18.0.1, RoCE v2" ||
	{ echo "FAILED: ibv_devinfo -v"; fails=$((fails + 1)); }
out=$(vn ibv_devinfo 2>&1)
echo "$out" | grep -q "PORT_ACTIVE" || { echo "$out"; echo "FAILED: ibv_devinfo as nobody"; fails=$((fails + 1)); }
out=$(vn ibv_devices 2>&1)
echo "$out" | grep -q "mroce_va" || { echo "$out"; echo "FAILED: ibv_devices as nobody"; fails=$((fails + 1)); }
in_ns "$NS" ip link set va down
out=$(v ibv_devinfo 2>&1)
echo "$out" | grep -q "PORT_DOWN" || { echo "$out"; echo "FAILED: a down interface is PORT_DOWN"; fails=$((fails + 1)); }
in_ns "$NS" ip link set va up

# A malformed MROCE_VERBS_TEST_FAULTS fails the device open (the first PD) with EINVAL.
cat >"$BIN/pd.c" <<'EOF'
#include <infiniband/verbs.h>
#include <errno.h>
#include <stdio.h>
int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l && l[0] ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd;

	if (!c)
		return 3;
	errno = 0;
	pd = ibv_alloc_pd(c);
	printf("%s\n", pd ? "ok" : errno == EINVAL ? "EINVAL" : errno == EPERM ? "EPERM" : "other");
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(c);
	ibv_free_device_list(l);
	return 0;
}
EOF
cc -o "$BIN/pd" "$BIN/pd.c" -libverbs || exit 1
for spec in "seed=1,rx_drop_ppm=10000" "seed=1,rx_reorder_ppm=100000,tx_drop_ppm=0"; do
	r=$(v env MROCE_VERBS_TEST_FAULTS="$spec" "$BIN/pd")
	[ "$r" = ok ] && echo "ok   faults '$spec' accepted" || { echo "FAILED: '$spec': $r"; fails=$((fails + 1)); }
done
for spec in "bogus" "seed=1,,rx_drop_ppm=1" "seed=-1" "rx_drop_ppm=1000001" "seed=1," "seed=1,seed=2" \
	"rx_drop_ppm=0x10" "seed=99999999999" "rx_drop=5" "seed= 1"; do
	r=$(v env MROCE_VERBS_TEST_FAULTS="$spec" "$BIN/pd")
	[ "$r" = EINVAL ] && echo "ok   faults '$spec' refused: EINVAL" ||
		{ echo "FAILED: '$spec': $r"; fails=$((fails + 1)); }
done
r=$(vn "$BIN/pd")
[ "$r" = EPERM ] && echo "ok   ibv_alloc_pd as nobody: EPERM" || { echo "FAILED: PD as nobody: $r"; fails=$((fails + 1)); }

# Completion channels and polling under real traffic: side A here, side B in the peer namespace.
cc -std=gnu11 -Wall -Wextra -Werror -O1 -g -o "$BIN/events_test" "$ROOT/verbs/tests/events_test.c" -libverbs || exit 1
in_ns "$NS-p" ip link set lo up
in_ns "$NS-p" ip addr add 198.18.0.2/24 dev vb
run in_ns "$NS" timeout 60 env LD_LIBRARY_PATH="$LIB" "${SAN[@]}" "$BIN/events_test" "/run/netns/$NS-p"

echo "core_test.sh: $fails failed"
[ $fails = 0 ]
