package setup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
)

// TestTimeBound: --fit bounds a replay at --fit-time only when the trace
// at --speed would take longer or, at --speed max, when its bytes at the
// rates assumed would (an s3 tier's 25 GB took over 10 minutes, unbounded),
// and never under a --duration already within it, or with --fit-time 0.
func TestTimeBound(t *testing.T) {
	plan := &replay.Plan{Span: 600 * time.Second}
	disk := &replay.Plan{Span: 600 * time.Second, Written: map[string]int64{"nvme": 10e9}, Read: map[string]int64{"nvme": 10e9}}
	s3 := &replay.Plan{Span: 600 * time.Second, Written: map[string]int64{"s3": 10e9}, Read: map[string]int64{"s3": 25e9}}
	disk2 := &replay.Plan{Span: 600 * time.Second, Written: map[string]int64{"nvme": 20e9}, Read: map[string]int64{"nvme": 20e9}}
	for _, tc := range []struct {
		plan     *replay.Plan
		limit    time.Duration
		speed    float64
		duration time.Duration
		want     time.Duration
	}{
		{plan, 2 * time.Minute, 1, 0, 2 * time.Minute},
		{plan, 2 * time.Minute, 10, 0, 0},              // 60 s at 10x
		{plan, 2 * time.Minute, 2, 0, 2 * time.Minute}, // 300 s at 2x
		{plan, 2 * time.Minute, 0, 0, 0},               // --speed max, no bytes known
		{disk, 2 * time.Minute, 0, 0, 0},               // 20 GB at 1 GB/s: 20 s
		{s3, 2 * time.Minute, 0, 0, 2 * time.Minute},   // 35 GB at 0.25 GB/s: 140 s
		{s3, 2 * time.Minute, 0, time.Minute, 0},       // --duration within it
		{plan, 2 * time.Minute, 1, time.Minute, 0},     // --duration within it
		{plan, 2 * time.Minute, 1, 5 * time.Minute, 2 * time.Minute},
		{plan, 0, 1, 0, 0},
	} {
		cfg := replay.Config{Speed: tc.speed, Duration: tc.duration}
		f := Fitting{Time: tc.limit}
		if got := f.timeBound(&cfg, tc.plan, replay.Machine{}); got != tc.want {
			t.Errorf("--fit-time %v, --speed %g, --duration %v, %v written: %v, want %v", tc.limit, tc.speed, tc.duration, tc.plan.Written, got, tc.want)
		}
	}
	// --dir on an object store's gateway (s3fs): the NVMe tier's bytes at
	// the object store's 0.25 GB/s. 20 GB take 80 s there, 40 GB 160 s
	// (at a disk's 1 GB/s, 40 s: unbounded).
	for _, tc := range []struct {
		plan    *replay.Plan
		gateway string
		want    time.Duration
	}{
		{disk, "s3fs", 0},
		{disk2, "s3fs", 2 * time.Minute},
		{disk2, "", 0},
	} {
		f := Fitting{Time: 2 * time.Minute}
		if got := f.timeBound(&replay.Config{}, tc.plan, replay.Machine{DiskGateway: tc.gateway}); got != tc.want {
			t.Errorf("--speed max, %v written, on %q: %v, want %v", tc.plan.Written, tc.gateway, got, tc.want)
		}
	}
	line := Fitting{Time: 2 * time.Minute}.timeLine(&replay.Config{Speed: 1}, plan, replay.Machine{}, 2*time.Minute)
	if !strings.HasPrefix(line, "--duration 2m0s: the trace's 600.0 s at --speed 1 take 600.0 s, longer than --fit-time 2m0s") {
		t.Errorf("timeLine: %q", line)
	}
}

// TestFittingCheck: --plan, --fit, --fit-time and --format are refused in
// the combinations that mean nothing, each naming the flag to change.
func TestFittingCheck(t *testing.T) {
	for _, tc := range []struct {
		f                      Fitting
		output, search         string
		formatGiven, timeGiven bool
		want                   string // "" for none; else the one error's start
	}{
		{f: Fitting{Format: "text", Time: DefaultFitTime}},
		{f: Fitting{Print: true, Format: "json"}, formatGiven: true},
		{f: Fitting{Apply: true, Format: "text", Time: time.Minute}, timeGiven: true},
		{f: Fitting{Format: "yaml"}, want: "--format yaml: want text or json"},
		{f: Fitting{Format: "json"}, formatGiven: true, want: "--format json: the format of --plan's output: add --plan"},
		{f: Fitting{Print: true, Apply: true, Format: "text"}, want: "--plan and --fit:"},
		{f: Fitting{Print: true, Format: "text"}, output: "r.json", want: "-o r.json: --plan prints its plan on stdout"},
		{f: Fitting{Print: true, Format: "text"}, output: "-"},
		{f: Fitting{Format: "text", Time: time.Minute}, timeGiven: true, want: "--fit-time 1m0s: bounds what --fit applies"},
		{f: Fitting{Apply: true, Format: "text", Time: -time.Second}, want: "--fit-time -1s: must not be negative"},
		{f: Fitting{Print: true, Format: "text"}, search: "users", want: "--plan and --search users: give one"},
	} {
		errs := tc.f.Check(tc.output, tc.search, tc.formatGiven, tc.timeGiven)
		switch {
		case tc.want == "" && len(errs) != 0:
			t.Errorf("%+v: %v, want no error", tc.f, errs)
		case tc.want != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want)):
			t.Errorf("%+v: %v, want one error starting %q", tc.f, errs, tc.want)
		}
	}
}

