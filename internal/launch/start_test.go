package launch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParseStartAtForms: --start-at takes RFC 3339 and Unix seconds, the
// same instant either way, and nothing else.
func TestParseStartAtForms(t *testing.T) {
	now := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	a, _, err := ParseStartAt("2026-11-24T20:00:00Z", now)
	b, _, err2 := ParseStartAt(strconv.FormatInt(a.Unix(), 10), now)
	if err != nil || err2 != nil || !a.Equal(b) {
		t.Errorf("start-at: %v %v, %v %v", a, err, b, err2)
	}
	if _, _, err := ParseStartAt("soon", now); err == nil {
		t.Errorf("start-at soon: no error")
	}
}

// TestStartAtBounds: --start-at is checked against the clock when it is
// parsed (a fixed one here): instants that cannot be represented, or lie
// more than a day ahead or an hour behind, are refused; one a few seconds
// or more behind starts at once with a warning.
func TestStartAtBounds(t *testing.T) {
	now := time.Date(2026, 11, 24, 19, 0, 0, 500_000_000, time.UTC)
	unix := func(d time.Duration) string {
		return strconv.FormatFloat(float64(now.Add(d).UnixNano())/1e9, 'f', 3, 64)
	}
	tests := []struct {
		in       string
		want     time.Time
		wantErr  string
		wantWarn string
	}{
		{in: unix(time.Minute), want: now.Add(time.Minute)},
		{in: unix(0), want: now},
		{in: unix(-2 * time.Second), want: now.Add(-2 * time.Second)},
		{in: unix(-10 * time.Minute), want: now.Add(-10 * time.Minute), wantWarn: "10m0s ago"},
		{in: "2026-11-24T18:59:50Z", want: now.Add(-10500 * time.Millisecond), wantWarn: "starts at once"},
		{in: unix(23 * time.Hour), want: now.Add(23 * time.Hour)},
		{in: unix(25 * time.Hour), wantErr: "more than 24h after now (2026-11-24T19:00:00Z)"},
		{in: unix(-2 * time.Hour), wantErr: "more than 1h before now"},
		{in: "2026-11-26T20:00:00Z", wantErr: "more than 24h after now"},
		{in: "2026-11-24T17:00:00Z", wantErr: "more than 1h before now"},
		{in: "9999-12-31T23:59:59Z", wantErr: "after now"},
		{in: "0001-01-01T00:00:00Z", wantErr: "before now"},
		{in: "1e30", wantErr: "--start-at 1e30: more than 24h after now"},
		{in: "-1e30", wantErr: "--start-at -1e30: more than 1h before now"},
		{in: "9.3e18", wantErr: "after now"},
		{in: "0", wantErr: "before now"},
		{in: "NaN", wantErr: "want RFC 3339"},
		{in: "Inf", wantErr: "want RFC 3339"},
		{in: "-Inf", wantErr: "want RFC 3339"},
		{in: "1e400", wantErr: "want RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, warn, err := ParseStartAt(tt.in, now)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("%v, %q, %v: want an error with %q", got, warn, err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case got.Sub(tt.want).Abs() > time.Millisecond:
				t.Errorf("%v, want %v", got, tt.want)
			case tt.wantWarn == "" && warn != "", tt.wantWarn != "" && !strings.Contains(warn, tt.wantWarn):
				t.Errorf("warning %q, want %q", warn, tt.wantWarn)
			}
		})
	}
}

// TestWaitUntil returns at once for an instant past, and with the context's
// cause when it ends first.
func TestWaitUntil(t *testing.T) {
	if err := WaitUntil(t.Context(), time.Now().Add(-time.Hour)); err != nil {
		t.Errorf("a past instant: %v", err)
	}
	stop := errors.New("stopped")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(stop)
	if err := WaitUntil(ctx, time.Now().Add(time.Hour)); !errors.Is(err, stop) {
		t.Errorf("an ended context: %v, want %v", err, stop)
	}
}

