package schema_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// The exact texts of the trace format contract v1 (design section 3), in
// value order. They are written out here, not taken from the package, so
// that a change of the package's tables fails these tests.
var (
	opTexts    = []string{"Read", "Write", "Delete"}
	tierTexts  = []string{"Tier-0", "Tier-1", "Tier-2", "Tier-3"}
	phaseTexts = []string{"Prefill", "Decode", "Evict"}
	qosTexts   = []string{"", "interactive", "responsive", "batch"}
)

// enumCase adapts one enumeration to a common shape.
type enumCase struct {
	name   string
	texts  []string
	num    int
	parse  func(string) (uint8, error)
	bytes  func([]byte) (uint8, bool)
	str    func(uint8) string
	valid  func(uint8) bool
	outFmt string // String of an out-of-range value, with %d
}

func enums() []enumCase {
	return []enumCase{
		{
			name: "Op", texts: opTexts, num: schema.NumOps,
			parse: func(s string) (uint8, error) { v, err := schema.ParseOp(s); return uint8(v), err },
			bytes: func(b []byte) (uint8, bool) { v, ok := schema.ParseOpBytes(b); return uint8(v), ok },
			str:   func(v uint8) string { return schema.Op(v).String() },
			valid: func(v uint8) bool { return schema.Op(v).Valid() },
		},
		{
			name: "Tier", texts: tierTexts, num: schema.NumTiers,
			parse: func(s string) (uint8, error) { v, err := schema.ParseTier(s); return uint8(v), err },
			bytes: func(b []byte) (uint8, bool) { v, ok := schema.ParseTierBytes(b); return uint8(v), ok },
			str:   func(v uint8) string { return schema.Tier(v).String() },
			valid: func(v uint8) bool { return schema.Tier(v).Valid() },
		},
		{
			name: "Phase", texts: phaseTexts, num: schema.NumPhases,
			parse: func(s string) (uint8, error) { v, err := schema.ParsePhase(s); return uint8(v), err },
			bytes: func(b []byte) (uint8, bool) { v, ok := schema.ParsePhaseBytes(b); return uint8(v), ok },
			str:   func(v uint8) string { return schema.Phase(v).String() },
			valid: func(v uint8) bool { return schema.Phase(v).Valid() },
		},
		{
			name: "QoS", texts: qosTexts, num: schema.NumQoS,
			parse: func(s string) (uint8, error) { v, err := schema.ParseQoS(s); return uint8(v), err },
			bytes: func(b []byte) (uint8, bool) { v, ok := schema.ParseQoSBytes(b); return uint8(v), ok },
			str:   func(v uint8) string { return schema.QoS(v).String() },
			valid: func(v uint8) bool { return schema.QoS(v).Valid() },
		},
	}
}

