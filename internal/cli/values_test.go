package cli_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/spf13/pflag"
)

var (
	_ pflag.Value = (*cli.Seconds)(nil)
	_ pflag.Value = (*cli.Speed)(nil)
	_ pflag.Value = (*cli.KeyValues)(nil)
)

func TestSeconds(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"60", time.Minute},
		{"600", 10 * time.Minute},
		{"0.5", 500 * time.Millisecond},
		{"0.000000001", time.Nanosecond},
		{"1.25", 1250 * time.Millisecond},
		{"10m", 10 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"250ms", 250 * time.Millisecond},
		{"1.5s", 1500 * time.Millisecond},
		{" 30 ", 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var d cli.Seconds
			if err := d.Set(tt.in); err != nil {
				t.Fatalf("Set(%q): %v", tt.in, err)
			}
			if d.Duration() != tt.want {
				t.Fatalf("Set(%q) = %v, want %v", tt.in, d.Duration(), tt.want)
			}
			var back cli.Seconds
			if err := back.Set(d.String()); err != nil || back != d {
				t.Fatalf("String %q does not parse back: %v, %v", d.String(), back, err)
			}
		})
	}
	var d cli.Seconds
	if d.Type() != "duration" {
		t.Errorf("Type() = %q, want duration", d.Type())
	}
}

func TestSecondsErrors(t *testing.T) {
	const want = "not a duration (want seconds such as 60 or 0.5, or a duration such as 10m, 1h30m, 250ms)"
	tests := []struct {
		in, msg string
	}{
		{"", `"": ` + want},
		{"abc", `"abc": ` + want},
		{"10", ""}, // valid; skipped below
		{"10x", `"10x": ` + want},
		{"1e3", `"1e3": ` + want},
		{"1.", `"1.": ` + want},
		{"-1", `"-1": duration must not be negative`},
		{"-1s", `"-1s": duration must not be negative`},
		{"99999999999", `"99999999999": duration out of range`},
		{"9999999999h", `"9999999999h": ` + want},
	}
	for _, tt := range tests {
		if tt.msg == "" {
			continue
		}
		t.Run(tt.in, func(t *testing.T) {
			d := cli.Seconds(time.Second)
			err := d.Set(tt.in)
			if err == nil {
				t.Fatalf("Set(%q) = %v, want an error", tt.in, d)
			}
			if !strings.HasPrefix(err.Error(), tt.msg) {
				t.Fatalf("Set(%q) error %q, want it to start with %q", tt.in, err, tt.msg)
			}
			if d != cli.Seconds(time.Second) {
				t.Fatalf("failed Set(%q) changed the value to %v", tt.in, d)
			}
		})
	}
}

func TestSpeed(t *testing.T) {
	tests := []struct {
		in     string
		want   cli.Speed
		str    string
		errMsg string
	}{
		{in: "max", want: cli.SpeedMax, str: "max"},
		{in: "MAX", want: cli.SpeedMax, str: "max"},
		{in: "1", want: 1, str: "1"},
		{in: "2.5", want: 2.5, str: "2.5"},
		{in: "100", want: 100, str: "100"},
		{in: "0.25", want: 0.25, str: "0.25"},
		{in: "0", errMsg: `"0": speed must be positive`},
		{in: "0.0", errMsg: `"0.0": speed must be positive`},
		{in: "-1", errMsg: `"-1": speed must be positive`},
		{in: "", errMsg: `"": not a speed (want max or a positive factor such as 1 or 2.5)`},
		{in: "fast", errMsg: `"fast": not a speed`},
		{in: "inf", errMsg: `"inf": not a speed`},
		{in: "NaN", errMsg: `"NaN": not a speed`},
		{in: "1e3", errMsg: `"1e3": not a speed`},
		{in: "2x", errMsg: `"2x": not a speed`},
		{in: "1" + strings.Repeat("0", 400), errMsg: "speed out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v := cli.Speed(7)
			err := v.Set(tt.in)
			if tt.errMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMsg) {
					t.Fatalf("Set(%q) = %v, %v; want error containing %q", tt.in, v, err, tt.errMsg)
				}
				if v != 7 {
					t.Fatalf("failed Set(%q) changed the value to %v", tt.in, v)
				}
				return
			}
			if err != nil {
				t.Fatalf("Set(%q): %v", tt.in, err)
			}
			if v != tt.want || v.String() != tt.str || v.IsMax() != (tt.want == cli.SpeedMax) {
				t.Fatalf("Set(%q) = %v (%q, max %v), want %v (%q)", tt.in, float64(v), v.String(), v.IsMax(), tt.want, tt.str)
			}
		})
	}
	var v cli.Speed
	if v.Type() != "speed" || v.String() != "max" {
		t.Errorf("zero Speed: Type %q String %q, want speed, max", v.Type(), v.String())
	}
}

