#!/usr/bin/env bash
# mlperf-option.sh: run MLPerf Storage v3.0 KV cache Options end to end with
# kvbench, as `mlpstorage closed kvcache run` runs them with kv-cache.py
# (Rules.md section 6.3), on one machine or under mpirun/srun:
#
#   1. trace once per rank seed: kvtrace --mlperf-option O --seed BASE+R
#      (each rank, an MLPerf client, runs the whole Option with its own seed);
#   2. for each trial T: sleep --settle seconds, replay every rank's trace at
#      once (kvreplay --closed-loop --fsync --rank R --ranks N --shard tp
#      --trial T, each rank's NVMe tier in CACHE/rank_R), sleep --settle
#      seconds (mlperf_wrapper.py's start and end delays, 90 s by default);
#   3. between Options, sleep --inter-option-delay seconds (mlpstorage's 20);
#   4. aggregate: kvreport --aggregate mlperf (Rules.md 6.3.4), written as
#      mlpstorage's kvcache_run_summary_<ts>.json beside the per-rank results,
#      and shown with kvbench's pooled view on stdout.
#
# Results go to a new directory RESULTS/kvbench_mlperf_<ts>/ laid out as
# mlpstorage lays out its own: option_<O>/trial_<T>/rank_<N>/ (one
# kvbench_result.json and the replay's log each), traces/option_<O>/.
# Nothing already in RESULTS or CACHE is touched; each rank's cache
# directory holds only what kvreplay makes there, removed when it ends.
#
# Usage: bench/mlperf-option.sh --cache-dir DIR --results-dir DIR [options]
#   --option 1|2|3|all     the Option(s) to run (default all, in order)
#   --ranks N              clients (MPI ranks); default 1
#   --launcher CMD         start the ranks with CMD, e.g. "mpirun -np 2 --mca
#                          odls_base_sigkill_timeout 10" (time for interrupted
#                          ranks to write their results and remove their files) or
#                          "srun -n 2" (its rank count must be --ranks); each
#                          rank finds its number in OMPI_COMM_WORLD_RANK,
#                          PMIX_RANK, PMI_RANK or SLURM_PROCID. Without it the
#                          ranks run as processes on this machine, each given
#                          KVBENCH_LOCAL_RANK (its GPU, for a gpu tier)
#   --trials N             default 3 (CLOSED: 3)
#   --seed N               base seed, rank R uses N+R (default 42, CLOSED: 42)
#   --settle S             seconds slept before and after each trial (default 90)
#   --inter-option-delay S seconds between Options (default 20)
#   --users N, --duration S
#                          scale the Option (an OPEN workload, said so): users
#                          per client and seconds of the run
#   --trace-opt OPT        one more kvtrace option (repeat it)
#   --replay-opt OPT       one more kvreplay option (repeat it), e.g.
#                          --replay-opt=--size-scale=1/256
#   --precondition         write each rank's storage once before measuring: its
#                          objects in one preallocated file (kvreplay --layout
#                          extent), written whole before each replay (--prewrite)
#   --bin DIR              kvtrace, kvreplay and kvreport from DIR (default:
#                          built from this checkout into the run directory)
#
# Checks, said on stderr: the cache and results directories on different file
# systems (Rules.md 6.4.1), under --launcher that every rank sees the results
# directory (6.3.3.4: each rank writes a sentinel there first), and a cache
# directory on a FUSE mount (an object store's POSIX gateway, 6.5) has its
# type and mount options recorded in the run directory. Without
# --precondition it says that the storage was not preconditioned.
# A rank that fails does not stop the others (under a launcher too).
# Exit status: 0 when every rank of every trial left a complete result; 1
# when some did not: missing (the summary says partial_failure and names
# them), cut short or failed (named on stderr; kvreport sums a cut-short
# result, as mlpstorage does, and warns); 2 for bad usage.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() {
	echo "mlperf-option.sh: $*" >&2
	exit 2
}

# rank_of prints this process's rank: the one this script gave it
# (KVBENCH_RANK, set for the ranks it starts itself; first, since a batch
# job's own SLURM_PROCID=0 is in every one's environment), else the one
# the launcher set.
rank_of() {
	local v
	for v in KVBENCH_RANK OMPI_COMM_WORLD_RANK PMIX_RANK PMI_RANK SLURM_PROCID; do
		if [[ -n ${!v:-} ]]; then
			echo "${!v}"
			return
		fi
	done
	echo 0
}

