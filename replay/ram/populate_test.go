package ram

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestPopulateFirst: PopulateFirst's prefault makes the first 8 MiB of a
// fresh 64 MiB mapping resident and leaves its last 32 MiB uncommitted
// (an arena's pages past it are committed only as objects first use
// them); New maps an arena with it.
func TestPopulateFirst(t *testing.T) {
	const size, first = 64 << 20, 8 << 20
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	populate(mem[:first])
	vec := make([]byte, size/Align)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Skipf("mincore: %v", errno)
	}
	count := func(v []byte) (n int) {
		for _, x := range v {
			n += int(x & 1)
		}
		return n
	}
	if n := count(vec[:first/Align]); n != first/Align {
		t.Errorf("%d of the first %d pages resident, want all", n, first/Align)
	}
	if n := count(vec[size/2/Align:]); n != 0 {
		t.Errorf("%d of the last %d pages resident, want none", n, size/2/Align)
	}
	b, err := New(size, PopulateFirst(first))
	if err != nil {
		t.Fatal(err)
	}
	if c := b.Caps().Capacity; c != size {
		t.Errorf("capacity %d, want %d", c, size)
	}
	b.Close()
}
