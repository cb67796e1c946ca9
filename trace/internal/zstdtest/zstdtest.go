// Package zstdtest decodes zstd for the tests of kvbench's own zstd
// writers (trace's row encoder, internal/zstdblock): with the zstd
// library, and with the zstd command too when it is installed, so that a
// frame two independent decoders read is what the tests compare.
package zstdtest

import (
	"bytes"
	"io"
	"os/exec"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Decode returns what enc decodes to, failing tb when a decoder refuses it
// or the two decoders disagree.
func Decode(tb testing.TB, enc []byte) []byte {
	tb.Helper()
	d, err := zstd.NewReader(bytes.NewReader(enc))
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	got, err := io.ReadAll(d)
	if err != nil {
		tb.Fatalf("zstd library: %v", err)
	}
	if path, err := exec.LookPath("zstd"); err == nil {
		cmd := exec.Command(path, "-d", "-c", "-q")
		cmd.Stdin = bytes.NewReader(enc)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cli, err := cmd.Output()
		if err != nil {
			tb.Fatalf("zstd command: %v: %s", err, errb.String())
		}
		if !bytes.Equal(cli, got) {
			tb.Fatalf("the zstd command decodes %d bytes, the library %d", len(cli), len(got))
		}
	}
	return got
}
