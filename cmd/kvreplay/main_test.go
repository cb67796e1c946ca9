package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cli/clitest"
	"github.com/kvbench/kvbench/replay"
)

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--nope"}, 2, "unknown flag: --nope"},
		{nil, 2, "no trace given"},
		{[]string{"--queue-depth", "0", "x.csv"}, 2, "--queue-depth 0: must be between 1 and 4096"},
		// A decimal size is said in binary units too: 1GB is not 1GiB.
		{[]string{"--block-size", "1GB", "x.csv"}, 2, "--block-size 1000000000 (953.67 MiB): must be a power of two"},
		{[]string{"--tier-map", "Tier-9=ram", "x.csv"}, 2, "Tier-9 is not a tier"},
		{[]string{"--tier-map", "Tier-0=gpu", "x.csv"}, 2, "--tier-map Tier-0=ram"},
		{[]string{"--size-scale", "1/0", "x.csv"}, 2, "--size-scale 1/0"},
		{[]string{"--mkdir", "--dir", "/etc/kv", "x.csv"}, 2, "/etc"},
		{[]string{"does-not-exist.csv"}, 2, "no such file"},
		{[]string{"--trial", "-1", "x.csv"}, 2, "--trial -1: must not be negative"},
		// kvreport --aggregate mlperf refuses such a result after the run.
		{[]string{"--trial", "1024", "x.csv"}, 2, "--trial 1024: must be below 1024"},
		// A search's options without the search they shape are refused,
		// not ignored.
		{[]string{"--search-probes", "5", "x.csv"}, 2, "--search-probes 5: bounds the probes of a search: add --search"},
		{[]string{"--search-repeats", "3", "x.csv"}, 2, "--search-repeats 3: how many times a users search probes its answer: only with --search users"},
		{[]string{"--search", "capacity", "--search-repeats", "3", "x.csv"}, 2, "--search-repeats 3: how many times a users search probes its answer: only with --search users"},
		// So are a layout's, a tier's and a barrier's options without them.
		{[]string{"--prewrite=false", "x.csv"}, 2, "--prewrite false: only with --layout extent"},
		{[]string{"--device-overwrite", "x.csv"}, 2, "--device-overwrite true: only with --layout extent"},
		{[]string{"--s3-bucket", "kv", "x.csv"}, 2, "--s3-bucket kv: only with an s3 tier (--tier-map Tier-2=s3 or Tier-3=s3)"},
		{[]string{"--s3-concurrency", "0", "x.csv"}, 2, "--s3-concurrency 0: only with an s3 tier"},
		{[]string{"--gpus", "0", "x.csv"}, 2, "--gpus 0: only with a gpu tier (--tier-map Tier-0=gpu)"},
		{[]string{"--start-barrier-timeout", "1s", "x.csv"}, 2, "--start-barrier-timeout 1s: only with --start-barrier"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := cli.Main("kvreplay", tt.args, &out, &errb, run)
		if code != tt.code || !strings.Contains(errb.String(), tt.stderr) {
			t.Errorf("%v: exit %d stderr %q, want %d and %q", tt.args, code, errb.String(), tt.code, tt.stderr)
		}
	}
	// A value that does not parse is said once, as given: --size-scale
	// 1/0 was said again as "--size-scale 0: must be greater than 0",
	// a value no one gave.
	var out, errb bytes.Buffer
	if code := cli.Main("kvreplay", []string{"--size-scale", "1/0", "x.csv"}, &out, &errb, run); code != 2 || strings.Count(errb.String(), "--size-scale") != 1 {
		t.Errorf("--size-scale 1/0: exit %d, %q: want 2 and one error about it", code, errb.String())
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--queue-depth", "0", "--help"}} {
		var out, errb bytes.Buffer
		code := cli.Main("kvreplay", args, &out, &errb, run)
		if code != 0 || errb.Len() != 0 || !strings.HasPrefix(out.String(), "kvreplay: replay") || !strings.Contains(out.String(), "Options:") {
			t.Errorf("%v: exit %d, stderr %q, stdout %.200q", args, code, errb.String(), out.String())
		}
		clitest.CheckDefaultsOnce(t, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := cli.Main("kvreplay", []string{"--version"}, &out, &errb, run); code != 0 || !strings.HasPrefix(out.String(), "kvreplay ") {
		t.Errorf("--version: exit %d, %q", code, out.String())
	}
}

// TestS3PrefixRank: --s3-prefix takes {rank} as the paths do.
func TestS3PrefixRank(t *testing.T) {
	o, err := parse([]string{"--rank", "1", "--ranks", "2", "--tier-map", "Tier-2=s3", "--s3-bucket", "kvbench", "--s3-prefix", "kv/r{rank}", "-o", "out.{rank}.json", "t.csv"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.tiers.S3.Prefix != "kv/r1" {
		t.Errorf("--s3-prefix kv/r{rank} at rank 1: %q", o.tiers.S3.Prefix)
	}
}

// TestS3PartSizePlanned: the plan counts the s3 tier's requests with the
// part size it uploads and reads in, --s3-part-size or its default.
func TestS3PartSizePlanned(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want int64
	}{{nil, 8 << 20}, {[]string{"--s3-part-size", "16MiB"}, 16 << 20}} {
		args := append([]string{"--tier-map", "Tier-2=s3", "--s3-bucket", "kvbench"}, tt.args...)
		o, err := parse(append(args, "t.csv"), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if o.cfg.S3PartSize != tt.want || o.tiers.S3.PartSizeOrDefault() != tt.want {
			t.Errorf("%v: the plan's part size %d, the tier's %d; want %d", tt.args, o.cfg.S3PartSize, o.tiers.S3.PartSizeOrDefault(), tt.want)
		}
	}
}

// TestDefaultShard: ranks split an open loop by key and a closed loop by
// user, whose requests wait for each other: split by key, each rank ran
// its part of every user on a loop of its own. A --shard given wins.
func TestDefaultShard(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--rank", "1", "--ranks", "2"}, replay.ShardKey},
		{[]string{"--rank", "1", "--ranks", "2", "--closed-loop"}, replay.ShardUser},
		{[]string{"--rank", "1", "--ranks", "2", "--closed-loop", "--shard", "key"}, replay.ShardKey},
		{[]string{"--closed-loop"}, ""},
	} {
		o, err := parse(append(tt.args, "-o", "out.{rank}.json", "t.csv"), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if o.cfg.Shard != tt.want {
			t.Errorf("%v: --shard %q, want %q", tt.args, o.cfg.Shard, tt.want)
		}
	}
}
