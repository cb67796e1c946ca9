// Package examples holds no code: its test runs every example of README.md
// and of the tools' --help, as written but at a small scale, so that the
// documentation keeps working.
package examples
