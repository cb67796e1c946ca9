package cli_test

import (
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
	for _, in := range []string{"", "x", "1/0", "1/", "/4", "1/x", "NaN", "Inf", "1/Inf", "1/2/3", "1 /2"} {
		_, err := cli.Fraction("--size-scale", in)
		if err == nil || !strings.HasPrefix(err.Error(), "--size-scale ") || !strings.Contains(err.Error(), "want a number or a fraction") {
			t.Errorf("Fraction(%q): %v, want an error naming the flag", in, err)
		}
	}
}
