#!/usr/bin/env bash
# vs-rclone.sh: kvreplay's S3 tier and rclone side by side, on one S3
# server, in one run.
#
# The objects are a real trace's, at its scale (each distinct key once, in
# trace order, until they add up to --total-mib): by default the
# reference's 50-user run at 1/256, objects of about 256 KiB to 16 MiB.
# Each round alternates (kvreplay first in odd rounds, rclone first in even
# ones), at the same concurrency C:
#   put   kvreplay writes the objects to the bucket (a trace of their Write
#         rows on Tier-2=s3, --s3-concurrency C), beside
#         rclone copy --transfers C of the same sizes from a RAM directory
#   get   kvreplay reads them back (a trace of their Read rows: written
#         untimed first, then read), beside rclone copy --transfers C of
#         the bucket's copies into a RAM directory
# and prints each pair's GB/s (10^9 bytes), the ratio kvreplay/rclone and
# the medians over the rounds, and warns when a transfer phase took under
# a second (mostly ramp and noise: raise --total-mib).
#
# Both figures are the same quantity: the bytes over the wall time of the
# transfer phase alone, neither tool's start-up, listing or clean-up in
# it. kvreplay's is its Tier-2 bytes over the result's wall_s, its
# measured window: from the release of the first request (every row is due
# at 0, --speed max) to the end of the last; the process's start-up, the
# bucket's check, the untimed writes before a read run and the clean-up
# are outside it; the script checks that its S3 requests carried those
# bytes in that window (the result's tier path: measured bytes_put, or
# bytes_got), not a cache of its own. rclone's is the bytes over the
# time from the end of its listing (its log's "Waiting for checks to
# finish", the moment the
# transfers are all queued; the first may start a little before, which
# only shortens rclone's phase) to its last "Copied (new)" line, from its own
# JSON log at debug level; every object must be copied, with no error.
#
# rclone is tuned as for this job: --transfers C (and --checkers C); the
# objects cut as kvreplay cuts them: one PUT up to the part size (8 MiB)
# and a multipart upload of part-size chunks above (--s3-upload-cutoff,
# --s3-chunk-size), one GET up to the part size and a ranged GET per part
# above (--multi-thread-cutoff, --multi-thread-streams), the parts of an
# object at once (--s3-upload-concurrency); no HEAD after an upload nor
# before a GET, no MD5 kept in the metadata, none checked after a
# download (--s3-no-head, --s3-no-head-object, --s3-disable-checksum,
# --ignore-checksum), and the body sent without waiting for a 100 Continue
# (--expect-continue-timeout 0: versitygw answers none to the
# "Expect: 100-Continue" rclone sends with bodies over 2 MiB, and the
# default waits 1 s for it). What rclone 1.60 does that kvreplay does not,
# and no flag turns off: an MD5 of each object it PUTs whole (its
# Content-MD5) and an MD5 and SHA-256 of each part of a multipart upload
# (Content-MD5, and the signature of the body over http); kvreplay sends
# UNSIGNED-PAYLOAD and no checksum. rclone's GETs write their files to a
# RAM directory, kvreplay's reads stay in its memory.
#
# kvreplay moves an object as one request up to the part size (8 MiB) and
# parts of it above; --block-size is set to the part size and
# --queue-depth to C, so that its engine keeps C requests in flight, as
# rclone's transfers are (--kvreplay-defaults: 1 MiB blocks, queue depth
# 32, whose blocks of a part share one GET).
#
# The server: by default a versitygw (PATH or ~/go/bin) started here on
# 127.0.0.1 over a fresh directory, with fresh credentials, stopped at the
# end; or --endpoint URL --bucket NAME with credentials in the AWS
# environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY). Either way the
# runs write under a prefix of the script's own, vs-rclone-TIME-N/ (which
# must be empty: the script stops otherwise), and remove it at the end,
# on failure too. Nothing else in the bucket is touched. AWS_CA_BUNDLE is
# not given to Debian's rclone, which refuses one it cannot use; an https
# endpoint with a private CA needs rclone's --ca-cert through
# RCLONE_CA_CERT.
#
# Usage: bench/vs-rclone.sh [--concurrency 16] [--rounds 3] [--total-mib 1024]
#                           [--trace FILE] [--scale 1/256] [--keep-alive]
#                           [--endpoint URL --bucket NAME]
#                           [--kvreplay BIN] [--verify] [--rclone-defaults]
#                           [--kvreplay-defaults]
#   --keep-alive  start versitygw with --keep-alive (it closes each
#                 connection after a request by default)
#   --verify      kvreplay checks every byte it reads
#   --rclone-defaults  rclone with its own defaults but --transfers and
#                 --checkers (a HEAD after each upload, MD5s checked, 200 MiB
#                 upload cutoff, 1 s wait for 100 Continue) instead of tuned
set -euo pipefail
shopt -s inherit_errexit

