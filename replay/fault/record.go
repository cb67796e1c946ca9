package fault

import (
	"slices"
	"sync"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
)

// Recorder is a Backend that logs every call to the backend it wraps
// (Open, and ReadAt, WriteAt, Close and Remove of its Objects) with its
// arguments, result and start and end times, for tests of ordering: a read
// that must follow a write starts after the write's End. It is safe for
// concurrent use. Its Caps name is the inner one's with "+record".
type Recorder struct {
	decorated
	mu  sync.Mutex
	log []Call
}

var _ backend.Backend = (*Recorder)(nil)

// Record returns a Recorder of b, with an empty log.
func Record(b backend.Backend) *Recorder {
	r := &Recorder{}
	r.decorated = decorated{inner: b, suffix: "record", around: r.around}
	return r
}

func (r *Recorder) around(c *Call, next func() error) error {
	c.Start = time.Now()
	err := next()
	c.End = time.Now()
	c.Err = err
	r.mu.Lock()
	r.log = append(r.log, *c)
	r.mu.Unlock()
	return err
}

// Log returns a copy of the calls so far, in the order they ended.
func (r *Recorder) Log() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}
