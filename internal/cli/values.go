package cli

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Seconds is a duration given on the command line, such as --duration 600.
// A bare number means seconds ("60", "0.5"); anything else is a Go duration
// ("10m", "1h30m", "250ms"). Negative durations are refused. It implements
// pflag.Value.
type Seconds time.Duration

const secondsWant = "not a duration (want seconds such as 60 or 0.5, or a duration such as 10m, 1h30m, 250ms)"

// Set parses s and stores the result.
func (d *Seconds) Set(s string) error {
	v, err := parseSeconds(s)
	if err != nil {
		return err
	}
	*d = Seconds(v)
	return nil
}

func parseSeconds(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "-") {
		return 0, badValue(s, "duration must not be negative")
	}
	if isDecimal(t) {
		if f, err := strconv.ParseFloat(t, 64); err != nil || f >= float64(math.MaxInt64)/1e9 {
			return 0, badValue(s, "duration out of range (at most 292 years)")
		}
		// time.ParseDuration is exact on decimal fractions.
		t += "s"
	}
	v, err := time.ParseDuration(t)
	if err != nil {
		return 0, badValue(s, secondsWant)
	}
	if v < 0 {
		return 0, badValue(s, "duration must not be negative")
	}
	return v, nil
}

// String renders d as a Go duration ("10m0s", "500ms"), and zero as "0",
// which pflag's help takes for no default.
func (d Seconds) String() string {
	if d == 0 {
		return "0"
	}
	return time.Duration(d).String()
}

// Type returns "duration", the name pflag shows in usage text.
func (d *Seconds) Type() string { return "duration" }

// Duration returns d as a time.Duration.
func (d Seconds) Duration() time.Duration { return time.Duration(d) }

// Speed is the replay speed factor of --speed: "max" (stored as 0) issues
// rows as fast as ordering and concurrency allow; a positive number N issues
// them N times faster than their timestamps ("1" is real time). It
// implements pflag.Value.
type Speed float64

// SpeedMax is the Speed value of "max".
const SpeedMax Speed = 0

const speedWant = "not a speed (want max or a positive factor such as 1 or 2.5)"

// Set parses "max" (any case) or a positive decimal number and stores it.
func (v *Speed) Set(s string) error {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "max") {
		*v = SpeedMax
		return nil
	}
	if strings.HasPrefix(t, "-") {
		return badValue(s, "speed must be positive (want max or a factor such as 1 or 2.5)")
	}
	if !isDecimal(t) {
		return badValue(s, speedWant)
	}
	f, err := strconv.ParseFloat(t, 64)
	switch {
	case err != nil || math.IsInf(f, 0):
		return badValue(s, "speed out of range")
	case f <= 0:
		return badValue(s, "speed must be positive (want max or a factor such as 1 or 2.5)")
	}
	*v = Speed(f)
	return nil
}

// String returns "max" for SpeedMax and the factor otherwise ("1", "2.5"),
// as a decimal without an exponent, so that Set reads it back.
func (v Speed) String() string {
	if v <= 0 {
		return "max"
	}
	return strconv.FormatFloat(float64(v), 'f', -1, 64)
}

// Type returns "speed", the name pflag shows in usage text.
func (v *Speed) Type() string { return "speed" }

// IsMax reports whether v is "max".
func (v Speed) IsMax() bool { return v <= 0 }

// KeyValue is one key=value pair of a KeyValues list.
type KeyValue struct {
	Key, Value string
}

// KeyValues is a comma-separated list of key=value pairs given on the
// command line, such as --tier-map Tier-0=ram,Tier-1=ram,Tier-2=nvme. It
// keeps the order given and refuses empty keys, empty values and keys given
// twice. Repeating the flag appends to the list. A key given on the command
// line overrides that key's default from NewKeyValues, in its place, and
// keeps the other defaults: with defaults Tier-1=ram,Tier-2=nvme,
// --tier-map Tier-0=ram gives Tier-1=ram,Tier-2=nvme,Tier-0=ram. It
// implements pflag.Value. The zero value is an empty list ready to use.
type KeyValues struct {
	pairs []KeyValue
	given map[string]bool // keys given on the command line
}

// NewKeyValues returns a list holding the given defaults.
func NewKeyValues(defaults ...KeyValue) *KeyValues {
	return &KeyValues{pairs: append([]KeyValue(nil), defaults...)}
}

const keyValuesWant = "want key=value pairs separated by commas, such as Tier-0=ram,Tier-2=nvme"

// Set parses s and merges its pairs into the list. On error the list is
// unchanged.
func (kv *KeyValues) Set(s string) error {
	pairs := append([]KeyValue(nil), kv.pairs...)
	given := map[string]bool{}
	if strings.TrimSpace(s) == "" {
		return badValue(s, "empty list ("+keyValuesWant+")")
	}
	for item := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case strings.TrimSpace(item) == "":
			return badValue(s, "empty item ("+keyValuesWant+")")
		case !ok:
			return badValue(s, strconv.Quote(strings.TrimSpace(item))+" has no '=' ("+keyValuesWant+")")
		case k == "":
			return badValue(s, strconv.Quote(strings.TrimSpace(item))+" has an empty key")
		case v == "":
			return badValue(s, "key "+strconv.Quote(k)+" has an empty value")
		case given[k] || kv.given[k]:
			return badValue(s, "key "+strconv.Quote(k)+" given twice")
		}
		given[k] = true
		i := slices.IndexFunc(pairs, func(p KeyValue) bool { return p.Key == k })
		if i >= 0 {
			pairs[i].Value = v // a default overridden
		} else {
			pairs = append(pairs, KeyValue{Key: k, Value: v})
		}
	}
	if kv.given == nil {
		kv.given = map[string]bool{}
	}
	for k := range given {
		kv.given[k] = true
	}
	kv.pairs = pairs
	return nil
}

// String renders the list as it is parsed: "k1=v1,k2=v2".
func (kv *KeyValues) String() string {
	if kv == nil {
		return ""
	}
	var b strings.Builder
	for i, p := range kv.pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		b.WriteString(p.Value)
	}
	return b.String()
}

// Type returns "list", the name pflag shows in usage text.
func (kv *KeyValues) Type() string { return "list" }

// Pairs returns a copy of the pairs in the order given.
func (kv *KeyValues) Pairs() []KeyValue {
	if kv == nil {
		return nil
	}
	return append([]KeyValue(nil), kv.pairs...)
}

// Get returns the value of key and whether the list holds it.
func (kv *KeyValues) Get(key string) (string, bool) {
	if kv == nil {
		return "", false
	}
	for _, p := range kv.pairs {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// Len returns the number of pairs.
func (kv *KeyValues) Len() int {
	if kv == nil {
		return 0
	}
	return len(kv.pairs)
}
