package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// Fraction parses the value s of flag (kvreplay's and kvtrace export's
// --size-scale) as a number ("0.25") or a fraction ("1/1024"): one parser,
// so that the tools read one scale alike. It refuses what is not a finite
// number and a zero denominator, naming the flag and the value; the range
// (--size-scale is at most 1) is the caller's Validate's.
func Fraction(flag, s string) (float64, error) {
	want := fmt.Errorf("%s %s: want a number or a fraction such as 1/1024", flag, parsemsg.Arg(s))
	num, den, isFrac := strings.Cut(strings.TrimSpace(s), "/")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, want
	}
	if isFrac {
		d, err := strconv.ParseFloat(den, 64)
		if err != nil || d == 0 || math.IsNaN(d) || math.IsInf(d, 0) {
			return 0, want
		}
		if v /= d; math.IsInf(v, 0) {
			return 0, want
		}
	}
	return v, nil
}
