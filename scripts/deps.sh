#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Install the Debian 12 packages mroce needs to build, test and demo, when missing.
#   scripts/deps.sh          build, tests, demo
#   scripts/deps.sh bench    also what the benchmark suite compares against and plots with
#   scripts/deps.sh deb      what building the Debian packages needs beyond the build
#   scripts/deps.sh torch    python3-torch and libtorch-dev (the PyTorch backend, its tests)
set -euo pipefail

PKGS=(
	make gcc libc6-dev		# user-space build
	clang				# BPF target (clang-14 is enough)
	libclang-rt-dev			# clang's UBSan runtime (make ubsan-clang)
	bpftool				# skeleton generation
	libbpf-dev libxdp-dev libelf-dev zlib1g-dev
	libcmocka-dev			# unit tests
	libjson-c-dev			# JSON output of the mroce and perf tools
	iproute2 iputils-ping python3	# selftests and demo: netns, veth, ping, TCP echo
	xdp-tools			# selftest: attach through libxdp's loader
	ethtool				# fabric selftests: host checksum offload off
	util-linux			# setpriv, for the not-root error test
	python3-prometheus-client	# tests: a second parser of mroce status --prometheus
	spin				# make model: the protocol model checker
	groff-base man-db pkg-config	# selftests/test_install.sh: man pages, pkg-config files
	libibverbs-dev			# verbs/: rdma-core 44's headers, the ABI mroce's libibverbs keeps
	ibverbs-utils perftest		# selftests/test_verbs_compat.sh: unmodified Verbs clients
)

# scripts/test-debs.sh: dpkg-buildpackage (the other build dependencies are
# above), lintian on the result, bash-completion's loader for the installed tools.
if [ "${1:-}" = deb ]; then
	PKGS=(dpkg-dev debhelper lintian bash-completion)
fi

# The PyTorch backend (make pytorch, selftests/test_torch.sh): Debian's torch 1.13
# with the c10d headers, ~200 packages, so a group of its own; Open MPI's mpirun,
# one of the launchers the backend is tested under (procps: ps, for stopping it).
if [ "${1:-}" = torch ]; then
	PKGS=(python3-torch libtorch-dev pybind11-dev python3-dev openmpi-bin procps)
fi

if [ "${1:-}" = bench ]; then
	PKGS=(
		iperf3 sockperf			# kernel TCP: bulk, ping-pong latency
		ucx-utils			# UCX's ucx_perftest over TCP
		libfabric-bin			# libfabric's fi_pingpong (tcp, udp;ofi_rxd)
		openmpi-bin libopenmpi-dev	# Open MPI collectives (mpi_coll_perf) over TCP
		gnuplot-nox			# the plots
		linux-perf			# where the time goes
	)
fi

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#PKGS[@]} packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing ${missing[*]}; run 'make deps' as root (or apt-get install them)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
