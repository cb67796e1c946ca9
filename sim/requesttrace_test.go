package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// writeTrace writes body to name in a test's directory and returns its
// path.
func writeTrace(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// firstRowTimes returns the time of each request's first row, in request order.
func firstRowTimes(c *collected) []float64 {
	seen := map[uint64]bool{}
	var got []float64
	for _, r := range c.rows {
		if !seen[r.Request] {
			seen[r.Request] = true
			got = append(got, r.Time.Seconds())
		}
	}
	return got
}

// notesWith returns the notes of res that contain s.
func notesWith(res *Result, s string) []string {
	var got []string
	for _, n := range res.Kvbench.Notes {
		if strings.Contains(n, s) {
			got = append(got, n)
		}
	}
	return got
}

// TestRequestTraceOutOfOrder: a Mooncake or Azure trace's requests arrive
// at their own timestamps; one stamped earlier than the one before it
// arrives with that one, and the records after it keep their own times.
// They were paced as kv-cache.py's BurstGPT replay sleeps, (t - previous t)
// when positive, so one record out of order delayed every later one by as
// much (stamps 0 10 5 20 s arrived at 0 10 10 25 s), and nothing said so.
// The trace's out-of-order records are noted, with the first one's line.
// A BurstGPT trace keeps the reference's pacing, and the note says so.
func TestRequestTraceOutOfOrder(t *testing.T) {
	mooncake := `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}
{"timestamp": 10000, "input_length": 600, "output_length": 5, "hash_ids": [3, 4]}
{"timestamp": 5000, "input_length": 600, "output_length": 5, "hash_ids": [5, 6]}
{"timestamp": 20000, "input_length": 600, "output_length": 5, "hash_ids": [7, 8]}
`
	azure := "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:00.0000000,100,10\r\n2023-11-16 18:17:10.0000000,100,10\r\n" +
		"2023-11-16 18:17:05.0000000,100,10\r\n2023-11-16 18:17:20.0000000,100,10"
	burst := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,ChatGPT,100,10,110,Conversation log\n" +
		"10,ChatGPT,100,10,110,Conversation log\n5,ChatGPT,100,10,110,Conversation log\n20,ChatGPT,100,10,110,Conversation log\n"
	for _, tt := range []struct {
		name, body string
		want       []float64
		note       string
	}{
		{"m.jsonl", mooncake, []float64{0, 10, 10, 20}, "m.jsonl:3: 1 records stamped earlier than the record before them arrive with it"},
		{"a.csv", azure, []float64{0, 10, 10, 20}, "a.csv:4: 1 records stamped earlier than the record before them arrive with it"},
		{"b.csv", burst, []float64{0, 10, 10, 25}, "b.csv:4: 1 records stamped earlier than the record before them arrive with it, and the next sleeps from its stamp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.RequestTrace = writeTrace(t, tt.name, tt.body)
			cfg.Duration, cfg.GenerationMode, cfg.ReplayCycles = time.Minute, "none", 1
			c, res := collect(t, &cfg)
			if got := firstRowTimes(c); !slices.Equal(got, tt.want) {
				t.Errorf("arrivals %v s, want %v", got, tt.want)
			}
			if got := notesWith(res, "stamped earlier"); len(got) != 1 || !strings.Contains(got[0], tt.note) {
				t.Errorf("notes %q: want one with %q", got, tt.note)
			}
		})
	}
}

// TestRequestTraceInOrderNoNote: a trace in order says nothing of order.
func TestRequestTraceInOrderNoNote(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RequestTrace = filepath.Join("reqtrace", "testdata", "mooncake_head200.jsonl")
	cfg.Duration, cfg.GenerationMode, cfg.ReplayCycles = time.Minute, "none", 1
	_, res := collect(t, &cfg)
	if got := notesWith(res, "stamped earlier"); got != nil {
		t.Errorf("notes %q on a trace in order", got)
	}
}

var _ = schema.OpWrite

// TestRequestTraceBacklogWarned: a request trace that offers more requests
// than the workers take (min(--num-users, 500), each busy for its
// generation) ends with most of its requests queued, their I/O never in
// the trace; kvtrace said nothing, the count only in --output's
// requests_queued_at_end (--trace-speedup 100 on Mooncake's conversation
// trace: 1,188,951 of 1,224,306 requests, silently). A warning says how
// many and why; a run that served its trace has none.
func TestRequestTraceBacklogWarned(t *testing.T) {
	for _, tt := range []struct {
		name    string
		speedup float64
		users   int
		warned  bool
	}{
		{"served", 1, 100, false},
		{"ten times the pace", 10, 10, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.RequestTrace = filepath.Join("reqtrace", "testdata", "mooncake_head200.jsonl")
			cfg.Duration, cfg.TraceSpeedup, cfg.NumUsers = time.Minute, tt.speedup, tt.users
			_, res := collect(t, &cfg)
			x := res.Kvbench
			var got []string
			for _, w := range x.Warnings {
				if strings.Contains(w, "still queued") {
					got = append(got, w)
				}
			}
			if !tt.warned {
				if got != nil {
					t.Errorf("warnings %q, %d of %d requests queued at the end", got, x.RequestsQueued, x.RequestsGenerated)
				}
				return
			}
			want := fmt.Sprintf("%d of the %d requests read from the trace", x.RequestsQueued, x.RequestsGenerated)
			if x.RequestsQueued*2 < int(x.RequestsGenerated) || len(got) != 1 || !strings.Contains(got[0], want) || !strings.Contains(got[0], "--num-users") {
				t.Errorf("warnings %q: want one saying %q and naming --num-users", got, want)
			}
		})
	}
}

