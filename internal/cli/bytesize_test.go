package cli_test

import (
	"math"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/spf13/pflag"
)

var _ pflag.Value = (*cli.ByteSize)(nil)

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"512", 512},
		{"512B", 512},
		{"512b", 512},
		{"4k", 4 << 10},
		{"4K", 4 << 10},
		{"4Ki", 4 << 10},
		{"4KiB", 4 << 10},
		{"4kib", 4 << 10},
		{"1MiB", 1 << 20},
		{"1m", 1 << 20},
		{"2GiB", 2 << 30},
		{"2g", 2 << 30},
		{"1TiB", 1 << 40},
		{"1PiB", 1 << 50},
		{"7EiB", 7 << 60},
		{"2KB", 2000},
		{"2kb", 2000},
		{"2MB", 2_000_000},
		{"2GB", 2_000_000_000},
		{"2TB", 2_000_000_000_000},
		{"1.5GiB", 3 << 29},
		{"1.50 GiB", 3 << 29},
		{"0.5k", 512},
		{"1.5KB", 1500},
		{"1.000B", 1},
		{" 64k ", 64 << 10},
		{"007", 7},
		{"9223372036854775807", math.MaxInt64},
		{"9223372036854775807B", math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := cli.ParseByteSize(tt.in)
			if err != nil {
				t.Fatalf("ParseByteSize(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseByteSize(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseByteSizeErrors(t *testing.T) {
	const want = "not a byte size (want a number with an optional unit such as 4k, 1MiB, 2GB)"
	tests := []struct {
		in, msg string
	}{
		{"12q", `"12q": ` + want},
		{"", `"": ` + want},
		{"k", `"k": ` + want},
		{"1.", `"1.": ` + want},
		{".5k", `".5k": ` + want},
		{"1..5", `"1..5": ` + want},
		{"1e3", `"1e3": ` + want},
		{"0x10", `"0x10": ` + want},
		{"+1", `"+1": ` + want},
		{"1_000", `"1_000": ` + want},
		{"4kk", `"4kk": ` + want},
		{"4kibb", `"4kibb": ` + want},
		{"4 k b", `"4 k b": ` + want},
		{"1iB", `"1iB": ` + want},
		{"-1", `"-1": byte size must not be negative`},
		{"-4k", `"-4k": byte size must not be negative`},
		{"1.3", `"1.3": not a whole number of bytes`},
		{"1.0000001KiB", `"1.0000001KiB": not a whole number of bytes`},
		{"9223372036854775808", `"9223372036854775808": byte size out of range`},
		{"8EiB", `"8EiB": byte size out of range`},
		{"99999999999999TiB", `"99999999999999TiB": byte size out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := cli.ParseByteSize(tt.in)
			if err == nil {
				t.Fatalf("ParseByteSize(%q) = %d, want an error", tt.in, got)
			}
			if !strings.HasPrefix(err.Error(), tt.msg) {
				t.Fatalf("ParseByteSize(%q) error %q, want it to start with %q", tt.in, err, tt.msg)
			}
			var b cli.ByteSize = 42
			if b.Set(tt.in) == nil || b != 42 {
				t.Fatalf("Set(%q) succeeded or changed the value to %d", tt.in, b)
			}
		})
	}
}

func TestByteSizeString(t *testing.T) {
	tests := []struct {
		in   cli.ByteSize
		want string
	}{
		{0, "0"},
		{1, "1"},
		{512, "512"},
		{1000, "1000"},
		{1024, "1KiB"},
		{4 << 10, "4KiB"},
		{1 << 20, "1MiB"},
		{1536 << 10, "1536KiB"},
		{3 << 29, "1536MiB"},
		{2 << 30, "2GiB"},
		{1 << 40, "1TiB"},
		{1 << 62, "4EiB"},
		{1<<20 + 1, "1048577"},
		{math.MaxInt64, "9223372036854775807"},
		{-5, "-5"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("ByteSize(%d).String() = %q, want %q", int64(tt.in), got, tt.want)
		}
		if tt.in < 0 {
			continue
		}
		var back cli.ByteSize
		if err := back.Set(tt.in.String()); err != nil || back != tt.in {
			t.Errorf("Set(%q) = %d, %v; want %d", tt.in.String(), back, err, tt.in)
		}
	}
	var b cli.ByteSize
	if got := b.Type(); got != "bytes" {
		t.Errorf("Type() = %q, want bytes", got)
	}
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{512, "512 B"},
		{1023, "1023 B"},
		{1024, "1.00 KiB"},
		{1536, "1.50 KiB"},
		{3 << 29, "1.50 GiB"},
		{1<<20 - 1, "1.00 MiB"},
		{1 << 40, "1.00 TiB"},
		{math.MaxInt64, "8.00 EiB"},
		{-2048, "-2.00 KiB"},
		{math.MinInt64, "-8.00 EiB"},
	}
	for _, tt := range tests {
		if got := cli.FormatBytes(tt.in); got != tt.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"512", "4k", "1MiB", "2GB", "1.5GiB", "1.50 GiB", "12q", "-1", "9223372036854775807", "8EiB", "0.5k", " 1 e "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := cli.ParseByteSize(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "\"") {
				t.Fatalf("ParseByteSize(%q) error %q does not start with the quoted value", s, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseByteSize(%q) = %d, negative", s, n)
		}
		str := cli.ByteSize(n).String()
		back, err := cli.ParseByteSize(str)
		if err != nil || back != n {
			t.Fatalf("ParseByteSize(%q) = %d; String %q parses to %d, %v", s, n, str, back, err)
		}
		_ = cli.FormatBytes(n)
	})
}
