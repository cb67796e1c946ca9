package cli_test

import (
	"math"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

func TestFraction(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{
		{"1", 1},
		{"0.25", 0.25},
		{"1/1024", 1.0 / 1024},
		{"1/65536", 1.0 / 65536},
		{"3/4", 0.75},
		{" 1/4 ", 0.25},
		{"0", 0}, // out of range, which the caller's Validate says
		{"2", 2},
	} {
		got, err := cli.Fraction("--size-scale", tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Fraction(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "x", "1/0", "1/", "/4", "1/x", "NaN", "Inf", "1/Inf", "1e300/1e-300", "1/2/3", "1 /2"} {
		_, err := cli.Fraction("--size-scale", in)
		if err == nil || !strings.HasPrefix(err.Error(), "--size-scale ") || !strings.Contains(err.Error(), "want a number or a fraction") {
			t.Errorf("Fraction(%q): %v, want an error naming the flag", in, err)
		}
	}
}

// FuzzFraction: Fraction never panics, what it accepts is a finite number,
// and an error always names the flag and the value.
func FuzzFraction(f *testing.F) {
	for _, s := range []string{"1", "1/1024", "0.25", "1/0", "NaN", "1e400", "-1/3", " 3/4 ", "1e300/1e-300"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := cli.Fraction("--size-scale", s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--size-scale ") {
				t.Fatalf("Fraction(%q): %v does not name the flag", s, err)
			}
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("Fraction(%q) = %v", s, v)
		}
	})
}
