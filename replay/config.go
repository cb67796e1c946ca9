package replay

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// Config is what shapes a replay. Start from DefaultConfig and call
// Validate.
type Config struct {
	// TierMap names the backend that holds each trace tier, indexed by
	// schema.Tier; "" leaves the tier unmapped (its rows are an error).
	TierMap [schema.NumTiers]string
	// BlockSize is the largest I/O an object operation is split into.
	BlockSize int64
	// QueueDepth bounds the I/Os in flight on each I/O engine: io_uring,
	// which serves the files, and the psync pool of each backend.
	QueueDepth int
	// Workers bounds the object operations in flight.
	Workers int
	// MaxConcurrentAllocs bounds the allocations in flight (writes of new
	// contents: Write rows but an Evict pair's move), as kv-cache.py's
	// --max-concurrent-allocs bounds its allocate_cache calls; 0 takes the
	// traces' sidecars' (kvtrace records it; unbounded without one).
	MaxConcurrentAllocs int
	// Speed scales the trace's clock: 1 issues rows at their timestamps, N
	// N times faster, 0 as fast as ordering and concurrency allow (max).
	Speed float64
	// SizeScale multiplies every object's size (a smoke test of a trace
	// that moves terabytes); 1 replays it as it is.
	SizeScale float64
	// Capacity bounds the bytes on Tier-2; when a write would pass it, the
	// least recently used objects are deleted first (reference traces have
	// no Delete rows). 0 is unbounded.
	Capacity int64
	// CapacityWhy says why Capacity bounds Tier-2 where the caller set it
	// and the user did not (kvreplay bounds a replay it could not plan):
	// the result's eviction warning, if Tier-2's backend evicts, says so.
	CapacityWhy string
	// Seed keys the data generator: the bytes of every object derive from
	// (Seed, key, version, offset), the seed mixed with Rank (dataSeed) so
	// that the ranks of a run write different bytes.
	Seed uint64
	// Engine is the I/O engine of objects in files and devices, by its
	// registered name (ioengine.Names): "uring" (io_uring, batched,
	// registered buffers; psync with a recorded reason where the kernel
	// refuses it) or "psync" (a pool of pread/pwrite workers). Objects a
	// shared engine does not serve (RAM's) are copied by the psync
	// workers.
	Engine string
	// Verify checks every byte read against what was written.
	Verify bool
	// Fsync makes every object write durable before it completes
	// (backend.Syncer: fdatasync), as kv-cache.py fsyncs each object it
	// saves; the sync is part of the write's latency.
	Fsync bool
	// Prescan reads file traces once before the run, to prepare cold reads
	// untimed and size the RAM arena. Traces on pipes are never prescanned.
	Prescan bool
	// ClosedLoop issues each user's requests one after another: a user's
	// next request is released when its previous one completed, plus the
	// think time the trace recorded (closed.go). The trace must name
	// users (its User column).
	ClosedLoop bool
	// SLO adds the requests' SLO attainment to the result (kvreplay
	// --slo-ms; schema.RequestStats.SLO): in a closed loop, the share of
	// requests whose storage latency is within it.
	SLO results.SLO
	// Users replays only Users users of a closed loop (0: all): a sample
	// stratified by QoS class that keeps the trace's mix, within a class
	// in the order of their IDs (SelectUsers). A trace the plan did not read
	// (a pipe) replays the first Users users to appear, with a warning.
	Users int
	// Duration bounds the run in wall time: no row is released after it.
	// What was released completes; a request it closed on with rows left
	// is cut (ReplayStats.RequestsCut), not counted as completed, but as a
	// miss where it already took longer than its class's target
	// (ReplayStats.RequestsCutLate), and in the SLO's attainment as a miss
	// where it already took longer than the SLO's target for it
	// (results.Requests.AddLate). So is a request with a row due before
	// the window's end of which none was released (in a closed loop, one
	// released by then: its user's previous request completed, plus the
	// think time): it took at least the time from its first row's due
	// time to the window's end. 0 runs the trace to its end.
	Duration time.Duration
	// Rank and Ranks place this process in a multi-host run (0 of 1
	// alone); Shard says which rows are this rank's (shard.go): "key",
	// "user", "tp", or "" (every row, as tp).
	Rank, Ranks int
	Shard       string
	// BytesPerToken and TensorParallel describe the KV cache of traces
	// whose sidecar does not (a kv-cache.py trace, a trace on a pipe):
	// the model's bytes per token, before the division by the tensor
	// parallelism that divided the trace's object sizes (kvreplay --model,
	// --tensor-parallel). They make the KV tokens the run moved
	// measurable; 0 leaves them unknown.
	BytesPerToken  int64
	TensorParallel int
	// S3PartSize is the s3 tier's part size (--s3-part-size, with its
	// default: setup.S3Config's PartSizeOrDefault), with which the plan
	// counts the requests the tier makes (Plan.Ops): an object above it
	// is written in a multipart upload and read in a GET of each part. 0
	// (unknown) counts one request an object operation, the least.
	S3PartSize int64 `json:"-"`
}

