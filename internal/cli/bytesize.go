package cli

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// ByteSize is a byte count given on the command line, such as --block-size
// 1MiB. It implements pflag.Value; see ParseByteSize for the syntax.
type ByteSize int64

// Set parses s with ParseByteSize and stores the result.
func (b *ByteSize) Set(s string) error {
	n, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = ByteSize(n)
	return nil
}

// String renders b compactly: in the largest IEC unit that divides it
// exactly ("4KiB", "1MiB", "2GiB"), or as a plain number of bytes ("512",
// "1500"). ParseByteSize reads it back to the same value.
func (b ByteSize) String() string {
	n := int64(b)
	if n <= 0 {
		return strconv.FormatInt(n, 10)
	}
	for i := len(iecUnits) - 1; i >= 0; i-- {
		if u := iecUnits[i]; n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// Type returns "bytes", the name pflag shows in usage text.
func (b *ByteSize) Type() string { return "bytes" }

// iecUnits are the binary units from KiB up; the largest fits in an int64.
// The table is read-only.
var iecUnits = [...]struct {
	name string
	size int64
}{
	{"KiB", 1 << 10},
	{"MiB", 1 << 20},
	{"GiB", 1 << 30},
	{"TiB", 1 << 40},
	{"PiB", 1 << 50},
	{"EiB", 1 << 60},
}

const byteSizeWant = "not a byte size (want a number with an optional unit such as 4k, 1MiB, 2GB)"

// ParseByteSize parses a byte count: a decimal number with an optional unit,
// case-insensitive, optionally separated from the number by spaces.
//
//	512, 512B         bytes
//	4k, 4KiB, 4Ki     1024-based, as in fio (likewise m, g, t, p, e)
//	2KB, 2MB, 2GB     1000-based (SI)
//	1.5GiB            a fraction is allowed if the result is a whole number of bytes
//
// Negative values, fractional byte counts and values beyond the range of an
// int64 are errors whose message names the value.
func ParseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "-") {
		return 0, badValue(s, "byte size must not be negative")
	}
	end := 0
	for end < len(t) && (t[end] >= '0' && t[end] <= '9' || t[end] == '.') {
		end++
	}
	num, unit := t[:end], strings.TrimSpace(t[end:])
	if !isDecimal(num) {
		return 0, badValue(s, byteSizeWant)
	}
	mult, ok := unitMultiplier(unit)
	if !ok {
		return 0, badValue(s, byteSizeWant)
	}
	// Exact arithmetic: digits * mult / 10^len(frac) must be a whole number.
	intPart, frac, _ := strings.Cut(num, ".")
	v, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return 0, badValue(s, byteSizeWant)
	}
	v.Mul(v, new(big.Int).SetInt64(mult))
	if frac != "" {
		den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
		var rem big.Int
		v.QuoRem(v, den, &rem)
		if rem.Sign() != 0 {
			return 0, badValue(s, "not a whole number of bytes")
		}
	}
	if !v.IsInt64() {
		return 0, badValue(s, "byte size out of range (at most "+strconv.FormatInt(math.MaxInt64, 10)+" bytes)")
	}
	return v.Int64(), nil
}

// unitMultiplier returns the size of a unit: "" or "b" for bytes; k, m, g,
// t, p, e alone or followed by "i" or "ib" for 1024-based units, followed by
// "b" for 1000-based units.
func unitMultiplier(unit string) (int64, bool) {
	u := strings.ToLower(unit)
	if u == "" || u == "b" {
		return 1, true
	}
	exp := strings.IndexByte("kmgtpe", u[0]) + 1
	if exp == 0 {
		return 0, false
	}
	var base int64
	switch u[1:] {
	case "", "i", "ib":
		base = 1024
	case "b":
		base = 1000
	default:
		return 0, false
	}
	m := int64(1)
	for range exp {
		m *= base // at most 1024^6 = 2^60: no overflow
	}
	return m, true
}

// FormatBytes renders n for people: "512 B", "4.00 KiB", "1.50 GiB", with two
// decimals in the largest IEC unit not above n. It is for messages and
// reports, not for reading back.
func FormatBytes(n int64) string {
	if n < 0 {
		if n == math.MinInt64 {
			return "-8.00 EiB"
		}
		return "-" + FormatBytes(-n)
	}
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	i := 0
	for i+1 < len(iecUnits) && n >= iecUnits[i+1].size {
		i++
	}
	f := float64(n) / float64(iecUnits[i].size)
	// 1048575 bytes is 1023.999 KiB: show "1.00 MiB", not "1024.00 KiB".
	if math.Round(f*100)/100 >= 1024 && i+1 < len(iecUnits) {
		i++
		f = float64(n) / float64(iecUnits[i].size)
	}
	return strconv.FormatFloat(f, 'f', 2, 64) + " " + iecUnits[i].name
}