func TestKeyValues(t *testing.T) {
	tests := []struct {
		in     []string // successive Set calls
		want   []cli.KeyValue
		errMsg string // error of the last Set
	}{
		{
			in:   []string{"Tier-0=ram,Tier-1=ram,Tier-2=nvme"},
			want: []cli.KeyValue{{"Tier-0", "ram"}, {"Tier-1", "ram"}, {"Tier-2", "nvme"}},
		},
		{
			in:   []string{"b=2,a=1"},
			want: []cli.KeyValue{{"b", "2"}, {"a", "1"}},
		},
		{
			in:   []string{" a = x=y "},
			want: []cli.KeyValue{{"a", "x=y"}},
		},
		{
			in:   []string{"a=1", "b=2"},
			want: []cli.KeyValue{{"a", "1"}, {"b", "2"}},
		},
		{in: []string{""}, errMsg: `"": empty list`},
		{in: []string{"a=1,"}, errMsg: `"a=1,": empty item`},
		{in: []string{"a"}, errMsg: `"a": "a" has no '='`},
		{in: []string{"=x"}, errMsg: `"=x": "=x" has an empty key`},
		{in: []string{"a="}, errMsg: `"a=": key "a" has an empty value`},
		{in: []string{"a=1,a=2"}, errMsg: `"a=1,a=2": key "a" given twice`},
		{in: []string{"a=1", "b=2,a=3"}, want: []cli.KeyValue{{"a", "1"}}, errMsg: `key "a" given twice`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, " "), func(t *testing.T) {
			var kv cli.KeyValues
			var err error
			for _, s := range tt.in {
				err = kv.Set(s)
			}
			if tt.errMsg != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.errMsg) && !strings.Contains(err.Error(), tt.errMsg) {
					t.Fatalf("Set: %v, want error %q", err, tt.errMsg)
				}
			} else if err != nil {
				t.Fatalf("Set: %v", err)
			}
			if got := kv.Pairs(); !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Fatalf("Pairs() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestKeyValuesDefaults(t *testing.T) {
	kv := cli.NewKeyValues(cli.KeyValue{Key: "Tier-0", Value: "gpu"}, cli.KeyValue{Key: "Tier-2", Value: "nvme"})
	if got := kv.String(); got != "Tier-0=gpu,Tier-2=nvme" {
		t.Fatalf("String() = %q", got)
	}
	if v, ok := kv.Get("Tier-0"); !ok || v != "gpu" {
		t.Fatalf("Get(Tier-0) = %q, %v", v, ok)
	}
	if err := kv.Set("Tier-0=ram"); err != nil {
		t.Fatal(err)
	}
	if got := kv.String(); got != "Tier-0=ram,Tier-2=nvme" {
		t.Fatalf("after Set, String() = %q, want Tier-0 overridden and the Tier-2 default kept", got)
	}
	if err := kv.Set("Tier-1=ram"); err != nil {
		t.Fatal(err)
	}
	if got := kv.String(); got != "Tier-0=ram,Tier-2=nvme,Tier-1=ram" {
		t.Fatalf("second Set: String() = %q, want appended", got)
	}
	if err := kv.Set("Tier-2=ram"); err != nil {
		t.Fatal(err)
	}
	if got := kv.String(); got != "Tier-0=ram,Tier-2=ram,Tier-1=ram" {
		t.Fatalf("third Set: String() = %q, want the Tier-2 default overridden", got)
	}
	// A key given twice on the command line is refused, across Sets too.
	if err := kv.Set("Tier-0=nvme"); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("Tier-0 given again: %v", err)
	}
	if got := kv.String(); got != "Tier-0=ram,Tier-2=ram,Tier-1=ram" {
		t.Fatalf("a refused Set changed the list: %q", got)
	}
	if kv.Type() != "list" {
		t.Fatalf("Type() = %q", kv.Type())
	}
	var nilKV *cli.KeyValues
	if nilKV.Len() != 0 || nilKV.String() != "" || nilKV.Pairs() != nil {
		t.Fatal("nil KeyValues is not empty")
	}
}

// The flag types work through pflag, and ParseFlags names the flag and the
// value in errors.
func TestValuesThroughPflag(t *testing.T) {
	fs := cli.NewFlagSet("kvreplay", "", new(strings.Builder))
	var bs cli.ByteSize = 1 << 20
	var d cli.Seconds
	var sp cli.Speed
	var tm cli.KeyValues
	fs.Var(&bs, "block-size", "I/O size")
	fs.Var(&d, "duration", "how long")
	fs.Var(&sp, "speed", "replay speed")
	fs.Var(&tm, "tier-map", "tier mapping")
	rest, err := cli.ParseFlags(fs, []string{"--block-size", "4k", "--duration=1.5", "--speed", "2", "--tier-map", "Tier-0=ram", "run.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if bs != 4096 || d.Duration() != 1500*time.Millisecond || sp != 2 || tm.String() != "Tier-0=ram" || !reflect.DeepEqual(rest, []string{"run.csv"}) {
		t.Fatalf("got %v %v %v %v %v", bs, d, sp, tm.String(), rest)
	}
	if got := fs.Lookup("block-size").DefValue; got != "1MiB" {
		t.Fatalf("DefValue = %q, want 1MiB", got)
	}
}
