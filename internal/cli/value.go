package cli

import (
	"strconv"
	"strings"
)

// valueError is a malformed flag value. Its message names the value;
// ParseFlags replaces the quoted value by the flag and the value as typed.
type valueError struct {
	value  string
	reason string // what is wrong and what was expected
}

func (e *valueError) Error() string {
	return strconv.Quote(e.value) + ": " + e.reason
}

func badValue(value, reason string) error {
	return &valueError{value: value, reason: reason}
}

// isDecimal reports whether s is digits with an optional fraction: "12",
// "0.5". Signs, exponents, underscores and bare dots are not decimals.
func isDecimal(s string) bool {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if !allDigits(intPart) {
		return false
	}
	return !hasDot || allDigits(frac)
}

// allDigits reports whether s is a non-empty run of ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
