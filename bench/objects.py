#!/usr/bin/env python3
"""The objects of a trace, for the bench scripts (vs-fio.sh, vs-rclone.sh).

Reads TRACE (plain or zstd, kvtrace's or kv-cache.py's CSV) and takes its
distinct keys in trace order, each at its size times --scale, aligned to
--align bytes (rounded --round up or down, at least --align), until they add
up to --total bytes. Writes, in OUT: write.csv and read.csv (a trace that
writes, then reads, each object on Tier-2), and total (their bytes). With
--src DIR, also a file of random bytes per object, of its size, in DIR.
"""
import argparse
import os
import subprocess
import sys
from fractions import Fraction

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("trace")
p.add_argument("out")
p.add_argument("--scale", type=Fraction, default=Fraction(1))
p.add_argument("--align", type=int, default=4096)
p.add_argument("--round", choices=("up", "down"), default="up")
p.add_argument("--total", type=int, required=True, help="bytes")
p.add_argument("--src", help="write the objects' files here")
p.add_argument("--name", default="objects", help="the script's name, for the summary line")
a = p.parse_args()

# zstd by its magic number, not by trying it and falling back to the raw
# bytes (which appended a damaged file's bytes to its partial output);
# the path as an argument, never through a shell.
with open(a.trace, "rb") as f:
    zst = f.read(4) == b"\x28\xb5\x2f\xfd"
if zst:
    z = subprocess.run(["zstd", "-dc", "--", a.trace], capture_output=True)
    if z.returncode:
        sys.exit(f"objects.py: zstd -dc {a.trace}: {z.stderr.decode(errors='replace').strip()}")
    rows = z.stdout
else:
    rows = open(a.trace, "rb").read()
rows = rows.decode().splitlines()
if not rows:
    sys.exit(f"objects.py: {a.trace}: an empty trace")
hdr = rows[0].strip().split(",")
ks, kk = hdr.index("Object_Size_Bytes"), hdr.index("Key")
seen, sizes, total = set(), [], 0
for line in rows[1:]:
    f = line.strip().split(",")
    if len(f) < len(hdr) or f[kk] in seen:
        continue
    seen.add(f[kk])
    n = int(f[ks]) * a.scale
    n = (-(-n // a.align) if a.round == "up" else n // a.align) * a.align
    sizes.append(max(a.align, int(n)))
    total += sizes[-1]
    if total >= a.total:
        break
if a.src:
    os.makedirs(a.src)
with open(f"{a.out}/write.csv", "w") as w, open(f"{a.out}/read.csv", "w") as r:
    for fh in (w, r):
        fh.write("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
    for i, s in enumerate(sizes):
        w.write(f"0.000000,Write,{s},Tier-2,obj{i},Prefill\n")
        r.write(f"0.000000,Read,{s},Tier-2,obj{i},Decode\n")
        if a.src:
            with open(f"{a.src}/obj{i}", "wb") as o:
                o.write(os.urandom(s))
with open(f"{a.out}/total", "w") as t:
    t.write(str(total))
s = sorted(sizes)
print(f"{a.name}: {len(sizes)} objects of the trace's sizes, {total / (1 << 20):.0f} MiB, "
      f"{s[0] >> 10} KiB to {s[-1] >> 10} KiB (median {s[len(s) // 2] >> 10} KiB)", file=sys.stderr)
