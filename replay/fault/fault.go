// Package fault owns decorators of replay backends for tests and
// experiments, as fio's engines have latency and error injection: Delay
// adds latency to every I/O, Fail injects errors (a full disk, an I/O
// error) by a Rule, and Record logs every call with its timing, for tests
// of the engine's ordering.
//
// A decorator wraps any backend.Backend and is one: its Caps are the inner
// backend's, with the decorator's name appended ("ram+delay"), and its
// Objects wrap the inner Objects. Optional capabilities of the inner
// Objects (such as nvme's Fd) are hidden on purpose: an engine that found
// them would bypass the decorator. Sync (backend.Syncer) is kept, as a
// call through the decorator.
package fault

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
)

// ErrInjected marks every error a Fail decorator makes up, beside the
// error its Rule names.
var ErrInjected = errors.New("injected fault")

// Op is a kind of call, or a set of them (Ops are bits).
type Op uint8

// The calls a Rule can match and a Recorder logs.
const (
	OpRead   Op = 1 << iota // Object.ReadAt
	OpWrite                 // Object.WriteAt
	OpOpen                  // Backend.Open
	OpRemove                // Object.Remove
	OpClose                 // Object.Close
	OpSync                  // Object.Sync (backend.Syncer)
	// OpAny is every call a Rule usually means: reads, writes, opens and
	// removes (not Close).
	OpAny = OpRead | OpWrite | OpOpen | OpRemove
)

// String names op: "read", "write", "open", "remove", "close", or several
// joined by '|'.
func (op Op) String() string {
	names := []string{"read", "write", "open", "remove", "close", "sync"}
	var parts []string
	for i, n := range names {
		if op&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("op(%d)", uint8(op))
	}
	return strings.Join(parts, "|")
}

// Call is one call through a decorator.
type Call struct {
	Op     Op
	Key    string
	Off    int64 // the offset of a read or write
	Len    int64 // the bytes asked for (a read or write), or the size (an open)
	Create bool  // an open with create
	N      int   // the bytes a read or write moved
	Start  time.Time
	End    time.Time
	Err    error

	// obj is the inner Object of a read or write, for messages: where
	// its bytes lie when it says (backend.Locator).
	obj backend.Object
}

// around runs a call: it may act before and after next, which makes the
// call on the inner backend, and returns the call's error.
type around func(c *Call, next func() error) error

// decorated wraps a Backend; every call goes through its around.
type decorated struct {
	inner  backend.Backend
	suffix string
	around around
}

var _ backend.Backend = (*decorated)(nil)

func (b *decorated) Caps() backend.Caps {
	c := b.inner.Caps()
	c.Name += "+" + b.suffix
	// A decorator's calls may sleep or record under a lock: the engine
	// must not make them on its scheduling goroutine.
	c.FastMeta = false
	c.Warnings = append([]string(nil), c.Warnings...)
	return c
}

func (b *decorated) Open(key string, size int64, create bool) (backend.Object, error) {
	var o backend.Object
	c := Call{Op: OpOpen, Key: key, Len: size, Create: create}
	err := b.around(&c, func() error {
		var err error
		o, err = b.inner.Open(key, size, create)
		return err
	})
	if err != nil {
		if o != nil {
			o.Close()
		}
		return nil, err
	}
	w := &object{inner: o, key: key, around: b.around}
	if _, ok := o.(backend.Syncer); ok {
		return &syncObject{w}, nil
	}
	return w, nil
}

func (b *decorated) Close() error { return b.inner.Close() }

// object wraps an Object.
type object struct {
	inner  backend.Object
	key    string
	around around
}

func (o *object) ReadAt(p []byte, off int64) (int, error) {
	return o.transfer(OpRead, p, off, o.inner.ReadAt)
}

func (o *object) WriteAt(p []byte, off int64) (int, error) {
	return o.transfer(OpWrite, p, off, o.inner.WriteAt)
}

// transfer runs move (the inner object's ReadAt or WriteAt) of p at off as
// the Call op, through the rules.
func (o *object) transfer(op Op, p []byte, off int64, move func([]byte, int64) (int, error)) (int, error) {
	var n int
	c := Call{Op: op, Key: o.key, Off: off, Len: int64(len(p)), obj: o.inner}
	err := o.around(&c, func() error {
		var err error
		n, err = move(p, off)
		c.N = n
		return err
	})
	return n, err
}

func (o *object) Close() error {
	return o.around(&Call{Op: OpClose, Key: o.key}, o.inner.Close)
}

func (o *object) Remove() error {
	return o.around(&Call{Op: OpRemove, Key: o.key}, o.inner.Remove)
}

// syncObject wraps an Object that is a backend.Syncer: Sync goes through
// the decorator like every other call, so it is not hidden.
type syncObject struct{ *object }

var _ backend.Syncer = syncObject{}

func (o syncObject) Sync() error {
	return o.around(&Call{Op: OpSync, Key: o.key}, o.inner.(backend.Syncer).Sync)
}
