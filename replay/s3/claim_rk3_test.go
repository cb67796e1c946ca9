package s3_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestSameRunIDAtOnce: runs started at once with the same explicit run ID
// (library callers; kvreplay makes a random one) all found the prefix
// empty, and all took it: each run's Close then removed the others'
// objects. New now claims the prefix with a conditional PUT (If-None-Match:
// *) of run-ID/.kvreplay-run, which versitygw makes atomic: one run
// takes the prefix, the others refuse cleanly, touching nothing of it.
// Close removes the claim with the run's objects, and the prefix is free
// again.
func TestSameRunIDAtOnce(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	const runs = 8
	cfg := s3.Config{Endpoint: srv.Endpoint, Bucket: bucket, Prefix: "bench", RunID: "twice"}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		won   []*s3.Backend
		fails []error
	)
	begin := make(chan struct{})
	for range runs {
		wg.Go(func() {
			<-begin
			b, err := s3.New(context.Background(), cfg)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fails = append(fails, err)
				return
			}
			won = append(won, b)
		})
	}
	close(begin)
	wg.Wait()
	for _, b := range won {
		defer b.Close()
	}
	if len(won) != 1 {
		t.Fatalf("%d of %d runs of one run ID started at once took its prefix; want 1 (refused: %v)", len(won), runs, fails)
	}
	for _, err := range fails {
		// Refused by the claim, or by the check when the winner's claim
		// was there before this run listed the prefix.
		if msg := err.Error(); !strings.Contains(msg, "kvreplay works only under a prefix of its own; give another --s3-prefix or run id") ||
			!strings.Contains(msg, "another run claimed the run's prefix (.kvreplay-run exists)") && !strings.Contains(msg, "holds objects already (bench/run-twice/.kvreplay-run)") {
			t.Errorf("a refused run: %v; want it to name the claim and what to change", err)
		}
	}
	b := won[0]
	o, err := b.Open("0_k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	o.Close()
	if keys := srv.Keys(t, bucket); len(keys) != 2 || keys[0] != "bench/run-twice/.kvreplay-run" || keys[1] != "bench/run-twice/0_k" {
		t.Errorf("the winner's prefix holds %q; want its claim and its object, nothing of the refused runs'", keys)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	noneUnder(t, srv, "bench/run-twice/")
	st := b.Stats()
	if st.Requests["PutObject"] != 2 || st.Requests["DeleteObject"] != 2 {
		t.Errorf("requests %v: want 2 PUTs (the claim, the object), each deleted with one DELETE", st.Requests)
	}
	// The prefix is free again: a later run of the same ID takes it.
	again := newBackend(t, srv.Endpoint, cfg)
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestClaimUnsupported: a server that does not implement conditional
// writes (501 Not Implemented to a PUT with If-None-Match) cannot have the
// prefix claimed: the run goes on with the prefix checked empty, and says
// that another run of the same ID at once would share it. A server that
// ignores the header is not told from one that takes it: the package doc
// says so.
func TestClaimUnsupported(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	px.Unimplemented("If-None-Match")
	var warned []string
	b := newBackend(t, px.Endpoint, s3.Config{Prefix: "bench", RunID: "plain", Warn: func(w string) { warned = append(warned, w) }})
	if len(warned) != 1 || !strings.Contains(warned[0], "does not implement conditional writes (If-None-Match): the run's prefix was found empty but is not claimed") {
		t.Errorf("warnings %q; want one saying the prefix is not claimed", warned)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	noneUnder(t, srv, "bench/run-plain/")
}

// TestClaimAnswerLost: the claim's PUT reaches the server, which makes
// it, and its answer is lost (a proxy's 500): the SDK's retry finds the
// object, 412, and the run takes it for its own by the token it holds.
// It had refused itself ("another run claimed the run's prefix") and left
// its claim there, refusing that run ID from then on (found by rv5).
func TestClaimAnswerLost(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	px.Lose("If-None-Match", 1)
	b := newBackend(t, px.Endpoint, s3.Config{Prefix: "bench", RunID: "lost"})
	if px.Lost() != 1 {
		t.Fatalf("%d answers lost, want 1", px.Lost())
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	noneUnder(t, srv, "bench/run-lost/")
}
