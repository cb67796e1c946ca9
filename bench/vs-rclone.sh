#!/usr/bin/env bash
# vs-rclone.sh: kvreplay's S3 tier and rclone side by side, on one S3
# server, in one run.
#
# The objects are a real trace's, at its scale (each distinct key once, in
# trace order, until they add up to --total-mib): by default the
# reference's 50-user run at 1/256, objects of about 256 KiB to 16 MiB.
# Each round alternates, at the same concurrency C:
#   put   kvreplay writes the objects to the bucket (a trace of their Write
#         rows on Tier-2=s3, --s3-concurrency C), beside
#         rclone copy --transfers C of the same sizes from a RAM directory
#   get   kvreplay reads them back (a trace of their Read rows: written
#         untimed first, then read), beside rclone copy --transfers C of
#         the bucket's copies into a RAM directory
# and prints each pair's GB/s (10^9 bytes), the ratio kvreplay/rclone and
# the medians over the rounds. kvreplay's figure is its Tier-2 bytes over
# the time the tier was busy (the result's device rate: neither its
# start-up nor its prepare phase); rclone's is the bytes over the wall
# time of its copy (its start-up, about 0.1 s, included).
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
# environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), where the runs
# write under prefixes of their own and remove them. Nothing else in the
# bucket is touched. AWS_CA_BUNDLE is not given to Debian's rclone, which
# refuses one it cannot use; an https endpoint with a private CA needs
# rclone's --ca-cert through RCLONE_CA_CERT.
#
# Usage: bench/vs-rclone.sh [--concurrency 16] [--rounds 3] [--total-mib 1024]
#                           [--trace FILE] [--scale 1/256] [--keep-alive]
#                           [--endpoint URL --bucket NAME]
#                           [--kvreplay BIN] [--verify] [--rclone-defaults]
#                           [--kvreplay-defaults]
#   --keep-alive  start versitygw with --keep-alive (it closes each
#                 connection after a request by default)
#   --verify      kvreplay checks every byte it reads
#   --rclone-defaults  rclone with its default checks (a HEAD after each
#                 upload, MD5s of what it moves) instead of at its fastest
set -euo pipefail

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
rclone_flags="--s3-no-head --s3-disable-checksum --ignore-checksum"
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
	--rclone-defaults) rclone_flags=; shift ;;
	--kvreplay-defaults) kvdefaults=1; shift ;;
	-h|--help) sed -n '2,45p' "$0"; exit 0 ;;
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
cleanup() {
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
# rclone at its fastest: no HEAD after each upload (--s3-no-head), no MD5
# of each file before its upload (--s3-disable-checksum) nor check of the
# downloaded files' (--ignore-checksum); --rclone-defaults keeps its own.
rcl() { env -u AWS_CA_BUNDLE rclone --config /dev/null --transfers "$conc" --checkers "$conc" --s3-no-check-bucket $rclone_flags "$@"; }

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
kvflags="--block-size 8MiB --queue-depth $conc"
[ -n "$kvdefaults" ] && kvflags=

kv() { # trace result op -> GB/s of Tier-2's op while busy
	"$kvreplay" --tier-map Tier-2=s3 --s3-endpoint "$endpoint" --s3-bucket "$bucket" --s3-prefix kvreplay \
		--s3-concurrency "$conc" $kvflags --speed max $verify -q -o "$2" "$1" >/dev/null
	python3 -c "
import sys, json
d = json.load(open(sys.argv[1]))
assert d['complete'], 'kvreplay did not complete'
t = [t for t in d['tiers'] if t['tier'] == 'Tier-2'][0]
print('%.3f' % (t[sys.argv[2] + '_bandwidth_bytes_per_s'] / 1e9))" "$2" "$3"
}
rc() { # src dst -> GB/s of an rclone copy
	local t0 t1
	t0=$(date +%s.%N)
	rcl copy "$1" "$2"
	t1=$(date +%s.%N)
	python3 -c "import sys; print('%.3f' % (int(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2])) / 1e9))" "$total" "$t0" "$t1"
}

echo "vs-rclone: $endpoint, bucket $bucket, concurrency $conc, $rounds rounds${verify:+, kvreplay --verify}; $(rclone version 2>/dev/null | head -1) ${rclone_flags:-with its defaults}" >&2
printf '%-6s %5s %12s %12s %7s\n' case round 'kvreplay GB/s' 'rclone GB/s' ratio
declare -a pr gr
for r in $(seq "$rounds"); do
	kp=$(kv "$work/write.csv" "$work/put-$r.json" write)
	rp=$(rc "$ram/src" "vs:$bucket/rclone-$r")
	printf '%-6s %5d %12s %12s %7.3f\n' put "$r" "$kp" "$rp" "$(python3 -c "print($kp / $rp)")"
	pr+=("$(python3 -c "print($kp / $rp)")")
	kg=$(kv "$work/read.csv" "$work/get-$r.json" read)
	rg=$(rc "vs:$bucket/rclone-$r" "$ram/down-$r")
	printf '%-6s %5d %12s %12s %7.3f\n' get "$r" "$kg" "$rg" "$(python3 -c "print($kg / $rg)")"
	gr+=("$(python3 -c "print($kg / $rg)")")
	rcl purge "vs:$bucket/rclone-$r"
	rm -rf "$ram/down-$r"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { printf "%.3f\n", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo "median kvreplay/rclone: put $(median "${pr[@]}"), get $(median "${gr[@]}") (goal >= 0.9)"
