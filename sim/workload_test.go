package sim

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

type collected struct {
	rows  []schema.Record
	keys  map[string]bool
	cells map[string]int
}

func collect(t *testing.T, cfg *Config) (*collected, *Result) {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	c := &collected{keys: map[string]bool{}, cells: map[string]int{}}
	var last time.Duration
	res, err := Run(context.Background(), cfg, func(r *schema.Record) error {
		if r.Time < last {
			t.Fatalf("row %d at %v after %v: out of order", len(c.rows), r.Time, last)
		}
		last = r.Time
		cp := *r
		cp.Key = append([]byte(nil), r.Key...)
		c.rows = append(c.rows, cp)
		c.keys[string(r.Key)] = true
		c.cells[r.Op.String()+" "+r.Phase.String()]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, res
}

func allKeysMatch(t *testing.T, c *collected, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	for k := range c.keys {
		if !rx.MatchString(k) {
			t.Errorf("key %q does not match %s", k, re)
			return
		}
	}
}

// TestTraceDrivenWorkloads runs each trace-driven mode on the real samples
// in reqtrace/testdata and checks what the reference's mode implies.
func TestTraceDrivenWorkloads(t *testing.T) {
	td := filepath.Join("reqtrace", "testdata")
	t.Run("burstgpt", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.UseBurstTrace, cfg.BurstTracePath = true, filepath.Join(td, "burstgpt_1_head30.csv")
		cfg.GenerationMode, cfg.TraceSpeedup, cfg.ReplayCycles, cfg.Duration = "none", 100, 2, time.Hour
		c, res := collect(t, &cfg)
		if res.RequestsCompleted != 60 {
			t.Errorf("%d requests, want 2 cycles x 30 rows", res.RequestsCompleted)
		}
		allKeysMatch(t, c, `^trace_user_\d+_req_\d{4}$`)
		if res.MultiTurnCacheHits+res.MultiTurnCacheMisses != 0 {
			t.Error("BurstGPT requests read multi-turn history")
		}
	})
	t.Run("sharegpt", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.DatasetPath, cfg.RequestRate, cfg.ReplayCycles = filepath.Join(td, "sharegpt_sample50.json"), 20, 2
		cfg.GenerationMode, cfg.Duration = "none", time.Hour
		c, res := collect(t, &cfg)
		allKeysMatch(t, c, `_turn_\d+$`)
		if res.RequestsCompleted != 100 {
			t.Errorf("%d requests, want 2 cycles x 50 conversations", res.RequestsCompleted)
		}
		// Keys repeat on the second pass: only read then.
		if w := c.cells["Write Prefill"]; w != len(c.keys) {
			t.Errorf("%d prefill writes for %d keys", w, len(c.keys))
		}
		if span := c.rows[len(c.rows)-1].Time - c.rows[0].Time; span < 4*time.Second || span > 6*time.Second {
			t.Errorf("100 requests at 20/s span %v", span)
		}
	})
	t.Run("azure", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.RequestTrace = filepath.Join(td, "azure_code_head200.csv")
		cfg.GenerationMode, cfg.ReplayCycles, cfg.Duration = "none", 1, time.Hour
		c, res := collect(t, &cfg)
		if res.RequestsCompleted != 200 {
			t.Errorf("%d requests, want 200", res.RequestsCompleted)
		}
		allKeysMatch(t, c, `^trace_user_\d+_req_\d{4}$`)
	})
}

// TestMLPerfKeyStyle checks the reference's conversation keys, which embed
// an epoch in milliseconds, and kvbench's, which do not.
func TestMLPerfKeyStyle(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GenerationMode, cfg.Seed = 5, 10*time.Second, "none", 42
	c, _ := collect(t, &cfg)
	allKeysMatch(t, c, `^conv_user_\d{4}_\d{4}_turn_\d+$`)
	cfg.KeyStyle = "mlperf"
	c2, _ := collect(t, &cfg)
	allKeysMatch(t, c2, `^conv_user_\d{4}_17672256\d{5}_turn_\d+$`)
	if len(c.rows) != len(c2.rows) {
		t.Errorf("key style changed the workload: %d and %d rows", len(c.rows), len(c2.rows))
	}
}

