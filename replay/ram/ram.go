// Package ram owns the Tier-1 (CPU RAM) replay backend: one anonymous
// mmap arena of a fixed capacity, placed and copied by replay/arena's
// rules (objects in extents of the arena, never failing from
// fragmentation; Align 4096; memcpy in and out; design section 5).
//
// Freed extents keep their pages: once the arena has been written through,
// later writes take no page faults. The first write to a page does (the
// kernel zeroes it), unless New was given Populate.
package ram

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/replay/arena"
)

// Align is the alignment the RAM backend declares and enforces: a page.
const Align = arena.Align

// config is what the options set.
type config struct {
	populate  bool
	first     int64 // PopulateFirst's bytes
	noReserve bool
	hugePages bool
}

// Option configures New.
type Option func(*config)

// Populate prefaults the whole arena at New (MAP_POPULATE), so that no
// first-touch page fault lands in a measured write; the arena's memory is
// then committed at once, and New takes about as long as writing it.
func Populate() Option { return func(c *config) { c.populate = true } }

// PopulateFirst prefaults the arena's first n bytes at New, as Populate
// does the whole arena, and leaves the rest to be committed as objects
// first use it: the arena places objects first fit by address, so they
// fill it from the start, and an arena sized above what a replay is sure
// to keep live (a closed loop's, replay.ArenaBytes) commits no more
// memory than the replay uses, and takes first-touch page faults only
// past the bytes prefaulted.
func PopulateFirst(n int64) Option { return func(c *config) { c.first = n } }

// NoReserve maps the arena with MAP_NORESERVE: no swap is reserved for it,
// so an arena bigger than the memory the kernel would promise maps, and
// running out of memory later means the OOM killer rather than an error
// from New. Without it, an arena the kernel cannot promise fails at New.
func NoReserve() Option { return func(c *config) { c.noReserve = true } }

// HugePages asks for transparent huge pages on the arena
// (madvise(MADV_HUGEPAGE)): fewer page faults and TLB misses. Where THP is
// disabled it does nothing.
func HugePages() Option { return func(c *config) { c.hugePages = true } }

// New maps an arena of capacity bytes, rounded up to a multiple of Align.
func New(capacity int64, opts ...Option) (*arena.Backend, error) {
	if capacity <= 0 {
		return nil, fmt.Errorf("ram: capacity %d: must be positive", capacity)
	}
	size := (capacity + Align - 1) / Align * Align
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("ram: capacity %d: too big for this platform", capacity)
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	flags := unix.MAP_PRIVATE | unix.MAP_ANONYMOUS
	if c.populate {
		flags |= unix.MAP_POPULATE
	}
	if c.noReserve {
		flags |= unix.MAP_NORESERVE
	}
	mem, err := unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, flags)
	if err != nil {
		return nil, fmt.Errorf("ram: mmap an arena of %d bytes: %w", size, err)
	}
	if c.hugePages {
		// EINVAL where THP is not built in: a hint, nothing to report.
		_ = unix.Madvise(mem, unix.MADV_HUGEPAGE)
	}
	if n := min(c.first, size); n > 0 && !c.populate {
		populate(mem[:n])
	}
	return arena.New("ram", size, hostMemory(mem)), nil
}

// populate faults mem's pages in for writing: MADV_POPULATE_WRITE (Linux
// 5.14), else a write to each page.
func populate(mem []byte) {
	if unix.Madvise(mem, unix.MADV_POPULATE_WRITE) == nil {
		return
	}
	for i := 0; i < len(mem); i += Align {
		mem[i] = 0
	}
}

// hostMemory is the RAM tier's Memory: an anonymous mapping.
type hostMemory []byte

func (h hostMemory) Copy(p []byte, off int64, write bool) error {
	mem := h[off : off+int64(len(p))]
	if write {
		copy(mem, p)
	} else {
		copy(p, mem)
	}
	return nil
}

func (h hostMemory) Release() error { return unix.Munmap(h) }

// HostBytes returns the arena mem is when it is the RAM tier's own (host
// memory, as ram.New maps it), for an engine that copies into it directly.
func HostBytes(mem arena.Memory) ([]byte, bool) {
	h, ok := mem.(hostMemory)
	return h, ok
}
