package s3_test

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestClosedBackendCollected: the run's context keeps no Backend that
// was closed: a search makes one a probe under the one context of the
// run, and each stayed reachable from it (New's context.AfterFunc, never
// stopped) until the run ended.
func TestClosedBackendCollected(t *testing.T) {
	srv := start(t, s3test.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := func() weak.Pointer[s3.Backend] {
		b, err := s3.New(ctx, s3.Config{Endpoint: srv.Endpoint, Bucket: bucket})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		return weak.Make(b)
	}()
	for i := 0; i < 10 && w.Value() != nil; i++ {
		runtime.GC()
	}
	if w.Value() != nil {
		t.Error("a closed Backend is still reachable while the run's context goes on")
	}
}
