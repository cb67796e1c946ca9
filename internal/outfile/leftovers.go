package outfile

import (
	"context"
	"os"
	"slices"
	"sync"
)

// Leftover is something a run made that its clean-up has not yet taken
// back: an output's temporary file, not yet renamed into place or removed,
// a run directory, an object store's prefix. A tool stopped before its
// clean-up finished (a signal after the first one's grace, cli.Main) names
// each one, so that its user knows what it left and where.
type Leftover struct {
	// Path is where it is: a path, or a URL such as s3://bucket/prefix/.
	Path string
	// What says what it is, as in "the temporary file of r.json, which was
	// not written".
	What string
	// Remote says that Path is no local path: Leftovers.List names it
	// without looking for it.
	Remote bool
}

// Leftovers is the set of a run's Leftover things: each one from Add until
// the run takes it back (the func Add returned). Safe for concurrent use;
// the zero value is empty and ready.
type Leftovers struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]Leftover
}

// Add records l until the returned func is called, once l is renamed into
// place, removed or left on purpose (--keep); calling it again does
// nothing.
func (s *Leftovers) Add(l Leftover) (done func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[uint64]Leftover)
	}
	id := s.next
	s.next++
	s.m[id] = l
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.m, id)
	}
}

// List returns what is recorded, in the order it was added, less the
// local paths that are no longer there (renamed or removed a moment
// before their func was called).
func (s *Leftovers) List() []Leftover {
	s.mu.Lock()
	ids := make([]uint64, 0, len(s.m))
	for id := range s.m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	all := make([]Leftover, 0, len(ids))
	for _, id := range ids {
		all = append(all, s.m[id])
	}
	s.mu.Unlock()
	out := all[:0]
	for _, l := range all {
		if l.Remote {
			out = append(out, l)
		} else if _, err := os.Lstat(l.Path); err == nil {
			out = append(out, l)
		}
	}
	return out
}

// leftoversKey is the context key of a run's Leftovers.
type leftoversKey struct{}

// WithLeftovers returns a context that carries s: Track records into it
// what is made under the context.
func WithLeftovers(ctx context.Context, s *Leftovers) context.Context {
	return context.WithValue(ctx, leftoversKey{}, s)
}

// Track records l in the Leftovers ctx carries (WithLeftovers) until the
// returned func is called; without any, it records nothing.
func Track(ctx context.Context, l Leftover) (done func()) {
	if ctx != nil {
		if s, ok := ctx.Value(leftoversKey{}).(*Leftovers); ok && s != nil {
			return s.Add(l)
		}
	}
	return func() {}
}
