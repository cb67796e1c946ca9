#!/usr/bin/env bash
# vs-fio.sh: kvreplay and fio side by side, on one machine, in one run.
#
# For each round it alternates fio and kvreplay on the same file, block size
# and queue depth (io_uring, O_DIRECT, the extent layout's single file; fio
# with registered buffers and batched submission and completion, as kvreplay
# does them, so the comparison is with fio at its best):
#   seq-write   write the objects of a real trace, back to back
#   seq-read    read them back
#   trace       replay the same trace's Tier-2 rows, exported to a fio iolog
#               by kvtrace export and replayed by kvreplay itself
# and prints each pair's bandwidth, the ratio kvreplay/fio, and the medians
# over the rounds. Uses only public tools: bash, fio, python3, go.
#
# Usage: bench/vs-fio.sh [--dir DIR] [--block-size 1MiB] [--queue-depth 32]
#                        [--rounds 5] [--total-gib 4] [--trace FILE] [--scale 1/256]
set -euo pipefail

dir=${TMPDIR:-/var/tmp}/kvbench-vs-fio
bs=1MiB
qd=32
rounds=5
total_gib=4
trace=
scale=1/256
while [ $# -gt 0 ]; do
	case $1 in
	--dir) dir=$2; shift 2 ;;
	--block-size) bs=$2; shift 2 ;;
	--queue-depth) qd=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--total-gib) total_gib=$2; shift 2 ;;
	--trace) trace=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	-h|--help) sed -n '2,16p' "$0"; exit 0 ;;
	*) echo "vs-fio: unknown option $1" >&2; exit 2 ;;
	esac
done

