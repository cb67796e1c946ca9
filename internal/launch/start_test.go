package launch

import (
	"context"
	"errors"
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
