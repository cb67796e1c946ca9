// Package lint holds no code: its tests keep the house rules of kvbench
// (docs/style.md) over the whole module, as pebble's internal/lint does. They
// check the import direction of design section 2 on the packages' transitive
// dependencies (go list -deps), that no library calls os.Exit, log.Fatal or
// log.Panic, that every Go file is gofmt-clean, and that fmt.Errorf wraps
// the errors it formats with %w.
//
// Run them with go test ./internal/lint; a violation fails the test with the
// file and line, or with the import chain, of each offence.
package lint
