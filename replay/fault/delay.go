package fault

import (
	"time"

	"github.com/kvbench/kvbench/replay/backend"
)

// Delay returns b with every ReadAt and WriteAt sleeping d before it runs:
// a slower device of the same behaviour. Calls sleep concurrently, so the
// added latency does not limit concurrency. Sleeps are as precise as the
// Go runtime's timers (tens of microseconds). Its Caps name is b's with
// "+delay".
func Delay(b backend.Backend, d time.Duration) backend.Backend {
	return &decorated{inner: b, suffix: "delay", around: func(c *Call, next func() error) error {
		if c.Op&(OpRead|OpWrite) != 0 && d > 0 {
			time.Sleep(d)
		}
		return next()
	}}
}
