package replay

import (
	"github.com/kvbench/kvbench/trace"
)

// A trace's identity is the SHA-256 of its content, the CSV text (after
// zstd decompression for a compressed trace), taken by the trace's Reader
// (trace.Reader.Digest) while the prescan reads it, or while the replay
// reads a trace read only once (a pipe): two results replayed the same
// trace when their digests are equal, whether the trace came as a .zst
// file or decompressed on a pipe. Hashing costs a fraction of parsing
// (SHA-256 runs at GB/s with the CPU's SHA instructions) and needs no extra
// pass over the trace.

// digester is the digest a Reader takes of the trace it reads.
type digester struct{ r *trace.Reader }

// sum returns the hex digest and the bytes hashed; ok is false until the
// content was read to its end.
func (d *digester) sum() (digest string, n int64, ok bool) {
	if d == nil {
		return "", 0, false
	}
	return d.r.ContentDigest()
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
	r = trace.NewReader(raw)
	r.Name, r.MaxSize, r.Digest = s.Name, s.maxSize, true
	return r, &digester{r}, func() error {
		err := r.Close()
		if e := raw.Close(); err == nil {
			err = e
		}
		return err
	}, nil
}
