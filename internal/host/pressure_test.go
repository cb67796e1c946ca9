package host

import (
	"testing"
	"time"
)

func TestParseCPUStall(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"some avg10=54.62 avg60=61.93 avg300=56.07 total=11233230846\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", 11233230846 * time.Microsecond, true},
		{"full avg10=0.00 avg60=0.00 avg300=0.00 total=7\nsome avg10=0.00 avg60=0.00 avg300=0.00 total=12", 12 * time.Microsecond, true},
		{"", 0, false},
		{"some avg10=0.00 total=x\n", 0, false},
		{"some avg10=0.00 total=-5\n", 0, false},
		{"some avg10=0.00\n", 0, false},
	} {
		got, ok := parseCPUStall([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseCPUStall(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
