#!/usr/bin/env bash
# vs-fio.sh: kvreplay and fio side by side, on one machine, in one run.
#
# For each round it alternates fio and kvreplay on the same file, block size
# and queue depth (io_uring, O_DIRECT, the extent layout's single file; fio
# with registered buffers, batched submission and completion and, where the
# machine has huge pages reserved, huge-page buffers, as kvreplay does them,
# so the comparison is with fio at its best):
#   seq-write   write the objects of a real trace, back to back
#   seq-read    read them back
#   trace       replay the same trace's Tier-2 rows, exported to a fio iolog
#               by kvtrace export and replayed by kvreplay itself
#   small       N 4 KiB objects written, then read back in a shuffled order
#               (one trace, --block-size 4KiB), beside fio's write and
#               randread at 4k on a file of the same size: IOPS, not GB/s.
#               The writes are sequential for both: the extent layout puts
#               keys written in order back to back (beside fio's randwrite,
#               kvreplay's merged 4 KiB writes would count twice as fast)
#   dir         the trace's Tier-2 rows in the directory layout (a file per
#               object: kvreplay's default), exported by kvtrace export
#               --layout dir, beside fio twice: as the job is, whose prep
#               job writes every object's file in full before the timed
#               replay (its writes then overwrite written blocks), and on
#               the same files made fresh before it, created and allocated
#               (fallocate) but not written, as each of kvreplay's writes
#               finds its object's file; not in --cases' default (it writes
#               the trace's objects twice, fio's files and kvreplay's)
# (fio first in odd rounds, kvreplay first in even ones) and prints each
# pair's figure, the ratio kvreplay/fio, and the medians over the rounds.
# Uses only public tools: bash, fio, python3, go.
#
# Everything goes to a fresh directory made inside --dir (default $TMPDIR,
# else /var/tmp: /tmp is often a tmpfs), removed at the end; nothing else
# in --dir is touched.
#
# Usage: bench/vs-fio.sh [--dir DIR] [--block-size 1MiB] [--queue-depth 32]
#                        [--rounds 5] [--total-gib 4] [--trace FILE] [--scale 1/256]
#                        [--small-objects 500000] [--cases seq,trace,small]
#                        [--kvreplay BIN] [--kvtrace BIN] [--fio-iomem auto]
#   --cases       which cases to run, of seq, trace, small and dir (seq is
#                 seq-write and seq-read)
#   --fio-iomem   fio's buffers: shmhuge (huge pages: reserve them first, as
#                 root: echo 64 > /proc/sys/vm/nr_hugepages), malloc, or auto
#                 (shmhuge where enough huge pages are free, else malloc, said
#                 on stderr: kvreplay's buffers are huge pages where the kernel
#                 gives them, and virtio-blk splits a 1 MiB I/O of 4 KiB pages)
#   --kvreplay, --kvtrace  use these binaries instead of building ./cmd/...
set -euo pipefail

base=${TMPDIR:-/var/tmp}
bs=1MiB
qd=32
rounds=5
total_gib=4
trace=
scale=1/256
small_n=500000
cases=seq,trace,small
kvreplay_bin=
kvtrace_bin=
fio_iomem=auto
while [ $# -gt 0 ]; do
	case $1 in
	--dir) base=$2; shift 2 ;;
	--block-size) bs=$2; shift 2 ;;
	--queue-depth) qd=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--total-gib) total_gib=$2; shift 2 ;;
	--trace) trace=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--small-objects) small_n=$2; shift 2 ;;
	--cases) cases=$2; shift 2 ;;
	--kvreplay) kvreplay_bin=$2; shift 2 ;;
	--kvtrace) kvtrace_bin=$2; shift 2 ;;
	--fio-iomem) fio_iomem=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0"; exit 0 ;;
	*) echo "vs-fio: unknown option $1" >&2; exit 2 ;;
	esac
done
has() { case ",$cases," in *",$1,"*) return 0 ;; esac; return 1; }
for c in ${cases//,/ }; do
	case $c in seq|trace|small|dir) ;; *) echo "vs-fio: --cases $cases: unknown case $c (want seq, trace, small, dir)" >&2; exit 2 ;; esac
done
[ -d "$base" ] || { echo "vs-fio: --dir $base: no such directory" >&2; exit 2; }

