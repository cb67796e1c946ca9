package setup

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay"
)

// TestPipeRAMArena: the RAM arena of a trace nothing sized (a pipe with no
// sidecar) grows into half the memory available, not a fixed 1 GiB that an
// object of a few GiB does not fit.
func TestPipeRAMArena(t *testing.T) {
	avail, _ := host.Memory()
	if avail < 4<<30 {
		t.Skipf("%d bytes of memory available: too little to tell", avail)
	}
	cfg := replay.DefaultConfig()
	size, prefault := RAMSize(&cfg, &replay.Plan{}, 0)
	if prefault != 0 || size < avail/2-1<<30 || size > avail/2 {
		t.Errorf("arena %d bytes, %d prefaulted; want about half of %d, not prefaulted", size, prefault, avail)
	}
	if size, prefault := RAMSize(&cfg, &replay.Plan{}, 64<<20); size != 64<<20 || prefault != size {
		t.Errorf("--ram-budget: %d, %d prefaulted", size, prefault)
	}
	if size, prefault := RAMSize(&cfg, &replay.Plan{FromMeta: true, Peak: map[string]int64{"ram": 4096}}, 0); size != 1<<20 || prefault != size {
		t.Errorf("a sidecar's peak of 4 KiB: %d, %d prefaulted; want the least arena, 1 MiB, prefaulted", size, prefault)
	}
	// A closed loop's arena holds its reach, prefaulted for the trace's
	// peak.
	loop := cfg
	loop.ClosedLoop = true
	plan := &replay.Plan{Scanned: true, Peak: map[string]int64{"ram": 4 << 20}, Reach: map[string]int64{"ram": 64 << 20}}
	if size, prefault := RAMSize(&loop, plan, 0); size != 64<<20 || prefault != 4<<20 {
		t.Errorf("a closed loop of peak 4 MiB, reach 64 MiB: arena %d, %d prefaulted", size, prefault)
	}
	if size, prefault := RAMSize(&cfg, plan, 0); size != 4<<20 || prefault != size {
		t.Errorf("an open loop of peak 4 MiB: arena %d, %d prefaulted", size, prefault)
	}
}

// TestLoopArenaNote: a closed loop's arena that holds its reach says it
// holds every object its users put there; one that the memory available
// bounds below its reach says how much of what (it said "every object"
// of both).
func TestLoopArenaNote(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		size, reach int64
		want        string
	}{
		{64 * mib, 64 * mib, "the RAM tier's arena of a closed loop, 64.00 MiB, holds every object its users put there (a closed loop's order is not the trace's, and can keep more live than the trace's peak); " +
			"its first 4.00 MiB, the trace's peak, were prefaulted, the rest is committed as objects first use it (a first write to a page past them faults)"},
		{32 * mib, 64 * mib, "the RAM tier's arena of a closed loop, 32.00 MiB, holds as much of the 64.00 MiB its users put there as 50 % of the memory available holds beside the engine's state, " +
			"past which kvreplay evicts least recently used objects (a closed loop's order is not the trace's, and can keep more live than the trace's peak); its first 4.00 MiB, the trace's peak, were prefaulted"},
	} {
		if got := loopArenaNote(tt.size, 4*mib, tt.reach); !strings.HasPrefix(got, tt.want) {
			t.Errorf("arena %d of reach %d: %q, want %q", tt.size, tt.reach, got, tt.want)
		}
	}
}

// TestPipeMemoryLimit: the soft memory limit never stays below the live
// heap: after a collection it rises to twice the live heap (a pipe's
// replay, whose objects nobody counted, had it at 344 MiB under a live
// heap of more, and the collector ran without end).
func TestPipeMemoryLimit(t *testing.T) {
	for _, tt := range []struct{ base, live, want int64 }{
		{344 << 20, 10 << 20, 344 << 20},
		{344 << 20, 200 << 20, 400 << 20},
		{344 << 20, 2 << 30, 4 << 30},
	} {
		if got := limitFor(tt.base, tt.live); got != tt.want {
			t.Errorf("limitFor(%d, %d) = %d, want %d", tt.base, tt.live, got, tt.want)
		}
	}
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	g := &memGovernor{base: 1 << 20}
	debug.SetMemoryLimit(g.base)
	g.arm()
	defer g.stop()
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < 2*64<<20 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if lim := debug.SetMemoryLimit(-1); lim < 2*64<<20 {
		t.Errorf("limit %d under a live heap of 64 MiB and more", lim)
	}
	runtime.KeepAlive(live)
}
