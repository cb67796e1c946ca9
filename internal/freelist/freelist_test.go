package freelist

import "testing"

// TestList: Get makes a value when none was put back and returns the
// values put back, last first.
func TestList(t *testing.T) {
	var l List[int]
	a := l.Get()
	if a == nil || *a != 0 {
		t.Fatalf("Get on an empty list = %v", a)
	}
	b := l.Get()
	if a == b {
		t.Fatal("two Gets on an empty list returned one value")
	}
	*a, *b = 1, 2
	l.Put(a)
	l.Put(b)
	if got := l.Get(); got != b {
		t.Errorf("Get = %p (%d), want the last put back, %p", got, *got, b)
	}
	if got := l.Get(); got != a {
		t.Errorf("Get = %p (%d), want %p", got, *got, a)
	}
	if got := l.Get(); got == a || got == b {
		t.Error("Get returned a value twice")
	}
}
