// Package schema owns the leaf types every kvbench tool shares: the trace
// Record and its enumerations (Op, Tier, Phase, QoS). It uses the standard
// library only, so any package may import it.
//
// The textual values accepted by the Parse functions are exactly those of the
// trace format contract v1 (design section 3): they are case-sensitive and
// frozen. A new value is a new format version.
package schema

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnknownValue is wrapped by every Parse function of this package when the
// text is not one of the type's values.
var ErrUnknownValue = errors.New("unknown value")

// Op is the operation of a trace row. The zero value is OpRead.
type Op uint8

// The operations of the trace format.
const (
	OpRead   Op  = iota // "Read": read the whole object from its tier
	OpWrite             // "Write": materialise the object on its tier
	OpDelete            // "Delete" (kvbench extension): the object leaves its tier
	NumOps   = 3        // number of Op values; Op values index arrays [NumOps]
)

var opNames = [NumOps]string{"Read", "Write", "Delete"}

// String returns the trace text of o ("Read", "Write", "Delete"), or
// "Op(n)" for a value outside the enumeration.
func (o Op) String() string {
	if o < NumOps {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Valid reports whether o is one of the defined operations.
func (o Op) Valid() bool { return o < NumOps }

// ParseOp parses the trace text of an operation. It accepts exactly "Read",
// "Write" and "Delete".
func ParseOp(s string) (Op, error) {
	if o, ok := ParseOpBytes([]byte(s)); ok {
		return o, nil
	}
	return 0, fmt.Errorf("schema: operation %q: %w (want Read, Write or Delete)", s, ErrUnknownValue)
}

// ParseOpBytes is ParseOp for a byte slice without allocating; ok is false
// when b is not an operation.
func ParseOpBytes(b []byte) (o Op, ok bool) {
	switch string(b) {
	case "Read":
		return OpRead, true
	case "Write":
		return OpWrite, true
	case "Delete":
		return OpDelete, true
	}
	return 0, false
}

// Tier is the storage tier of a trace row. The zero value is TierGPU.
type Tier uint8

// The tiers of the trace format.
const (
	TierGPU  Tier = iota // "Tier-0": GPU memory (HBM)
	TierCPU              // "Tier-1": CPU RAM
	TierNVMe             // "Tier-2": NVMe storage
	// TierObject, "Tier-3", is object storage (S3): an unbounded tier
	// below a bounded NVMe tier, which only kvtrace --object-tier writes
	// (the reference's traces, and kvtrace's without it, have three
	// tiers, and readers of three tiers read them).
	TierObject
	NumTiers = 4 // number of Tier values; Tier values index arrays [NumTiers]
)

var tierNames = [NumTiers]string{"Tier-0", "Tier-1", "Tier-2", "Tier-3"}
var tierShort = [NumTiers]string{"gpu", "cpu", "nvme", "object"}

// String returns the trace text of t ("Tier-0" to "Tier-3"), or
// "Tier(n)" for a value outside the enumeration.
func (t Tier) String() string {
	if t < NumTiers {
		return tierNames[t]
	}
	return fmt.Sprintf("Tier(%d)", uint8(t))
}

// Name returns the reference's short name of t: "gpu", "cpu" or "nvme"
// (and kvbench's "object" for Tier-3).
func (t Tier) Name() string {
	if t < NumTiers {
		return tierShort[t]
	}
	return t.String()
}

// TierChoices names the tiers for messages ("want " + TierChoices).
const TierChoices = "Tier-0, Tier-1, Tier-2 or Tier-3"

// Valid reports whether t is one of the defined tiers.
func (t Tier) Valid() bool { return t < NumTiers }

// ParseTier parses the trace text of a tier. It accepts exactly "Tier-0",
// "Tier-1", "Tier-2" and "Tier-3".
func ParseTier(s string) (Tier, error) {
	if t, ok := ParseTierBytes([]byte(s)); ok {
		return t, nil
	}
	return 0, fmt.Errorf("schema: tier %q: %w (want %s)", s, ErrUnknownValue, TierChoices)
}

// ParseTierBytes is ParseTier for a byte slice without allocating; ok is
// false when b is not a tier.
func ParseTierBytes(b []byte) (t Tier, ok bool) {
	if len(b) == 6 && string(b[:5]) == "Tier-" && b[5] >= '0' && b[5] < '0'+NumTiers {
		return Tier(b[5] - '0'), true
	}
	return 0, false
}

// Phase is the inference phase a trace row belongs to. The zero value is
// PhasePrefill.
type Phase uint8

// The phases of the trace format.
const (
	PhasePrefill Phase = iota // "Prefill": the KV object is produced and written
	PhaseDecode               // "Decode": the KV object is read back to generate tokens
	PhaseEvict                // "Evict": half of a demotion pair (Read on tier X, Write on tier Y)
	NumPhases    = 3          // number of Phase values; Phase values index arrays [NumPhases]
)

var phaseNames = [NumPhases]string{"Prefill", "Decode", "Evict"}

// String returns the trace text of p ("Prefill", "Decode", "Evict"), or
// "Phase(n)" for a value outside the enumeration.
func (p Phase) String() string {
	if p < NumPhases {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// Valid reports whether p is one of the defined phases.
func (p Phase) Valid() bool { return p < NumPhases }

// ParsePhase parses the trace text of a phase. It accepts exactly "Prefill",
// "Decode" and "Evict".
func ParsePhase(s string) (Phase, error) {
	if p, ok := ParsePhaseBytes([]byte(s)); ok {
		return p, nil
	}
	return 0, fmt.Errorf("schema: phase %q: %w (want Prefill, Decode or Evict)", s, ErrUnknownValue)
}

// ParsePhaseBytes is ParsePhase for a byte slice without allocating; ok is
// false when b is not a phase.
func ParsePhaseBytes(b []byte) (p Phase, ok bool) {
	switch string(b) {
	case "Prefill":
		return PhasePrefill, true
	case "Decode":
		return PhaseDecode, true
	case "Evict":
		return PhaseEvict, true
	}
	return 0, false
}

// QoS is the quality-of-service class of the request a row belongs to
// (kvbench extension). The zero value QoSNone means the trace does not say;
// it is written as an empty field.
type QoS uint8

// The QoS classes of the trace format, with the reference's SLA targets
// (reference section 3.6) noted.
const (
	QoSNone        QoS = iota // "": not given
	QoSInteractive            // "interactive"
	QoSResponsive             // "responsive"
	QoSBatch                  // "batch"
	NumQoS         = 4        // number of QoS values, QoSNone included
)

var qosNames = [NumQoS]string{"", "interactive", "responsive", "batch"}

// String returns the trace text of q: "" for QoSNone, "interactive",
// "responsive" or "batch", or "QoS(n)" outside the enumeration.
func (q QoS) String() string {
	if q < NumQoS {
		return qosNames[q]
	}
	return fmt.Sprintf("QoS(%d)", uint8(q))
}

// Valid reports whether q is one of the defined classes (QoSNone included).
func (q QoS) Valid() bool { return q < NumQoS }

// ParseQoS parses the trace text of a QoS class. It accepts exactly
// "interactive", "responsive", "batch", and "" for QoSNone.
func ParseQoS(s string) (QoS, error) {
	if q, ok := ParseQoSBytes([]byte(s)); ok {
		return q, nil
	}
	return 0, fmt.Errorf("schema: qos %q: %w (want interactive, responsive, batch or empty)", s, ErrUnknownValue)
}

// ParseQoSBytes is ParseQoS for a byte slice without allocating; ok is false
// when b is not a QoS class.
func ParseQoSBytes(b []byte) (q QoS, ok bool) {
	switch string(b) {
	case "":
		return QoSNone, true
	case "interactive":
		return QoSInteractive, true
	case "responsive":
		return QoSResponsive, true
	case "batch":
		return QoSBatch, true
	}
	return 0, false
}

// Record is one row of a trace: one whole-object operation on one tier.
//
// Records are plain values meant to be reused: readers fill a caller-owned
// Record and reuse the capacity of its Key slice, so a loop over a trace does
// not allocate. Copy Key (or the Record with a fresh Key) to keep it.
type Record struct {
	// Time is when the row is issued, from the start of the trace. Traces
	// with epoch timestamps (the reference) are normalised to their first
	// row, so a row slightly out of order may have a negative Time.
	Time time.Duration
	// Op is the operation.
	Op Op
	// Size is the whole object's size in bytes for one tensor-parallel rank;
	// it is the same on every row of a key and never negative.
	Size int64
	// Tier is the tier the operation applies to.
	Tier Tier
	// Key names the object: non-empty, no commas, no whitespace.
	Key []byte
	// Phase is the inference phase.
	Phase Phase
	// Request is the request the row belongs to (kvbench extension); 0 means
	// none. Rows of one request are issued in sequence by one worker.
	Request uint64
	// QoS is the request's class (kvbench extension); QoSNone if not given.
	QoS QoS
	// User is the user whose request the row belongs to (kvbench
	// extension); 0 means none (rows outside requests, requests no user
	// waits on). A user's requests run one after another in a closed-loop
	// replay.
	User uint64
	// Tokens is the number of tokens the row's request generates (kvbench
	// extension), the same on every row of a request; 0 when not given.
	Tokens int64
}

// String renders r on one line for messages and test failures.
func (r *Record) String() string {
	s := fmt.Sprintf("%.6f %s %d %s %s %s", r.Time.Seconds(), r.Op, r.Size, r.Tier, r.Key, r.Phase)
	if r.Request != 0 {
		s += fmt.Sprintf(" req=%d", r.Request)
	}
	if r.QoS != QoSNone {
		s += " qos=" + r.QoS.String()
	}
	if r.User != 0 {
		s += fmt.Sprintf(" user=%d", r.User)
	}
	if r.Tokens != 0 {
		s += fmt.Sprintf(" tokens=%d", r.Tokens)
	}
	return s
}
