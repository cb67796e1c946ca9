// Package cli owns the command-line plumbing shared by kvtrace, kvreplay and
// kvreport: flag value types (byte sizes, durations, replay speed, key=value
// lists) for spf13/pflag and the --size-scale parser (Fraction), flag-set
// construction and parsing with suggestions for unknown options, "-" for
// stdin and stdout (DrainStdin: what is left of a piped input read after
// the tool stopped reading it), atomic output files and the refusal of
// outputs that are inputs or under system directories, run directories
// and the directories a tool makes (MakeDirs, removing only what it
// made), whether an output is a terminal (IsTerminal, which asks the
// terminal ioctls: /dev/null is none), free space, signal handling, the
// tool version, and the mapping of errors to exit statuses.
//
// A main is wiring only:
//
//	func main() { os.Exit(cli.Main("kvtrace", os.Args[1:], os.Stdout, os.Stderr, run)) }
//
// where run parses its flags with NewFlagSet and ParseFlags, builds and
// validates the engine's Config, and runs it under the context it is given.
// Errors marked with Usagef or Input end the tool with ExitUsage (2), other
// errors with ExitFailure (1).
//
// Nothing in this package exits the process, logs fatally or panics on user
// input, and it holds no mutable package state.
//
// Error messages of flag values name the value and what was expected, for
// example
//
//	"12q": not a byte size (want a number with an optional unit such as 4k, 1MiB, 2GB)
//
// and ParseFlags prefixes them with the flag, so that the user reads
//
//	kvreplay: --block-size 12q: not a byte size (want a number with an optional unit such as 4k, 1MiB, 2GB)
package cli
