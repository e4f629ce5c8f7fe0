# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The emulated fabric's topology: N hosts, each a network namespace with one
# interface (eth0, 198.18.1.<i+1>/24, MAC 02:00:c6:12:01:<i+1>), cabled by
# veth to port p<i> of a switch namespace where `fabric run` forwards over K
# paths.
#
#   fabric_create NAME HOSTS PATHS [MTU] [SEED]   ->  FAB_SOCK, FAB_LOG set
#       env FAB_QUEUES=N: host links with N receive/transmit queues (default 1),
#       the switch sending to each host on the queue its NIC would pick (RSS,
#       steering rules); FAB_STEER_BASE=B: preload UDP port B+q -> queue q
#   fabric_destroy NAME                            (idempotent)
#   fab_host NAME I CMD...   run CMD in host I
#   fab NAME CMD...          a control command (path, pin, steer, hash, rxq, show, stats ...)
#   fabric_add_plane NAME PLANE PATHS [MTU]        plane PLANE (1-3): eth<PLANE> in
#                            every host, 198.18.<10+PLANE>.<i+1>/24, on a switch of its own
#                            (FAB_QUEUES and FAB_STEER_BASE as for fabric_create)
#   fab_plane NAME PLANE CMD...                    a control command to that switch

FABRIC_BIN=${FABRIC_BIN:-$BUILD/selftests/fabric}
. "$(dirname "${BASH_SOURCE[0]}")/../netns.sh"
FAB_RUN_DIR=${FAB_RUN_DIR:-/run/mroce-fabric}

fab_ns_sw() { echo "mrf-$1-sw"; }
fab_ns_host() { echo "mrf-$1-h$2"; }
fab_ip() { echo "198.18.1.$(($1 + 1))"; }
fab_mac() { printf '02:00:c6:12:01:%02x' $(($1 + 1)); }
fab_sock() { echo "$FAB_RUN_DIR/$1.sock"; }
fab_host() { local n=$1 i=$2; shift 2; in_ns "$(fab_ns_host "$n" "$i")" "$@"; }
fab() { local n=$1; shift; "$FABRIC_BIN" ctl --sock "$(fab_sock "$n")" "$@"; }
fab_plane_ip() { echo "198.18.$((10 + $1)).$(($2 + 1))"; }
fab_plane() { local n=$1 pl=$2; shift 2; "$FABRIC_BIN" ctl --sock "$(fab_sock "$n-pl$pl")" "$@"; }

fabric_destroy() {
	local n=$1 ns p
	# The switches first (they detach their XDP programs on SIGTERM), then whatever still runs.
	for f in "$FAB_RUN_DIR/$n.pid" "$FAB_RUN_DIR/$n"-pl[1-3].pid; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		kill -TERM "$p" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		rm -f "$f"
	done
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^mrf-$n-"); do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
	rm -f "$FAB_RUN_DIR/$n.pid" "$FAB_RUN_DIR/$n.sock" "$FAB_RUN_DIR/$n.log"
	rm -f "$FAB_RUN_DIR/$n"-pl[1-3].sock "$FAB_RUN_DIR/$n"-pl[1-3].log
	rmdir "$FAB_RUN_DIR" 2>/dev/null
	return 0
}

# fab_queues: the host links' queue count (FAB_QUEUES, default 1).
fab_queues() { echo "${FAB_QUEUES:-1}"; }

# fab_switch_start NAME NS SEED PATHS PORTS...: a switch in NS, ready (0) or gone (1).
fab_switch_start() {
	local n=$1 ns=$2 seed=$3 paths=$4 p i steer=()
	shift 4
	[ -n "${FAB_STEER_BASE:-}" ] && steer=(--steer-base "$FAB_STEER_BASE")
	in_ns "$ns" "$FABRIC_BIN" run --sock "$(fab_sock "$n")" --paths "$paths" --seed "$seed" \
		--queues "$(fab_queues)" "${steer[@]+"${steer[@]}"}" \
		"$@" >"$FAB_RUN_DIR/$n.log" 2>&1 </dev/null &
	p=$!
	echo "$p" >"$FAB_RUN_DIR/$n.pid"
	for ((i = 0; i < 500; i++)); do
		grep -q "fabric: ready" "$FAB_RUN_DIR/$n.log" 2>/dev/null && break
		kill -0 "$p" 2>/dev/null || break
		sleep 0.01
	done
	if ! grep -q "fabric: ready" "$FAB_RUN_DIR/$n.log" 2>/dev/null; then
		echo "fabric: the switch did not start:" >&2
		cat "$FAB_RUN_DIR/$n.log" >&2
		return 1
	fi
}

