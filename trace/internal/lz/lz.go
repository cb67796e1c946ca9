// Package lz is what trace's row encoder (a match finder) hands to a zstd
// block coder: each block as its literals and its sequences (RFC 8878
// 3.1.1.3.2.1), or raw, and the Coder that writes them. It holds no
// entropy coder, so that package trace, and the replay engine that reads
// traces through it, link none: package trace/zst registers
// internal/zstdblock's Writer as the Coder of kvbench's row encoder.
package lz

// MaxBlock is the zstd format's largest block: the most content one Block
// may describe.
const MaxBlock = 128 << 10

// Sequence is a zstd sequence: LitLen literals, then a match.
type Sequence struct {
	LitLen  uint32 // literals before the match
	MLBase  uint32 // the match's length minus 3, the format's shortest match
	OffBase uint32 // the offset plus 3, or a repeat code 1 to 3 (RFC 8878 3.1.1.5)
}

// Extend makes the match n bytes longer.
func (s *Sequence) Extend(n uint32) { s.MLBase += n }

// Block is a block to write: a frame header before it, if any (Head),
// then its literals and sequences, or its content when it is Raw (a raw
// block leaves the repeat offsets as they were before it). Last ends the
// frame.
type Block struct {
	Head []byte
	Lits []byte
	Seqs []Sequence
	Raw  []byte
	Last bool
}

// Coder codes and writes blocks in the order they are sent. Its methods
// are for one goroutine; Close must be called.
type Coder interface {
	// NewBlock returns an empty Block, perhaps one written before.
	NewBlock() *Block
	// Send queues b after the blocks sent before it; the Coder owns b
	// from then on.
	Send(b *Block)
	// Sync waits until every block sent is written, and returns Err.
	Sync() error
	// Close ends the Coder once every block sent is written, and returns
	// Err. It does not close the writer the Coder writes to.
	Close() error
	// Err is the first error of the writer the Coder writes to; the
	// blocks sent after it are dropped.
	Err() error
}

// FrameHeader appends the zstd magic and a frame header without checksum
// or content size, whose window is 1<<windowLog bytes (10 to 41).
func FrameHeader(b []byte, windowLog uint8) []byte {
	return append(b, 0x28, 0xb5, 0x2f, 0xfd, 0x00, (windowLog-10)<<3)
}

// Bound is the most bytes a compressed zstd block of lits literals and
// seqs sequences may take: the literals raw, at most 10 bytes a sequence
// (26 state bits and 54 extra bits), and three table descriptions. A
// block whose content is no longer is better written raw.
func Bound(lits, seqs int) int { return lits + 5 + 4 + 3*80 + 10*seqs }
