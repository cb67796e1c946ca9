package backend

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unsafe"
)

func TestAlignedBuffer(t *testing.T) {
	for _, align := range []int{0, 1, 2, 64, 512, 4096, 1 << 16} {
		for _, n := range []int{0, 1, 4096, 1 << 20} {
			p := AlignedBuffer(n, align)
			if len(p) != n || cap(p) != n {
				t.Errorf("AlignedBuffer(%d, %d): len %d cap %d", n, align, len(p), cap(p))
			}
			if n > 0 && align > 1 && uintptr(unsafe.Pointer(&p[0]))%uintptr(align) != 0 {
				t.Errorf("AlignedBuffer(%d, %d) at %p", n, align, &p[0])
			}
		}
	}
}

func TestAlignedBufferPanicsOnOddAlign(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("AlignedBuffer(8, 3) did not panic")
		}
	}()
	AlignedBuffer(8, 3)
}

func TestIsAligned(t *testing.T) {
	p := AlignedBuffer(8192, 4096)
	for _, tc := range []struct {
		p     []byte
		off   int64
		align int
		want  bool
	}{
		{p[:4096], 0, 4096, true},
		{p[:4096], 4096, 4096, true},
		{p[1:4097], 0, 4096, false},
		{p[:4096], 512, 4096, false},
		{p[:512], 0, 4096, false},
		{p[512:1024], 512, 512, true},
		{p[1:2], 3, 1, true},
		{p[1:1], 0, 4096, true},
	} {
		if got := IsAligned(tc.p, tc.off, tc.align); got != tc.want {
			t.Errorf("IsAligned(%d bytes at +%d, %d, %d) = %v", len(tc.p), uintptr(unsafe.Pointer(unsafe.SliceData(tc.p)))%4096, tc.off, tc.align, got)
		}
	}
}

func TestCheckIO(t *testing.T) {
	p := AlignedBuffer(3*4096, 4096)
	for _, tc := range []struct {
		name      string
		p         []byte
		off, size int64
		align     int
		want      int
		misalign  bool
		fails     bool
	}{
		{"inside", p[:4096], 0, 8192, 4096, 4096, false, false},
		{"the last block", p[:4096], 4096, 8192, 4096, 4096, false, false},
		{"passes the end", p[:8192], 4096, 8192, 4096, 4096, false, false},
		{"at the end", p[:4096], 8192, 8192, 4096, 0, false, false},
		{"past the end", p[:4096], 12288, 8192, 4096, 0, false, false},
		{"odd offset", p[:4096], 512, 8192, 4096, 0, true, true},
		{"odd length", p[:512], 0, 8192, 4096, 0, true, true},
		{"odd address", p[512 : 512+4096], 0, 8192, 4096, 0, true, true},
		{"anything goes at align 1", p[3:10], 5, 8, 1, 3, false, false},
		{"negative offset", p[:4096], -4096, 8192, 4096, 0, false, true},
		{"empty", p[:0], 0, 8192, 4096, 0, false, false},
	} {
		n, err := CheckIO(tc.p, tc.off, tc.size, tc.align, false)
		if (err != nil) != tc.fails || errors.Is(err, ErrMisaligned) != tc.misalign || n != tc.want {
			t.Errorf("%s: CheckIO(%d bytes, %d, %d, %d) = %d, %v; want %d, fails %v, misaligned %v",
				tc.name, len(tc.p), tc.off, tc.size, tc.align, n, err, tc.want, tc.fails, tc.misalign)
		}
		// A write moves all of p or nothing: one that passes the end
		// fails.
		n, err = CheckIO(tc.p, tc.off, tc.size, tc.align, true)
		passes := !tc.fails && tc.want < len(tc.p)
		if (err != nil) != (tc.fails || passes) || passes && !strings.Contains(err.Error(), "pass the end of the object") || err == nil && n != len(tc.p) {
			t.Errorf("%s: a write: %d, %v", tc.name, n, err)
		}
	}
}

// blocks is a block store Object of 8 KiB in memory, for ReadBlocks and
// WriteBlocks: its check is CheckIO's, and its move copies, or fails with
// fail when set.
type blocks struct {
	data  []byte
	fail  error
	moved int // bytes its move was given, in all
}

func (b *blocks) check(op string, p []byte, off int64) (int, error) {
	n, err := CheckIO(p, off, int64(len(b.data)), 512, op == "write")
	if err != nil {
		return 0, fmt.Errorf("mem: %s: %w", op, err)
	}
	return n, nil
}

