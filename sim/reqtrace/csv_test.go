package reqtrace

import "testing"

func TestParseSeconds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"5", 5e9, true},
		{" 5 ", 5e9, true},
		{"+5", 5e9, true},
		{"-5", -5e9, true},
		{"1.5", 1_500_000_000, true},
		{"1.", 1e9, true},
		{".25", 250_000_000, true},
		{"0001", 1e9, true},
		{"1700000000.123456", 1_700_000_000_123_456_000, true},
		{"1.0000000004", 1_000_000_000, true},
		{"1.0000000005", 1_000_000_001, true},
		{"1.999999999999", 2_000_000_000, true},
		{"1e3", 1000e9, true},
		{"1.5E-3", 1_500_000, true},
		{"-2.5e1", -25e9, true},
		{"4500000000", 4_500_000_000e9, true},
		{"4500000001", 0, false},
		{"00000000000004500000000", 4_500_000_000e9, true},
		{"99999999999", 0, false},
		{"1e300", 0, false},
		{"1e400", 0, false},
		{"", 0, false},
		{" ", 0, false},
		{".", 0, false},
		{"-", 0, false},
		{"--5", 0, false},
		{"+-5", 0, false},
		{"-+5e1", 0, false},
		{"nan", 0, false},
		{"inf", 0, false},
		{"-Infinity", 0, false},
		{"0x1p3", 0, false},
		{"1_000", 1000e9, true},
		{"1_700_000_000.000_5", 1_700_000_000_000_500_000, true},
		{"1e1_0", 0, false}, // 1e10 s: beyond maxSeconds
		{"1_5e-1", 1_500_000_000, true},
		{"_1", 0, false},
		{"1_", 0, false},
		{"1__0", 0, false},
		{"1_.5", 0, false},
		{"1._5", 0, false},
		{"1e_5", 0, false},
		{"+_1", 0, false},
		{"1.2.3", 0, false},
		{"1,5", 0, false},
		{"５", 0, false},
	} {
		got, ok := parseSeconds(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseSeconds(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseCount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true},
		{"472", 472, true},
		{" 12 ", 12, true},
		{"+3", 3, true},
		{"-1", 0, false},
		{"1.0", 0, false},
		{"", 0, false},
		{"1e3", 0, false},
		{"99999999999999999999", 0, false},
		{"1_000", 1000, true}, // Python's int("1_000")
		{" 2_048 ", 2048, true},
		{"007", 7, true},
		{"1__0", 0, false},
		{"_1", 0, false},
		{"1_", 0, false},
		{"-_1", 0, false},
	} {
		got, ok := parseCount(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseCount(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