// failAfter is a writer that takes n writes, then fails each one.
type failAfter struct {
	n      int
	writes int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.writes++; f.writes > f.n {
		return 0, errClosed
	}
	return len(p), nil
}

var errClosed = errors.New("write /dev/stdout: broken pipe")

// TestWritePlanWriteError: --plan's text is many writes, and the first
// that fails is WritePlan's error, wherever it comes (kvreplay --plan of a
// plan that fits, into /dev/full or a closed pipe, printed nothing and
// exited 0: only the options' table's flush was checked); as JSON too,
// which is one write.
func TestWritePlanWriteError(t *testing.T) {
	cfg := replay.DefaultConfig()
	plan := nvmePlan(1 << 20)
	opts := &Options{Dir: t.TempDir()}
	for _, format := range []string{"text", "json"} {
		for _, n := range []int{0, 1, 5} {
			if format == "json" && n > 0 {
				break // one write
			}
			if err := (Fitting{}).WritePlan(context.Background(), &failAfter{n: n}, format, []string{"t.csv"}, nil, &cfg, plan, opts); !errors.Is(err, errClosed) {
				t.Errorf("%s, failing after %d writes: %v; want the write's error", format, n, err)
			}
		}
		var b strings.Builder
		if err := (Fitting{}).WritePlan(context.Background(), &b, format, []string{"t.csv"}, nil, &cfg, plan, opts); err != nil || b.Len() == 0 {
			t.Errorf("%s: %v, %d bytes; want the plan", format, err, b.Len())
		}
	}
}

// TestNotFitErrorOffersWhatFits: a replay's refusal offers only options
// that make it fit: not a pace's (--closed-loop, --speed) for a replay
// short of space, and "--fit applies the first" only where the first is
// --fit's. kvreplay --fit --duration 10s on a 2 MiB --dir said "use
// --closed-loop (...), or --speed 0.000495 (...); --fit applies the first".
func TestNotFitErrorOffersWhatFits(t *testing.T) {
	closed := replay.Option{Option: "--closed-loop", Effect: "each user waits", Pace: true}
	speed := replay.Option{Option: "--speed 0.0005", Effect: "slows the trace's pace", Pace: true}
	scale := replay.Option{Option: "--size-scale 1/64", Effect: "nvme 1 GiB peak"}
	capacity := replay.Option{Option: "--capacity 1.00 GiB", Effect: "bounds Tier-2"}
	disk := []string{"disk: the NVMe tier needs 2.01 TiB and /small has 2.00 MiB free"}
	rate := []string{"bandwidth: the trace's pace asks 9 GB/s of the nvme tier"}
	for _, tt := range []struct {
		name      string
		a         replay.Advice
		want, not []string
	}{
		{"short of space, only paces", replay.Advice{Blockers: disk, Problems: rate, Options: []replay.Option{closed, speed}},
			[]string{disk[0], "no --size-scale alone makes it fit"}, []string{"--closed-loop", "--speed", "--fit applies"}},
		{"short of space, a bound", replay.Advice{Blockers: disk, Problems: rate, Options: []replay.Option{capacity, closed, speed}},
			[]string{disk[0], "use --capacity 1.00 GiB (bounds Tier-2) (kvreplay --plan shows the plan)"}, []string{"--closed-loop", "--speed", "--fit applies"}},
		{"short of space, --fit's scale", replay.Advice{Blockers: disk, Problems: rate, Fit: &replay.Fit{Scale: 1.0 / 64}, Options: []replay.Option{scale, closed}},
			[]string{"use --size-scale 1/64 (nvme 1 GiB peak); kvreplay --plan shows the plan, --fit applies the first"}, []string{"--closed-loop"}},
		{"runs, asks too much", replay.Advice{Runs: true, Problems: rate, Options: []replay.Option{closed, speed}},
			[]string{rate[0], "use --closed-loop (each user waits), or --speed 0.0005"}, []string{"--fit applies"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := notFitError(&tt.a).Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(msg, n) {
					t.Errorf("%q has %q", msg, n)
				}
			}
		})
	}
}

// TestPlanHeaderStandIn: --plan names the tier --fit gives a tier the map
// leaves out (replay.StandIn): Tier-3 goes to nvme, as --fit applies it,
// not to ram, as the plan said while "--fit applies --tier-map
// Tier-3=nvme" closed it.
func TestPlanHeaderStandIn(t *testing.T) {
	cfg := replay.DefaultConfig()
	plan := &replay.Plan{Scanned: true, Rows: 10}
	for _, tier := range []schema.Tier{schema.TierGPU, schema.TierObject} {
		plan.Used[tier], plan.UsedRows[tier] = true, 5
	}
	var b strings.Builder
	writeHeader(&b, &PlanDoc{Traces: []string{"t.csv"}, Advice: &replay.Advice{}}, &cfg, plan)
	for _, tier := range []schema.Tier{schema.TierGPU, schema.TierObject} {
		want := fmt.Sprintf("--fit maps them to %s (--tier-map %s=%s;", replay.StandIn(tier), tier, replay.StandIn(tier))
		if !strings.Contains(b.String(), tier.String()+": 5 rows and --tier-map maps it to nothing: a replay refuses them, "+want) {
			t.Errorf("%s: want %q in\n%s", tier, want, b.String())
		}
	}
}
