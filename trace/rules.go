package trace

import "github.com/kvbench/kvbench/schema"

// ScaledSize is the size an object of size bytes has at a size scale
// (kvreplay's and kvtrace export's --size-scale, at most 1): size times
// scale, truncated to whole bytes; scale 1 is the size itself, exactly.
// Every tool that scales a trace's objects scales them by this rule, so
// that a replay and an export of one trace at one scale move the same
// bytes.
func ScaledSize(size int64, scale float64) int64 {
	if scale == 1 {
		return size
	}
	return int64(float64(size) * scale)
}

// ColdRead reports whether a row makes its key a cold object: a Read that
// is the key's first row in the trace (first), of an object no row wrote.
// A replay puts a cold object on the read's tier, untimed, before its
// clock starts, and so does an export's preparation. A Read after the
// key's Delete is not cold, though the object is gone: a row wrote it
// before, and a replay writes it again, untimed, when the read comes.
func ColdRead(op schema.Op, first bool) bool {
	return first && op == schema.OpRead
}
