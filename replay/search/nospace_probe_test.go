package search_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/ram"
	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestProbeThatHitENOSPCIsNotAMeasurement: a users probe during which one
// create met ENOSPC (a full disk, freed again a moment later) is not a
// measurement (design section 6: a probe that hit ENOSPC is not a
// measurement; the search stops, done false). The engine parks such a
// create until the next release and retries it, silently: the probe came
// back complete, with no error and no warning, and passed.
func TestProbeThatHitENOSPCIsNotAMeasurement(t *testing.T) {
	var recs []schema.Record
	id := uint64(0)
	for k := range 40 {
		for u := 1; u <= 8; u++ {
			id++
			at := time.Duration(k)*time.Millisecond + time.Duration(u)*time.Microsecond
			key := []byte(fmt.Sprintf("u%dr%d", u, k))
			rec := schema.Record{Time: at, Size: 64 << 10, Tier: schema.TierCPU, Phase: schema.PhasePrefill, Request: id, QoS: schema.QoSBatch, User: uint64(u), Tokens: 10}
			for _, op := range []schema.Op{schema.OpWrite, schema.OpRead} {
				r := rec
				r.Op, r.Key = op, key
				recs = append(recs, r)
			}
			if k > 0 {
				r := rec
				r.Op, r.Key = schema.OpDelete, []byte(fmt.Sprintf("u%dr%d", u, k-1))
				recs = append(recs, r)
			}
		}
	}
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.WriterOptions{})
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
	data := buf.Bytes()
	src := replay.Source{Name: "deletes", Rescan: true, Open: func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)), nil }}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed, cfg.ClosedLoop, cfg.Duration, cfg.Users = 0, true, 5*time.Second, 8
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for try := range 5 {
		plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
		if err != nil {
			t.Fatal(err)
		}
		b, err := ram.New(256 << 20)
		if err != nil {
			t.Fatal(err)
		}
		full := fault.NoSpace(fault.OpOpen)
		full.Key, full.Times = "1_u3r20", 1
		rec := fault.Record(fault.Fail(slowRemove{fault.Delay(b, 2*time.Millisecond)}, full))
		res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": rec}, replay.Hooks{})
		b.Close()
		if res == nil {
			t.Fatal(err)
		}
		hit := 0
		for _, c := range rec.Log() {
			if c.Err != nil {
				hit++
			}
		}
		p := search.Summarize(search.KindUsers, res, search.StorageOf(res))
		t.Logf("try %d: ENOSPC returned %d times; complete %v, errors %d, warnings %q; probe pass %v, not measured %q", try, hit, res.Complete, res.Errors.Count, res.Warnings, p.Pass, p.NotMeasured)
		if hit == 0 {
			continue
		}
		if p.NotMeasured == "" {
			t.Fatalf("a probe during which a create met ENOSPC is a measurement (pass %v: %s)", p.Pass, p.Reason)
		}
		return
	}
	t.Skip("no ENOSPC was parked")
}

// slowRemove is a backend whose removes take 5 ms, as a file system's
// unlink of a large file does: a delete is in flight while creates run.
type slowRemove struct{ backend.Backend }

type slowRemoveObj struct{ backend.Object }

func (b slowRemove) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := b.Backend.Open(key, size, create)
	if err != nil {
		return nil, err
	}
	return slowRemoveObj{o}, nil
}

func (o slowRemoveObj) Remove() error {
	time.Sleep(5 * time.Millisecond)
	return o.Object.Remove()
}
