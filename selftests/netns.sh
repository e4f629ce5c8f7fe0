# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# in_ns NS CMD...: run CMD in network namespace NS. `ip netns exec` also gives
# the command its own /sys; where it cannot (a chroot whose / is no mount
# point refuses the remount), only the network namespace is entered
# (NETNS_EXEC=nsenter). Nothing here reads /sys/class/net for that reason.
NETNS_EXEC=${NETNS_EXEC:-${MROCE_NETNS_EXEC:-ipnetns}}
# netns_pick_exec NS: after creating NS, fall back to nsenter if `ip netns exec` is refused.
netns_pick_exec() {
	[ "$NETNS_EXEC" = ipnetns ] && ! ip netns exec "$1" true 2>/dev/null && NETNS_EXEC=nsenter
	return 0
}
in_ns() {
	local ns=$1
	shift
	if [ "$NETNS_EXEC" = ipnetns ]; then
		ip netns exec "$ns" "$@"
	else
		nsenter --net="/run/netns/$ns" "$@"
	fi
}

# wait_port NS PORT: until a TCP socket listens on PORT in NS (a server that
# opens its devices before it listens: perftest, ibv_rc_pingpong), at most 20 s.
wait_port() {
	local i
	for ((i = 0; i < 400; i++)); do
		in_ns "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q . && return 0
		sleep 0.05
	done
	echo "nothing listens on port $2 after 20 s"
	return 1
}
