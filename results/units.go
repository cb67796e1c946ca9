package results

import (
	"math"
	"strconv"
)

// FormatRate writes a bandwidth or an offered load in GB/s (10^9 bytes a
// second), the one unit of bytes per second in every kvbench output, to
// three significant digits: "0.276 GB/s", "4.00 GB/s", "1130 GB/s".
func FormatRate(bps float64) string {
	return FormatGB(bps) + " GB/s"
}

// FormatData writes an amount of data moved (bytes written or read) in GB
// (10^9 bytes), as every kvbench output does: "0.0105 GB", "12.3 GB".
// Sizes (an object's, a tier's peak, memory and free space) stay binary
// (cli.FormatBytes), as the flags that set them take them.
func FormatData(n int64) string {
	return FormatGB(float64(n)) + " GB"
}

// FormatGB is v bytes (or bytes a second) in GB, without the unit, to
// three significant digits (more before the point): for a table whose
// column names the unit.
func FormatGB(v float64) string {
	v /= GB
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', max(0, 2-int(math.Floor(math.Log10(v)))), 64)
}