# fabric_add_plane NAME PLANE PATHS [MTU]: a second (third, fourth) plane for
# the hosts of fabric NAME. On failure the whole fabric goes.
fabric_add_plane() {
	local n=$1 pl=$2 paths=$3 mtu=${4:-1500} sw i hns ports=() q
	q=$(fab_queues)
	sw="mrf-$n-sw$pl"
	if [ "$pl" -lt 1 ] || [ "$pl" -gt 3 ]; then
		echo "fabric: planes 1-3" >&2
		return 2
	fi
	ip netns add "$sw" || { fabric_destroy "$n"; return 1; }
	in_ns "$sw" ip link set lo up || { fabric_destroy "$n"; return 1; }
	for ((i = 0; ; i++)); do
		hns=$(fab_ns_host "$n" "$i")
		ip netns list | awk '{print $1}' | grep -qx "$hns" || break
		ip link add "eth$pl" netns "$hns" numtxqueues "$q" numrxqueues "$q" \
			address "$(printf '02:00:c6:12:%02x:%02x' $((10 + pl)) $((i + 1)))" type veth \
			peer name "p$i" netns "$sw" numtxqueues "$q" numrxqueues "$q" &&
		in_ns "$hns" ip link set "eth$pl" mtu "$mtu" up &&
		in_ns "$hns" ethtool -K "eth$pl" tx off >/dev/null &&
		in_ns "$hns" ip addr add "$(fab_plane_ip "$pl" "$i")/24" dev "eth$pl" &&
		in_ns "$sw" ip link set "p$i" mtu "$mtu" up || { fabric_destroy "$n"; return 1; }
		ports+=("p$i")
	done
	fab_switch_start "$n-pl$pl" "$sw" $((pl + 1)) "$paths" "${ports[@]}" || { fabric_destroy "$n"; return 1; }
}

# fabric_create NAME HOSTS PATHS [MTU] [SEED]: on failure, nothing is left behind.
fabric_create() {
	local n=$1 hosts=$2 paths=$3 mtu=${4:-1500} seed=${5:-1} sw i hns ports=() p q
	q=$(fab_queues)
	sw=$(fab_ns_sw "$n")
	if [ "$hosts" -lt 2 ] || [ "$hosts" -gt 16 ] || [ "$paths" -lt 1 ] || [ "$paths" -gt 16 ]; then
		echo "fabric: 2-16 hosts and 1-16 paths" >&2
		return 2
	fi
	if ! [[ "$q" =~ ^[0-9]+$ ]] || [ "$q" -lt 1 ] || [ "$q" -gt 16 ]; then
		echo "fabric: FAB_QUEUES must be 1-16" >&2
		return 2
	fi
	[ -x "$FABRIC_BIN" ] || { echo "fabric: $FABRIC_BIN is missing (make builds it; installed, reinstall mroce)" >&2; return 1; }
	mkdir -p "$FAB_RUN_DIR"
	if ! ip netns add "$sw"; then
		echo "fabric: a fabric named '$n' exists already?" >&2
		return 1
	fi
	if ! ip netns exec "$sw" true 2>/dev/null; then NETNS_EXEC=nsenter; fi
	in_ns "$sw" ip link set lo up || { fabric_destroy "$n"; return 1; }
	for ((i = 0; i < hosts; i++)); do
		hns=$(fab_ns_host "$n" "$i")
		ip netns add "$hns" &&
		ip link add eth0 netns "$hns" numtxqueues "$q" numrxqueues "$q" address "$(fab_mac "$i")" type veth \
			peer name "p$i" netns "$sw" numtxqueues "$q" numrxqueues "$q" &&
		in_ns "$hns" ip link set lo up &&
		in_ns "$hns" ip link set eth0 mtu "$mtu" up &&
		# The switch forwards raw frames from AF_XDP: a checksum left for
		# "hardware" to fill in would arrive unfilled, so hosts compute their own.
		in_ns "$hns" ethtool -K eth0 tx off >/dev/null &&
		in_ns "$hns" ip addr add "$(fab_ip "$i")/24" dev eth0 &&
		in_ns "$sw" ip link set "p$i" mtu "$mtu" up || { fabric_destroy "$n"; return 1; }
		ports+=("p$i")
	done
	fab_switch_start "$n" "$sw" "$seed" "$paths" "${ports[@]}" || { fabric_destroy "$n"; return 1; }
}
