package main

// kvreplay reads and writes .zst traces: the zstd codec is linked in here, by
// the main, and not by the libraries (the replay engine carries none).
import _ "github.com/kvbench/kvbench/trace/zst"