top=$(cd "$(dirname "$0")/.." && pwd)
command -v fio >/dev/null || { echo "vs-fio: fio is not installed (apt-get install fio)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "vs-fio: python3 is needed to read JSON" >&2; exit 2; }
if has seq || has trace || has dir; then
	command -v zstd >/dev/null || { echo "vs-fio: zstd is needed to read compressed traces (apt-get install zstd)" >&2; exit 2; }
fi

# work holds binaries, traces and results; dir the files under test. Both
# are made here and are all the trap removes.
work=$(mktemp -d)
dir=
trap 'rm -rf "$work" ${dir:+"$dir"}' EXIT
dir=$(mktemp -d "$base/kvbench-vs-fio.XXXXXX")
bin=$work/bin
mkdir -p "$bin"
if [ -z "$kvreplay_bin" ] || { [ -z "$kvtrace_bin" ] && { has trace || has dir; }; }; then
	(cd "$top" && CGO_ENABLED=0 go build -o "$bin/" ./cmd/kvtrace ./cmd/kvreplay)
fi
kvreplay=${kvreplay_bin:-$bin/kvreplay}
kvtrace=${kvtrace_bin:-$bin/kvtrace}
bsb=$(python3 -c "import sys;u={'k':1<<10,'KiB':1<<10,'m':1<<20,'MiB':1<<20,'g':1<<30,'GiB':1<<30};s=sys.argv[1]
for k in sorted(u,key=len,reverse=True):
  if s.endswith(k): print(int(float(s[:-len(k)])*u[k])); break
else: print(int(s))" "$bs")
file=$dir/kvbench.extent

# fio's buffers: huge pages where enough are free for its queue of blocks
# (shmhuge takes them from the reserved pool, which nothing here changes).
need_mib=$(( (qd * (bsb > 4096 ? bsb : 4096) + (1 << 20) - 1) >> 20 ))
free_mib=$(awk '/^HugePages_Free:/ { f = $2 } /^Hugepagesize:/ { s = $2 } END { print int(f * s / 1024) }' /proc/meminfo)
case $fio_iomem in
auto)
	if [ "$free_mib" -ge $((need_mib + 2)) ]; then
		fio_iomem=shmhuge
	else
		fio_iomem=malloc
		echo "vs-fio: fio's buffers are malloc'd (4 KiB pages): ${free_mib} MiB of huge pages free, ${need_mib} MiB needed; for fio at its best reserve them first, as root: echo $(( (need_mib + 2) / 2 + 8 )) > /proc/sys/vm/nr_hugepages" >&2
	fi ;;
shmhuge)
	[ "$free_mib" -ge $((need_mib + 2)) ] || { echo "vs-fio: --fio-iomem shmhuge: ${free_mib} MiB of huge pages free, ${need_mib} MiB needed (echo N > /proc/sys/vm/nr_hugepages)" >&2; exit 2; } ;;
malloc) ;;
*) echo "vs-fio: --fio-iomem $fio_iomem: want auto, shmhuge or malloc" >&2; exit 2 ;;
esac
echo "vs-fio: fio's buffers: iomem=$fio_iomem" >&2

fio_json() { # job-file -> fio's JSON in $work/fio.json; a failed fio (or job) stops the script, saying why
	if ! fio --output-format=json --output="$work/fio.json" "$1" 2>"$work/fio.err" ||
		! python3 -c "
import sys, json
d = open(sys.argv[1]).read(); d = json.loads(d[d.index('{'):])
bad = [j['jobname'] for j in d['jobs'] if j['error']]
sys.exit('jobs failed: %s' % ' '.join(bad) if bad else 0)" "$work/fio.json"; then
		echo "vs-fio: fio $1 failed:" >&2
		tail -n 5 "$work/fio.err" >&2
		exit 1
	fi
}
fio_bw() { # job-file job-name -> bytes/s of that job (read+write)
	fio_json "$1"
	python3 -c "
import sys, json
d = open(sys.argv[2]).read(); d = json.loads(d[d.index('{'):])
j = [j for j in d['jobs'] if j['jobname'] == sys.argv[1]][0]
b = j['read']['io_bytes'] + j['write']['io_bytes']
t = max(j['read']['runtime'], j['write']['runtime'], j['job_runtime']) / 1000
print(b / t if t else 0)" "$2" "$work/fio.json"
}
fio_iops() { # job-file job-name -> I/Os per second of that job (read+write)
	fio_json "$1"
	python3 -c "
import sys, json
d = open(sys.argv[2]).read(); d = json.loads(d[d.index('{'):])
j = [j for j in d['jobs'] if j['jobname'] == sys.argv[1]][0]
print(j['read']['iops'] + j['write']['iops'])" "$2" "$work/fio.json"
}
kv_bw() { # result.json -> Tier-2 bytes/s over the run's wall time
	# The bytes the device moved (each I/O aligned, as fio's iolog has it),
	# not the trace's scaled sizes: fio counts those too.
	python3 -c "
import sys, json
d = json.load(open(sys.argv[1]))
b = sum(t['physical_read_bytes'] + t['physical_write_bytes'] for t in d['tiers'] if t['tier'] == 'Tier-2')
print(b / d['wall_s'])" "$1"
}
kv_iops() { # result.json op phase -> Tier-2 ops per second of that cell while it was busy
	python3 -c "
import sys, json
d = json.load(open(sys.argv[1]))
c = [c for c in d['cells'] if (c['tier'], c['op'], c['phase']) == ('Tier-2', sys.argv[2], sys.argv[3])]
ops, busy = sum(x['ops'] for x in c), sum(x['busy_s'] for x in c)
print(ops / busy if busy else 0)" "$1" "$2" "$3"
}
if has seq || has trace || has dir; then
	# The real trace: the reference's 50-user run by default (Tier-2 heavy).
	if [ -z "$trace" ]; then
		for t in "$top/../shared/data/reference-traces/llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst" \
			"$top/testdata/reference/llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst"; do
			[ -f "$t" ] && { trace=$t; break; }
		done
	fi
	[ -f "$trace" ] || { echo "vs-fio: no trace (give --trace FILE, or --cases small)" >&2; exit 2; }
