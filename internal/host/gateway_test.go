package host

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGateway names the program behind a FUSE mount with the first line of
// its --version, and only its name where it is not on PATH.
func TestGateway(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "fakefs")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho\necho 'fakefs 1.2 (test)'\necho more\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	for _, tt := range []struct{ fsType, source, want string }{
		{"fuse.fakefs", "fakefs", "fakefs: fakefs 1.2 (test)"},
		{"fuse", "/usr/bin/fakefs", "fakefs: fakefs 1.2 (test)"},
		{"fuse.s3fs", "s3fs", "s3fs"}, // not on this PATH
	} {
		if got := Gateway(tt.fsType, tt.source); got != tt.want {
			t.Errorf("Gateway(%q, %q) = %q, want %q", tt.fsType, tt.source, got, tt.want)
		}
	}
}
