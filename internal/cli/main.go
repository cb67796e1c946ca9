package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/internal/parsemsg"
)

// SignalContext returns a context that is cancelled when the process
// receives SIGINT, SIGTERM or SIGHUP (its terminal or ssh session went
// away), one it did not start with ignored (nohup, a script's background
// job), which it keeps ignoring; context.Cause then names the signal. Signals
// that follow within SignalGrace are ignored, so that a second one sent
// right after the first (kill twice, a supervisor's repeat, ^C^C) lets the
// cleanup the first one started finish (removing a file of gigabytes, its
// directory); one after it ends the process at once, killed by that
// signal, so that a later ^C stops a tool whose cleanup hangs. The
// CancelFunc must be called to release the signal handler. Main does the
// same and says what each later signal does.
func SignalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signalContext(parent, SignalGrace, nil)
}

// SignalGrace is how long after the first SIGINT, SIGTERM or SIGHUP
// SignalContext ignores more of them.
const SignalGrace = 2 * time.Second

// signalCause is the cause of a context that a signal cancelled: its
// message is os/signal.NotifyContext's, "interrupt signal received".
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return c.sig.String() + " signal received" }

// Is makes the cause match context.Canceled, as NotifyContext's does.
func (c signalCause) Is(target error) bool { return target == context.Canceled }

// signalContext is SignalContext with its grace, calling again (where
// not nil) for each signal after the first, with the time since the
// first: within grace the signal is then ignored, and after it the
// process is killed by the signal once again returns.
func signalContext(parent context.Context, grace time.Duration, again func(sig os.Signal, since time.Duration)) (context.Context, context.CancelFunc) {
	// SIGHUP too: its default action left the run's files and its
	// output's temporary behind. Notify would end the ignoring of a
	// signal the process started with ignored.
	var sigs []os.Signal
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) == 0 { // Notify with none would catch every signal
		return context.WithCancel(parent)
	}
	ctx, cancel := context.WithCancelCause(parent)
	// Room for a burst: Notify drops what does not fit.
	caught := make(chan os.Signal, 4)
	signal.Notify(caught, sigs...)
	released := make(chan struct{})
	go func() {
		// One goroutine takes every signal, in order, and the first
		// cancels ctx: whoever sees ctx done knows that the next signal
		// is a repeat, timed from this first one.
		var first time.Time
		for {
			var s os.Signal
			select {
			case s = <-caught:
			case <-released:
				return
			}
			if first.IsZero() {
				first = time.Now()
				cancel(signalCause{s})
				continue
			}
			since := time.Since(first)
			if again != nil {
				again(s, since)
			}
			if since >= grace {
				dieOf(s)
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(caught)
			close(released)
		})
		cancel(context.Canceled)
	}
}

// dieOf ends the process by sig's default action, as if it had never been
// caught: a shell then sees a process that sig killed (status 128+sig),
// and a script or a loop around the tool stops too.
func dieOf(sig os.Signal) {
	signal.Reset(sig)
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(syscall.Getpid(), s)
	}
	select {} // the signal ends the process
}

// forcedStop is what Main says of a signal after the first: within grace
// (still stopping, once), or after it, what the process leaves behind as
// it ends at once (the run's leftovers).
type forcedStop struct {
	tool   string
	stderr io.Writer
	grace  time.Duration
	left   *outfile.Leftovers
	noted  bool // the note for a signal within grace was printed
	// list lists the leftovers (nil: left.List), for tests.
	list func() []outfile.Leftover
}

// leftovers lists the run's leftovers (list, or left.List).
func (f *forcedStop) leftovers() []outfile.Leftover {
	if f.list != nil {
		return f.list()
	}
	return f.left.List()
}

