package replay

import (
	"errors"
	"fmt"

	"github.com/kvbench/kvbench/schema"
)

// The errors a run stops with that a caller may test for (errors.Is);
// the messages that wrap them say what to do.
var (
	// ErrUnmappedTier stops a run whose trace has rows on a tier
	// --tier-map maps to no backend.
	ErrUnmappedTier = errors.New("tier mapped to no backend")
	// ErrNoUsers stops a closed-loop replay of a trace that does not say
	// which user each request belongs to.
	ErrNoUsers = errors.New("the trace names no users")
	// ErrVerify is wrapped by a VerifyError: bytes read differ from what
	// was written.
	ErrVerify = errors.New("verify: data differs from what was written")
	// ErrShortTrace marks a run incomplete whose trace ended before the
	// row count its sidecar gives (a trace cut short, at a line boundary,
	// parses as a shorter trace): a result of part of the trace, never a
	// PASS.
	ErrShortTrace = errors.New("the trace ended before its sidecar's count")
	// ErrSidecarMismatch stops, before any I/O, a replay whose prescan
	// read a trace to its end and counted other rows than its sidecar:
	// the sidecar describes another trace (its model, its bytes per
	// token), or the trace was cut short.
	ErrSidecarMismatch = errors.New("the trace is not the one its sidecar describes")
)

// unmapped is the ErrUnmappedTier of rows rows on tier t.
func unmapped(t schema.Tier, rows int64) error {
	return fmt.Errorf("replay: the trace has %d %s rows and %s is mapped to no backend: add --tier-map %s=%s%s: %w",
		rows, t, t, t, StandIn(t), TierHint(t), ErrUnmappedTier)
}

// StandIn is the backend that serves tier t's rows where the machine has
// none of its own (kvreplay --fit): RAM for GPU memory, the NVMe tier's
// drive for object storage (Tier-3), whose objects are large and many.
func StandIn(t schema.Tier) string {
	if t == schema.TierObject {
		return "nvme"
	}
	return "ram"
}

// TierHint says what else serves tier t, for messages: " (or gpu on a
// machine with a GPU)".
func TierHint(t schema.Tier) string {
	switch t {
	case schema.TierGPU:
		return " (or gpu on a machine with a GPU)"
	case schema.TierObject:
		return " (or s3 with --s3-bucket, for an object store)"
	}
	return ""
}

// noUsers is the ErrNoUsers of the trace name.
func noUsers(name string) error { return &NoUsersError{Trace: name} }

// NoUsersError stops a closed-loop replay of Trace, which has no User
// column (ErrNoUsers, which it wraps): its message says why a closed loop
// needs one and what to do instead; a caller that knows why the loop was
// closed (kvreplay --search users) says it in its own words, from Trace
// and NoUsersWhy.
type NoUsersError struct{ Trace string }

// NoUsersWhy says why a trace without a User column cannot be replayed
// closed-loop.
const NoUsersWhy = "which requests wait for which cannot be known " +
	"(kv-cache.py's traces name users in their keys but not which rows make one request, and its worker threads interleave them)"

func (e *NoUsersError) Error() string {
	return fmt.Sprintf("replay: --closed-loop: %s has no User column, so %s: replay it open-loop, or make the trace with kvtrace, "+
		"which writes Request and User: %v", e.Trace, NoUsersWhy, ErrNoUsers)
}

func (e *NoUsersError) Unwrap() error { return ErrNoUsers }

// VerifyError reports the first differing byte of a read with --verify.
type VerifyError struct {
	Key     string
	Tier    schema.Tier
	Version uint64
	Offset  int64  // the object offset of the first differing byte
	Got     []byte // up to 16 bytes read from Offset
	Want    []byte // the bytes written there
}

func (v *VerifyError) Error() string {
	return fmt.Sprintf("verify: key %s on %s: byte %d differs (version %d): read %x, written %x",
		v.Key, v.Tier, v.Offset, v.Version, v.Got, v.Want)
}

// Unwrap returns ErrVerify.
func (v *VerifyError) Unwrap() error { return ErrVerify }
