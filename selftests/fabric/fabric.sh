#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The emulated fabric, by hand (docs/fabric.md). Needs root and `make`.
#
#   fabric.sh up NAME [--hosts N] [--paths K] [--mtu M] [--seed S] [--queues Q] [--steer-base B]
#                                       Q queues per host link (RSS, steering); B: UDP port B+q -> queue q
#   fabric.sh plane NAME PLANE [--paths K] [--mtu M] [--queues Q] [--steer-base B]   add plane PLANE (1-3): eth<PLANE>
#                                       in every host, 198.18.<10+PLANE>.<i+1>, its own switch
#   fabric.sh ctl NAME COMMAND...       path / pin / steer / hash / rxq / show / stats [json] / reset
#   fabric.sh ctl-plane NAME PLANE COMMAND...   the same, to plane PLANE's switch
#   fabric.sh exec NAME HOST CMD...     run CMD in host HOST (0..N-1)
#   fabric.sh down NAME                 remove everything `up` made
#   fabric.sh list
#
# Host i is 198.18.1.<i+1> on eth0. The fabric stays up until `down`;
# a failed or interrupted `up` leaves nothing behind.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
. "$ROOT/selftests/fabric/lib.sh"

usage() {
	sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
up)
	[ $# -ge 1 ] || usage
	name=$1 hosts=4 paths=4 mtu=1500 seed=1
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--hosts) hosts=$2 ;;
		--paths) paths=$2 ;;
		--mtu) mtu=$2 ;;
		--seed) seed=$2 ;;
		--queues) export FAB_QUEUES=$2 ;;
		--steer-base) export FAB_STEER_BASE=$2 ;;
		*) usage ;;
		esac
		shift 2 || usage
	done
	[ "$(id -u)" = 0 ] || { echo "fabric: needs root (network namespaces, XDP)" >&2; exit 1; }
	trap 'fabric_destroy "$name"; exit 130' INT TERM
	fabric_create "$name" "$hosts" "$paths" "$mtu" "$seed" || exit 1
	echo "fabric '$name': $hosts hosts (198.18.1.1-$hosts on eth0, $(fab_queues) queues), $paths paths; switch log $FAB_RUN_DIR/$name.log"
	;;
plane)
	[ $# -ge 2 ] || usage
	name=$1 pl=$2 paths=4 mtu=1500
	shift 2
	while [ $# -gt 0 ]; do
		case $1 in
		--paths) paths=$2 ;;
		--mtu) mtu=$2 ;;
		--queues) export FAB_QUEUES=$2 ;;
		--steer-base) export FAB_STEER_BASE=$2 ;;
		*) usage ;;
		esac
		shift 2 || usage
	done
	[ "$(id -u)" = 0 ] || { echo "fabric: needs root (network namespaces, XDP)" >&2; exit 1; }
	fabric_add_plane "$name" "$pl" "$paths" "$mtu" || exit 1
	echo "fabric '$name': plane $pl ($(fab_plane_ip "$pl" 0)... on eth$pl), $paths paths"
	;;
ctl-plane)
	[ $# -ge 3 ] || usage
	fab_plane "$@"
	;;
down)
	[ $# -eq 1 ] || usage
	fabric_destroy "$1"
	;;
ctl)
	[ $# -ge 2 ] || usage
	fab "$@"
	;;
exec)
	[ $# -ge 3 ] || usage
	fab_host "$@"
	;;
list)
	ip netns list 2>/dev/null | awk '{print $1}' | sed -n 's/^mrf-\(.*\)-sw$/\1/p'
	;;
*)
	usage
	;;
esac
