package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/kvbench/kvbench/schema"
	// The codec for every test of the package, in and out of it (one test
	// binary): the engine links none, its mains do.
	_ "github.com/kvbench/kvbench/trace/zst"
)

// TestTraceIdentity: a trace's digest is its content's, the same for the
// trace compressed and plain, known only once the trace was read to its
// end; a trace stopped part way is marked read in part.
func TestTraceIdentity(t *testing.T) {
	plain := []byte("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n" +
		"0.000001,Write,4096,Tier-1,a,Prefill\n0.000002,Read,4096,Tier-1,a,Decode\n0.000003,Read,4096,Tier-1,a,Decode\n")
	var zbuf bytes.Buffer
	zw, err := zstd.NewWriter(&zbuf)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(plain)
	zw.Close()
	sum := sha256.Sum256(plain)
	want := hex.EncodeToString(sum[:])
	for _, tt := range []struct {
		name       string
		stored     []byte
		compressed bool
	}{{"plain", plain, false}, {"zstd", zbuf.Bytes(), true}} {
		t.Run(tt.name, func(t *testing.T) {
			src := Source{Name: tt.name, Stored: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tt.stored)), nil }}
			r, d, closeTrace, err := openSource(src)
			if err != nil {
				t.Fatal(err)
			}
			var rec schema.Record
			if err := r.Read(&rec); err != nil {
				t.Fatal(err)
			}
			if part := readInfo(src.Name, r, d); part.SHA256 != "" {
				t.Errorf("a digest before the end: %+v", part)
			}
			for err == nil {
				err = r.Read(&rec)
			}
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			info := readInfo(src.Name, r, d)
			if info.SHA256 != want || info.SizeBytes != int64(len(plain)) || info.Rows != 3 || info.Compressed != tt.compressed {
				t.Errorf("%+v, want sha256 %s of %d bytes, 3 rows, compressed %v", info, want, len(plain), tt.compressed)
			}
			if err := closeTrace(); err != nil {
				t.Error(err)
			}
		})
	}
}