func (f *forcedStop) again(sig os.Signal, since time.Duration) {
	if since < f.grace && f.noted {
		return
	}
	within := since < f.grace
	f.noted = f.noted || within
	// A stderr that blocks (a pipe nobody reads), or a listing of the
	// leftovers that hangs (their file system hung, as the clean-up
	// may be), must not keep a process that was told to stop at once:
	// the handler waits for neither more than a second.
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		var b strings.Builder
		if within {
			fmt.Fprintf(&b, "%s signal received again: still stopping (writing its partial result, removing its files); another one %s or more after the first stops it at once, leaving them",
				sig, formatGrace(f.grace))
		} else {
			left := f.leftovers()
			fmt.Fprintf(&b, "%s signal received again, %s after the first: stopped at once, before its clean-up finished", sig, formatGrace(since))
			if len(left) == 0 {
				b.WriteString("; it leaves no file of its own")
			} else {
				b.WriteString("; it leaves (remove what nothing needs):")
				for _, l := range left {
					fmt.Fprintf(&b, "\n  %s: %s", l.Path, l.What)
				}
			}
		}
		printError(f.stderr, f.tool, b.String())
	}()
	select {
	case <-printed:
	case <-time.After(time.Second):
	}
}

// formatGrace writes d as "2 s" or "2.4 s".
func formatGrace(d time.Duration) string {
	return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s"
}

// Main runs a tool and returns its exit status; a main is
//
//	func main() { os.Exit(cli.Main("kvtrace", os.Args[1:], os.Stdout, os.Stderr, run)) }
//
// Main calls run under SignalContext, whose context carries the run's
// outfile.Leftovers: what the run made and has not yet taken back (an
// output's temporary file, a run directory). A signal within SignalGrace
// of the first gets a note on stderr, once, that the tool is still
// stopping; one after it ends the process at once, killed by that signal,
// with a message on stderr that names each leftover, where it is, and
// what it is ("the temporary file of r.json, which was not written"), or
// says that there is none. A *HelpError (ParseFlags' answer to
// --help) has its text printed on stdout, and the status is 0. Any other
// non-nil error is printed on stderr as "tool: message", every line of a
// multi-line message prefixed alike; an interrupted run's message is
// followed by the signal, as in "kvreplay: replay: context canceled
// (interrupt signal received)". The status is ExitCode of the error.
func Main(tool string, args []string, stdout, stderr io.Writer,
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) int {
	return mainGrace(tool, args, stdout, stderr, run, SignalGrace)
}

// mainGrace is Main with the grace of its signals.
func mainGrace(tool string, args []string, stdout, stderr io.Writer,
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error, grace time.Duration) int {
	st := &forcedStop{tool: tool, stderr: stderr, grace: grace, left: &outfile.Leftovers{}}
	ctx, stop := signalContext(outfile.WithLeftovers(context.Background(), st.left), grace, st.again)
	defer stop()
	err := run(ctx, args, stdout, stderr)
	if errors.Is(err, ErrVersion) {
		if _, werr := fmt.Fprintln(stdout, tool, Version()); werr != nil {
			printError(stderr, tool, werr.Error())
			return ExitFailure
		}
		return ExitOK
	}
	if he, ok := errors.AsType[*HelpError](err); ok {
		if _, werr := io.WriteString(stdout, he.Text); werr != nil {
			printError(stderr, tool, werr.Error())
			return ExitFailure
		}
		return ExitOK
	}
	// An output's file system that filled is named, whatever the tool
	// was writing (a trace, its sidecar, a document, an export's files).
	err = NameFullFileSystem(err)
	if err != nil && !errors.Is(err, pflag.ErrHelp) {
		msg := err.Error()
		if cause := context.Cause(ctx); cause != nil && errors.Is(err, context.Canceled) &&
			cause != context.Canceled && !strings.Contains(msg, cause.Error()) {
			msg += " (" + cause.Error() + ")"
		}
		printError(stderr, tool, msg)
	}
	return ExitCode(err)
}

