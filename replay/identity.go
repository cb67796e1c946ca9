package replay

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/kvbench/kvbench/trace"
)

// A trace's identity is the SHA-256 of its content, the CSV text (after
// zstd decompression for a compressed trace), taken while the prescan
// reads it, or while the replay reads a trace read only once (a pipe): two
// results replayed the same trace when their digests are equal, whether
// the trace came as a .zst file or decompressed on a pipe. Hashing costs a
// fraction of parsing (SHA-256 runs at GB/s with the CPU's SHA
// instructions) and needs no extra pass over the trace.

// digester hashes and counts the bytes read through it.
type digester struct {
	r   io.Reader
	h   hash.Hash
	n   int64
	eof bool
	// compressed reports that the stored bytes were a zstd stream.
	compressed bool
}

func (d *digester) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.h.Write(p[:n])
	d.n += int64(n)
	if err == io.EOF {
		d.eof = true
	}
	return n, err
}

// sum returns the hex digest and the bytes hashed; ok is false until the
// content was read to its end.
func (d *digester) sum() (digest string, n int64, ok bool) {
	if d == nil || !d.eof {
		return "", 0, false
	}
	return hex.EncodeToString(d.h.Sum(nil)), d.n, true
}

// zstdMagic starts every zstd frame (RFC 8878 section 3.1.1).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// openSource opens s from its start: through s.Stored, decompressing a
// zstd stream and hashing the content, when it has that; else with s.Open
// and no digest. close closes everything it opened.
func openSource(s Source) (r *trace.Reader, d *digester, close func() error, err error) {
	if s.Stored == nil {
		r, err := s.Open()
		if err != nil {
			return nil, nil, nil, err
		}
		return r, nil, r.Close, nil
	}
	raw, err := s.Stored()
	if err != nil {
		return nil, nil, nil, err
	}
	br := bufio.NewReaderSize(raw, 128<<10)
	d = &digester{r: br, h: sha256.New()}
	var dec *zstd.Decoder
	if magic, _ := br.Peek(len(zstdMagic)); bytes.Equal(magic, zstdMagic) {
		// One goroutine, as the trace's own reader decodes.
		if dec, err = zstd.NewReader(br, zstd.WithDecoderConcurrency(1)); err != nil {
			raw.Close()
			return nil, nil, nil, fmt.Errorf("trace: %s: zstd: %w", s.Name, err)
		}
		d.r, d.compressed = dec, true
	}
	r = trace.NewReader(d)
	r.Name, r.MaxSize = s.Name, s.maxSize
	return r, d, func() error {
		err := r.Close()
		if dec != nil {
			dec.Close()
		}
		if e := raw.Close(); err == nil {
			err = e
		}
		return err
	}, nil
}
