# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# mroce: `make` builds everything into build/. README.md lists the targets.

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
DESTDIR    ?=
BUILD      ?= build

CC      ?= cc
CLANG   ?= clang
BPFTOOL ?= bpftool
# The version is written once, in the public header (MROCE_VERSION_STRING).
VERSION := $(shell sed -n 's/^#define MROCE_VERSION_STRING "\(.*\)"/\1/p' include/mroce/mroce.h)

CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror
override CFLAGS   += -std=gnu11 $(WARN) -fPIC -fvisibility=hidden -MMD -MP
override CPPFLAGS += -Iinclude -I$(BUILD)
# The tools' --version: VERSION above is the one place it is written (issue 14).
override CPPFLAGS += -DMROCE_TOOL_VERSION='"$(VERSION)"'
LDLIBS  := -lxdp -lbpf -lelf -lz -lpthread -lm
# The CLI and perf tools print JSON with json-c; libmroce does not link it.
TOOL_LIBS := -ljson-c
MULTIARCH = $(shell $(CC) -print-multiarch 2>/dev/null)
BPF_CFLAGS = -O2 -g -target bpf -std=gnu11 $(WARN) -Iinclude \
	     -idirafter /usr/include/$(MULTIARCH) -MMD -MP

# The collectives are their own library (coll/), built on libmroce's public API
# (include/mroce/) and lib/opts.h only.
COLL_SRCS  := $(wildcard coll/*.c)
COLL_OBJS  := $(COLL_SRCS:%.c=$(BUILD)/%.o)
LIB_SRCS   := $(wildcard lib/*.c)
LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CLI_SRCS   := $(filter-out loader/main.c,$(wildcard loader/*.c))
CLI_OBJS   := $(CLI_SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS  := $(wildcard tests/test_*.c)
TEST_BINS  := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
EX_SRCS    := $(wildcard examples/*.c)
EX_BINS    := $(EX_SRCS:examples/%.c=$(BUILD)/examples/%)
STEST_SRCS := $(wildcard selftests/*.c)
STEST_BINS := $(STEST_SRCS:selftests/%.c=$(BUILD)/selftests/%) $(BUILD)/selftests/foreign.bpf.o \
	      $(BUILD)/selftests/fabric $(BUILD)/selftests/fabric.bpf.o $(BUILD)/selftests/xsk_raw
FABRIC_SRCS := $(wildcard selftests/fabric/*.c)
FABRIC_OBJS := $(patsubst selftests/fabric/%.c,$(BUILD)/fabric/%.o,$(filter-out %.bpf.c,$(FABRIC_SRCS)))
SWITCH_OBJS := $(BUILD)/fabric/switch.o $(BUILD)/fabric/ctl.o
# The cluster simulator (docs/scale.md): sim/*.c over the same objects as libmroce.
SIM_SRCS   := $(wildcard sim/*.c)
SIM_OBJS   := $(patsubst sim/%.c,$(BUILD)/sim/%.o,$(filter-out sim/main.c,$(SIM_SRCS)))
SIM        := $(BUILD)/mroce-sim

BPF_OBJ := $(BUILD)/mroce.bpf.o
SKEL    := $(BUILD)/mroce.skel.h
CLI     := $(BUILD)/mroce
PERF    := $(BUILD)/mroce-perf
COLLPERF := $(BUILD)/mroce-coll-perf
LIB_A   := $(BUILD)/libmroce.a
LIB_SO  := $(BUILD)/libmroce.so
COLL_A  := $(BUILD)/libmroce-coll.a
COLL_SO := $(BUILD)/libmroce-coll.so
# mroce's libibverbs (docs/verbs.md): rdma-core 44's ABI over libmroce, for
# unmodified Verbs applications (LD_LIBRARY_PATH=$(BUILD)/verbs).
VERBS_SRCS := $(wildcard verbs/*.c)
VERBS_OBJS := $(VERBS_SRCS:%.c=$(BUILD)/%.o)
VERBS_SO   := $(BUILD)/verbs/libibverbs.so.1

.PHONY: all verbs lib cli examples tests selftests asan ubsan-clang headers api-check test check test-fabric test-coll sim sim-studies bench bench-bidir bench-queues bench-targets bench-loss bench-incast bench-failure bench-streams bench-planes bench-latency bench-verbs bench-cc bench-coll bench-coll-algos demo model deps install uninstall clean
.DELETE_ON_ERROR:
.PRECIOUS: $(BUILD)/%/.dir

all: $(BPF_OBJ) $(CLI) $(PERF) $(COLLPERF) $(SIM) $(LIB_A) $(LIB_SO) $(COLL_A) $(COLL_SO) examples tests selftests
lib: $(LIB_A) $(LIB_SO) $(COLL_A) $(COLL_SO)
cli: $(CLI)
tests: $(TEST_BINS)
examples: $(EX_BINS)
selftests: $(STEST_BINS)

$(BUILD)/%/.dir:
	@mkdir -p $(@D) && touch $@

$(BPF_OBJ): bpf/mroce.bpf.c | $(BUILD)/lib/.dir
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/selftests/foreign.bpf.o: selftests/bpf/foreign.bpf.c | $(BUILD)/selftests/.dir
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/selftests/fabric.bpf.o: selftests/fabric/fabric.bpf.c | $(BUILD)/selftests/.dir
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/fabric/%.o: selftests/fabric/%.c | $(BUILD)/fabric/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/selftests/fabric: $(FABRIC_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/selftests/xsk_raw: selftests/bench/xsk_raw.c $(BUILD)/fabric/port.o | $(BUILD)/selftests/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(SKEL): $(BPF_OBJ)
	$(BPFTOOL) gen skeleton $< name mroce_bpf > $@

$(BUILD)/lib/datapath.o: $(SKEL)

$(BUILD)/lib/%.o: lib/%.c | $(BUILD)/lib/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/verbs/%.o: verbs/%.c | $(BUILD)/verbs/.dir
	$(CC) $(CPPFLAGS) -Iverbs $(CFLAGS) -c $< -o $@

# The version script is generated (verbs/exports.sh) from the two lists that
# write the ABI down: rdma-core 44's symbols and mroce's MROCEDV_1.0 calls.
VERBS_MAP  := $(BUILD)/verbs/libibverbs.map
VERBS_LISTS := verbs/libibverbs-44.exports verbs/mrocedv.exports
$(VERBS_MAP): verbs/exports.sh $(VERBS_LISTS) | $(BUILD)/verbs/.dir
	verbs/exports.sh > $@

# Exactly the versioned symbols of rdma-core 44's libibverbs.so.1 plus
# MROCEDV_1.0 (verbs/check-exports.sh after the link: any difference fails the
# build and deletes the library), libmroce inside it and hidden.
# (VERBS_NO_UNDEF: clang links no UBSan runtime into a .so; make ubsan-clang
# drops the check and the test executable's runtime serves the library.)
VERBS_NO_UNDEF ?= -Wl,--no-undefined
$(VERBS_SO): $(VERBS_OBJS) $(LIB_A) $(VERBS_MAP) verbs/check-exports.sh
	$(CC) -shared -Wl,-soname,libibverbs.so.1 -Wl,--version-script=$(VERBS_MAP) \
		$(VERBS_NO_UNDEF) $(LDFLAGS) -o $@ $(VERBS_OBJS) $(LIB_A) $(LDLIBS)
	verbs/check-exports.sh $@

verbs: $(VERBS_SO)
all: $(VERBS_SO)

# verbs_check speaks only the standard ibverbs API (Debian's <infiniband/verbs.h>),
# linked against mroce's libibverbs (any libibverbs.so.1 at run time).
$(BUILD)/selftests/verbs_check: selftests/verbs_check.c $(VERBS_SO) | $(BUILD)/selftests/.dir
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(BUILD)/verbs -l:libibverbs.so.1

# verbs_dv: a Verbs program using mroce's extension calls (include/mroce/mrocedv.h).
$(BUILD)/selftests/verbs_dv: selftests/verbs_dv.c include/mroce/mrocedv.h $(VERBS_SO) | $(BUILD)/selftests/.dir
	$(CC) -Iinclude $(CFLAGS) $(LDFLAGS) -o $@ $< -L$(BUILD)/verbs -l:libibverbs.so.1

# verbs_token: the token of a Verbs QP pair as an attacker computes it (test_verbs_rogue.sh),
# with the library's own derivation (verbs/token.c) compiled in.
$(BUILD)/selftests/verbs_token: selftests/verbs_token.c verbs/token.c verbs/qpint.h verbs/mrv.h | $(BUILD)/selftests/.dir
	$(CC) $(CPPFLAGS) -Iverbs $(CFLAGS) $(LDFLAGS) -o $@ selftests/verbs_token.c verbs/token.c

$(BUILD)/coll/%.o: coll/%.c | $(BUILD)/coll/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/loader/%.o: loader/%.c | $(BUILD)/loader/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	@rm -f $@	# ar keeps members of deleted sources
	$(AR) rcs $@ $^

$(LIB_SO): $(LIB_OBJS) lib/libmroce.map
	$(CC) -shared -Wl,-soname,libmroce.so.0 -Wl,--version-script=lib/libmroce.map \
		$(LDFLAGS) -o $@ $(LIB_OBJS) $(LDLIBS)

$(COLL_A): $(COLL_OBJS)
	@rm -f $@	# ar keeps members of deleted sources
	$(AR) rcs $@ $^

$(COLL_SO): $(COLL_OBJS) $(LIB_SO) coll/libmroce-coll.map
	$(CC) -shared -Wl,-soname,libmroce-coll.so.0 -Wl,--version-script=coll/libmroce-coll.map \
		$(LDFLAGS) -o $@ $(COLL_OBJS) $(LIB_SO) -lpthread -lm

$(CLI): $(BUILD)/loader/main.o $(CLI_OBJS) $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TOOL_LIBS)

$(BUILD)/tests/%: tests/%.c $(CLI_OBJS) $(COLL_A) $(LIB_A) | $(BUILD)/tests/.dir
	$(CC) $(CPPFLAGS) -Iloader $(CFLAGS) $(LDFLAGS) -o $@ $< $(CLI_OBJS) $(COLL_A) $(LIB_A) -lcmocka $(LDLIBS) $(TOOL_LIBS)

$(BUILD)/perf/%.o: perf/%.c | $(BUILD)/perf/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(PERF): $(BUILD)/perf/main.o $(BUILD)/perf/args.o $(BUILD)/perf/report.o $(BUILD)/perf/json.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TOOL_LIBS)

$(COLLPERF): $(BUILD)/perf/coll_perf.o $(BUILD)/perf/coll_args.o $(BUILD)/perf/json.o $(COLL_A) $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TOOL_LIBS)

$(BUILD)/tests/test_perf_args: tests/test_perf_args.c $(BUILD)/perf/args.o | $(BUILD)/tests/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/perf/args.o -lcmocka

$(BUILD)/tests/test_perf_json: tests/test_perf_json.c $(BUILD)/perf/json.o | $(BUILD)/tests/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/perf/json.o -lcmocka $(TOOL_LIBS)

# the perf tools' figures and text, and mroce-coll-perf's flags, without the transport
$(BUILD)/tests/test_perf_report: tests/test_perf_report.c $(BUILD)/perf/report.o | $(BUILD)/tests/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/perf/report.o -lcmocka -lm

$(BUILD)/tests/test_coll_perf_args: tests/test_coll_perf_args.c $(BUILD)/perf/coll_args.o | $(BUILD)/tests/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/perf/coll_args.o -lcmocka -lm

$(BUILD)/sim/%.o: sim/%.c | $(BUILD)/sim/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(SIM): $(BUILD)/sim/main.o $(SIM_OBJS) $(COLL_A) $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/test_sim: tests/test_sim.c $(SIM_OBJS) $(COLL_A) $(LIB_A) | $(BUILD)/tests/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(SIM_OBJS) $(COLL_A) $(LIB_A) $(LDFLAGS) -lcmocka $(LDLIBS)

# mroce's libibverbs as applications see it: this test links the library
# alone (found through its RUNPATH, in this build tree), never libmroce.
$(BUILD)/tests/test_verbs_abi: tests/test_verbs_abi.c $(VERBS_SO) verbs/private.h | $(BUILD)/tests/.dir
	$(CC) $(CPPFLAGS) -Iverbs $(CFLAGS) -DMRV_EXPORTS_FILE='"$(abspath verbs/libibverbs-44.exports)"' \
		-DMRV_MULTIARCH='"$(MULTIARCH)"' $(LDFLAGS) -o $@ $< $(VERBS_SO) \
		-Wl,-rpath,'$$ORIGIN/../verbs' -lcmocka

$(BUILD)/tests/test_fabric: tests/test_fabric.c $(SWITCH_OBJS) | $(BUILD)/tests/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(SWITCH_OBJS) -lcmocka

$(BUILD)/examples/%: examples/%.c $(LIB_A) | $(BUILD)/examples/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_A) $(LDLIBS) -lpthread

$(BUILD)/selftests/prog_test: $(SKEL)

$(BUILD)/selftests/%: selftests/%.c $(COLL_A) $(LIB_A) | $(BUILD)/selftests/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(COLL_A) $(LIB_A) -lcmocka $(LDLIBS)

# The NCCL net plugin (docs/nccl.md): libmroce linked in, ncclNetPlugin_v8 its only export;
# `make nccl` builds it and its harness (selftests/nccl_harness.c, run by selftests/test_nccl.sh).
NCCL_SRCS := $(wildcard nccl/*.c)
NCCL_OBJS := $(NCCL_SRCS:%.c=$(BUILD)/%.o)
NCCL_SO   := $(BUILD)/libnccl-net-mroce.so
.PHONY: nccl
nccl: $(NCCL_SO) $(BUILD)/selftests/nccl_harness
all: $(NCCL_SO)

$(BUILD)/nccl/%.o: nccl/%.c | $(BUILD)/nccl/.dir
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(NCCL_SO): $(NCCL_OBJS) $(LIB_A) nccl/plugin.map
	$(CC) -shared -Wl,--version-script=nccl/plugin.map -Wl,--no-undefined $(LDFLAGS) \
		-o $@ $(NCCL_OBJS) $(LIB_A) $(LDLIBS)

# Unit tests again under AddressSanitizer + UBSan, in their own build tree
# (mroce's libibverbs too: build/asan/tests/test_verbs_abi runs against it).
asan:
	$(MAKE) BUILD=build/asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=address,undefined" cli examples tests selftests build/asan/mroce-perf build/asan/mroce-coll-perf nccl verbs

# Unit tests built by clang with its UBSan, which flags what gcc's does not
# (a zero offset applied to a NULL pointer: defect 23).
ubsan-clang:
	$(MAKE) BUILD=build/clang-ubsan CC=clang \
		CFLAGS="-O1 -g -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=undefined" VERBS_NO_UNDEF= tests

deps:
	@scripts/deps.sh

# Each installed header compiles alone, warning-free; the application headers
# also as C++ and without the wire format or kernel network headers; the docs' C
# snippets compile as C and C++.
headers:
	scripts/check-headers.sh

# The .so files export exactly the headers' MROCE_API functions (the maps list
# them one by one) and libmroce.a defines no global without the mroce_ prefix.
api-check: lib verbs
	scripts/check-api.sh $(BUILD)

# The README's test command: installs what is missing, builds, runs every tier.
test check: deps
	scripts/deps.sh deb
	scripts/deps.sh torch
	$(MAKE) all asan ubsan-clang pytorch
	$(MAKE) headers api-check
	scripts/run-tests.sh

# The emulated-fabric selftests alone (also part of make test).
test-fabric: deps
	$(MAKE) all asan
	scripts/run-tests.sh fabric

# The collectives selftests alone: 2-8 rank jobs in namespaces (also part of make test).
test-coll: deps
	$(MAKE) all asan
	scripts/run-tests.sh coll

# The benchmark suite (root, ~5 min): mroce next to raw AF_XDP, TCP, UCX and
# libfabric; writes docs/benchmarks.md and docs/bench/*.png.
bench: deps
	scripts/deps.sh bench
	scripts/deps.sh torch
	$(MAKE) all pytorch
	selftests/bench/bench.py $(if $(RUNS),--runs $(RUNS))
	selftests/bench/targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	selftests/bench/targets.py $(if $(RUNS),--rounds $(RUNS)) --mtu 9000 --out docs/benchmarks.md
	selftests/bench/loss_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	selftests/bench/incast_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	selftests/bench/failure_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	selftests/bench/streams_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	selftests/bench/planes_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	selftests/bench/latency_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	$(MAKE) verbs
	selftests/bench/verbs_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	selftests/bench/cc_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	selftests/bench/queues_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	selftests/bench/coll_bench.py $(if $(RUNS),--runs $(RUNS))
	selftests/bench/coll_algos_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	BUILD=$(abspath $(BUILD)) $(TORCH_PY) selftests/bench/torch_bench.py $(if $(RUNS),--rounds $(RUNS))

# Both directions at once alone (~1 min): mroce-perf write_bw -b beside iperf3 --bidir (datapath
# detached for TCP), interleaved; total throughput and CPU per byte (also part of bench.py).
bench-bidir: all
	selftests/bench/bench.py --bidir $(if $(RUNS),--runs $(RUNS)) --out docs/benchmarks.md

# Issue 13's loss targets alone (~8 min): goodput kept under 0.1, 1 and 10% loss on the
# emulated fabric, mroce (defaults) against go-back-N and kernel TCP, interleaved.
bench-loss: deps
	scripts/deps.sh bench
	$(MAKE) all
	selftests/bench/loss_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md

# Issue 13's incast target alone (~2 min): 8 senders into one 1 Gbit/s downlink, the receiver
# with rate grants (the default) and without, interleaved.
bench-incast: all
	selftests/bench/incast_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md

# Issue 13's path failure target alone (~1 min): one path of four down mid-WRITE.
bench-failure: all
	selftests/bench/failure_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md

# Issue 13's streams target alone (~15 s): 64 streams on one QP, one stalled, interleaved.
bench-streams: all
	selftests/bench/streams_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md

bench-planes: all
	selftests/bench/planes_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md

# Small messages on a clean link alone (~2 min): 10^4 8-byte round trips, no resend, no
# RTO, the p99.9 against sockperf's TCP ping-pong, interleaved.
bench-latency: all
	selftests/bench/latency_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md

# Unmodified perftest over mroce's libibverbs alone (~3 min): ib_write_bw at 64 KiB and 1 MiB
# and ib_write_lat against mroce-perf write_bw / write_lat, interleaved, same sizes, depth and
# operation counts; >= 0.9x (bandwidth), <= 1.1x (latency) wanted. Holds /tmp/bench.lock.
bench-verbs: all verbs
	selftests/bench/verbs_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md

# Congestion control on by default (~2 min): WRITE 1 MiB on a clean veth pair, the library's
# defaults against --cc none, interleaved; >= 0.97x wanted.
bench-cc: all
	selftests/bench/cc_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md

# Receive queues alone (~1.5 min): WRITE 1 MiB with 1, 2 and 4 queues of a 4-queue veth pair,
# a process and a QP per queue on each end, servers busy-polling (the default) and on their
# thread (tuned, beside), interleaved; against what the 2 cores allow.
bench-queues: all
	selftests/bench/queues_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md

# The point-to-point targets alone (~5 min): mroce (defaults) against the bare datapath
# (xsk_raw, same frame size) and kernel TCP with mroce's datapath detached, interleaved,
# at MTU 3498 and at MTU 9000 (jumbo frames: no xsk_raw there).
bench-targets: deps
	scripts/deps.sh bench
	$(MAKE) all
	selftests/bench/targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md
	selftests/bench/targets.py $(if $(RUNS),--rounds $(RUNS)) --mtu 9000 --out docs/benchmarks.md

# The collectives part alone (~15 min): mroce against Open MPI on 2 and 4 ranks.
bench-coll: deps
	scripts/deps.sh bench
	$(MAKE) all
	selftests/bench/coll_bench.py $(if $(RUNS),--runs $(RUNS))

# The collectives now against the library before the algorithms for scale (~15 min).
bench-coll-algos: deps
	scripts/deps.sh bench
	$(MAKE) all
	selftests/bench/coll_algos_targets.py $(if $(RUNS),--rounds $(RUNS)) --out docs/benchmarks.md

# The cluster simulator on small fabrics (docs/scale.md; no root, ~10 s; part of make test).
sim: $(SIM)
	scripts/sim-smoke.sh $(BUILD)

# The studies of docs/scale.md (~1 h): 256 and 1024 hosts; rewrites it and docs/scale/.
sim-studies: $(SIM)
	BUILD=$(abspath $(BUILD)) sim/studies.py $(if $(QUICK),--quick)

# The README's demo command.
demo: deps
	$(MAKE) all
	selftests/demo.sh

# The SPIN model of the transport protocol (docs/model.md, ~2 min): every
# property of the fixed rules, and a counterexample for each BUG_ variant.
model: deps
	model/check.sh $(BUILD)/model

# --- install / uninstall (docs/install.md lists what goes where) -----------
# Everything a user runs, with no reference to the source tree: the tools, the
# launcher and what it needs (netns.sh, the fabric topology, the emulated
# fabric's switch and its XDP object, under $(LIBEXECDIR)/mroce), the
# libraries, headers, pkg-config files, man pages and bash completion, and the
# NCCL plugin under the one name NCCL dlopens (docs/nccl.md: no SONAME, no links).
LIBEXECDIR  ?= $(PREFIX)/libexec
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
MAN_PAGES   := man/mroce.8 man/mroce-perf.1 man/mroce-coll-perf.1 man/mroce-launch.1 man/libmroce.7 \
	       man/mroce-verbs.1
INSTALL_BINS := $(BPF_OBJ) $(CLI) $(PERF) $(COLLPERF) $(LIB_A) $(LIB_SO) $(COLL_A) $(COLL_SO) \
		$(BUILD)/selftests/fabric $(BUILD)/selftests/fabric.bpf.o $(NCCL_SO) $(VERBS_SO)
# mroce's libibverbs goes where no loader looks by itself (every other program
# keeps the system's); mroce-verbs puts it first in LD_LIBRARY_PATH for its command.
VERBS_LIBDIR := $(LIBDIR)/mroce/verbs
PC_SUBST = -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	   -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|'
$(BUILD)/selftests/fabric: | $(BUILD)/selftests/.dir

install: $(INSTALL_BINS) install-pytorch
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR)/mroce $(DESTDIR)$(LIBDIR)/mroce $(DESTDIR)$(VERBS_LIBDIR) \
		$(DESTDIR)$(LIBEXECDIR)/mroce/fabric $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(CLI) $(DESTDIR)$(BINDIR)/mroce
	install -m 0755 $(PERF) $(DESTDIR)$(BINDIR)/mroce-perf
	install -m 0755 $(COLLPERF) $(DESTDIR)$(BINDIR)/mroce-coll-perf
	rel=$$(realpath -m --relative-to=$(BINDIR) $(LIBEXECDIR)/mroce) && \
	sed -e "s|^HELPERS=$$|HELPERS=$$rel|" -e 's|^VERSION=$$|VERSION=$(VERSION)|' \
	    tools/mroce-launch > $(DESTDIR)$(BINDIR)/mroce-launch
	chmod 0755 $(DESTDIR)$(BINDIR)/mroce-launch
	rel=$$(realpath -m --relative-to=$(BINDIR) $(VERBS_LIBDIR)) && \
	sed -e "s|^VERBSDIR=$$|VERBSDIR=$$rel|" -e 's|^VERSION=$$|VERSION=$(VERSION)|' \
	    tools/mroce-verbs > $(DESTDIR)$(BINDIR)/mroce-verbs
	chmod 0755 $(DESTDIR)$(BINDIR)/mroce-verbs
	install -m 0755 $(VERBS_SO) $(DESTDIR)$(VERBS_LIBDIR)/libibverbs.so.1
	install -m 0644 selftests/netns.sh $(DESTDIR)$(LIBEXECDIR)/mroce/netns.sh
	install -m 0644 selftests/fabric/lib.sh $(DESTDIR)$(LIBEXECDIR)/mroce/fabric/lib.sh
	install -m 0755 $(BUILD)/selftests/fabric $(DESTDIR)$(LIBEXECDIR)/mroce/fabric/fabric
	install -m 0644 $(BUILD)/selftests/fabric.bpf.o $(DESTDIR)$(LIBEXECDIR)/mroce/fabric/fabric.bpf.o
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libmroce.a
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libmroce.so.$(VERSION)
	ln -sf libmroce.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmroce.so.0
	ln -sf libmroce.so.0 $(DESTDIR)$(LIBDIR)/libmroce.so
	install -m 0644 $(COLL_A) $(DESTDIR)$(LIBDIR)/libmroce-coll.a
	install -m 0755 $(COLL_SO) $(DESTDIR)$(LIBDIR)/libmroce-coll.so.$(VERSION)
	ln -sf libmroce-coll.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmroce-coll.so.0
	ln -sf libmroce-coll.so.0 $(DESTDIR)$(LIBDIR)/libmroce-coll.so
	install -m 0755 $(NCCL_SO) $(DESTDIR)$(LIBDIR)/libnccl-net-mroce.so
	install -m 0644 include/mroce/*.h $(DESTDIR)$(INCLUDEDIR)/mroce/
	install -m 0644 $(BPF_OBJ) $(DESTDIR)$(LIBDIR)/mroce/mroce.bpf.o
	sed $(PC_SUBST) lib/mroce.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/mroce.pc
	sed $(PC_SUBST) coll/mroce-coll.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/mroce-coll.pc
	for m in $(MAN_PAGES); do \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/ || exit 1; done
	install -m 0644 completion/mroce.bash $(DESTDIR)$(BASHCOMPDIR)/mroce
	for c in mroce-perf mroce-coll-perf mroce-launch; do \
		ln -sf mroce $(DESTDIR)$(BASHCOMPDIR)/$$c || exit 1; done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/mroce $(DESTDIR)$(BINDIR)/mroce-perf \
	      $(DESTDIR)$(BINDIR)/mroce-coll-perf $(DESTDIR)$(BINDIR)/mroce-launch \
	      $(DESTDIR)$(BINDIR)/mroce-verbs \
	      $(DESTDIR)$(LIBDIR)/libmroce.* $(DESTDIR)$(LIBDIR)/libmroce-coll.* \
	      $(DESTDIR)$(LIBDIR)/libnccl-net-mroce.so \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/mroce.pc $(DESTDIR)$(LIBDIR)/pkgconfig/mroce-coll.pc
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/,$(foreach m,$(MAN_PAGES),man$(subst .,,$(suffix $(m)))/$(notdir $(m))))
	rm -f $(addprefix $(DESTDIR)$(BASHCOMPDIR)/,mroce mroce-perf mroce-coll-perf mroce-launch)
	rm -rf $(DESTDIR)$(INCLUDEDIR)/mroce $(DESTDIR)$(LIBDIR)/mroce $(DESTDIR)$(LIBEXECDIR)/mroce
	rm -rf $(DESTDIR)$(PYTHONDIR)/mroce_torch

clean:
	rm -rf build

# ---- PyTorch backend "mroce" (torch/, docs/pytorch.md): a C++ extension over
# libmroce-coll for Debian's python3-torch 1.13 (scripts/deps.sh torch). Not in
# `all`: it needs torch. make pytorch -> $(BUILD)/torch/_mroce_torch.so
TORCH_PY      := /usr/bin/python3
TORCH_SRCS    := $(wildcard torch/*.cpp)
TORCH_OBJS    := $(TORCH_SRCS:torch/%.cpp=$(BUILD)/torch/%.o)
TORCH_EXT     := $(BUILD)/torch/_mroce_torch.so
# Asked of python once, when a torch recipe first needs them (importing torch takes ~1.5 s).
TORCH_DIR      = $(eval TORCH_DIR := $(shell $(TORCH_PY) -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null))$(TORCH_DIR)
TORCH_PYINC    = $(eval TORCH_PYINC := $(shell $(TORCH_PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])'))$(TORCH_PYINC)
TORCH_CXXFLAGS = -std=c++17 -O2 -g -fPIC -Wall -Wextra -Werror -MMD -MP -Iinclude \
		 -isystem $(TORCH_DIR)/include -isystem $(TORCH_DIR)/include/torch/csrc/api/include \
		 -isystem $(TORCH_PYINC) -D_GLIBCXX_USE_CXX11_ABI=1 \
		 -DTORCH_API_INCLUDE_EXTENSION_H -DTORCH_EXTENSION_NAME=_mroce_torch
.PHONY: pytorch test-torch bench-torch
pytorch: $(TORCH_EXT)

$(BUILD)/torch/%.o: torch/%.cpp torch/pg_mroce.hpp | $(BUILD)/torch/.dir
	@[ -n "$(TORCH_DIR)" ] || { echo "pytorch: $(TORCH_PY) cannot import torch (scripts/deps.sh torch)" >&2; exit 1; }
	$(CXX) $(TORCH_CXXFLAGS) $(CPPFLAGS) $(CXXFLAGS) -c $< -o $@

# libmroce-coll and libmroce are linked in (as into the tools and the NCCL plugin):
# the extension needs no libmroce .so, only torch's libraries, found through the
# RUNPATH to torch's lib directory (TORCH_RPATH= drops it: Debian's torch keeps
# them in the loader's default path, and `import torch` has loaded them anyway).
TORCH_RPATH    = -Wl,-rpath,$(TORCH_DIR)/lib
$(TORCH_EXT): $(TORCH_OBJS) $(COLL_A) $(LIB_A)
	$(CXX) -shared $(LDFLAGS) -o $@ $(TORCH_OBJS) $(COLL_A) $(LIB_A) -L$(TORCH_DIR)/lib \
		$(TORCH_RPATH) -ltorch_python -ltorch -ltorch_cpu -lc10 $(LDLIBS)

# `make install` installs the backend, the package mroce_torch with the extension
# inside, where $(TORCH_PY) finds it with no PYTHONPATH: Debian's
# /usr/lib/python3/dist-packages for PREFIX=/usr, $(PREFIX)/lib/python3.X/dist-packages
# otherwise (on sys.path for /usr/local). PYTORCH=auto (default) installs it when
# $(TORCH_PY) imports torch and says it skips it otherwise; yes: torch is required;
# no: never (docs/install.md).
PYTORCH       ?= auto
TORCH_PYVER    = $(eval TORCH_PYVER := $(shell $(TORCH_PY) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null))$(TORCH_PYVER)
PYTHONDIR     ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(TORCH_PYVER)/dist-packages)
.PHONY: install-pytorch
install-pytorch: $(COLL_A) $(LIB_A)
ifeq ($(PYTORCH),no)
	@echo "install: the PyTorch backend is not installed (PYTORCH=no)"
else
	@if [ -z "$(TORCH_DIR)" ]; then \
		if [ "$(PYTORCH)" = yes ]; then \
			echo "install: PYTORCH=yes, but $(TORCH_PY) cannot import torch (scripts/deps.sh torch)" >&2; \
			exit 1; fi; \
		echo "install: skipping the PyTorch backend: $(TORCH_PY) cannot import torch (scripts/deps.sh torch installs it)"; \
	else \
		$(MAKE) --no-print-directory $(TORCH_EXT) && \
		install -d $(DESTDIR)$(PYTHONDIR)/mroce_torch && \
		install -m 0644 torch/mroce_torch/__init__.py $(DESTDIR)$(PYTHONDIR)/mroce_torch/__init__.py && \
		install -m 0644 $(TORCH_EXT) $(DESTDIR)$(PYTHONDIR)/mroce_torch/_mroce_torch.so; \
	fi
endif

# Its selftests (root; torch installed by scripts/deps.sh torch), and its benchmark beside gloo.
test-torch: deps
	scripts/deps.sh torch
	$(MAKE) all pytorch
	BUILD=$(abspath $(BUILD)) selftests/test_torch.sh

bench-torch: deps
	scripts/deps.sh torch
	$(MAKE) all pytorch
	BUILD=$(abspath $(BUILD)) $(TORCH_PY) selftests/bench/torch_bench.py $(if $(RUNS),--rounds $(RUNS))

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
