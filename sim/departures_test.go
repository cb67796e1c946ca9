package sim

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestDepartures runs each of kvtrace's deliberate departures from
// kv-cache.py (the package documentation lists them) and a run beside it
// that does not meet it: the run that meets one says so once, in
// Departures and in Notes (the sidecar's), and the other says nothing of
// it. Before, no run said any of them.
func TestDepartures(t *testing.T) {
	td := filepath.Join("reqtrace", "testdata")
	cases := []struct {
		name string
		// marker is a phrase of the departure's note.
		marker string
		meet   func(*Config)
		miss   func(*Config)
	}{
		{
			// The registry's bound is kv-cache.py's 1000 states, which
			// 600 users outlive (500 do not, in 1800 s); 6 makes 20 users
			// outlive it.
			name: "conversation", marker: "user's thread dies",
			meet: func(c *Config) { c.NumUsers, c.ConversationStates = 20, 6 },
			miss: func(c *Config) { c.NumUsers = 20 },
		},
		{
			name: "sharegpt single-turn", marker: "--dataset-path with --disable-multi-turn",
			meet: func(c *Config) {
				c.DatasetPath, c.RequestRate, c.DisableMultiTurn = filepath.Join(td, "sharegpt_sample50.json"), 20, true
			},
			miss: func(c *Config) {
				// --decode-only skips the comparison that kills the
				// reference's workers.
				c.DatasetPath, c.RequestRate, c.DisableMultiTurn, c.DecodeOnly = filepath.Join(td, "sharegpt_sample50.json"), 20, true, true
			},
		},
		{
			name: "queue cap", marker: "unbounded queue",
			// One worker generating for 30 ms a token falls behind.
			meet: func(c *Config) {
				c.UseBurstTrace, c.BurstTracePath, c.TraceSpeedup, c.NumUsers = true, filepath.Join(td, "burstgpt_1_head30.csv"), 0, 1
				c.GenerationMode, c.Duration = "realistic", 5*time.Second
			},
			miss: func(c *Config) {
				c.UseBurstTrace, c.BurstTracePath, c.TraceSpeedup, c.NumUsers = true, filepath.Join(td, "burstgpt_1_head30.csv"), 100, 1
				c.GenerationMode, c.Duration = "realistic", 5*time.Second
			},
		},
		{
			name: "rag stream", marker: "numpy's",
			meet: func(c *Config) { c.EnableRAG, c.NumUsers = true, 20 },
			miss: func(c *Config) { c.NumUsers = 20 },
		},
		{
			name: "think", marker: "as fast as Python runs",
			meet: func(c *Config) {
				c.NumUsers = 1
				c.UserTemplates = slices.Clone(c.UserTemplates)
				for i := range c.UserTemplates {
					c.UserTemplates[i].ThinkMin, c.UserTemplates[i].ThinkMax = 0, 0
				}
			},
			miss: func(c *Config) { c.NumUsers = 1 },
		},
		{
			name: "partial block", marker: "written whole",
			meet: func(c *Config) { c.RequestTrace = filepath.Join(td, "mooncake_head200.jsonl") },
			// An LMBench-style trace's ids are apportioned, never padded.
			miss: func(c *Config) { c.RequestTrace = filepath.Join(td, "lmbench_synthetic60.jsonl") },
		},
	}
	run := func(t *testing.T, edit func(*Config)) *Result {
		t.Helper()
		cfg := DefaultConfig()
		cfg.GenerationMode, cfg.Duration, cfg.GPUMemGB, cfg.CPUMemGB = "none", 60*time.Second, 0, 4
		edit(&cfg)
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), &cfg, func(*schema.Record) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	count := func(list []string, marker string) int {
		n := 0
		for _, s := range list {
			if strings.Contains(s, marker) {
				n++
				if !strings.HasPrefix(s, DeparturePrefix) {
					t.Errorf("%q does not begin with %q", s, DeparturePrefix)
				}
			}
		}
		return n
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := run(t, c.meet).Kvbench
			if n := count(x.Departures, c.marker); n != 1 {
				t.Errorf("departures %q: %d notes with %q, want 1", x.Departures, n, c.marker)
			}
			if n := count(x.Notes, c.marker); n != 1 {
				t.Errorf("notes %q: %d with %q, want 1", x.Notes, n, c.marker)
			}
			if x := run(t, c.miss).Kvbench; count(x.Departures, c.marker)+count(x.Notes, c.marker) != 0 {
				t.Errorf("a run that does not meet it says %q", x.Departures)
			}
		})
	}
}

