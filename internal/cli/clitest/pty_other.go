//go:build !linux

package clitest

import (
	"os"
	"testing"
)

// Terminal skips t: pseudo-terminals are made on Linux only.
func Terminal(t testing.TB) *os.File {
	t.Skip("pseudo-terminals are made on Linux only")
	return nil
}
