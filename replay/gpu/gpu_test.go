package gpu_test

import (
	"testing"

	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/gpu"
	"github.com/kvbench/kvbench/replay/replaytest"
)

// TestConformance runs the backend contract's suite on an arena of the
// fake runtime's device memory: every byte written is copied to the
// "device" and back.
func TestConformance(t *testing.T) {
	t.Setenv("FAKE_CUDA_MEM", "268435456")
	rt, err := cuda.Load(cudatest.FakeRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		b, info, err := gpu.New(rt, 0, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		if info.Device.Name != "Fake GPU" || info.Runtime != "12.2" {
			t.Errorf("info %+v", info)
		}
		t.Cleanup(func() { b.Close() })
		return b
	})
}

// TestTooBig refuses an arena the device cannot hold, naming the way out.
func TestTooBig(t *testing.T) {
	t.Setenv("FAKE_CUDA_MEM", "1048576")
	rt, err := cuda.Load(cudatest.FakeRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := gpu.New(rt, 0, 2<<20); err == nil {
		t.Fatal("an arena twice the device's memory: no error")
	}
	if _, _, err := gpu.New(rt, 3, 4096); err == nil {
		t.Fatal("device 3 of 1: no error")
	}
}
