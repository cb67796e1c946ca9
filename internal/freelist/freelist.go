// Package freelist keeps values done with for reuse: a hot loop that
// makes and drops a value per item (a simulation's requests, a replay's
// tasks) takes them from here instead of the heap.
package freelist

// List is a stack of *T done with. The zero value is empty and ready.
// A List is not safe for concurrent use.
type List[T any] struct{ free []*T }

// Get returns a value put back, or a new zero one. A reused value holds
// what it held when put back: the caller sets every field.
func (l *List[T]) Get() *T {
	if n := len(l.free); n > 0 {
		t := l.free[n-1]
		l.free[n-1] = nil
		l.free = l.free[:n-1]
		return t
	}
	return new(T)
}

// Put gives t back for reuse; nothing may use it after.
func (l *List[T]) Put(t *T) { l.free = append(l.free, t) }
