package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// Sources opens the traces' descriptions (names; "-" is stdin); regular files can be read twice
// (the prescan), stdin and named pipes once. Opening a trace stops when
// ctx is done, a named pipe's wait for its writer included.
func Sources(ctx context.Context, names []string) ([]replay.Source, error) {
	var srcs []replay.Source
	stdin := 0
	for _, name := range names {
		name := name
		s := replay.Source{Name: name, Open: func() (*trace.Reader, error) { return trace.Open(name) },
			Stored: func() (io.ReadCloser, error) { return openStored(ctx, name) }}
		if name == "-" {
			stdin++
			if stdin > 1 {
				return nil, errors.New("stdin (-) given twice")
			}
		} else {
			fi, err := os.Stat(name)
			if err != nil {
				return nil, fmt.Errorf("trace: %w", cli.FileError(err))
			}
			s.Rescan = fi.Mode().IsRegular()
			if m, err := trace.ReadMeta(name); err == nil {
				s.Meta = m
			} else if !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
		srcs = append(srcs, s)
	}
	return srcs, nil
}

// openStored opens a trace's bytes as stored: the file, or stdin for "-"
// (a pipe there is read until ctx is done: cli.OpenStdin).
func openStored(ctx context.Context, name string) (io.ReadCloser, error) {
	if name == "-" {
		return cli.OpenStdin(ctx), nil
	}
	f, err := cli.OpenRead(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return f, nil
}

// ApplyModel resolves --model (model) into cfg's bytes per token, from the
// model table kvtrace simulates with (bytesPerToken, by model name), so
// that a trace without a sidecar (kv-cache.py's) has its KV tokens
// measured. tpGiven says that --tensor-parallel was given, which means
// nothing without --model.
func ApplyModel(cfg *replay.Config, model string, bytesPerToken map[string]int64, tpGiven bool) []error {
	var errs []error
	if tp := cfg.TensorParallel; tp == 0 { // the rest is Config.Validate's
		errs = append(errs, fmt.Errorf("--tensor-parallel %d: must be between 1 and 1024", tp))
	}
	if model == "" {
		if tpGiven {
			errs = append(errs, fmt.Errorf("--tensor-parallel %d: only with --model (a trace's sidecar gives its own)", cfg.TensorParallel))
		}
		return errs
	}
	b, ok := bytesPerToken[model]
	if !ok {
		return append(errs, fmt.Errorf("--model %s: unknown model (want one of %s)", parsemsg.Arg(model), strings.Join(slices.Sorted(maps.Keys(bytesPerToken)), ", ")))
	}
	cfg.BytesPerToken = b
	return errs
}

// CheckSidecars refuses a --model (model, its bytes per token and tensor
// parallelism in cfg) that contradicts a trace's sidecar: the sidecar's
// bytes per token are the trace's own.
func CheckSidecars(model string, cfg *replay.Config, srcs []replay.Source) error {
	if model == "" {
		return nil
	}
	for _, s := range srcs {
		m := s.Meta
		if m == nil || m.BytesPerToken <= 0 {
			continue
		}
		if m.BytesPerToken != cfg.BytesPerToken || max(1, m.TensorParallel) != cfg.TensorParallel {
			return fmt.Errorf("--model %s: %s's sidecar says model %s (%d bytes per token, tensor parallelism %d), not %d bytes per token at %d: leave --model out for a trace with a sidecar",
				model, s.Name, m.Model, m.BytesPerToken, max(1, m.TensorParallel), cfg.BytesPerToken, cfg.TensorParallel)
		}
	}
	return nil
}

// Prescan opens the traces (Sources), checks their sidecars against
// --model (CheckSidecars) and plans the replay of cfg (f.Prepare): the
// part a run and --plan share. A bad trace is the user's input (exit 2).
func Prescan(ctx context.Context, traces []string, model string, cfg *replay.Config, f Fitting) ([]replay.Source, *replay.Plan, error) {
	srcs, err := Sources(ctx, traces)
	if err != nil {
		return nil, nil, cli.Input(err)
	}
	if err := CheckSidecars(model, cfg, srcs); err != nil {
		return nil, nil, cli.Input(err)
	}
	plan, err := f.Prepare(ctx, cfg, srcs)
	if err != nil {
		if InputError(err) {
			return nil, nil, cli.Input(err)
		}
		return nil, nil, err
	}
	return srcs, plan, nil
}

// ConfigJSON is the configuration a result records: cfg, and where and how
// the tiers lived (opts), in snake case.
func ConfigJSON(cfg *replay.Config, opts *Options) json.RawMessage {
	c := struct {
		replay.Config
		Dir       string `json:"dir"`
		Layout    string `json:"layout"`
		Device    string `json:"device,omitempty"`
		Keep      bool   `json:"keep"`
		Buffered  bool   `json:"buffered"`
		Prewrite  bool   `json:"prewrite"`
		RAMBudget int64  `json:"ram_budget"`
	}{*cfg, opts.Dir, opts.Layout, opts.Device, opts.Keep, opts.Buffered, opts.Prewrite && opts.Layout == "extent", opts.RAMBudget}
	b, _ := json.Marshal(c)
	return schema.SnakeCaseKeys(b) // replay.Config's Go field names
}
