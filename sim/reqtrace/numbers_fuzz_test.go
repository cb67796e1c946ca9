package reqtrace

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// pyFloat is the text Python's float() reads as a finite number (its
// digit parts may have an underscore between two digits), less inf and
// nan, which the request-trace readers refuse.
var pyFloat = regexp.MustCompile(`^[+-]?(D\.?(D)?|\.D)([eE][+-]?D)?$`)

func init() {
	const digitpart = `[0-9](?:_?[0-9])*`
	pyFloat = regexp.MustCompile(strings.ReplaceAll(pyFloat.String(), "D", digitpart))
}

// pyText is s as Python's int() and float() read it before they parse:
// each non-ASCII space a space, each decimal digit of any script (Unicode
// category Nd, ten contiguous code points from its zero) its ASCII digit,
// and its value found here by counting the digits before it, not as
// decimalDigit finds it. False when s has another non-ASCII character or
// is not UTF-8 (a Python str always is), which both functions refuse.
func pyText(s string) (string, bool) {
	if !utf8.ValidString(s) {
		return "", false
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case unicode.Is(unicode.Nd, r):
			k := 0
			for unicode.Is(unicode.Nd, r-rune(k)-1) {
				k++
			}
			b.WriteByte(byte('0' + k%10))
		default:
			return "", false
		}
	}
	return b.String(), true
}

// FuzzParseSeconds: a request trace's timestamp is read as Python's
// float() reads it (pyText, then pyFloat), within maxSeconds; a plain decimal is
// exactly its value rounded half away from zero to the nanosecond
// (big.Rat arithmetic), one with an exponent within a float64's rounding
// of it.
func FuzzParseSeconds(f *testing.F) {
	for _, s := range []string{
		"0", "1700000000.123456", " 12.5 ", "-3", "+4", "5.", ".5", ".", "", "1e3", "1.5E-3", "1e", "1e+", "inf", "nan",
		"1_000", "0x10", "4500000000", "4500000001", "4500000000.5", "4.5e9", "4.6e9", "00000000000001.5", "99999999999",
		"0.0000000005", "0.0000000004999", "-0.0000000005", "1e-400", "1e400", "--1", "+-1", "1_0.0_1e0_1", "1_.5", "1e_1", "_1", "-+1e5", "1.2.3", "١",
		"١.٥", "٣.５e１", "\u3000１_０\u2003", "𝟘𝟙.𝟿", "1\u00a02", "＋５", "\x1c5", "５\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseSeconds(s)
		tr, text := pyText(s)
		tr = strings.TrimSpace(tr)
		if !text || !pyFloat.MatchString(tr) {
			if ok {
				t.Fatalf("parseSeconds(%q) = %d; Python's float() refuses it", s, got)
			}
			return
		}
		tr = strings.ReplaceAll(tr, "_", "")
		exact, _ := new(big.Rat).SetString(strings.TrimPrefix(tr, "+"))
		if exact == nil {
			// An exponent too large for big.Rat ("1E2000000"): a float64
			// of it is 0 or infinite.
			f64, _ := strconv.ParseFloat(tr, 64)
			if in := math.Abs(f64) <= maxSeconds; in != ok || ok && got != int64(math.Round(f64*1e9)) {
				t.Fatalf("parseSeconds(%q) = %d, %v; as a float64 %g", s, got, ok, f64)
			}
			return
		}
		abs := new(big.Rat).Abs(exact)
		if !strings.ContainsAny(tr, "eE") {
			// The integer part bounds a plain decimal.
			intPart, _ := new(big.Int).SetString("0"+strings.TrimLeft(strings.Split(strings.TrimLeft(tr, "+-"), ".")[0], "0"), 10)
			if in := intPart.Cmp(big.NewInt(maxSeconds)) <= 0; in != ok {
				t.Fatalf("parseSeconds(%q) = %d, %v; integer part %v, bound %v", s, got, ok, intPart, int64(maxSeconds))
			}
			if !ok {
				return
			}
			ns := new(big.Rat).Mul(abs, big.NewRat(1e9, 1))
			ns.Add(ns, big.NewRat(1, 2))
			want := new(big.Int).Quo(ns.Num(), ns.Denom()) // floor: ns > 0
			if exact.Sign() < 0 {
				want.Neg(want)
			}
			if !want.IsInt64() || got != want.Int64() {
				t.Fatalf("parseSeconds(%q) = %d, want %v", s, got, want)
			}
			return
		}
		f64, _ := exact.Float64()
		if in := math.Abs(f64) <= maxSeconds; in != ok {
			t.Fatalf("parseSeconds(%q) = %d, %v; %g seconds, bound %g", s, got, ok, f64, float64(maxSeconds))
		}
		if !ok {
			return
		}
		want, _ := new(big.Rat).Mul(exact, big.NewRat(1e9, 1)).Float64()
		if d := math.Abs(float64(got) - want); d > 1+math.Abs(want)*1e-15 {
			t.Fatalf("parseSeconds(%q) = %d, want about %g", s, got, want)
		}
	})
}

