#!/usr/bin/env bash
# gpu-check.sh: the GPU tier on a real GPU, in one run, with what a plain
# copy loop reaches beside it.
#
# It runs, with binaries built elsewhere (the GPU machine needs no Go):
#   1. kvreplay --list-devices
#   2. the test binaries given with --tests (go test -c output), each run
#   3. a three-tier kvtrace trace (Tier-0 on the GPU) replayed with
#      --tier-map Tier-0=gpu,Tier-1=ram,Tier-2=nvme --verify, and, when
#      libcufile is there, a trace of moves between GPU and NVMe with
#      --gds --verify; it prints the GPU path of each
#      result (host-to-device and device-to-host copies and their rates,
#      the RAM arena's pinning, GDS's blocks) and whether every byte read
#      verified
#   4. when python3 has torch: pinned host<->device copies of the block
#      size in a loop on one stream, in GB/s, for comparison
# Everything goes to a fresh directory made inside --dir (default $TMPDIR,
# else /var/tmp), removed at the end; nothing else is touched.
#
# Usage: bench/gpu-check.sh --bin DIR [--tests DIR] [--dir DIR] [--scale 1/64]
#                           [--block-size 1MiB] [--gpu-mem-gb 16]
#   --bin    holds kvtrace and kvreplay (CGO_ENABLED=0 go build -o DIR ./cmd/...)
#   --tests  holds *.test binaries to run first (go test -c -o DIR/x.test ./pkg)
set -euo pipefail

bin= tests= base=${TMPDIR:-/var/tmp} scale=1/64 bs=1MiB gpu_gb=16
while [ $# -gt 0 ]; do
	case $1 in
	--bin) bin=$2; shift 2 ;;
	--tests) tests=$2; shift 2 ;;
	--dir) base=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--block-size) bs=$2; shift 2 ;;
	--gpu-mem-gb) gpu_gb=$2; shift 2 ;;
	-h|--help) sed -n '2,24p' "$0"; exit 0 ;;
	*) echo "gpu-check: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -x "$bin/kvreplay" ] && [ -x "$bin/kvtrace" ] || { echo "gpu-check: --bin DIR must hold kvtrace and kvreplay" >&2; exit 2; }
[ -d "$base" ] || { echo "gpu-check: --dir $base: no such directory" >&2; exit 2; }
work=
trap 'rm -rf ${work:+"$work"}' EXIT
work=$(mktemp -d "$base/kvbench-gpu-check.XXXXXX")

echo "== kvreplay --list-devices"
"$bin/kvreplay" --list-devices | tee "$work/devices.txt"
if ! grep -q '^GPU 0:' "$work/devices.txt"; then
	echo "gpu-check: no GPU here; nothing more to check" >&2
	exit 1
fi

if [ -n "$tests" ]; then
	for t in "$tests"/*.test; do
		[ -x "$t" ] || continue
		echo "== $(basename "$t")"
		(cd "$work" && "$t" -test.count=1 2>&1 | tail -5)
	done
fi

echo "== a three-tier trace, Tier-0 on the GPU"
"$bin/kvtrace" --num-users 20 --duration 30 --generation-mode none --gpu-mem-gb "$gpu_gb" --cpu-mem-gb 4 \
	-o "$work/three.csv.zst" >/dev/null
show() { # result.json
	python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"complete {d['complete']}, errors {d['errors']['count']}, verified {d['replay'].get('verified_bytes', 0)} bytes, wall {d['wall_s']:.1f} s")
for p in d['host']['tier_paths']:
    g = p.get('gpu')
    if not g:
        continue
    print(f"GPU {g['name']} (PCI {g.get('pci_bus_id', '?')}, {g.get('pcie_link', 'link ?')}, driver {g.get('driver_version', '?')}, runtime {g.get('runtime_version', '?')})")
    for k in ('host_to_device', 'device_to_host'):
        c = g[k]
        print(f"  {k}: {c['copies']} copies, {c['bytes'] / 2**30:.2f} GiB, {c['per_copy_gbps']:.2f} GB/s per copy")
    print(f"  RAM arena: {g.get('ram_arena') or 'no moves to RAM'}")
    if g.get('gds'):
        s = g['gds']
        print(f"  GDS {s['library']} ({s.get('buffer_registration') or 'nothing moved'}): to files {s['to_file']['blocks']} blocks at {s['to_file']['per_call_gbps']:.2f} GB/s per call, from files {s['from_file']['blocks']} blocks at {s['from_file']['per_call_gbps']:.2f} GB/s per call")
for t in d['tiers']:
    print(f"  {t['tier']}: read {t['read_bytes'] / 2**30:.2f} GiB, wrote {t['write_bytes'] / 2**30:.2f} GiB")
EOF
}
mkdir -p "$work/data"
"$bin/kvreplay" --tier-map Tier-0=gpu,Tier-1=ram,Tier-2=nvme --size-scale "$scale" --block-size "$bs" --speed max \
	--verify --layout extent --dir "$work/data" -q -o "$work/gpu.json" "$work/three.csv.zst"
show "$work/gpu.json"
if grep -q '^cuFile (GPUDirect Storage): .*driver opens' "$work/devices.txt"; then
	# kv-cache.py's waterfall demotes GPU objects to CPU RAM, not to NVMe:
	# a trace of its own moves 256 objects of 16 MiB to NVMe and back.
	echo "== GPU <-> NVMe moves with --gds"
	awk 'BEGIN { print "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase"
		split("Write,Tier-0,Prefill Read,Tier-0,Evict Write,Tier-2,Evict Read,Tier-2,Decode Read,Tier-2,Evict Write,Tier-0,Evict Read,Tier-0,Decode", r, " ")
		for (k = 0; k < 256; k++) for (i = 1; i <= 7; i++) { split(r[i], f, ","); printf "0.0,%s,16777216,%s,k%d,%s\n", f[1], f[2], k, f[3] } }' >"$work/moves.csv"
	rm -rf "$work/data" && mkdir -p "$work/data"
	"$bin/kvreplay" --tier-map Tier-0=gpu,Tier-2=nvme --block-size "$bs" --speed max \
		--verify --gds --layout extent --dir "$work/data" -q -o "$work/gds.json" "$work/moves.csv"
	show "$work/gds.json"
fi

if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	echo "== PyTorch: pinned copies of one block, on one stream"
	python3 - "$bs" <<'EOF'
import sys, time, torch
units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
s = sys.argv[1]
n = next((int(s[:-3]) * u for k, u in units.items() if s.endswith(k)), None) or int(s)
host = torch.empty(n, dtype=torch.uint8).pin_memory()
dev = torch.empty(n, dtype=torch.uint8, device="cuda")
for name, dst, src in (("host_to_device", dev, host), ("device_to_host", host, dev)):
    for _ in range(10):
        dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    reps = max(20, (4 << 30) // n)
    t = time.perf_counter()
    for _ in range(reps):
        dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize()
    print(f"  {name}: {reps * n / (time.perf_counter() - t) / 1e9:.2f} GB/s ({reps} copies of {n} bytes)")
EOF
else
	echo "== no PyTorch with CUDA here: no copy loop to compare with"
fi