conc=16
rounds=3
total_mib=1024
trace=
scale=1/256
keepalive=
endpoint=
bucket=
kvreplay_bin=
verify=
kvdefaults=
rclone_defaults=
while [ $# -gt 0 ]; do
	case $1 in
	--concurrency) conc=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--total-mib) total_mib=$2; shift 2 ;;
	--trace) trace=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--keep-alive) keepalive=--keep-alive; shift ;;
	--endpoint) endpoint=$2; shift 2 ;;
	--bucket) bucket=$2; shift 2 ;;
	--kvreplay) kvreplay_bin=$2; shift 2 ;;
	--verify) verify=--verify; shift ;;
	--rclone-defaults) rclone_defaults=1; shift ;;
	--kvreplay-defaults) kvdefaults=1; shift ;;
	-h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
	*) echo "vs-rclone: unknown option $1" >&2; exit 2 ;;
	esac
done
if [ -n "$endpoint" ] && [ -z "$bucket" ] || [ -z "$endpoint" ] && [ -n "$bucket" ]; then
	echo "vs-rclone: --endpoint and --bucket go together" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
command -v rclone >/dev/null || { echo "vs-rclone: rclone is not installed (apt-get install rclone)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "vs-rclone: python3 is needed to read JSON" >&2; exit 2; }
command -v zstd >/dev/null || { echo "vs-rclone: zstd is needed to read compressed traces (apt-get install zstd)" >&2; exit 2; }

work=$(mktemp -d)
ram=$(mktemp -d /dev/shm/kvbench-vs-rclone.XXXXXX 2>/dev/null || mktemp -d)
gw_pid=
copied= # rclone has written under the prefix
cleanup() {
	[ -n "$copied" ] && { rcl purge "vs:$bucket/$prefix" 2>/dev/null || echo "vs-rclone: remove s3://$bucket/$prefix/ yourself: rclone purge failed" >&2; }
	[ -n "$gw_pid" ] && kill "$gw_pid" 2>/dev/null && wait "$gw_pid" 2>/dev/null
	rm -rf "$work" "$ram"
}
trap cleanup EXIT

bin=$work/bin
mkdir -p "$bin"
if [ -z "$kvreplay_bin" ]; then
	(cd "$top" && CGO_ENABLED=0 go build -o "$bin/" ./cmd/kvreplay)
fi
kvreplay=${kvreplay_bin:-$bin/kvreplay}

if [ -z "$endpoint" ]; then
	gw=$(command -v versitygw || true)
	[ -z "$gw" ] && [ -x "$HOME/go/bin/versitygw" ] && gw=$HOME/go/bin/versitygw
	[ -n "$gw" ] || { echo "vs-rclone: versitygw is not installed (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0), or give --endpoint and --bucket" >&2; exit 2; }
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	export AWS_ACCESS_KEY_ID=vsrclone$RANDOM AWS_SECRET_ACCESS_KEY=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
	export AWS_REGION=us-east-1 AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
	mkdir -p "$work/gw"
	"$gw" --access "$AWS_ACCESS_KEY_ID" --secret "$AWS_SECRET_ACCESS_KEY" --port "127.0.0.1:$port" --quiet $keepalive posix "$work/gw" >"$work/gw.log" 2>&1 &
	gw_pid=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.1
	done
	endpoint=http://127.0.0.1:$port
	bucket=vs-rclone
	mkdir -p "$work/gw/$bucket" # versitygw's posix backend: a directory is a bucket
fi
# rclone takes the same credentials from the environment, no config file.
export RCLONE_CONFIG_VS_TYPE=s3 RCLONE_CONFIG_VS_PROVIDER=Other RCLONE_CONFIG_VS_ENV_AUTH=true
export RCLONE_CONFIG_VS_ENDPOINT=$endpoint RCLONE_CONFIG_VS_REGION=${AWS_REGION:-us-east-1}
rcl() { env -u AWS_CA_BUNDLE rclone --config /dev/null --transfers "$conc" --checkers "$conc" --s3-no-check-bucket "$@"; }
# The script's own prefix: rclone's copies and kvreplay's runs go under
# it, and its purge at the end removes nothing else.
prefix=vs-rclone-$(date -u +%Y%m%dT%H%M%S)-$RANDOM
if [ -n "$(rcl lsf --max-depth 1 "vs:$bucket/$prefix" 2>/dev/null || true)" ]; then
	echo "vs-rclone: s3://$bucket/$prefix/ holds objects already: run the script again (it never touches what it did not write)" >&2
	exit 2
fi
if [ -z "$trace" ]; then
	for t in "$top/../shared/data/reference-traces/llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst" \
		"$top/testdata/reference/llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst"; do
		[ -f "$t" ] && { trace=$t; break; }
	done
fi
[ -f "$trace" ] || { echo "vs-rclone: no trace (give --trace FILE)" >&2; exit 2; }

# The objects: the trace's distinct keys at the scale, 4 KiB at least, in
# trace order; their write and read traces, and files of the same sizes.
python3 "$top/bench/objects.py" "$trace" "$work" --scale "$scale" --align 4096 --round down \
	--total $((total_mib << 20)) --src "$ram/src" --name vs-rclone
total=$(cat "$work/total")
part=$((8 << 20)) # kvreplay's --s3-part-size
# The most parts of an object: rclone's streams and parts in flight per
# object, as kvreplay moves an object's parts at once.
streams=$(python3 -c "import os, sys; d = sys.argv[1]; print(max(1, max(-(-os.path.getsize(os.path.join(d, f)) // $part) for f in os.listdir(d))))" "$ram/src")
rclone_flags="--s3-upload-cutoff $((part + 1))B --s3-chunk-size ${part}B --s3-upload-concurrency $streams
	--multi-thread-cutoff $((part + 1))B --multi-thread-streams $streams --expect-continue-timeout 0
	--s3-no-head --s3-no-head-object --s3-disable-checksum --ignore-checksum"
[ -n "$rclone_defaults" ] && rclone_flags=
kvflags="--block-size 8MiB --queue-depth $conc"
[ -n "$kvdefaults" ] && kvflags=

kv() { # trace result op -> "GB/s seconds" of Tier-2's op over the measured window
	"$kvreplay" --tier-map Tier-2=s3 --s3-endpoint "$endpoint" --s3-bucket "$bucket" --s3-prefix "$prefix/kvreplay" \
		--s3-concurrency "$conc" $kvflags --speed max $verify -q -o "$2" "$1" >/dev/null
	python3 -c "
import sys, json
d = json.load(open(sys.argv[1]))
assert d['complete'], 'kvreplay did not complete'
t = [t for t in d['tiers'] if t['tier'] == 'Tier-2'][0]
n = t[sys.argv[2] + '_bytes']
assert n == int(sys.argv[3]), 'kvreplay moved %d bytes, not %s' % (n, sys.argv[3])
# The bytes crossed the wire in the window: the S3 requests' own count.
s3 = [p for p in d['host']['tier_paths'] if p['backend'] == 's3'][0]['s3']['measured']
wire = s3['bytes_put'] if sys.argv[2] == 'write' else s3['bytes_got']
assert wire >= n, 'kvreplay\'s S3 requests moved %d bytes in its measured window, not %d' % (wire, n)
print('%.3f %.3f' % (n / d['wall_s'] / 1e9, d['wall_s']))" "$2" "$3" "$total"
}
rc() { # src dst log -> "GB/s seconds" of an rclone copy's transfers
	rcl $rclone_flags --use-json-log --log-level DEBUG --stats 0 copy "$1" "$2" 2>"$3" ||
		{ tail -5 "$3" >&2; echo "vs-rclone: rclone copy $1 $2 failed" >&2; exit 1; }
	python3 -c "
import sys, json, datetime
at = lambda e: datetime.datetime.fromisoformat(e['time']).timestamp()
log = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
bad = [e['msg'] for e in log if e['level'] == 'error']
assert not bad, 'rclone: %s' % bad[0]
start = [at(e) for e in log if e['msg'] == 'Waiting for checks to finish']
done = [at(e) for e in log if e['msg'].endswith('Copied (new)')]
assert start and len(done) == int(sys.argv[3]), 'rclone copied %d of %s objects' % (len(done), sys.argv[3])
t = max(done) - start[0]
print('%.3f %.3f' % (int(sys.argv[2]) / t / 1e9, t))" "$3" "$total" "$nobj"
}
nobj=$(ls "$ram/src" | wc -l)

echo "vs-rclone: $endpoint, bucket $bucket, concurrency $conc, $rounds rounds${verify:+, kvreplay --verify}; $(rclone version 2>/dev/null | head -1) ${rclone_flags:-with its defaults}" | tr -s '\t\n' '  ' >&2
echo >&2
ratio() { python3 -c "import sys; print('%.3f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
printf '%-6s %5s %13s %11s %12s %10s %7s\n' case round 'kvreplay GB/s' 'kvreplay s' 'rclone GB/s' 'rclone s' ratio
declare -a pr gr kpr rpr kgr rgr secs
# Each side of a pair, run by both: kvreplay first in odd rounds, rclone
# first in even ones, so that the order does not decide.
kv_put() { x=$(kv "$work/write.csv" "$work/put-$r.json" write); read -r kp kps <<<"$x"; }
rc_put() {
	copied=1
	x=$(rc "$ram/src" "vs:$bucket/$prefix/rclone-$r" "$work/rclone-put-$r.log"); read -r rp rps <<<"$x"
}
kv_get() { x=$(kv "$work/read.csv" "$work/get-$r.json" read); read -r kg kgs <<<"$x"; }
rc_get() { x=$(rc "vs:$bucket/$prefix/rclone-$r" "$ram/down-$r" "$work/rclone-get-$r.log"); read -r rg rgs <<<"$x"; }
both() { # kvreplay-side rclone-side
	if ((r % 2)); then "$1"; "$2"; else "$2"; "$1"; fi
}
for r in $(seq "$rounds"); do
	both kv_put rc_put
	pr+=("$(ratio "$kp" "$rp")") kpr+=("$kp") rpr+=("$rp")
	printf '%-6s %5d %13s %11s %12s %10s %7s\n' put "$r" "$kp" "$kps" "$rp" "$rps" "${pr[-1]}"
	both kv_get rc_get
	gr+=("$(ratio "$kg" "$rg")") kgr+=("$kg") rgr+=("$rg")
	printf '%-6s %5d %13s %11s %12s %10s %7s\n' get "$r" "$kg" "$kgs" "$rg" "$rgs" "${gr[-1]}"
	secs+=("$kps" "$rps" "$kgs" "$rgs")
	rcl purge "vs:$bucket/$prefix/rclone-$r"
	rm -rf "$ram/down-$r"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { printf "%.3f\n", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo "medians: put kvreplay $(median "${kpr[@]}") GB/s, rclone $(median "${rpr[@]}") GB/s; get kvreplay $(median "${kgr[@]}") GB/s, rclone $(median "${rgr[@]}") GB/s"
echo "median kvreplay/rclone: put $(median "${pr[@]}"), get $(median "${gr[@]}") (goal >= 0.9)"
# A transfer phase shorter than a second is mostly its ramp (16
# connections opened, the first requests) and the scheduler's noise.
shortest=$(printf '%s\n' "${secs[@]}" | sort -g | head -1)
if awk -v s="$shortest" 'BEGIN { exit !(s < 1) }'; then
	echo "vs-rclone: the shortest transfer phase took $shortest s: under 1 s a figure is mostly start-up and noise; raise --total-mib for figures to quote" >&2
fi