// DefaultConfig returns the defaults of kvreplay's options.
func DefaultConfig() Config {
	return Config{
		TierMap:    [schema.NumTiers]string{"", "ram", "nvme"},
		BlockSize:  1 << 20,
		QueueDepth: 32,
		Workers:    64,
		Speed:      1,
		SizeScale:  1,
		Seed:       1,
		Engine:     "uring",
		Prescan:    true,
	}
}

// Validate reports every problem of c at once, one per line.
func (c *Config) Validate() error {
	errs := c.validateIO()
	errs = append(errs, c.validateRun()...)
	errs = append(errs, c.validateShard()...)
	return errors.Join(errs...)
}

// validateIO checks how the replay moves bytes: the I/O sizes, the
// concurrency and the engine.
func (c *Config) validateIO() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.BlockSize < 4096 || c.BlockSize > 1<<30 || c.BlockSize&(c.BlockSize-1) != 0 {
		bad("--block-size %d (%s): must be a power of two between 4KiB and 1GiB", c.BlockSize, cli.FormatBytes(c.BlockSize))
	}
	if c.QueueDepth < 1 || c.QueueDepth > 4096 {
		bad("--queue-depth %d: must be between 1 and 4096", c.QueueDepth)
	}
	if c.Workers < 1 || c.Workers > 65536 {
		bad("--workers %d: must be between 1 and 65536", c.Workers)
	}
	if c.MaxConcurrentAllocs < 0 || c.MaxConcurrentAllocs > 65536 {
		bad("--max-concurrent-allocs %d: must be between 0 and 65536", c.MaxConcurrentAllocs)
	}
	if err := ioengine.Check(c.Engine); err != nil {
		bad("--engine %s: %v", parsemsg.Arg(c.Engine), err)
	}
	return errs
}

// validateRun checks what the replay replays, how fast and for how long.
func (c *Config) validateRun() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Speed < 0 || math.IsNaN(c.Speed) || math.IsInf(c.Speed, 0) {
		bad("--speed %v: must be max or a positive number", c.Speed)
	}
	if !(c.SizeScale > 0 && c.SizeScale <= 1) {
		bad("--size-scale %v: must be greater than 0 and at most 1", c.SizeScale)
	}
	if c.Capacity < 0 {
		bad("--capacity %d: must not be negative", c.Capacity)
	}
	if c.Users < 0 {
		bad("--users %d: must not be negative", c.Users)
	}
	if c.Users > 0 && !c.ClosedLoop {
		bad("--users %d: counts the users of a closed loop: add --closed-loop", c.Users)
	}
	if c.Duration < 0 {
		bad("--duration %v: must not be negative", c.Duration)
	}
	if c.SLO.Set() && c.Speed == 0 && !c.ClosedLoop {
		// The result's QoS SLA is not measured there (results'
		// NotMeasuredSLA), and an attainment of the same latencies is
		// no more a service level.
		bad("--slo-ms with --speed max: an open loop at --speed max releases rows as fast as workers take them, so a request's latency measures the trace's backlog, " +
			"not a service level (the result's QoS SLA is not measured there either): give --speed 1 (the trace's pace) or N, or --closed-loop, whose users wait for their storage")
	}
	if c.BytesPerToken < 0 {
		bad("bytes per token %d: must not be negative", c.BytesPerToken)
	}
	if c.TensorParallel < 0 || c.TensorParallel > 1024 {
		bad("--tensor-parallel %d: must be between 1 and 1024", c.TensorParallel)
	}
	mapped := false
	for _, b := range c.TierMap {
		mapped = mapped || b != ""
	}
	if !mapped {
		bad("--tier-map: maps no tier to a backend")
	}
	return errs
}

// speedDuration converts a trace interval to a replay interval.
func (c *Config) speedDuration(d time.Duration) time.Duration {
	if c.Speed <= 0 {
		return 0
	}
	return time.Duration(float64(d) / c.Speed)
}
