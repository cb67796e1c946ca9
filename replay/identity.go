package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"

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

// openSource opens s from its start: through s.Stored, hashing the
// content (the trace's Reader decompresses a zstd stream, and its errors
// say where in the stream a corrupt one fails), when it has that; else
// with s.Open and no digest. close closes everything it opened.
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
	d = &digester{h: sha256.New()}
	r = trace.NewReader(raw)
	r.Name, r.MaxSize = s.Name, s.maxSize
	r.WrapContent = func(content io.Reader) io.Reader {
		d.r = content
		return d
	}
	return r, d, func() error {
		err := r.Close()
		if e := raw.Close(); err == nil {
			err = e
		}
		return err
	}, nil
}
