package cli_test

import (
	"io"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/spf13/pflag"
)

// replayFlags are some of kvreplay's options; exportFlags kvtrace
// export's, which take fio's names; simFlags kv-cache.py's.
func replayFlags() *pflag.FlagSet {
	fs := cli.NewFlagSet("kvreplay", "", io.Discard)
	cli.AddStandard(fs)
	for _, n := range []string{"dir", "device", "engine", "tier-map", "size-scale", "label", "system"} {
		fs.String(n, "", "")
	}
	for _, n := range []string{"queue-depth", "workers", "users", "trial"} {
		fs.Int(n, 0, "")
	}
	fs.Var(new(cli.ByteSize), "block-size", "")
	fs.Var(new(cli.Seconds), "duration", "")
	fs.Bool("buffered", false, "")
	fs.Bool("verify", false, "")
	fs.StringP("output", "o", "", "")
	return fs
}

func exportFlags() *pflag.FlagSet {
	fs := cli.NewFlagSet("kvtrace export", "", io.Discard)
	cli.AddStandard(fs)
	fs.Int("iodepth", 32, "")
	fs.String("engine", "", "")
	fs.String("dir", "", "")
	fs.Var(new(cli.ByteSize), "block-size", "")
	fs.Bool("buffered", false, "")
	return fs
}

func simFlags() *pflag.FlagSet {
	fs := cli.NewFlagSet("kvtrace", "", io.Discard)
	cli.AddStandard(fs)
	fs.String("model", "", "")
	fs.Int("num-users", 100, "")
	fs.Var(new(cli.Seconds), "duration", "")
	fs.Float64("gpu-mem-gb", 16, "")
	fs.Int("num-gpus", 1, "")
	fs.Float64("cpu-mem-gb", 32, "")
	fs.String("cache-dir", "", "")
	fs.Bool("precondition", false, "")
	fs.Float64("precondition-size-gb", 0, "")
	fs.Int("precondition-threads", 0, "")
	fs.Float64("request-rate", 0, "")
	fs.String("request-trace", "", "")
	fs.String("output", "", "")
	fs.StringP("io-trace-log", "o", "-", "")
	fs.Bool("enable-rag", false, "")
	return fs
}

func TestUnknownFlagSuggestion(t *testing.T) {
	for _, tt := range []struct {
		fs   func() *pflag.FlagSet
		args []string
		want string
	}{
		// fio's names
		{replayFlags, []string{"--iodepth", "32"}, "unknown flag: --iodepth (did you mean --queue-depth?)"},
		{replayFlags, []string{"--iodepth=32"}, "unknown flag: --iodepth (did you mean --queue-depth?)"},
		{replayFlags, []string{"--bs", "4k"}, "unknown flag: --bs (did you mean --block-size?)"},
		{replayFlags, []string{"--ioengine", "io_uring"}, "unknown flag: --ioengine (did you mean --engine?)"},
		{replayFlags, []string{"--numjobs", "4"}, "unknown flag: --numjobs (did you mean --workers?)"},
		{replayFlags, []string{"--runtime", "30"}, "unknown flag: --runtime (did you mean --duration?)"},
		{replayFlags, []string{"--directory", "/mnt"}, "unknown flag: --directory (did you mean --dir?)"},
		{replayFlags, []string{"--filename", "/dev/x"}, "unknown flag: --filename (did you mean --device?)"},
		{replayFlags, []string{"--direct=1"}, "unknown flag: --direct (direct I/O (O_DIRECT) is the default; --buffered turns it off)"},
		{replayFlags, []string{"--io_depth", "8"}, "unknown flag: --io_depth (did you mean --queue-depth?)"},
		// kv-cache.py's names in kvreplay
		{replayFlags, []string{"--num-users", "10"}, "unknown flag: --num-users (did you mean --users?)"},
		{replayFlags, []string{"--cache-dir", "/mnt"}, "unknown flag: --cache-dir (did you mean --dir?)"},
		// kvreplay's names in kvtrace export, which takes fio's
		{exportFlags, []string{"--queue-depth", "8"}, "unknown flag: --queue-depth (did you mean --iodepth?)"},
		// typos and prefixes
		{replayFlags, []string{"--verfy"}, "unknown flag: --verfy (did you mean --verify?)"},
		{replayFlags, []string{"--qeueu-depth", "1"}, "unknown flag: --qeueu-depth (did you mean --queue-depth?)"},
		{replayFlags, []string{"--tiermap", "x"}, "unknown flag: --tiermap (did you mean --tier-map?)"},
		{simFlags, []string{"--num-user", "10"}, "unknown flag: --num-user (did you mean --num-users?)"},
		{simFlags, []string{"--num_users", "10"}, "unknown flag: --num_users (did you mean --num-users?)"},
		{simFlags, []string{"--users", "10"}, "unknown flag: --users (did you mean --num-users?)"},
		{simFlags, []string{"--dir", "x"}, "unknown flag: --dir (did you mean --cache-dir?)"},
		{simFlags, []string{"--precond"}, "unknown flag: --precond (did you mean --precondition, --precondition-size-gb or --precondition-threads?)"},
		// a long option with one dash
		{replayFlags, []string{"-iodepth", "8"}, `unknown shorthand flag: 'i' in -iodepth (did you mean --queue-depth?)`},
		{replayFlags, []string{"-duration", "8"}, `unknown shorthand flag: 'd' in -duration (long options take two dashes: --duration)`},
		// nothing close
		{replayFlags, []string{"--zzzzzzzz"}, "unknown flag: --zzzzzzzz"},
		{replayFlags, []string{"--xy"}, "unknown flag: --xy"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := cli.ParseFlags(tt.fs(), tt.args)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error %v\nwant %s", err, tt.want)
			}
			if cli.ExitCode(err) != cli.ExitUsage {
				t.Fatalf("exit status %d, want %d", cli.ExitCode(err), cli.ExitUsage)
			}
		})
	}
}

func TestExpandPrefixes(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // the args joined by spaces, or the error
	}{
		{[]string{"--num-user", "10", "--gpu-mem", "0", "--dur", "30"}, "--num-users 10 --gpu-mem-gb 0 --duration 30"},
		{[]string{"--gpu-mem=4", "--cpu=2"}, "--gpu-mem-gb=4 --cpu-mem-gb=2"},
		{[]string{"--precondition", "--enable"}, "--precondition --enable-rag"},                  // exact wins over longer names
		{[]string{"--model", "--num", "-o", "--num"}, "--model --num -o --num"},                  // values are not options
		{[]string{"--io-trace-log", "x", "--", "--num-u"}, "--io-trace-log x -- --num-u"},        // nor what follows --
		{[]string{"--bogus", "1", "--num-user=3"}, "--bogus 1 --num-users=3"},                    // unknown: left to ParseFlags
		{[]string{"--num", "10"}, "ambiguous option: --num could match --num-users, --num-gpus"}, // argparse's rule
		{[]string{"--request", "x"}, "ambiguous option: --request could match --request-rate, --request-trace"},
		{[]string{"--he"}, "--help"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := cli.ExpandPrefixes(simFlags(), tt.args)
			if err != nil {
				if err.Error() != tt.want || cli.ExitCode(err) != cli.ExitUsage {
					t.Fatalf("error %v (exit %d), want %s", err, cli.ExitCode(err), tt.want)
				}
				return
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Fatalf("got %q, want %q", s, tt.want)
			}
		})
	}
}