func TestEnumValues(t *testing.T) {
	for _, e := range enums() {
		t.Run(e.name, func(t *testing.T) {
			if e.num != len(e.texts) {
				t.Fatalf("Num = %d, want %d values", e.num, len(e.texts))
			}
			for i, text := range e.texts {
				v := uint8(i)
				if got := e.str(v); got != text {
					t.Errorf("%s(%d).String() = %q, want %q", e.name, i, got, text)
				}
				if !e.valid(v) {
					t.Errorf("%s(%d).Valid() = false", e.name, i)
				}
				got, err := e.parse(text)
				if err != nil || got != v {
					t.Errorf("Parse%s(%q) = %d, %v; want %d, nil", e.name, text, got, err, i)
				}
				got, ok := e.bytes([]byte(text))
				if !ok || got != v {
					t.Errorf("Parse%sBytes(%q) = %d, %v; want %d, true", e.name, text, got, ok, i)
				}
			}
			// Out of range values are not valid and render as Name(n).
			for _, v := range []uint8{uint8(e.num), uint8(e.num) + 4, 255} {
				if e.valid(v) {
					t.Errorf("%s(%d).Valid() = true", e.name, v)
				}
				want := e.name + "(" + strconv.Itoa(int(v)) + ")"
				if got := e.str(v); got != want {
					t.Errorf("%s(%d).String() = %q, want %q", e.name, v, got, want)
				}
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		enum string
		in   string
	}{
		{"Op", "read"},
		{"Op", "READ"},
		{"Op", " Read"},
		{"Op", "Read "},
		{"Op", "Read\r"},
		{"Op", "Both"},
		{"Op", ""},
		{"Op", "Del"},
		{"Op", "Evict"},
		{"Tier", "Tier-4"},
		{"Tier", "tier-0"},
		{"Tier", "Tier-"},
		{"Tier", "Tier-00"},
		{"Tier", "Tier-/"},
		{"Tier", "Tier0"},
		{"Tier", " Tier-1"},
		{"Tier", "gpu"},
		{"Tier", ""},
		{"Phase", "Both"},
		{"Phase", "prefill"},
		{"Phase", "Decode "},
		{"Phase", "Eviction"},
		{"Phase", ""},
		{"QoS", "Interactive"},
		{"QoS", "none"},
		{"QoS", " "},
		{"QoS", "batch "},
		{"QoS", "Both"},
	}
	byName := map[string]enumCase{}
	for _, e := range enums() {
		byName[e.name] = e
	}
	for _, tt := range tests {
		t.Run(tt.enum+"/"+tt.in, func(t *testing.T) {
			e := byName[tt.enum]
			v, err := e.parse(tt.in)
			if err == nil {
				t.Fatalf("Parse%s(%q) = %d, nil; want an error", tt.enum, tt.in, v)
			}
			if !errors.Is(err, schema.ErrUnknownValue) {
				t.Errorf("Parse%s(%q) error %v does not wrap ErrUnknownValue", tt.enum, tt.in, err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(tt.in)) {
				t.Errorf("Parse%s(%q) error %q does not quote the input", tt.enum, tt.in, err)
			}
			if v, ok := e.bytes([]byte(tt.in)); ok {
				t.Errorf("Parse%sBytes(%q) = %d, true; want false", tt.enum, tt.in, v)
			}
		})
	}
}

func TestTierName(t *testing.T) {
	want := []string{"gpu", "cpu", "nvme"}
	for i, w := range want {
		if got := schema.Tier(i).Name(); got != w {
			t.Errorf("Tier(%d).Name() = %q, want %q", i, got, w)
		}
	}
	if got := schema.Tier(4).Name(); got != "Tier(4)" {
		t.Errorf("Tier(4).Name() = %q, want %q", got, "Tier(4)")
	}
}

func TestZeroValues(t *testing.T) {
	var r schema.Record
	if r.Op != schema.OpRead || r.Tier != schema.TierGPU || r.Phase != schema.PhasePrefill || r.QoS != schema.QoSNone {
		t.Errorf("zero Record = %+v, want Read Tier-0 Prefill QoSNone", r)
	}
	if schema.QoSNone.String() != "" {
		t.Errorf("QoSNone.String() = %q, want empty", schema.QoSNone.String())
	}
}

func TestRecordString(t *testing.T) {
	tests := []struct {
		rec  schema.Record
		want string
	}{
		{
			schema.Record{Time: 1500 * time.Millisecond, Op: schema.OpWrite, Size: 42, Tier: schema.TierCPU, Key: []byte("k1"), Phase: schema.PhasePrefill},
			"1.500000 Write 42 Tier-1 k1 Prefill",
		},
		{
			schema.Record{Time: 2 * time.Microsecond, Op: schema.OpDelete, Size: 0, Tier: schema.TierNVMe, Key: []byte("x"), Phase: schema.PhaseEvict, Request: 7, QoS: schema.QoSBatch},
			"0.000002 Delete 0 Tier-2 x Evict req=7 qos=batch",
		},
	}
	for _, tt := range tests {
		if got := tt.rec.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		if strings.Contains(tt.rec.String(), "\n") {
			t.Errorf("String() %q is not one line", tt.rec.String())
		}
	}
}

// FuzzParseEnums checks that each Parse function accepts exactly the
// format's texts, that String round-trips every accepted text, and that the
// string and byte-slice parsers agree.
func FuzzParseEnums(f *testing.F) {
	for _, e := range enums() {
		for _, s := range e.texts {
			f.Add(s)
			f.Add(strings.ToLower(s))
			f.Add(s + " ")
		}
	}
	for _, s := range []string{"read", "Tier-4", "Both", " Read", "Tier-9", "Tier-\x00", "\xffRead"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range enums() {
			want := -1
			for i, text := range e.texts {
				if s == text {
					want = i
				}
			}
			v, err := e.parse(s)
			bv, ok := e.bytes([]byte(s))
			if want < 0 {
				if err == nil || ok {
					t.Fatalf("%s: %q accepted as %d/%d; not a value of the format", e.name, s, v, bv)
				}
				if !errors.Is(err, schema.ErrUnknownValue) {
					t.Fatalf("%s: %q: error %v does not wrap ErrUnknownValue", e.name, s, err)
				}
				continue
			}
			if err != nil || !ok || v != uint8(want) || bv != uint8(want) {
				t.Fatalf("%s: %q = %d, %v / %d, %v; want %d", e.name, s, v, err, bv, ok, want)
			}
			if got := e.str(v); got != s {
				t.Fatalf("%s: String(Parse(%q)) = %q", e.name, s, got)
			}
			if !e.valid(v) {
				t.Fatalf("%s: Parse(%q) = %d is not Valid", e.name, s, v)
			}
		}
	})
}
