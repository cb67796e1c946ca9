package setup

import (
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/null"
)

// row is a row of the factory table: a backend a tier can map to.
type row struct {
	// Name is the backend's name in --tier-map (Tier-2=nvme) and in the
	// replay's Config.
	Name string
	// Usage is a line of kvreplay's help about it.
	Usage string
	// Check, when set, makes sure before anything runs that tier (as the
	// flag names it: Tier-0) can map to the backend on this machine, and
	// may keep in the Env what it loaded for New.
	Check func(e *Env, tier string) error
	// New makes the backend for a replay, sized from the builder's plan;
	// what it made beside the backend it gives back through the builder
	// (where, after, note, warn).
	New func(b *builder) (backend.Backend, error)
}

// factories is the table, one row per backend, in the order Build makes
// them and help lists them. A new tier is its package and a row here.
var factories = []row{
	{Name: "ram", Usage: "one anonymous mmap arena in RAM, sized from the trace (--ram-budget)", New: newRAM},
	{Name: "nvme", Usage: "a directory in --dir, one file per object, or --layout extent: one preallocated file or --device", New: newNVMe},
	{Name: "gpu", Usage: "GPU memory through the CUDA runtime, loaded at run time (kvreplay --list-devices; tested on a fake runtime only)",
		Check: checkGPU, New: newGPU},
	{Name: "s3", Usage: "objects in an S3 bucket (--s3-bucket, --s3-endpoint, --s3-prefix; credentials from the AWS environment), under a prefix of the run's own", New: newS3},
	{Name: "null", Usage: "no data: the engine alone is measured", New: func(*builder) (backend.Backend, error) { return null.New(), nil }},
}
