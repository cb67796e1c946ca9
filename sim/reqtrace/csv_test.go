package reqtrace

import (
	"testing"
	"unicode"
)

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
		// Python's float() reads any Unicode decimal digit (category Nd)
		// as a digit and any Unicode space as a space, in CPython 3.11:
		// float("５") == 5.0, float("٣.５e１") == 35.0 (digits of two
		// scripts in one number), float("1\xa02") raises.
		{"５", 5e9, true},
		{"١.٥", 1_500_000_000, true},
		{"٣.５e１", 35e9, true},
		{"-４", -4e9, true},
		{".５", 500_000_000, true},
		{"١_٢", 12e9, true},
		{"\u3000１\u2003", 1e9, true},
		{"𝟘𝟙", 1e9, true},
		{"١٧٠٠٠٠٠٠٠٠.٥", 1_700_000_000_500_000_000, true},
		{"٤٥٠٠٠٠٠٠٠١", 0, false}, // beyond maxSeconds, as in ASCII
		{"1\u00a02", 0, false},
		{"１２a", 0, false},
		{"＋５", 0, false}, // a fullwidth sign is no sign
		{"−5", 0, false}, // nor U+2212 MINUS SIGN
		{"\u00a0", 0, false},
		{"\x1c5", 0, false}, // Python's str.isspace, but int() and float() strip ASCII spaces only
		{"5\xff", 0, false},
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
		// Python's int() reads any Unicode decimal digit (category Nd)
		// as a digit and any Unicode space as a space, in CPython 3.11:
		// int("٣") == 3, int("１２") == 12, int("１２a") raises.
		{"٣", 3, true},
		{"１２", 12, true},
		{" ５ ", 5, true},
		{"\u3000１_０\u2003", 10, true},
		{"୧୨", 12, true},
		{"𝟘𝟙", 1, true},
		{"\u20079", 9, true},
		{"+٣", 3, true},
		{"-４", 0, false},
		{"١.٥", 0, false},
		{"１２a", 0, false},
		{"x５", 0, false},
		{"1\u00a02", 0, false},
		{"\u00a0\u00a0", 0, false},
		{"＋５", 0, false},
		{"\x1c5", 0, false},
		{"５\xff", 0, false},
	} {
		got, ok := parseCount(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseCount(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDecimalDigitRanges checks what decimalDigit relies on: each range
// of unicode.Nd runs with stride 1 over whole sets of ten digits, and no
// digit comes just before it, so (each set being ten contiguous code
// points from its zero) it starts at a zero.
func TestDecimalDigitRanges(t *testing.T) {
	check := func(lo, hi, stride uint32) {
		if stride != 1 || (hi-lo+1)%10 != 0 {
			t.Errorf("unicode.Nd range %#x-%#x stride %d: not whole sets of ten", lo, hi, stride)
		}
		if unicode.Is(unicode.Nd, rune(lo)-1) {
			t.Errorf("unicode.Nd range %#x-%#x follows another digit: a range that may not start at a zero", lo, hi)
		}
	}
	for _, r := range unicode.Nd.R16 {
		check(uint32(r.Lo), uint32(r.Hi), uint32(r.Stride))
	}
	for _, r := range unicode.Nd.R32 {
		check(r.Lo, r.Hi, r.Stride)
	}
	for _, tc := range []struct {
		r    rune
		want byte
	}{{'٠', 0}, {'٩', 9}, {'５', 5}, {'𝟎', 0}, {'𝟗', 9}, {'𝟘', 0}, {'𝟿', 9}, {'୭', 7}} {
		if d, ok := decimalDigit(tc.r); !ok || d != tc.want {
			t.Errorf("decimalDigit(%q) = %d, %v; want %d", tc.r, d, ok, tc.want)
		}
	}
	for _, r := range []rune{'5', 'a', '²', '½', 'Ⅳ', '\u00a0'} {
		if d, ok := decimalDigit(r); ok {
			t.Errorf("decimalDigit(%q) = %d; not a decimal digit of Python's", r, d)
		}
	}
}
