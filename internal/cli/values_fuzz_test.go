package cli_test

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
)

// valueErr checks that err, a refusal of flag value s, is one line that
// starts with the value quoted (ParseFlags replaces the quote by the flag
// and the value as typed).
func valueErr(t *testing.T, what, s string, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, strconv.Quote(s)+": ") || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("%s(%q): error %q is not one line starting with the quoted value", what, s, msg)
	}
}

// FuzzSeconds: --duration and the other Seconds flags accept a bare
// number of seconds or a Go duration, never a negative one; a bare number
// is exactly the decimal seconds typed, anything else exactly what
// time.ParseDuration reads; the value's String reads back the same.
func FuzzSeconds(f *testing.F) {
	for _, s := range []string{
		"60", "0.5", "0", "600", " 30 ", "10m", "1h30m", "250ms", "1.5h", "-1", "-0", "-1s", "+5",
		"1e3", "0x10", ".5", "5.", "1_000", "9223372036", "9223372037", "99999999999999999999",
		"2562047h47m16.854775807s", "2562047h47m16.854775808s", "1s-1ns", "", "s", "max", "5 s", "\t7\n",
		"0.0000000001", "1.0000000005",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d cli.Seconds
		err := d.Set(s)
		if err != nil {
			valueErr(t, "Seconds.Set", s, err)
			if d != 0 {
				t.Fatalf("Seconds.Set(%q) refused but stored %v", s, d.Duration())
			}
			return
		}
		if d < 0 {
			t.Fatalf("Seconds.Set(%q) = %v, negative", s, d.Duration())
		}
		tr := strings.TrimSpace(s)
		if !strings.ContainsAny(tr, "eE_xX") {
			if _, ferr := strconv.ParseFloat(tr, 64); ferr == nil {
				// A bare number: exactly its decimal seconds.
				if want, err := time.ParseDuration(strings.TrimPrefix(tr, "+") + "s"); err != nil || time.Duration(d) != want {
					t.Fatalf("Seconds.Set(%q) = %v, want %v seconds (%v)", s, d.Duration(), tr, err)
				}
			}
		}
		if want, err := time.ParseDuration(tr); err == nil && time.Duration(d) != want {
			t.Fatalf("Seconds.Set(%q) = %v; as a Go duration it is %v", s, d.Duration(), want)
		}
		var back cli.Seconds
		if err := back.Set(d.String()); err != nil || back != d {
			t.Fatalf("Seconds.Set(%q) = %v; its String %q reads %v, %v", s, d.Duration(), d.String(), back.Duration(), err)
		}
	})
}

// FuzzSpeed: --speed accepts "max" in any case, or a finite number above
// 0 and no other text, which is exactly the number typed; String reads
// back the same.
func FuzzSpeed(f *testing.F) {
	for _, s := range []string{
		"max", "MAX", " Max ", "1", "2.5", "0.001", "0", "0.0", "-1", "+1", "1e3", "inf", "NaN", "0x1p1",
		"1e400", "179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
		"", ".5", "5.", "1,5", "fast", "maxx",
		"0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v cli.Speed = 7
		err := v.Set(s)
		if err != nil {
			valueErr(t, "Speed.Set", s, err)
			if v != 7 {
				t.Fatalf("Speed.Set(%q) refused but stored %v", s, v)
			}
			return
		}
		tr := strings.TrimSpace(s)
		if strings.EqualFold(tr, "max") {
			if !v.IsMax() {
				t.Fatalf("Speed.Set(%q) = %v, want max", s, v)
			}
		} else {
			want, ferr := strconv.ParseFloat(tr, 64)
			if ferr != nil || float64(v) != want || !(want > 0) || math.IsInf(want, 0) || strings.ContainsAny(tr, "eE_xXpP+-") {
				t.Fatalf("Speed.Set(%q) = %v; the number typed is %v (%v)", s, float64(v), want, ferr)
			}
		}
		var back cli.Speed
		if err := back.Set(v.String()); err != nil || back != v {
			t.Fatalf("Speed.Set(%q) = %v; its String %q reads %v, %v", s, v, v.String(), back, err)
		}
	})
}

// FuzzKeyValues: --tier-map and the other key=value lists, set with a
// default and given twice as a user repeats the flag: every pair held has
// a key and a value without surrounding space and a key held once; the
// defaults keep their place, given keys override them in place and new
// keys follow in the order given; a key given twice is refused; a refused
// value leaves the list as it was; and the list's String reads back the
// same pairs.
func FuzzKeyValues(f *testing.F) {
	for _, p := range [][2]string{
		{"Tier-0=ram,Tier-1=ram,Tier-2=nvme", ""},
		{"Tier-0=ram", "Tier-3=s3"},
		{"Tier-1=gpu", "Tier-1=ram"},
		{" Tier-0 = ram , Tier-2=nvme ", "x=y=z"},
		{"Tier-0=ram,Tier-0=nvme", "a=b"},
		{"", ","}, {"a", "=b"}, {"a=", "a=b,,c=d"}, {"=", " , "}, {"k=v\n", "\x00=\xff"},
	} {
		f.Add(p[0], p[1])
	}
	defaults := []cli.KeyValue{{Key: "Tier-1", Value: "ram"}, {Key: "Tier-2", Value: "nvme"}}
	f.Fuzz(func(t *testing.T, s1, s2 string) {
		kv := cli.NewKeyValues(defaults...)
		want := slices.Clone(defaults)
		given := map[string]bool{}
		for _, s := range []string{s1, s2} {
			before := kv.Pairs()
			err := kv.Set(s)
			if err != nil {
				valueErr(t, "KeyValues.Set", s, err)
				if !slices.Equal(kv.Pairs(), before) {
					t.Fatalf("KeyValues.Set(%q) refused but changed the list from %v to %v", s, before, kv.Pairs())
				}
				continue
			}
			// What the list must now be: each item, trimmed, overrides its
			// key in place or follows.
			seen := map[string]bool{}
			for _, item := range strings.Split(s, ",") {
				k, v, _ := strings.Cut(item, "=")
				k, v = strings.TrimSpace(k), strings.TrimSpace(v)
				if k == "" || v == "" || seen[k] || given[k] {
					t.Fatalf("KeyValues.Set(%q) accepted item %q (given before: %v)", s, item, given[k] || seen[k])
				}
				seen[k] = true
				if i := slices.IndexFunc(want, func(p cli.KeyValue) bool { return p.Key == k }); i >= 0 {
					want[i].Value = v
				} else {
					want = append(want, cli.KeyValue{Key: k, Value: v})
				}
			}
			for k := range seen {
				given[k] = true
			}
		}
		got := kv.Pairs()
		if !slices.Equal(got, want) {
			t.Fatalf("KeyValues after %q, %q = %v, want %v", s1, s2, got, want)
		}
		if kv.Len() != len(got) {
			t.Fatalf("Len %d, %d pairs", kv.Len(), len(got))
		}
		for _, p := range got {
			if v, ok := kv.Get(p.Key); !ok || v != p.Value {
				t.Fatalf("Get(%q) = %q, %v; the list holds %q", p.Key, v, ok, p.Value)
			}
		}
		if len(got) == 0 {
			return
		}
		back := cli.NewKeyValues()
		if err := back.Set(kv.String()); err != nil || !slices.Equal(back.Pairs(), got) {
			t.Fatalf("KeyValues %v renders as %q, which reads %v, %v", got, kv.String(), back.Pairs(), err)
		}
	})
}
