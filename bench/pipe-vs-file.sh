#!/usr/bin/env bash
# pipe-vs-file.sh: kvreplay's rows/s from a pipe against the same trace
# from a file (design section 8: a pipe >= 0.8 x a file), on null tiers,
# so that what is measured is the engine and the trace's decoding, not a
# device.
#
# It makes a trace of about --rows rows with kvtrace (the MLPerf 8B
# workload, made longer), then replays it --runs times each way,
# alternated (the file first in odd runs, the pipe in even ones): from the
# file (prescanned, with its sidecar) and through a pipe (cat FILE |
# kvreplay -: no prescan, no sidecar). rows/s is the result's rows done
# over its wall_s (the replay, not the prescan). It
# prints each run and the medians, and their ratio.
#
# Everything goes to a fresh directory made inside --dir (default $TMPDIR,
# else /var/tmp), removed at the end.
#
# Usage: bench/pipe-vs-file.sh --bin DIR [--dir DIR] [--rows 10000000] [--runs 5]
#   --bin    holds kvtrace and kvreplay (go build -o DIR ./cmd/kvtrace ./cmd/kvreplay)
set -euo pipefail

bin= base=${TMPDIR:-/var/tmp} rows=10000000 runs=5
while [ $# -gt 0 ]; do
	case $1 in
	--bin) bin=$2; shift 2 ;;
	--dir) base=$2; shift 2 ;;
	--rows) rows=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0"; exit 0 ;;
	*) echo "pipe-vs-file: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -x "$bin/kvreplay" ] && [ -x "$bin/kvtrace" ] || { echo "pipe-vs-file: --bin DIR must hold kvtrace and kvreplay" >&2; exit 2; }
[ -d "$base" ] || { echo "pipe-vs-file: --dir $base: no such directory" >&2; exit 2; }
work=$(mktemp -d "$base/pipe-vs-file.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The MLPerf 8B workload writes about 4360 rows per simulated second.
duration=$(( rows / 4360 + 1 ))
"$bin/kvtrace" --model llama3.1-8b --num-users 150 --duration "$duration" --generation-mode none \
	--gpu-mem-gb 0 --cpu-mem-gb 4 -o "$work/run.csv.zst"
tiers=Tier-0=null,Tier-1=null,Tier-2=null

rate() { # rows/s of a result document
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.0f" % (r["replay"]["rows_done"]/r["wall_s"]))' "$1"
}
file=() pipe=()
from_file() { "$bin/kvreplay" --tier-map "$tiers" --speed max -o "$work/file.json" "$work/run.csv.zst"; }
# shellcheck disable=SC2002 # a pipe, not a redirected file, is the point
from_pipe() { cat "$work/run.csv.zst" | "$bin/kvreplay" --tier-map "$tiers" --speed max -o "$work/pipe.json" -; }
for i in $(seq "$runs"); do
	# The file first in odd runs, the pipe first in even ones.
	if ((i % 2)); then from_file; from_pipe; else from_pipe; from_file; fi
	file+=("$(rate "$work/file.json")") pipe+=("$(rate "$work/pipe.json")")
	echo "run $i: file ${file[-1]} rows/s, pipe ${pipe[-1]} rows/s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.0f\n", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mf=$(median "${file[@]}") mp=$(median "${pipe[@]}")
rows_done=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["replay"]["rows_done"])' "$work/pipe.json")
echo "$rows_done rows: median file $mf rows/s, pipe $mp rows/s: pipe/file $(awk -v p="$mp" -v f="$mf" 'BEGIN {printf "%.2f", p/f}')"
