package fault

import (
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
)

// Load returns b with every ReadAt and WriteAt sleeping curve(n) before
// it runs, where n is the number of reads and writes in flight through
// the decorator, this one included: a device whose latency grows with its
// load, as a real one does past its knee. Its Caps name is b's with
// "+load".
func Load(b backend.Backend, curve func(inflight int) time.Duration) backend.Backend {
	var inflight atomic.Int64
	return &decorated{inner: b, suffix: "load", around: func(c *Call, next func() error) error {
		if c.Op&(OpRead|OpWrite) == 0 {
			return next()
		}
		n := inflight.Add(1)
		defer inflight.Add(-1)
		if d := curve(int(n)); d > 0 {
			time.Sleep(d)
		}
		return next()
	}}
}
