package trace

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestWriterCounts: the counts a Writer gives its sidecar are those of
// the trace it wrote, as Summarize reads them back: rows, distinct keys,
// requests, bytes; users in the kvbench dialect only, and the Deletes the
// mlperf dialect dropped.
func TestWriterCounts(t *testing.T) {
	recs := recsLike(rand.New(rand.NewPCG(5, 6)), 20000)
	users := map[uint64]bool{}
	var deletes int64
	for i := range recs {
		if recs[i].User != 0 && recs[i].Request != 0 {
			users[recs[i].User] = true
		}
		if recs[i].Op.String() == "Delete" {
			deletes++
		}
	}
	for _, opt := range bothDialects {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		s, err := Summarize(NewReader(&buf))
		if err != nil {
			t.Fatal(err)
		}
		got := w.Counts()
		want := MetaCounts{Rows: s.Rows, Objects: s.Objects, Requests: s.Requests, ReadBytes: s.Totals.ReadBytes, WriteBytes: s.Totals.WriteBytes}
		if opt.Dialect == DialectKvbench {
			want.Users = int64(len(users))
		} else {
			want.DroppedDeletes = deletes
			// The mlperf columns carry no Request: the Writer counts the
			// records' requests all the same.
			want.Requests = got.Requests
		}
		if got != want || got.Rows == 0 || got.Objects == 0 || got.Requests == 0 {
			t.Errorf("%s: counts %+v, want %+v", opt.Dialect, got, want)
		}
	}
}

// TestIDSet counts distinct IDs, small and beyond the bitmap, each once.
func TestIDSet(t *testing.T) {
	var s idSet
	for _, id := range []uint64{1, 2, 64, 1, 63, 64, 100000, maxBitmapID, maxBitmapID + 5, maxBitmapID, 1 << 62, 2} {
		s.add(id)
	}
	if s.n != 8 {
		t.Fatalf("%d distinct IDs counted, want 8", s.n)
	}
}

// TestHashSet counts distinct hashes through growth, with the recent cache
// in front and hashes that share a cache slot or a table slot, 0 included.
func TestHashSet(t *testing.T) {
	var s hashSet
	rng := rand.New(rand.NewPCG(7, 8))
	want := map[uint64]bool{}
	for range 100000 {
		h := rng.Uint64() % 30000 // repeats, near and far
		if rng.IntN(4) == 0 {
			h <<= 32 // the recent cache's slot bits, same table slot low bits
		}
		s.add(h)
		if h == 0 {
			h = 1 // 0 marks an empty slot: it counts as 1
		}
		want[h] = true
	}
	if s.n != int64(len(want)) {
		t.Fatalf("%d distinct hashes counted, want %d", s.n, len(want))
	}
}