func (b *blocks) move(op string, p []byte, off int64, write bool) (int, error) {
	b.moved += len(p)
	if b.fail != nil {
		return 0, b.fail
	}
	if write {
		return copy(b.data[off:], p), nil
	}
	return copy(p, b.data[off:]), nil
}

func TestReadWriteBlocks(t *testing.T) {
	errMove := errors.New("mem: the device went away")
	p := AlignedBuffer(2048, 512)
	for _, tc := range []struct {
		name  string
		write bool
		p     []byte
		off   int64
		fail  error
		noMov bool // a backend that keeps no bytes: move is nil
		want  int
		err   error  // errors.Is
		msg   string // in the error
		moved int
	}{
		{name: "read inside", p: p[:1024], off: 4096, want: 1024, moved: 1024},
		{name: "read across the end", p: p[:2048], off: 7168, want: 1024, err: io.EOF, moved: 1024},
		{name: "read at the end", p: p[:512], off: 8192, want: 0, err: io.EOF},
		{name: "read misaligned", p: p[:512], off: 100, err: ErrMisaligned, msg: "mem: read: 512 bytes at offset 100"},
		{name: "read fails", p: p[:512], fail: errMove, err: errMove, moved: 512},
		{name: "read, no data", p: p[:2048], off: 7168, noMov: true, want: 1024, err: io.EOF},
		{name: "write inside", write: true, p: p[:1024], off: 4096, want: 1024, moved: 1024},
		{name: "write across the end", write: true, p: p[:2048], off: 7168, msg: "mem: write: 2048 bytes at offset 7168 pass the end of the object (8192 bytes)"},
		{name: "write nothing", write: true, p: p[:0], off: 512},
		{name: "write fails", write: true, p: p[:512], fail: errMove, err: errMove, moved: 512},
		{name: "write, no data", write: true, p: p[:512], noMov: true, want: 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &blocks{data: make([]byte, 8192), fail: tc.fail}
			for i := range p {
				p[i] = byte(i)
			}
			move := MoveFunc(b.move)
			if tc.noMov {
				move = nil
			}
			var n int
			var err error
			if tc.write {
				n, err = WriteBlocks(tc.p, tc.off, b.check, move)
			} else {
				n, err = ReadBlocks(tc.p, tc.off, b.check, move)
			}
			if n != tc.want || tc.err != nil && !errors.Is(err, tc.err) || tc.err == nil && tc.msg == "" && err != nil ||
				tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg)) {
				t.Errorf("= %d, %v; want %d, %v %q", n, err, tc.want, tc.err, tc.msg)
			}
			if b.moved != tc.moved {
				t.Errorf("move was given %d bytes, want %d", b.moved, tc.moved)
			}
			if tc.fail == nil && !tc.noMov && tc.want > 0 && b.data[tc.off+1] != tc.p[1] {
				t.Errorf("the bytes did not move: the object's %d, p's %d", b.data[tc.off+1], tc.p[1])
			}
		})
	}
}

// TestReadWriteBlocksAllocs checks that the memcpy path of a RAM tier pays
// nothing for going through the contract: method values passed as check
// and move are not kept, so they need no allocation.
func TestReadWriteBlocksAllocs(t *testing.T) {
	b := &blocks{data: make([]byte, 8192)}
	p := AlignedBuffer(4096, 512)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := WriteBlocks(p, 4096, b.check, b.move); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadBlocks(p, 4096, b.check, b.move); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations a read and a write, want 0", allocs)
	}
}

func TestCheckOpen(t *testing.T) {
	for _, tc := range []struct {
		key       string
		size      int64
		align     int
		create    bool
		msg       string // "" when it passes
		misaligns bool
	}{
		{"k", 8192, 4096, true, "", false},
		{"k", 0, 4096, true, "", false},
		{"k", 100, 1, true, "", false},
		{"k", 100, 0, true, "", false},
		{"k", 4097, 4096, true, `create "k": size 4097 is not a multiple of 4096: misaligned I/O`, true},
		{"k", 4097, 4096, false, "", false}, // an existing object's size is its own
		{"k", -1, 4096, false, `open "k": negative size -1`, false},
		{"k", -4096, 4096, true, `open "k": negative size -4096`, false},
	} {
		err := CheckOpen(tc.key, tc.size, tc.align, tc.create)
		if got := fmt.Sprint(err); tc.msg == "" && err != nil || tc.msg != "" && got != tc.msg || errors.Is(err, ErrMisaligned) != tc.misaligns {
			t.Errorf("CheckOpen(%q, %d, %d, %v) = %v; want %q", tc.key, tc.size, tc.align, tc.create, err, tc.msg)
		}
	}
}