// FuzzParseCount: a token count is a decimal integer (its digits of any
// script, pyText), spaces around it, a sign, 0 or more, and exactly the
// number written.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"0", "512", " 77 ", "+5", "-0", "-1", "1_000", "1__0", "_1", "1_", "1.0", "1e3", "", "9223372036854775807", "9223372036854775808", "0x10", "٣",
		"１２", "\u3000１_０\u2003", "𝟘𝟙", "-４", "x５", "1\u00a02", "\x1c5", "５\xff", "٩٢٢٣٣٧٢٠٣٦٨٥٤٧٧٥٨٠٨"} {
		f.Add(s)
	}
	digits := regexp.MustCompile(`^[+-]?[0-9](?:_?[0-9])*$`) // Python's int(): an underscore between two digits
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseCount(s)
		tr, text := pyText(s)
		tr = strings.TrimSpace(tr)
		accept := text && digits.MatchString(tr)
		tr = strings.ReplaceAll(tr, "_", "")
		want, isInt := new(big.Int).SetString(strings.TrimPrefix(tr, "+"), 10)
		accept = accept && isInt && want.Sign() >= 0 && want.IsInt64() && want.Int64() <= math.MaxInt
		if ok != accept || ok && int64(got) != want.Int64() {
			t.Fatalf("parseCount(%q) = %d, %v; want %v, %v", s, got, ok, want, accept)
		}
	})
}

// FuzzParseAzureTime: an Azure trace's timestamp read is written back
// with all its digits (and its offset, when it has one) and reads the
// same instant; without an offset it is UTC; the text it came from starts
// with that date.
func FuzzParseAzureTime(f *testing.F) {
	for _, s := range []string{
		"2023-11-16 18:17:03.9799600", "2024-05-10 00:00:00.009930+00:00", "2024-05-10T00:00:00Z", "2024-05-10 00:00:00-07:30",
		"2024-02-30 00:00:00", "2024-05-10 24:00:00", "2024-05-10", "2024-05-10 00:00:00.", " 2024-05-10 00:00:00 ", "2024-05-10x00:00:00",
		"2024-05-10 00:00:00+25:00", "9999-12-31 23:59:59.999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseAzureTime(s)
		if !ok {
			return
		}
		tr := strings.TrimSpace(s)
		// The date as written (time.Parse takes an hour of one digit and
		// a comma before the fraction, both harmless).
		if !strings.HasPrefix(tr, got.Format("2006-01-02")) {
			t.Fatalf("parseAzureTime(%q) = %v, another date", s, got)
		}
		if !strings.ContainsAny(tr[19:], "Z+-") {
			if _, off := got.Zone(); off != 0 {
				t.Fatalf("parseAzureTime(%q) = %v, not UTC", s, got)
			}
		}
		text := got.Format("2006-01-02 15:04:05.999999999Z07:00")
		back, ok := parseAzureTime(text)
		if !ok || !back.Equal(got) {
			t.Fatalf("parseAzureTime(%q) = %v, written as %q reads %v, %v", s, got, text, back, ok)
		}
	})
}

// FuzzPyNumberText: the texts a BurstGPT row is kept for by kv-cache.py
// (RefDepartures.Kept) are those Python's float() and int() read, as the
// oracles of FuzzParseSeconds and FuzzParseCount describe them, with
// float()'s nan, inf and infinity of any case and magnitude without
// bound; and every text the readers accept is one of them.
func FuzzPyNumberText(f *testing.F) {
	for _, s := range []string{"0", "-5", " +7 ", "1_000", "1__0", "nan", "-Inf", " INFINITY ", "infinit", "nan1", "1e999", "-1e-999", "0x10",
		"1.5", ".", "", "99999999999999999999999", "٣", "\u3000１_０\u2003", "+-1", "1e", "5\xff"} {
		f.Add(s)
	}
	digits := regexp.MustCompile(`^[+-]?[0-9](?:_?[0-9])*$`)
	special := regexp.MustCompile(`^(?i)[+-]?(nan|inf|infinity)$`)
	f.Fuzz(func(t *testing.T, s string) {
		tr, text := pyText(s)
		tr = strings.TrimSpace(tr)
		if want := text && digits.MatchString(tr); pyIntText(s) != want {
			t.Fatalf("pyIntText(%q) = %v, want %v", s, !want, want)
		}
		if want := text && (pyFloat.MatchString(tr) || special.MatchString(tr)); pyFloatText(s) != want {
			t.Fatalf("pyFloatText(%q) = %v, want %v", s, !want, want)
		}
		if _, ok := parseSeconds(s); ok && !pyFloatText(s) {
			t.Fatalf("parseSeconds accepts %q, which pyFloatText refuses", s)
		}
		if _, ok := parseInt(s); ok && !pyIntText(s) {
			t.Fatalf("parseInt accepts %q, which pyIntText refuses", s)
		}
	})
}