// TestParseStart: --start-at and --start-barrier exclude each other, the
// barrier needs a timeout, and neither means no wait.
func TestParseStart(t *testing.T) {
	now := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	file := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at, dir string
		timeout time.Duration
		waits   bool
		wantErr string
	}{
		{"", "", time.Minute, false, ""},
		{"2026-11-24T19:30:00Z", "", time.Minute, true, ""},
		{"", "/shared/b", time.Minute, true, ""},
		{"2026-11-24T19:30:00Z", "/shared/b", time.Minute, false, "--start-barrier with --start-at: give one"},
		{"", "/shared/b", 0, false, "--start-barrier-timeout 0s: must be above 0"},
		{"1e30", "", time.Minute, false, "--start-at 1e30: more than 24h after now"},
		// A barrier is made and written into: never under /etc (kvreplay
		// made /etc/x and its ready file), never over a file (exit 1 after
		// the setup, "mkdir: not a directory").
		{"", "/etc/kvbench-test-barrier", time.Minute, false, "--start-barrier /etc/kvbench-test-barrier: refusing a path under the system directory /etc"},
		{"", "/dev/shm/kvbench-test-barrier", time.Minute, true, ""},
		{"", file, time.Minute, false, "--start-barrier " + file + ": not a directory"},
	} {
		s, err := ParseStart(c.at, c.dir, c.timeout, now)
		if c.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
				t.Errorf("ParseStart(%q, %q, %s) = %v, want %q", c.at, c.dir, c.timeout, err, c.wantErr)
			}
			continue
		}
		if err != nil || s.Waits() != c.waits {
			t.Errorf("ParseStart(%q, %q, %s): waits %v, %v; want %v", c.at, c.dir, c.timeout, s.Waits(), err, c.waits)
		}
	}
}

// TestStartWaitsForBarrierOnce: a Start at a barrier passes it once (one
// rank: the barrier's grace second after its ready file) and keeps the
// instant it gave; a second Wait does not go back to the barrier, whose
// ready file would now refuse it.
func TestStartWaitsForBarrierOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "barrier")
	s, err := ParseStart("", dir, time.Minute, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	r := Rank{Rank: 0, Ranks: 1}
	if err := s.Wait(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	if s.At.Before(before) || time.Since(s.At) < 0 || !s.Waits() {
		t.Fatalf("after the barrier: At %v (Wait began at %v, ended at %v), waits %v", s.At, before, time.Now(), s.Waits())
	}
	if err := s.Wait(t.Context(), r); err != nil {
		t.Fatalf("a second Wait went back to the barrier: %v", err)
	}
}

// TestStartLate: a rank that starts more than the barrier's grace after
// the ranks' instant says it was late, naming the flag; one in step, one
// without an instant, and one whose --start-at was already past when it
// started (its own warning said so) say nothing more. Only the first
// start can be late: a search's later probes start when ready.
func TestStartLate(t *testing.T) {
	now := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	at, err := ParseStart("2026-11-24T19:00:10Z", "", time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	past, err := ParseStart("2026-11-24T18:59:00Z", "", time.Minute, now)
	if err != nil || past.Warning == "" {
		t.Fatalf("a past --start-at: %v, warning %q", err, past.Warning)
	}
	barrier, err := ParseStart("", t.TempDir(), time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	barrier.At, barrier.barrier = now, nil // as passed
	instant := now.Add(10 * time.Second)
	for _, c := range []struct {
		s       Start
		started time.Time
		want    string
	}{
		{at, instant.Add(300 * time.Millisecond), ""},
		{at, instant.Add(lateBound), ""},
		{at, instant.Add(2500 * time.Millisecond), "--start-at: this rank started 2.5s after the ranks' start instant 2026-11-24T19:00:10Z: it was late"},
		{barrier, now.Add(4 * time.Second), "--start-barrier: this rank started 4s after the ranks' start instant 2026-11-24T19:00:00Z: it was late"},
		{past, now.Add(time.Minute), ""},
		{Start{}, now, ""},
	} {
		got := c.s.lateAt(c.started)
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s started %s: Late %q, want %q", c.s.flag, c.started.Format(time.RFC3339Nano), got, c.want)
		}
	}
	late := at
	late.At = time.Now().Add(-time.Minute)
	if err := late.Wait(t.Context(), Rank{Ranks: 1}); err != nil {
		t.Fatal(err)
	}
	if w := late.Late(); !strings.HasPrefix(w, "--start-at: this rank started 1m0") {
		t.Errorf("first start a minute late: %q", w)
	}
	if err := late.Wait(t.Context(), Rank{Ranks: 1}); err != nil || late.Late() != "" {
		t.Errorf("a second start (a probe): %v, warning %q; want none", err, late.Late())
	}
}