// printError writes msg on w with every line prefixed by "tool: ", and
// Printable: a control character, a bidirectional override or a byte
// that is not UTF-8 in a path or a value a message names reaches no
// terminal as an escape sequence.
func printError(w io.Writer, tool, msg string) {
	var b strings.Builder
	for line := range strings.Lines(strings.TrimRight(msg, "\n")) {
		b.WriteString(tool)
		b.WriteString(": ")
		b.WriteString(parsemsg.Printable(strings.TrimSuffix(line, "\n")))
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		b.WriteString(tool + ": error\n")
	}
	_, _ = io.WriteString(w, b.String())
}

// NewFlagSet returns an empty flag set for tool that returns errors instead
// of exiting, keeps flags in the order they are defined, and writes to
// stderr. Its Usage prints usage, a preformatted block with the Usage and
// Examples sections, then "Options:" and the flags' defaults, on the flag
// set's output; ParseFlags captures it for --help, which goes to stdout.
func NewFlagSet(tool, usage string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(tool, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(stderr)
	fs.Usage = func() {
		var b strings.Builder
		b.WriteString(usage)
		if usage != "" && !strings.HasSuffix(usage, "\n") {
			b.WriteByte('\n')
		}
		if usage != "" {
			b.WriteByte('\n')
		}
		b.WriteString("Options:\n")
		b.WriteString(fs.FlagUsages())
		_, _ = io.WriteString(fs.Output(), b.String())
	}
	return fs
}

// ErrVersion is ParseFlags' answer to --version (AddStandard's): Main
// prints the tool's name and Version on stdout and exits 0, and nothing
// else of the command line is checked.
var ErrVersion = errors.New("version requested")

// HelpError is ParseFlags' answer to --help: Text is the usage to print.
// It is pflag.ErrHelp for errors.Is; Main prints Text on stdout and exits
// 0, as users of --help | less expect.
type HelpError struct {
	Text string
}

// Error says that help was requested.
func (e *HelpError) Error() string { return "help requested" }

// Is makes a HelpError match pflag.ErrHelp.
func (e *HelpError) Is(target error) bool { return target == pflag.ErrHelp }

// Help returns the usage text of fs, as --help prints it, in a *HelpError.
func Help(fs *pflag.FlagSet) error {
	var b strings.Builder
	out := fs.Output()
	fs.SetOutput(&b)
	defer fs.SetOutput(out)
	if fs.Usage != nil {
		fs.Usage()
	} else {
		b.WriteString(fs.FlagUsages())
	}
	return &HelpError{Text: b.String()}
}

// AddStandard defines the flags every tool has: -h/--help and --version.
// ParseFlags answers both (a *HelpError, ErrVersion) and Main prints them.
func AddStandard(fs *pflag.FlagSet) {
	fs.BoolP("help", "h", false, "show this help and exit")
	fs.Bool("version", false, "print the version and exit")
}

// ParseFlags parses args with fs and returns the positional arguments. A
// malformed flag or value is a usage error naming the flag and the value,
// such as "--block-size 12q: not a byte size (...)"; an unknown option gets
// a suggestion (Suggest): "unknown flag: --iodepth (did you mean
// --queue-depth?)". When --help is given
// (or -h, defined by AddStandard or not), ParseFlags returns a *HelpError
// holding fs.Usage's text, which is pflag.ErrHelp for errors.Is: Main
// prints it on stdout, and Main and ExitCode treat it as success; when
// --version is given, ErrVersion, which they treat alike.
func ParseFlags(fs *pflag.FlagSet, args []string) (rest []string, err error) {
	out := fs.Output()
	var discard strings.Builder
	fs.SetOutput(&discard) // pflag calls Usage for an undefined --help
	// fs.Parse stops at the first malformed value: ParseAll sets each
	// value as Parse does and goes on past one it refuses, so that every
	// malformed value is said at once, one a line (style.md: every problem
	// at once). An unknown flag or a missing value still ends the parse:
	// what follows it cannot be told apart from arguments.
	var bad []error
	err = fs.ParseAll(args, func(f *pflag.Flag, value string) error {
		err := fs.Set(f.Name, value)
		if _, ok := errors.AsType[*pflag.InvalidValueError](err); ok {
			bad = append(bad, oneLine(flagError(err)))
			return nil
		}
		return err
	})
	fs.SetOutput(out)
	if err != nil && errors.Is(err, pflag.ErrHelp) && len(bad) == 0 {
		return nil, Help(fs)
	}
	if err != nil {
		bad = append(bad, oneLine(flagError(unknownFlag(fs, err))))
	}
	if len(bad) > 0 {
		return nil, &UsageError{Err: errors.Join(bad...)}
	}
	if isSet(fs, "help") {
		return nil, Help(fs)
	}
	if isSet(fs, "version") {
		return nil, ErrVersion
	}
	return fs.Args(), nil
}

// lineError is an error whose message was not Printable (an option
// typed with a newline in it, which pflag's messages quote as typed):
// Error escapes it, so that the message stays one line.
type lineError struct{ err error }

func (e *lineError) Error() string { return parsemsg.Printable(e.err.Error()) }

func (e *lineError) Unwrap() error { return e.err }

// oneLine returns err, or err escaped (lineError) when its message is not
// Printable.
func oneLine(err error) error {
	if msg := err.Error(); parsemsg.Printable(msg) != msg {
		return &lineError{err}
	}
	return err
}

// isSet reports whether fs's boolean flag name is set.
func isSet(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Value.Type() == "bool" && f.Value.String() == "true"
}

// flagError rewrites pflag's invalid-value error, `invalid argument "12q"
// for "--block-size" flag: ...`, as "--block-size 12q: ...". Other pflag
// errors ("unknown flag: --x", "flag needs an argument: --x") read well as
// they are.
func flagError(err error) error {
	ive, ok := errors.AsType[*pflag.InvalidValueError](err)
	if !ok || ive.GetFlag() == nil {
		return err
	}
	f := ive.GetFlag()
	cause := ive.Unwrap()
	reason := ""
	if ve, ok := errors.AsType[*valueError](cause); ok {
		reason = ve.reason
	} else if ne, ok := errors.AsType[*strconv.NumError](cause); ok {
		// pflag's own numeric and bool flags, said in words, not
		// by their Go type ("not a valid float64").
		reason = numberReason(f.Value.Type(), ne.Err == strconv.ErrRange)
	} else if cause != nil {
		reason = cause.Error()
	}
	return fmt.Errorf("--%s %s: %s", f.Name, parsemsg.Arg(ive.GetValue()), reason)
}

// numberReason says why a value of one of pflag's numeric or bool types
// (typ, as its Value.Type names it: "int", "float64", "uint64", "bool")
// was refused, in words and not by its Go type ("not a valid float64"):
// not one at all, or out of the type's range, whose bounds it gives.
func numberReason(typ string, outOfRange bool) string {
	var want, bounds string
	switch typ {
	case "bool":
		return "not true or false"
	case "float32":
		want, bounds = "a number", fmt.Sprintf("a number of magnitude at most %g", math.MaxFloat32)
	case "float64":
		want, bounds = "a number", fmt.Sprintf("a number of magnitude at most %g", math.MaxFloat64)
	case "int8", "int16", "int32", "int", "int64":
		bits := map[string]int{"int8": 8, "int16": 16, "int32": 32, "int": strconv.IntSize, "int64": 64}[typ]
		want, bounds = "an integer", fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), uint64(1)<<(bits-1)-1)
	case "uint8", "uint16", "uint32", "uint", "uint64":
		bits := map[string]int{"uint8": 8, "uint16": 16, "uint32": 32, "uint": strconv.IntSize, "uint64": 64}[typ]
		want, bounds = "a non-negative integer", fmt.Sprintf("a non-negative integer up to %d", uint64(1<<(bits-1))*2-1)
	default:
		return "not a valid " + typ
	}
	if outOfRange {
		return "out of range (want " + bounds + ")"
	}
	return "not " + want
}