// TestMLPerfKeysUniqueUnderArrivals checks that the mlperf key style
// names each conversation once: under an open arrival process a user gets
// several requests a millisecond, and two of its conversations started in
// one millisecond took one id, so the second's turns were written under
// the first's keys with other sizes.
func TestMLPerfKeysUniqueUnderArrivals(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GenerationMode, cfg.Seed = 5, 5*time.Second, "none", 42
	cfg.KeyStyle, cfg.Arrival, cfg.RequestRate = "mlperf", ArrivalPoisson, 2000
	c, _ := collect(t, &cfg)
	allKeysMatch(t, c, `^conv_user_\d{4}_17672256\d{5}_turn_\d+$`)
	size := map[string]int64{}
	prefill := map[string]int{}
	for _, r := range c.rows {
		k := string(r.Key)
		if s, ok := size[k]; ok && s != r.Size {
			t.Fatalf("key %s has sizes %d and %d", k, s, r.Size)
		}
		size[k] = r.Size
		if r.Op == schema.OpWrite && r.Phase == schema.PhasePrefill {
			if prefill[k]++; prefill[k] > 1 {
				t.Fatalf("key %s written twice", k)
			}
		}
	}
}

// TestDecodeOnlyAndPrecondition checks the pre-run phases: their rows come
// first, a microsecond apart, and the measured window starts after them.
func TestDecodeOnlyAndPrecondition(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GPUMemGB, cfg.CPUMemGB, cfg.DecodeOnly = 5, 10*time.Second, 0, 4, true
	c, res := collect(t, &cfg)
	for i := range 50 {
		if !c.keys["prepop_"+strconv.Itoa(i)] {
			t.Fatalf("prepop_%d not written", i)
		}
	}
	if res.Kvbench.MeasuredFromS <= 0 {
		t.Errorf("measured window starts at %v", res.Kvbench.MeasuredFromS)
	}
	for _, r := range c.rows {
		if r.Op == schema.OpWrite && r.Phase == schema.PhasePrefill && !strings.HasPrefix(string(r.Key), "prepop_") {
			t.Fatalf("decode-only wrote %s", r.Key)
		}
	}
	// The statistics start with the measured run (the reference's
	// reset_stats): the pre-population's writes are not counted.
	if w := res.Summary.CacheStats.PrefillWrites; w != 0 {
		t.Errorf("decode-only run counts %d prefill writes, want 0 (the pre-population's are not counted)", w)
	}
	cfg = DefaultConfig()
	cfg.NumUsers, cfg.Duration, cfg.GPUMemGB, cfg.CPUMemGB = 5, 5*time.Second, 0, 4
	cfg.Precondition, cfg.PreconditionSizeGB, cfg.StorageCapacityGB = true, 2, 1
	c, res = collect(t, &cfg)
	if !c.keys["precond_0"] || c.cells["Delete Evict"] == 0 {
		t.Errorf("preconditioning 2 GiB into a 1 GiB NVMe tier: %v", c.cells)
	}
	measured := int64(0)
	for _, r := range c.rows {
		if r.Op == schema.OpWrite && r.Phase == schema.PhasePrefill && !strings.HasPrefix(string(r.Key), "precond_") {
			measured++
		}
	}
	if w := res.Summary.CacheStats.PrefillWrites; w != measured || w == 0 {
		t.Errorf("preconditioned run counts %d prefill writes, want the %d of the measured run", w, measured)
	}
	// With nothing to size it by (an unbounded NVMe tier, no
	// --precondition-size-gb) preconditioning is skipped, as the
	// reference skips it with a warning: kvtrace warns too (a tool prints
	// Warnings on stderr; Notes only reach the sidecar).
	cfg.PreconditionSizeGB, cfg.StorageCapacityGB = 0, 0
	c, res = collect(t, &cfg)
	if c.keys["precond_0"] {
		t.Errorf("preconditioning with no size wrote precond_0")
	}
	if !slices.ContainsFunc(res.Kvbench.Warnings, func(w string) bool { return strings.HasPrefix(w, "--precondition: skipped") }) {
		t.Errorf("preconditioning skipped with warnings %q: want one that says so", res.Kvbench.Warnings)
	}
}

