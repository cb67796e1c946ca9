package backend

import (
	"errors"
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