# A rank's part, started by the launcher (or by this script): __probe DIR
# writes a sentinel; __rank replays the rank's trace of one trial.
case ${1:-} in
__probe)
	mkdir -p "$2" && hostname >"$2/rank_$(rank_of)"
	exit 0
	;;
__rank)
	shift
	bin=$1 option=$2 trial=$3 ranks=$4 duration=$5 cache=$6 run=$7
	shift 7
	[[ ${1:-} == -- ]] && shift
	r=$(rank_of)
	out=$run/option_$option/trial_$trial/rank_$r
	mkdir -p "$out"
	# Each Option's and trial's data bytes are their own (--seed; kvreplay
	# mixes the rank in): a deduplicating store finds nothing of an earlier
	# trial's in a later one.
	"$bin/kvreplay" --quiet --rank "$r" --ranks "$ranks" --shard tp --trial "$trial" --label "option_$option" \
		--seed $((option * 1000 + trial + 1)) \
		--closed-loop --fsync --duration "$duration" --mkdir --dir "$cache/rank_{rank}" \
		-o "$run/option_$option/trial_$trial/rank_{rank}/kvbench_result.json" "$@" "$run/traces/option_$option/rank_$r.csv.zst" >"$out/kvreplay.log" 2>&1 &
	pid=$! sig=
	# A signal to this rank (the launcher's, on an interrupt) goes on to
	# its kvreplay, which ends its replay and writes what it measured.
	for s in INT TERM HUP; do
		# shellcheck disable=SC2064 # the signal's name, now
		trap "sig=$s; kill -$s $pid 2>/dev/null" "$s"
	done
	rc=0
	while :; do
		wait "$pid" && rc=0 || rc=$?
		kill -0 "$pid" 2>/dev/null || break # else a trap ended the wait
	done
	echo "mlperf-option.sh: kvreplay exit status $rc" >>"$out/kvreplay.log"
	# A rank that fails on its own exits 0: a launcher (mpirun) would kill
	# the other ranks mid-replay, and their cache files with them; the
	# script finds the rank's result missing and says so. An interrupted
	# rank says it was.
	[[ -n $sig ]] && exit "$rc"
	exit 0
	;;
esac
# The ranks the launcher starts are told their rank by it, not by a
# KVBENCH_RANK of this script's environment.
unset KVBENCH_RANK

options=all ranks=1 launcher= trials=3 seed=42 settle=90 delay=20
users= duration= cache= results= bin= precondition=
trace_opts=() replay_opts=()
while (($#)); do
	arg=$1
	val=
	if [[ $arg == --*=* ]]; then
		val=${arg#*=}
		arg=${arg%%=*}
	elif [[ $arg != -h && $arg != --help && $arg != --precondition ]]; then
		(($# >= 2)) || die "$arg: needs a value (see --help)"
		val=$2
		shift
	fi
	shift
	case $arg in
	-h | --help) usage; exit 0 ;;
	--option) options=$val ;;
	--ranks) ranks=$val ;;
	--launcher) launcher=$val ;;
	--trials) trials=$val ;;
	--seed) seed=$val ;;
	--settle) settle=$val ;;
	--inter-option-delay) delay=$val ;;
	--users) users=$val ;;
	--duration) duration=$val ;;
	--cache-dir) cache=$val ;;
	--results-dir) results=$val ;;
	--trace-opt) trace_opts+=("$val") ;;
	--replay-opt) replay_opts+=("$val") ;;
	--bin) bin=$val ;;
	--precondition) precondition=1 ;;
	*) die "$arg: unknown option (see --help)" ;;
	esac
done