// TestUsersAndTokens checks the User and Tokens of request rows: every
// row of a request names one user of the run (its index + 1) and the
// tokens the request generates; a user's keys are its own; rows outside
// requests name no user.
func TestUsersAndTokens(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumUsers, cfg.Duration = 12, 30*time.Second
	c, _ := collect(t, &cfg)
	type reqInfo struct {
		user   uint64
		tokens int64
	}
	reqs := map[uint64]reqInfo{}
	users := map[uint64]bool{}
	userKey := regexp.MustCompile(`user_(\d{4})`)
	for _, r := range c.rows {
		if r.Request == 0 {
			if r.User != 0 || r.Tokens != 0 {
				t.Fatalf("row outside a request with user %d, tokens %d: %s", r.User, r.Tokens, r.String())
			}
			continue
		}
		if r.User < 1 || r.User > uint64(cfg.NumUsers) || r.Tokens <= 0 {
			t.Fatalf("request row with user %d, tokens %d: %s", r.User, r.Tokens, r.String())
		}
		if prev, ok := reqs[r.Request]; ok && prev != (reqInfo{r.User, r.Tokens}) {
			t.Fatalf("request %d: user/tokens %v then %d/%d", r.Request, prev, r.User, r.Tokens)
		}
		reqs[r.Request] = reqInfo{r.User, r.Tokens}
		users[r.User] = true
		if m := userKey.FindSubmatch(r.Key); m != nil && r.Phase == schema.PhasePrefill {
			if n, _ := strconv.Atoi(string(m[1])); uint64(n)+1 != r.User {
				t.Fatalf("user %d writes another user's key: %s", r.User, r.String())
			}
		}
	}
	if len(users) < cfg.NumUsers/2 {
		t.Errorf("%d users issued requests, of %d", len(users), cfg.NumUsers)
	}
}

// TestShortRunKeepsDecodeReads: in a realistic run shorter than a
// request's generation (10 s; document users generate up to 800 tokens,
// 24 s), kv-cache.py still makes every decode read of the request, 1 +
// ceil(tokens / 32), before it sleeps through the generation; kvtrace cut
// synthetic users' tokens to what --duration holds (333 at 30 ms), and
// with them up to half of their decode reads. Only a trace's lengths,
// which can be absurd, are bounded by --duration.
func TestShortRunKeepsDecodeReads(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Seed, cfg.NumUsers, cfg.Duration, cfg.GPUMemGB, cfg.CPUMemGB = 42, 50, 10*time.Second, 0, 4
	cfg.DisableMultiTurn = true // a request's decode reads are then the only reads of its key
	c, _ := collect(t, &cfg)
	tokens := map[uint64]int64{}
	reads := map[uint64]int64{}
	for _, r := range c.rows {
		if r.Request == 0 {
			continue
		}
		tokens[r.Request] = r.Tokens
		if r.Op == schema.OpRead && r.Phase == schema.PhaseDecode {
			reads[r.Request]++
		}
	}
	long := 0
	for id, tok := range tokens {
		if tok <= 333 || reads[id] == 0 {
			continue // short, or prefill-only (10,000 tokens or more)
		}
		long++
		if want := 1 + (tok+31)/32; reads[id] != want {
			t.Errorf("request %d: %d tokens, %d decode reads; want %d", id, tok, reads[id], want)
		}
	}
	if long == 0 {
		t.Error("no request generates more than 333 tokens (10 s at 30 ms a token): their decode reads were cut to --duration")
	}
}

// TestZeroThinkTime checks that users of think time 0 (think_time_range
// [0, 0] from --config) end: they waited 0 between requests and virtual
// time never advanced, and under --arrival without --request-rate their
// rate was 0, the gap infinite and the rows' times negative.
func TestZeroThinkTime(t *testing.T) {
	for _, arrival := range []string{"", ArrivalPoisson} {
		t.Run("arrival="+arrival, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.NumUsers, cfg.Duration, cfg.GenerationMode, cfg.Arrival = 2, 2*time.Second, "none", arrival
			for i := range cfg.UserTemplates {
				cfg.UserTemplates[i].ThinkMin, cfg.UserTemplates[i].ThinkMax = 0, 0
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := Run(ctx, &cfg, func(r *schema.Record) error {
				if r.Time < 0 || r.Time > cfg.Duration {
					return fmt.Errorf("row at %v, outside the run's 0-%v", r.Time, cfg.Duration)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// About one request per user every minSpacing (arrivals
			// draw their gaps).
			if most := 2 * int64(cfg.NumUsers) * int64(cfg.Duration/minSpacing); res.RequestsCompleted == 0 || res.RequestsCompleted > most {
				t.Errorf("%d requests completed, want 1 to %d", res.RequestsCompleted, most)
			}
		})
	}
}
