# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bash completion for mroce, mroce-perf, mroce-coll-perf and mroce-launch.
# Installed as .../bash-completion/completions/mroce, with the other three
# names as links to it (bash-completion loads a file by the command's name).
# Self-contained: it uses only compgen, and bash-completion's _command_offset
# when present (the command after mroce-launch's --).

# _mroce_reply WORDS...: COMPREPLY from the words that start with the current one.
_mroce_reply() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	COMPREPLY=($(compgen -W "$*" -- "$cur"))
}

_mroce_ifaces() {
	local d names=()
	for d in /sys/class/net/*; do [ -e "$d" ] && names+=("${d##*/}"); done
	_mroce_reply "${names[@]}"
}

_mroce_files() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen -f -- "$cur"))
}

# The words before the current one that are not options: the command, DEV, ...
_mroce_positionals() {
	local i w
	MROCE_POS=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--mode | --port | --obj | --dm-mb | --token | --psn | --peer-qpn) ((i++)) ;;
		-*) ;;
		*) MROCE_POS+=("$w") ;;
		esac
	done
}

_mroce() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd
	COMPREPLY=()
	case $prev in
	--mode) _mroce_reply native skb; return ;;
	--obj) _mroce_files; return ;;
	--port | --dm-mb | --token | --psn | --peer-qpn) return ;;
	esac
	_mroce_positionals
	cmd=${MROCE_POS[0]:-}
	[ "$cmd" = flow ] && cmd="flow ${MROCE_POS[1]:-}"
	if [[ $cur == -* ]]; then
		case $cmd in
		attach) _mroce_reply --mode --port --obj --pin --dm-mb -v --verbose -h --help -V --version ;;
		status) _mroce_reply --json --prometheus -v --verbose -h --help -V --version ;;
		flows) _mroce_reply --json -v --verbose -h --help -V --version ;;
		"flow add") _mroce_reply --token --psn --peer-qpn --go-back-n -v --verbose -h --help -V --version ;;
		'') _mroce_reply -v --verbose -h --help -V --version ;;
		*) _mroce_reply -v --verbose -h --help -V --version ;;
		esac
		return
	fi
	case ${#MROCE_POS[@]}:$cmd in
	0:*) _mroce_reply attach detach status flows flow ;;
	1:flow\ *) _mroce_reply add del ;;
	1:*) _mroce_ifaces ;;
	2:flow\ add | 2:flow\ del) _mroce_ifaces ;;
	esac
}

_mroce_perf() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	case $prev in
	--dev | --ib-dev | -d) _mroce_ifaces; return ;;
	--test) _mroce_reply write_bw write_lat read_bw read_lat send_bw send_lat; return ;;
	--order) _mroce_reply ordered unordered; return ;;
	--progress) _mroce_reply thread poll; return ;;
	--memory) _mroce_reply heap dm umem; return ;;
	--cc) _mroce_reply default none ecn delay both; return ;;
	--connection | -c) _mroce_reply RC; return ;;
	--addr | --port | --size | --qps | --qp | --paths | --depth | --tx-depth | --window | \
	--duration | --iters | --gid-index | --queue | -s | -D | -n | -q | -x | -p | -t) return ;;
	--queues) _mroce_reply all; return ;;
	esac
	if [ "$COMP_CWORD" -eq 1 ]; then
		_mroce_reply server client -h --help -V --version
		return
	fi
	case ${COMP_WORDS[1]} in
	server) _mroce_reply --dev --addr --port --qps --paths --window --cc --order --gbn \
		--progress --memory --json --bidirectional --queue --queues ;;
	client) _mroce_reply --dev --addr --port --test --size --all --sweep --qps --paths --depth \
		--bidirectional --window --cc --order --gbn --duration --iters --progress --memory --report_gbits --json \
		--gid-index --CPU-freq --rdma_cm --connection --queue --queues ;;
	esac
}

_mroce_coll_perf() {
	local prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	case $prev in
	-c | --coll) _mroce_reply allreduce reducescatter allgather broadcast alltoall; return ;;
	--check | -z | --blocking) _mroce_reply 0 1; return ;;
	-d | --datatype) _mroce_reply float double int32 int64 uint8; return ;;
	-o | --op) _mroce_reply sum prod min max; return ;;
	-g | --ngpus | -t | --nthreads) _mroce_reply 1; return ;;
	-b | -e | -f | -n | -w | -i | -r | --minbytes | --maxbytes | --stepfactor | --stepbytes | \
	--iters | --warmup_iters | --root | --warmup-ms | --chunk) return ;;
	esac
	_mroce_reply --coll --minbytes --maxbytes --stepfactor --stepbytes --iters --warmup_iters \
		--check --blocking --datatype --op --root --json --stats --warmup-ms --chunk \
		-h --help -V --version
}

# The jobs that exist (for exec, ns, addr, down).
_mroce_launch_jobs() {
	local ns names=()
	while read -r ns _; do
		[[ $ns =~ ^mr[lf]-([A-Za-z0-9_]+)-(br|sw)$ ]] && names+=("${BASH_REMATCH[1]}")
	done < <(ip netns list 2>/dev/null)
	_mroce_reply "${names[@]}"
}

_mroce_launch() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i sub=run
	COMPREPLY=()
	# After --, the rank command and its arguments.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			if declare -F _command_offset >/dev/null; then
				_command_offset $((i + 1))
			elif [ $((i + 1)) -eq "$COMP_CWORD" ]; then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				_mroce_files
			fi
			return
		fi
	done
	case ${COMP_WORDS[1]:-} in
	run | up | exec | ns | addr | down | list) sub=${COMP_WORDS[1]} ;;
	esac
	case $prev in
	--net) _mroce_reply bridge fabric; return ;;
	-n | --name | --mtu | --paths | --seed | --fabric-ctl | --port | --timeout | --kill-rank | \
	--kill-after-ms | --env) return ;;
	esac
	if [ "$COMP_CWORD" -eq 1 ]; then
		_mroce_reply run up exec ns addr down list -n --net --name --mtu --paths --seed \
			--fabric-ctl --port --timeout --kill-rank --kill-after-ms --env -h --help -V --version
		return
	fi
	case $sub in
	run) _mroce_reply -n --net --name --mtu --paths --seed --fabric-ctl --port --timeout \
		--kill-rank --kill-after-ms --env -h --help -V --version -- ;;
	up) _mroce_reply -n --net --name --mtu --paths --seed --fabric-ctl -h --help -V --version ;;
	exec) [ "$COMP_CWORD" -eq 2 ] && _mroce_launch_jobs
	      [ "$COMP_CWORD" -eq 4 ] && _mroce_reply -- ;;
	ns | addr | down) [ "$COMP_CWORD" -eq 2 ] && _mroce_launch_jobs ;;
	esac
	[[ $cur == -* ]] && [ "$sub" != run ] && [ "$sub" != up ] && _mroce_reply -h --help -V --version
}

complete -F _mroce mroce
complete -F _mroce_perf mroce-perf
complete -F _mroce_coll_perf mroce-coll-perf
complete -F _mroce_launch mroce-launch