[[ -n $cache ]] || die "--cache-dir: required (the storage under test; each rank uses DIR/rank_<N>)"
[[ -n $results ]] || die "--results-dir: required (where the run's directory is made)"
[[ -d $cache ]] || die "--cache-dir $cache: not a directory"
[[ -d $results ]] || die "--results-dir $results: not a directory"
[[ $options == all ]] && options=1,2,3
[[ $options =~ ^[123](,[123])*$ ]] || die "--option $options: want 1, 2, 3, a list of them (1,3) or all"
IFS=, read -r -a option_list <<<"$options"
for ((i = 1; i < ${#option_list[@]}; i++)); do
	for ((j = 0; j < i; j++)); do
		# A second run of an Option would write over the first's results.
		[[ ${option_list[i]} != "${option_list[j]}" ]] || die "--option $options: Option ${option_list[i]} twice (give --trials for more runs of it)"
	done
done
for n in ranks trials seed settle delay; do
	[[ ${!n} =~ ^[0-9]+$ ]] || die "--${n/delay/inter-option-delay} ${!n}: must be a whole number"
	printf -v "$n" %d "$((10#${!n}))" # 08 is 8, not an octal error
done
((ranks >= 1)) || die "--ranks $ranks: must be at least 1"
((trials >= 1)) || die "--trials $trials: must be at least 1"
[[ -z $users || $users =~ ^[0-9]+$ ]] || die "--users $users: must be a whole number"
[[ -z $duration || $duration =~ ^[0-9]+$ ]] || die "--duration $duration: must be whole seconds"
[[ -z $users ]] || users=$((10#$users))
[[ -z $duration ]] || duration=$((10#$duration))
((${users:-1} >= 1)) || die "--users $users: must be at least 1"
((${duration:-1} >= 1)) || die "--duration $duration: must be at least 1 second"
if [[ -n $bin ]]; then
	[[ -d $bin ]] || die "--bin $bin: not a directory"
	for t in kvtrace kvreplay kvreport; do
		[[ -x $bin/$t ]] || die "--bin $bin: no $t there"
	done
fi

cache=$(cd "$cache" && pwd)
results=$(cd "$results" && pwd)
# A run directory of its own, named by the second as mlpstorage names
# its runs: one started the same second waits for the next.
for try in 1 2 3 4 5; do
	ts=$(date -u +%Y%m%d_%H%M%S)
	run=$results/kvbench_mlperf_$ts
	mkdir "$run" 2>/dev/null && break
	[[ -e $run && $try -lt 5 ]] || die "--results-dir $results: cannot make $run"
	sleep 1
done
echo "mlperf-option.sh: run directory $run" >&2

if [[ $(stat -c %d "$cache") == $(stat -c %d "$results") ]]; then
	echo "mlperf-option.sh: warning: --cache-dir and --results-dir are on one file system: the rules want them apart (Rules.md 6.4.1), so that results do not perturb the storage under test" >&2
fi

# Object storage only through a POSIX gateway (Rules.md 6.5): a FUSE
# cache directory has its type and mount options recorded with the run.
case $(stat -f -c %T "$cache") in
fuse*)
	findmnt -T "$cache" -o TARGET,SOURCE,FSTYPE,OPTIONS >"$run/cache_gateway.txt" 2>&1 || true
	echo "mlperf-option.sh: --cache-dir is on a FUSE mount (a POSIX gateway, Rules.md 6.5): its type and mount options are in $run/cache_gateway.txt; record the gateway's software and version with the submission" >&2
	;;
esac
if [[ -n $precondition ]]; then
	replay_opts=(--layout extent --prewrite "${replay_opts[@]}")
	echo "mlperf-option.sh: preconditioning: each rank's objects live in one preallocated file, written whole before each replay (kvreplay --layout extent --prewrite)" >&2
else
	echo "mlperf-option.sh: note: the storage is not preconditioned (the rules require it written once before measuring): give --precondition, or do it before the run" >&2
fi

if [[ -z $bin ]]; then
	root=$(cd "$(dirname "$0")/.." && pwd)
	bin=$run/bin
	echo "mlperf-option.sh: building kvtrace, kvreplay, kvreport into $bin" >&2
	if ! (cd "$root" && go build -o "$bin/" ./cmd/kvtrace ./cmd/kvreplay ./cmd/kvreport); then
		rm -rf -- "$run" # made above by this run, and nothing run in it yet
		echo "mlperf-option.sh: building the tools failed: nothing was run, and $run, which this run made, is removed (--bin DIR runs tools built elsewhere)" >&2
		exit 1
	fi
fi
bin=$(cd "$bin" && pwd)
for t in kvtrace kvreplay kvreport; do
	[[ -x $bin/$t ]] || die "--bin $bin: no $t there"
done

# start_ranks runs "$0 ARGS" once per rank: under the launcher, or here.
start_ranks() {
	pids=()
	if [[ -n $launcher ]]; then
		# shellcheck disable=SC2086 # the launcher's words
		$launcher "$0" "$@" &
		pids+=($!)
	else
		local r
		for ((r = 0; r < ranks; r++)); do
			KVBENCH_RANK=$r KVBENCH_LOCAL_RANK=$r "$0" "$@" &
			pids+=($!)
		done
	fi
	local p
	for p in "${pids[@]}"; do
		# A trap ends the wait early: wait again until the rank has ended.
		while ! wait "$p"; do
			kill -0 "$p" 2>/dev/null || break
		done
	done
	pids=()
	if [[ -n $stopped ]]; then
		echo "mlperf-option.sh: stopped by SIG$stopped: the ranks have ended; results so far are in $run" >&2
		exit 1
	fi
}

# A signal to this script goes on to the ranks it started (or their
# launcher), which end their replays and remove their cache files; the
# script then stops (at once when no rank runs). Before, its ranks ran on,
# unseen, after it ended.
pids=() stopped=
on_signal() {
	stopped=$1
	if ((${#pids[@]} == 0)); then
		echo "mlperf-option.sh: stopped by SIG$1" >&2
		exit 1
	fi
	kill -"$1" "${pids[@]}" 2>/dev/null || true
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP

if [[ -n $launcher ]]; then
	# Every rank must see the results directory (Rules.md 6.3.3.4).
	start_ranks __probe "$run/.probe"
	seen=$(find "$run/.probe" -type f 2>/dev/null | wc -l)
	if ((seen != ranks)); then
		die "--results-dir $results: $seen of $ranks ranks wrote their sentinel in $run/.probe: it must be on a file system every host sees at the same path (or --launcher does not start --ranks ranks)"
	fi
	rm -rf "$run/.probe"
fi

first=1 failed=()
for o in "${option_list[@]}"; do
	if ((!first && delay > 0)); then
		echo "mlperf-option.sh: inter-option delay, $delay s" >&2
		sleep "$delay"
	fi
	first=0
	trace_args=(--mlperf-option "$o")
	[[ -n $users ]] && trace_args+=(--num-users "$users")
	[[ -n $duration ]] && trace_args+=(--duration "$duration")
	d=${duration:-300}
	mkdir -p "$run/traces/option_$o"
	for ((r = 0; r < ranks; r++)); do
		"$bin/kvtrace" "${trace_args[@]}" --seed $((seed + r)) "${trace_opts[@]}" \
			-o "$run/traces/option_$o/rank_$r.csv.zst" 2> >(sed "s/^/option $o rank $r: /" >&2)
	done
	for ((t = 0; t < trials; t++)); do
		echo "mlperf-option.sh: option $o trial $((t + 1))/$trials: $ranks rank(s)" >&2
		((settle > 0)) && sleep "$settle"
		start_ranks __rank "$bin" "$o" "$t" "$ranks" "$d" "$cache" "$run" -- "${replay_opts[@]}"
		((settle > 0)) && sleep "$settle"
		for ((r = 0; r < ranks; r++)); do
			f=$run/option_$o/trial_$t/rank_$r
			why=
			if [[ ! -s $f/kvbench_result.json ]]; then
				why="left no result"
			elif grep -q '^  "complete": false' "$f/kvbench_result.json"; then
				# kvreport sums it all the same, as mlpstorage sums every
				# result it finds: the run is not whole.
				why="left the result of an incomplete replay"
			elif ! grep -q '^mlperf-option.sh: kvreplay exit status 0$' "$f/kvreplay.log" 2>/dev/null; then
				why="failed (its kvreplay did not exit 0)"
			fi
			if [[ -n $why ]]; then
				failed+=("option_$o/trial_$t/rank_$r")
				echo "mlperf-option.sh: option $o trial_$t rank_$r $why; its log:" >&2
				tail -n 5 "$f/kvreplay.log" >&2 2>/dev/null || true
			fi
		done
	done
done

summary=$run/kvcache_run_summary_$ts.json
rc=0
"$bin/kvreport" --aggregate mlperf "$run" || true
"$bin/kvreport" --aggregate mlperf --format json -o "$summary" "$run" || rc=$?
echo "mlperf-option.sh: summary $summary" >&2
if ((${#failed[@]})); then
	echo "mlperf-option.sh: ${#failed[@]} rank run(s) missing, incomplete or failed (${failed[*]}): not a whole run" >&2
	((rc)) || rc=1
fi
exit "$rc"
