package cli_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/spf13/pflag"
)

func TestExitCode(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, cli.ExitOK},
		{"help", pflag.ErrHelp, cli.ExitOK},
		{"wrapped help", fmt.Errorf("kvtrace: %w", pflag.ErrHelp), cli.ExitOK},
		{"plain", boom, cli.ExitFailure},
		{"canceled", context.Canceled, cli.ExitFailure},
		{"wrapped canceled", fmt.Errorf("replay: %w", context.Canceled), cli.ExitFailure},
		{"deadline", context.DeadlineExceeded, cli.ExitFailure},
		{"usagef", cli.Usagef("--users 0: must be at least 1"), cli.ExitUsage},
		{"input", cli.Input(boom), cli.ExitUsage},
		{"wrapped input", fmt.Errorf("kvreplay: %w", cli.Input(boom)), cli.ExitUsage},
		{"usage error value", &cli.UsageError{Err: boom}, cli.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cli.ExitCode(tt.err); got != tt.want {
				t.Fatalf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestUsageError(t *testing.T) {
	if cli.Input(nil) != nil {
		t.Fatal("Input(nil) != nil")
	}
	err := cli.Input(fs.ErrNotExist)
	if err.Error() != fs.ErrNotExist.Error() {
		t.Fatalf("Input changed the message to %q", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("Input does not unwrap")
	}
	var ue *cli.UsageError
	if !errors.As(err, &ue) || ue.Err != fs.ErrNotExist {
		t.Fatal("Input is not an *UsageError")
	}
	if again := cli.Input(err); again != err {
		t.Fatal("Input wrapped an already marked error again")
	}
	u := cli.Usagef("--dir %s: %w", "/x", fs.ErrPermission)
	if u.Error() != "--dir /x: permission denied" || !errors.Is(u, fs.ErrPermission) {
		t.Fatalf("Usagef = %q, unwraps %v", u, errors.Is(u, fs.ErrPermission))
	}
}