top=$(cd "$(dirname "$0")/.." && pwd)
command -v fio >/dev/null || { echo "vs-fio: fio is not installed (apt-get install fio)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "vs-fio: python3 is needed to read JSON" >&2; exit 2; }
command -v zstd >/dev/null || { echo "vs-fio: zstd is needed to read compressed traces (apt-get install zstd)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work" "$dir"' EXIT
mkdir -p "$dir"
bin=$work/bin
(cd "$top" && CGO_ENABLED=0 go build -o "$bin/" ./cmd/kvtrace ./cmd/kvreplay)
bsb=$(python3 -c "import sys;u={'k':1<<10,'KiB':1<<10,'m':1<<20,'MiB':1<<20,'g':1<<30,'GiB':1<<30};s=sys.argv[1]
for k in sorted(u,key=len,reverse=True):
  if s.endswith(k): print(int(float(s[:-len(k)])*u[k])); break
else: print(int(s))" "$bs")
file=$dir/kvbench.extent

# The real trace: the reference's 50-user run by default (Tier-2 heavy).
if [ -z "$trace" ]; then
	for t in "$top/../shared/data/reference-traces/llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst" \
		"$top/testdata/reference/llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst"; do
		[ -f "$t" ] && { trace=$t; break; }
	done
fi
[ -f "$trace" ] || { echo "vs-fio: no trace (give --trace FILE)" >&2; exit 2; }

# Sequential objects: the trace's object sizes (aligned to the block size),
# in trace order, until they add up to --total-gib.
python3 - "$trace" "$bsb" "$total_gib" "$work" <<'EOF'
import sys, subprocess, json
trace, bs, total = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) * (1 << 30)
out = sys.argv[4]
rows = subprocess.run(["bash", "-c", f"zstd -dc '{trace}' 2>/dev/null || cat '{trace}'"], capture_output=True).stdout.decode().splitlines()
hdr = rows[0].strip().split(",")
ks, kk = hdr.index("Object_Size_Bytes"), hdr.index("Key")
seen, sizes = set(), []
for line in rows[1:]:
    f = line.strip().split(",")
    if len(f) < len(hdr) or f[kk] in seen:
        continue
    seen.add(f[kk])
    sizes.append(max(bs, (int(f[ks]) + bs - 1) // bs * bs))
    if sum(sizes) >= total:
        break
with open(f"{out}/write.csv", "w") as w, open(f"{out}/read.csv", "w") as r:
    for fh in (w, r):
        fh.write("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
    for i, s in enumerate(sizes):
        w.write(f"0.000000,Write,{s},Tier-2,obj{i},Prefill\n")
        r.write(f"0.000000,Read,{s},Tier-2,obj{i},Decode\n")
with open(f"{out}/total", "w") as t:
    t.write(str(sum(sizes)))
print(f"vs-fio: {len(sizes)} objects of the trace's sizes, {sum(sizes)/(1<<30):.2f} GiB", file=sys.stderr)
EOF
total=$(cat "$work/total")

fio_bw() { # job-file job-name -> bytes/s of that job (read+write)
	fio --output-format=json "$1" 2>/dev/null | python3 -c "
import sys, json
d = sys.stdin.read(); d = json.loads(d[d.index('{'):])
j = [j for j in d['jobs'] if j['jobname'] == sys.argv[1]][0]
b = j['read']['io_bytes'] + j['write']['io_bytes']
t = max(j['read']['runtime'], j['write']['runtime'], j['job_runtime']) / 1000
print(b / t if t else 0)" "$2"
}
kv_bw() { # result.json -> Tier-2 bytes/s over the run's wall time
	python3 -c "
import sys, json
d = json.load(open(sys.argv[1]))
b = sum(t['read_bytes'] + t['write_bytes'] for t in d['tiers'] if t['tier'] == 'Tier-2')
print(b / d['wall_s'])" "$1"
}

seqjob() { # rw -> job file
	cat >"$work/$1.fio" <<EOF
[global]
ioengine=io_uring
fixedbufs=1
iodepth_batch_submit=$qd
iodepth_batch_complete_max=$qd
direct=1
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
	"$bin/kvreplay" --engine uring --layout extent --device "$file" --dir "$dir" --keep \
		--block-size "$bs" --queue-depth "$qd" --speed max -q -o "$r" "$@" "$t" >/dev/null
}

# The exported trace: Tier-2 rows, the extent layout on the same file.
"$bin/kvtrace" export --to fio --tiers Tier-2 --layout extent --dir "$dir" --size-scale "$scale" \
	--block-size "$bs" --iodepth "$qd" --speed asap -o "$work/export" "$trace" >/dev/null 2>&1
job=$(ls "$work"/export/*.fio)
# fio at its best, with what kvreplay does too: registered buffers, and
# submissions and completions batched up to the queue depth.
sed -i "s/^\[global\]\$/[global]\nfixedbufs=1\niodepth_batch_submit=$qd\niodepth_batch_complete_max=$qd/" "$job"
replay_job=$(grep -o '^\[replay-tier2[^]]*\]' "$job" | head -1 | tr -d '[]')

# Lay the file out once, full size, so no test pays for allocation.
fio --name=prep --ioengine=io_uring --direct=1 --bs="$bsb" --iodepth="$qd" --rw=write \
	--filename="$file" --size="$total" >/dev/null

mb() { awk -v x="$1" 'BEGIN { printf "%7.0f", x / 1e6 }'; }

declare -A F K
for r in $(seq 1 "$rounds"); do
	F[w$r]=$(fio_bw "$(seqjob write)" write)
	kvr "$work/write.csv" "$work/kw.json"; K[w$r]=$(kv_bw "$work/kw.json")
	F[r$r]=$(fio_bw "$(seqjob read)" read)
	kvr "$work/read.csv" "$work/kr.json"; K[r$r]=$(kv_bw "$work/kr.json")
	F[t$r]=$(fio_bw "$job" "$replay_job")
	kvr "$trace" "$work/kt.json" --tier-map Tier-0=null,Tier-1=null,Tier-2=nvme --size-scale "$scale"
	K[t$r]=$(kv_bw "$work/kt.json")
	printf 'round %d: seq-write fio %s kvreplay %s MB/s | seq-read fio %s kvreplay %s MB/s | trace fio %s kvreplay %s MB/s\n' \
		"$r" "$(mb "${F[w$r]}")" "$(mb "${K[w$r]}")" "$(mb "${F[r$r]}")" "$(mb "${K[r$r]}")" "$(mb "${F[t$r]}")" "$(mb "${K[t$r]}")"
done

python3 - "$rounds" "$bs" "$qd" <<EOF
import statistics, sys
rounds, bs, qd = int(sys.argv[1]), sys.argv[2], sys.argv[3]
F = {$(for k in "${!F[@]}"; do printf '"%s": %s, ' "$k" "${F[$k]}"; done)}
K = {$(for k in "${!K[@]}"; do printf '"%s": %s, ' "$k" "${K[$k]}"; done)}
print(f"\nmedians over {rounds} rounds, block size {bs}, queue depth {qd}, io_uring, O_DIRECT, one file")
print(f"{'test':<10} {'fio MB/s':>10} {'kvreplay MB/s':>14} {'ratio':>7}   per-round ratios")
for name, p in (("seq-write", "w"), ("seq-read", "r"), ("trace", "t")):
    f = statistics.median(F[f"{p}{i}"] for i in range(1, rounds + 1))
    k = statistics.median(K[f"{p}{i}"] for i in range(1, rounds + 1))
    per = " ".join(f"{K[f'{p}{i}'] / F[f'{p}{i}']:.3f}" for i in range(1, rounds + 1))
    print(f"{name:<10} {f/1e6:>10.0f} {k/1e6:>14.0f} {k/f:>7.3f}   {per}")
EOF