// TestRequestTraceLoopNoted: a request trace shorter than --duration is
// replayed again from its end (--replay-cycles 0, the default), and the run
// says so: Mooncake's conversation trace (3,537 s) under --duration 3600
// had 171 requests of a second pass, hits on the first pass's blocks, and
// nothing said it. --replay-cycles 1 replays it once, and a run that ends
// within the first pass has no later one: neither says anything.
func TestRequestTraceLoopNoted(t *testing.T) {
	for _, tt := range []struct {
		name     string
		duration time.Duration
		cycles   int
		note     string
	}{
		{"looped", 100 * time.Second, 0, "mooncake_head200.jsonl: its 200 requests span 72 s, less than --duration 100 s: replayed again from its end " +
			"(--replay-cycles 0, the default; --replay-cycles 1 replays it once), pass 2 from 72 s"},
		{"once", 100 * time.Second, 1, ""},
		{"within", 60 * time.Second, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.RequestTrace = filepath.Join("reqtrace", "testdata", "mooncake_head200.jsonl")
			cfg.Duration, cfg.ReplayCycles, cfg.GenerationMode = tt.duration, tt.cycles, "none"
			_, res := collect(t, &cfg)
			got := notesWith(res, "replayed again")
			if tt.note == "" {
				if got != nil {
					t.Errorf("notes %q", got)
				}
				return
			}
			later := res.Kvbench.RequestsGenerated - 200
			want := fmt.Sprintf("%s: %d requests of later passes", tt.note, later)
			if later == 0 || len(got) != 1 || !strings.HasSuffix(got[0], want) {
				t.Errorf("notes %q: want one ending %q", got, want)
			}
		})
	}
}

// TestRequestTraceTimeUnitNote: the note on a Mooncake-style trace's
// timestamps says whether their unit was found from the first or given:
// given, it read "timestamps read as ms (--request-trace-time-unit) (the
// unit found from the first)".
func TestRequestTraceTimeUnitNote(t *testing.T) {
	for _, tt := range []struct{ unit, note string }{
		{"", "timestamps read as ms from the start (the unit found from the first)"},
		{"ms", "timestamps read as ms (--request-trace-time-unit)"},
	} {
		cfg := DefaultConfig()
		cfg.RequestTrace = filepath.Join("reqtrace", "testdata", "mooncake_head200.jsonl")
		cfg.Duration, cfg.ReplayCycles, cfg.GenerationMode, cfg.RequestTraceTimeUnit = time.Minute, 1, "none", tt.unit
		_, res := collect(t, &cfg)
		if got := notesWith(res, "timestamps read as"); len(got) != 1 || !strings.HasSuffix(got[0], "mooncake_head200.jsonl: "+tt.note) {
			t.Errorf("--request-trace-time-unit %q: notes %q, want one ending %q", tt.unit, got, tt.note)
		}
	}
}

// TestBlockHitRateNoted: a Mooncake-style run says its prefix blocks' hit
// rate, the figure to set beside the trace's own block reuse, next to the
// reference's cache_hit_rate, which counts every read that found its
// object, decode reads included: on Mooncake's conversation trace it read
// 98.6 % where 37.6 % of the block references found their block (and 98.4
// % with a 100 GiB cache that held 4.9 %). Only block counts said so.
func TestBlockHitRateNoted(t *testing.T) {
	path := filepath.Join("reqtrace", "testdata", "mooncake_head200.jsonl")
	refs, distinct := mooncakeReuse(t, path)
	cfg := DefaultConfig()
	cfg.RequestTrace = path
	cfg.Duration, cfg.ReplayCycles, cfg.GenerationMode = 2*time.Minute, 1, "none"
	_, res := collect(t, &cfg)
	want := fmt.Sprintf("prefix blocks: %d of %d block references (%.1f %%) found their block cached; %d blocks written",
		refs-distinct, refs, 100*float64(refs-distinct)/float64(refs), distinct)
	got := notesWith(res, "prefix blocks:")
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.Contains(got[0], fmt.Sprintf("cache_hit_rate (%.1f %%)", 100*res.Summary.CacheStats.CacheHitRate)) {
		t.Errorf("notes %q: want one starting %q and naming cache_hit_rate", got, want)
	}
	// A run without blocks has no such note.
	cfg.RequestTrace = filepath.Join("reqtrace", "testdata", "azure_code_head200.csv")
	if _, res := collect(t, &cfg); notesWith(res, "prefix blocks:") != nil {
		t.Errorf("notes %q on an Azure trace", res.Kvbench.Notes)
	}
}