fi
if has seq || has trace; then
	# Sequential objects: the trace's object sizes (aligned to the block
	# size), in trace order, until they add up to --total-gib.
	python3 "$top/bench/objects.py" "$trace" "$work" --align "$bsb" --round up \
		--total "$(python3 -c "print(int($total_gib * (1 << 30)))")" --name vs-fio
	total=$(cat "$work/total")
fi

fio_tuned() { # the [global] options of fio at its best, as the header says
	cat <<EOF
ioengine=io_uring
fixedbufs=1
iomem=$fio_iomem
registerfiles=1
iodepth_batch_submit=$qd
iodepth_batch_complete_max=$qd
direct=1
EOF
}
seqjob() { # rw -> job file
	cat >"$work/$1.fio" <<EOF
[global]
$(fio_tuned)
bs=$bsb
iodepth=$qd
filename=$file
size=$total
[$1]
rw=$1
EOF
	echo "$work/$1.fio"
}

kvr() { # trace result [extra flags]
	local t=$1 r=$2
	shift 2
	"$kvreplay" --engine uring --layout extent --device "$file" --device-overwrite \
		--block-size "$bs" --queue-depth "$qd" --speed max -q -o "$r" "$@" "$t" >/dev/null
}

if has trace; then
	# The exported trace: Tier-2 rows, the extent layout on the same file.
	# fio at its best, with what kvreplay does too: registered (huge-page)
	# buffers (--fixedbufs, --iomem), and submissions and completions
	# batched up to the queue depth, which the job sets itself (its header
	# says why it sets no registerfiles=1).
	"$kvtrace" export --to fio --tiers Tier-2 --layout extent --dir "$dir" --size-scale "$scale" \
		--block-size "$bs" --iodepth "$qd" --speed asap --fixedbufs --iomem "$fio_iomem" \
		-o "$work/export" "$trace" >/dev/null 2>"$work/export.err" ||
		{ cat "$work/export.err" >&2; echo "vs-fio: kvtrace export failed" >&2; exit 1; }
	job=$(ls "$work"/export/*.fio)
	replay_job=$(grep -o '^\[replay-tier2[^]]*\]' "$job" | head -1 | tr -d '[]')
fi

objdir=$dir/objects
if has dir; then
	# The exported trace in the directory layout: fio's object files in
	# objdir, kvreplay's in its own directory in $dir/kv.
	mkdir "$dir/kv"
	"$kvtrace" export --to fio --tiers Tier-2 --layout dir --dir "$objdir" --size-scale "$scale" \
		--block-size "$bs" --iodepth "$qd" --speed asap --fixedbufs --iomem "$fio_iomem" \
		-o "$work/export-dir" "$trace" >/dev/null 2>"$work/export-dir.err" ||
		{ cat "$work/export-dir.err" >&2; echo "vs-fio: kvtrace export --layout dir failed" >&2; exit 1; }
	djob=$(ls "$work"/export-dir/*.fio)
	dprep=$(ls "$work"/export-dir/*.tier2.prep.iolog)
	dreplay_job=$(grep -o '^\[replay-tier2[^]]*\]' "$djob" | head -1 | tr -d '[]')
	# The same job without its mkdir and prep jobs, for files made fresh.
	awk '/^\[/ { skip = ($0 == "[mkdir]" || $0 ~ /^\[prep-/) } !skip' "$djob" >"$work/dir-fresh.fio"
fi
fresh_files() { # objdir's object files made anew: created and allocated as kvreplay's create does, never written
	rm -rf "$objdir"
	mkdir "$objdir"
	python3 - "$dprep" <<'EOF'
import ctypes, os, sys
# Each file the prep log writes, at the size it writes it to.
size = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 5 and f[2] == "write":
        size[f[1]] = max(size.get(f[1], 0), int(f[3]) + int(f[4]))
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
for path, n in size.items():
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    if libc.fallocate(fd, 0, 0, n) != 0:
        os.ftruncate(fd, n)  # as kvreplay does where the file system has no fallocate
    os.close(fd)
EOF
}

if has seq || has trace; then
	# Lay the file out once, full size, so no test pays for allocation.
	fio --name=prep --ioengine=io_uring --direct=1 --bs="$bsb" --iodepth="$qd" --rw=write \
		--filename="$file" --size="$total" >/dev/null
fi

# The small-object case: N keys of 4 KiB written in order, then read in a
# shuffled order, 1 us apart; its own file of exactly N x 4 KiB, laid out
# once by fio, which the extent layout then fills from offset 0.
small_bytes=$((small_n * 4096))
sfile=$dir/small.extent
if has small; then
	python3 - "$small_n" "$work/small.csv" <<'EOF'
import random, sys
n, out = int(sys.argv[1]), sys.argv[2]
reads = list(range(n))
random.Random(42).shuffle(reads)
with open(out, "w") as f:
    f.write("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
    for i in range(n):
        f.write(f"{i / 1e6:.6f},Write,4096,Tier-2,k{i},Prefill\n")
    for j, i in enumerate(reads):
        f.write(f"{(n + j) / 1e6:.6f},Read,4096,Tier-2,k{i},Decode\n")
EOF
	fio --name=prep --ioengine=io_uring --direct=1 --bs=1M --iodepth="$qd" --rw=write \
		--filename="$sfile" --size="$small_bytes" >/dev/null
	echo "vs-fio: small objects: $small_n x 4 KiB written then read, $(awk -v b="$small_bytes" 'BEGIN { printf "%.2f", b / 2^30 }') GiB" >&2
fi
smalljob() { # rw -> job file: 4k, the small file, as much I/O as kvreplay's half does
	cat >"$work/small-$1.fio" <<EOF
[global]
$(fio_tuned)
bs=4k
iodepth=$qd
filename=$sfile
size=$small_bytes
[$1]
rw=$1
EOF
	echo "$work/small-$1.fio"
}
kvsmall() { # result
	"$kvreplay" --engine uring --layout extent --device "$sfile" --device-overwrite \
		--tier-map Tier-2=nvme --block-size 4KiB --queue-depth "$qd" --speed max -q -o "$1" \
		"$work/small.csv" >/dev/null
}

gb() { awk -v x="$1" 'BEGIN { printf "%7.3f", x / 1e9 }'; }
kio() { awk -v x="$1" 'BEGIN { printf "%6.1f", x / 1e3 }'; }

# Each side of a pair, run by both: fio first in odd rounds, kvreplay
# first in even ones, so that the order does not decide.
fio_seqw() { F[w$r]=$(fio_bw "$(seqjob write)" write); }
kv_seqw() { kvr "$work/write.csv" "$work/kw.json"; K[w$r]=$(kv_bw "$work/kw.json"); }
fio_seqr() { F[r$r]=$(fio_bw "$(seqjob read)" read); }
kv_seqr() { kvr "$work/read.csv" "$work/kr.json"; K[r$r]=$(kv_bw "$work/kr.json"); }
fio_trace() { F[t$r]=$(fio_bw "$job" "$replay_job"); }
kv_trace() {
	kvr "$trace" "$work/kt.json" --tier-map Tier-0=null,Tier-1=null,Tier-2=nvme --size-scale "$scale"
	K[t$r]=$(kv_bw "$work/kt.json")
}
fio_small() {
	F[sw$r]=$(fio_iops "$(smalljob write)" write)
	F[sr$r]=$(fio_iops "$(smalljob randread)" randread)
}
kv_small() {
	kvsmall "$work/ks.json"
	K[sw$r]=$(kv_iops "$work/ks.json" Write Prefill)
	K[sr$r]=$(kv_iops "$work/ks.json" Read Decode)
}
fio_dir() { # fio's job as it is (its prep job writes the files), and on fresh files; in turns
	local k
	for k in $( ((r % 2)) && echo written fresh || echo fresh written); do
		if [ "$k" = written ]; then
			F[dw$r]=$(fio_bw "$djob" "$dreplay_job")
		else
			fresh_files
			F[df$r]=$(fio_bw "$work/dir-fresh.fio" "$dreplay_job")
		fi
	done
}
kv_dir() {
	"$kvreplay" --engine uring --layout dir --dir "$dir/kv" --tier-map Tier-0=null,Tier-1=null,Tier-2=nvme \
		--size-scale "$scale" --block-size "$bs" --queue-depth "$qd" --speed max -q -o "$work/kd.json" "$trace" >/dev/null
	K[dw$r]=$(kv_bw "$work/kd.json")
	K[df$r]=${K[dw$r]}
}
both() { # fio-side kvreplay-side
	if ((r % 2)); then "$1"; "$2"; else "$2"; "$1"; fi
}

declare -A F K
for r in $(seq 1 "$rounds"); do
	line="round $r (load $(cut -d" " -f1 /proc/loadavg)):"
	if has seq; then
		both fio_seqw kv_seqw
		both fio_seqr kv_seqr
		line+=$(printf ' seq-write fio %s kvreplay %s GB/s | seq-read fio %s kvreplay %s GB/s |' \
			"$(gb "${F[w$r]}")" "$(gb "${K[w$r]}")" "$(gb "${F[r$r]}")" "$(gb "${K[r$r]}")")
	fi
	if has trace; then
		both fio_trace kv_trace
		line+=$(printf ' trace fio %s kvreplay %s GB/s |' "$(gb "${F[t$r]}")" "$(gb "${K[t$r]}")")
	fi
	if has dir; then
		both fio_dir kv_dir
		line+=$(printf ' dir fio %s (fresh files %s) kvreplay %s GB/s |' "$(gb "${F[dw$r]}")" "$(gb "${F[df$r]}")" "$(gb "${K[dw$r]}")")
	fi
	if has small; then
		both fio_small kv_small
		line+=$(printf ' small-write fio %s kvreplay %s kIOPS | small-read fio %s kvreplay %s kIOPS |' \
			"$(kio "${F[sw$r]}")" "$(kio "${K[sw$r]}")" "$(kio "${F[sr$r]}")" "$(kio "${K[sr$r]}")")
	fi
	echo "${line% |}"
done

python3 - "$rounds" "$bs" "$qd" "$cases" <<EOF
import statistics, sys
rounds, bs, qd, cases = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4].split(",")
F = {$(for k in "${!F[@]}"; do printf '"%s": %s, ' "$k" "${F[$k]}"; done)}
K = {$(for k in "${!K[@]}"; do printf '"%s": %s, ' "$k" "${K[$k]}"; done)}
print(f"\nmedians over {rounds} rounds, queue depth {qd}, io_uring, O_DIRECT, one file (dir: a file per object), fio's buffers iomem=$fio_iomem")
print(f"{'test':<12} {'block':>6} {'unit':>6} {'fio':>10} {'kvreplay':>10} {'ratio':>7}   per-round ratios")
rows = []
if "seq" in cases:
    rows += [("seq-write", "w", bs, "GB/s", 1e9), ("seq-read", "r", bs, "GB/s", 1e9)]
if "trace" in cases:
    rows += [("trace", "t", bs, "GB/s", 1e9)]
if "dir" in cases:
    rows += [("dir", "dw", bs, "GB/s", 1e9), ("dir-fresh", "df", bs, "GB/s", 1e9)]
if "small" in cases:
    rows += [("small-write", "sw", "4KiB", "IOPS", 1), ("small-read", "sr", "4KiB", "IOPS", 1)]
for name, p, block, unit, div in rows:
    f = statistics.median(F[f"{p}{i}"] for i in range(1, rounds + 1))
    k = statistics.median(K[f"{p}{i}"] for i in range(1, rounds + 1))
    per = " ".join(f"{K[f'{p}{i}'] / F[f'{p}{i}']:.3f}" if F[f'{p}{i}'] else "-" for i in range(1, rounds + 1))
    digits = 3 if unit == "GB/s" else 0
    print(f"{name:<12} {block:>6} {unit:>6} {f/div:>10.{digits}f} {k/div:>10.{digits}f} {k/f if f else 0:>7.3f}   {per}")
if "$fio_iomem" != "shmhuge":
    print("NOTE: fio's buffers were not huge pages (iomem=$fio_iomem): fio was not at its best,"
          " so these ratios are not the design's bar (reserve huge pages, see --help)")
EOF
