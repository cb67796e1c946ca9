package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestZstdFlag: --zstd compresses the trace whatever -o names, stdout
// included (a pipe to kvreplay then tells a cut trace from its end), into
// the same CSV text as the plain trace.
func TestZstdFlag(t *testing.T) {
	args := []string{"--num-users", "2", "--duration", "3", "--generation-mode", "none", "--gpu-mem-gb", "0", "--seed", "3"}
	plain, stderr, code := runKvtrace(t, args...)
	if code != 0 || len(plain) == 0 {
		t.Fatalf("plain: exit %d: %s", code, stderr)
	}
	file := filepath.Join(t.TempDir(), "t.csv")
	for _, tt := range []struct {
		name string
		out  []string
	}{
		{"stdout", nil},
		{"a name without .zst", []string{"-o", file}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runKvtrace(t, append(append([]string{"--zstd"}, tt.out...), args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := []byte(stdout)
			if tt.out != nil {
				var err error
				if got, err = os.ReadFile(file); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.HasPrefix(got, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
				t.Fatalf("not a zstd stream: % x", got[:min(8, len(got))])
			}
			d, err := zstd.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			text, err := io.ReadAll(d)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(text, []byte(plain)) {
				t.Errorf("decompressed %d bytes differ from the plain trace's %d", len(text), len(plain))
			}
		})
	}
}