// TestPartialBlockPadding checks the figures of the partial-block note on
// Mooncake's first 200 records (testdata/README.md): every request whose
// last block is partial and written is counted, with the tokens that fill
// it, against the blocks' tokens written.
func TestPartialBlockPadding(t *testing.T) {
	e, _ := scriptedEngine(t, nil)
	// 1,100 tokens over 3 blocks of 512: the last holds 76, written as 512.
	r := &request{id: 1, userID: "u", context: 1100, gen: 10, qos: QoSBatch, phase: phasePrefillDecode,
		blocks: true, blockTokens: 512, ids: packIDs(nil, []int64{1, 2, 3})}
	if err := e.processBlocks(r); err != nil {
		t.Fatal(err)
	}
	// A request of whole blocks pads nothing; its shared block 1 is a hit.
	r2 := &request{id: 2, userID: "u", context: 1024, gen: 10, qos: QoSBatch, phase: phasePrefillDecode,
		blocks: true, blockTokens: 512, ids: packIDs(nil, []int64{1, 4})}
	if err := e.processBlocks(r2); err != nil {
		t.Fatal(err)
	}
	st := e.stats
	if st.partialBlocks != 1 || st.padTokens != 3*512-1100 || st.blockTokensWritten != 4*512 {
		t.Errorf("partial blocks %d, pad %d tokens of %d written; want 1, %d of %d", st.partialBlocks, st.padTokens, st.blockTokensWritten, 3*512-1100, 4*512)
	}
}

// TestBurstGPTDepartures replays BurstGPT files that kv-cache.py reads
// otherwise than kvtrace (reqtrace.RefDepartures): each says so once, the
// rows it skips are counted apart from those the reference skips too, and
// a clean file says nothing. Before, such rows were noted as skipped "as
// the reference skips them", and a byte order mark not at all.
func TestBurstGPTDepartures(t *testing.T) {
	const header = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	for _, tc := range []struct {
		name, body string
		said       []string
	}{
		{"clean", header + "1,a,100,10,110,x\n2,a,200,10,210,x\n", nil},
		{"short row", header + "1,a,100,10,110,x\n2,a,200\n3,a,300,10,310,x\n",
			[]string{"b.csv:3: 1 rows with fewer fields", "1 rows skipped (unparseable; 0 of them as the reference skips them)"}},
		{"nan and negative", header + "1,a,100,10,110,x\nnan,a,200,10,210,x\n3,a,-5,10,5,x\n4,a,x,1,1,x\n",
			[]string{"b.csv:3: 2 rows skipped that kv-cache.py does not skip", "3 rows skipped (unparseable; 1 of them as the reference skips them)"}},
		// kv-cache.py sleeps (inf - 1) / speedup seconds before it
		// enqueues line 3's row, in 5 s steps: its generator sends
		// nothing more. A second departure, beside the first.
		{"infinite timestamp", header + "1,a,100,10,110,x\ninf,a,200,10,210,x\n3,a,300,10,310,x\n",
			[]string{"b.csv:3: 1 rows skipped that kv-cache.py does not skip", "b.csv:3: 1 rows with a Timestamp of inf or beyond ±4.5e9 s skipped"}},
		{"byte order mark", "\ufeff" + header + "1,a,100,10,110,x\n2,a,200,10,210,x\n",
			[]string{`finds no Timestamp and reads every timestamp as 0`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "b.csv")
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			cfg.UseBurstTrace, cfg.BurstTracePath, cfg.ReplayCycles = true, path, 2
			cfg.GenerationMode, cfg.Duration, cfg.GPUMemGB = "none", time.Hour, 0
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), &cfg, func(*schema.Record) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			x := res.Kvbench
			if want := min(len(tc.said), 1+strings.Count(tc.name, "infinite")); len(x.Departures) != want {
				t.Errorf("departures %q, want %d", x.Departures, want)
			}
			all := strings.Join(x.Notes, "\n")
			for _, s := range tc.said {
				if n := strings.Count(all, s); n != 1 {
					t.Errorf("notes say %q %d times, want once:\n%s", s, n, all)
				}
			}
			// Unpaced (--trace-speedup 0), kv-cache.py sleeps before no
			// row: it keeps the infinite timestamp's.
			cfg.TraceSpeedup = 0
			res, err = Run(context.Background(), &cfg, func(*schema.Record) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if all := strings.Join(res.Kvbench.Notes, "\n"); strings.Contains(all, "rows with a Timestamp of inf") {
				t.Errorf("--trace-speedup 0: the notes say kv-cache.py sleeps:\n%s", all)
			}
		})
	}
}

// TestConversationNoteNamesItsBound: the forgotten-conversation note says
// "from about 600 users" only of kv-cache.py's registry of 1000 states,
// where it was measured; under another conversation.max_conversations
// it names that bound alone. It said 600 users of a registry of 6.
func TestConversationNoteNamesItsBound(t *testing.T) {
	cfg := DefaultConfig()
	cfg.GenerationMode, cfg.Duration, cfg.GPUMemGB, cfg.CPUMemGB = "none", 60*time.Second, 0, 4
	cfg.NumUsers, cfg.ConversationStates = 20, 6
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), &cfg, func(*schema.Record) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	var note string
	for _, d := range res.Kvbench.Departures {
		if strings.Contains(d, "user's thread dies") {
			note = d
		}
	}
	if !strings.Contains(note, "registry of 6 conversation states") || strings.Contains(note, "600 users") {
		t.Errorf("the note of a registry of 6: %q; want its bound, and no word of 600 users", note)
	}
}
