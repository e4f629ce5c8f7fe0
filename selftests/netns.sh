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
