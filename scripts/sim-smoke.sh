#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make sim` (and make test's sim tier): the simulator's command on small fabrics, each run's JSON
# checked: completed, every byte verified where it landed, the flows and
# frames it must have. No root. Usage: scripts/sim-smoke.sh [BUILD_DIR] (or BUILD=...)
set -u
SIM=${BUILD:-${1:-build}}/mroce-sim
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
pass=0 fail=0

# check NAME PYTHON-CONDITION -- mroce-sim args: the condition sees the JSON as j
check() {
	local name=$1 cond=$2
	shift 3
	if "$SIM" --json "$OUT/$name.json" --dat "$OUT/$name.dat" --quiet "$@" &&
	   /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($cond) else 1)" \
		"$OUT/$name.json" && [ -s "$OUT/$name.dat" ]; then
		echo "PASS: $name"; pass=$((pass + 1))
	else
		echo "FAIL: $name"; "$SIM" "$@" 2>&1 | head -3 | sed "s/^/    /"; fail=$((fail + 1))
	fi
}

base=(--hosts 32 --hosts-per-leaf 8 --spines 4 --rate 100 --verify)
# the collectives: libmroce-coll's algorithms on every host, every element checked
check alltoall "j['ok'] and j['verify_bad_bytes'] == 0 and j['algo'] and j['conns_opened'] >= 32 * 31 / 2 and j['ratio'] >= 1" \
	-- "${base[@]}" --size 2M --chunk 64K
check allreduce "j['ok'] and j['verify_bad_bytes'] == 0 and j['algo'] and j['ratio'] >= 1" \
	-- "${base[@]}" --workload allreduce --size 2M --chunk 64K
check allreduce-ring "j['ok'] and j['verify_bad_bytes'] == 0 and j['algo'] == 'ring' and j['ratio'] >= 1" \
	-- "${base[@]}" --workload allreduce --algo ring --size 2M --chunk 64K
check allreduce-rd "j['ok'] and j['verify_bad_bytes'] == 0 and j['algo'] == 'rd' and j['ratio'] >= 1" \
	-- "${base[@]}" --workload allreduce --algo rd --size 1M --chunk 64K
check incast "j['ok'] and j['flows']['done'] == 16 and j['peak_queue_bytes']['leaf_host'] > 0" \
	-- "${base[@]}" --workload incast --incast 16 --size 512K
check spine-down "j['ok'] and j['verify_bad_bytes'] == 0 and j['drops']['failed_links'] > 0" \
	-- "${base[@]}" --size 4M --chunk 64K --fail spine:2@30
check loss-gbn "j['ok'] and j['verify_bad_bytes'] == 0 and j['drops']['loss'] > 0 and j['retransmissions'] > 0" \
	-- "${base[@]}" --size 1M --chunk 64K --loss 1% --mode gbn
check planes "j['ok'] and j['verify_bad_bytes'] == 0 and j['config']['planes'] == 2" \
	-- "${base[@]}" --size 2M --chunk 64K --planes 2 --fail plane:1@20:200 --background 4
# usage errors exit 2, with a message
for bad in "--hosts 30" "--fail spine:9@1" "--loss 2" "--loss nan" "--oversub nan" "--workload bogus" "--workload incast --algo ring"; do
	"$SIM" $bad > /dev/null 2> "$OUT/err"
	if [ $? -eq 2 ] && [ -s "$OUT/err" ]; then
		echo "PASS: rejects $bad"; pass=$((pass + 1))
	else
		echo "FAIL: rejects $bad"; fail=$((fail + 1))
	fi
done
echo "sim: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
