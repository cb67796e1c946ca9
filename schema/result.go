package schema

import (
	"encoding/json"
	"fmt"
	"time"
)

// The result document's identity. A reader refuses other formats and newer
// versions. Version 3 keeps every "bandwidth" key for the device rate
// (bytes over the time the tier was busy serving them) and names the
// offered load (bytes over the run's elapsed time) "offered"; versions 1
// and 2 had the offered load under the bandwidth keys and the device rate
// under read_device_bytes_per_s, write_device_bytes_per_s and
// busy_bandwidth_bytes_per_s (UpgradeBandwidths reads them). Version 2
// names every key in lower_snake_case, those of config and of traces' meta
// included (SnakeCaseKeys); version 1 had Go field names there (TierMap,
// BlockSize). Readers read all three.
const (
	ResultFormat        = "kvbench-result"
	ResultFormatVersion = 3
)

// Header opens each document kvreplay writes, a result or a search: what
// it is, what wrote it, and the names a comparison goes by.
type Header struct {
	Format        string   `json:"format"`
	FormatVersion int      `json:"format_version"`
	Tool          string   `json:"tool"`
	ToolVersion   string   `json:"tool_version"`
	CommandLine   []string `json:"command_line"`
	// Label and System name the run for comparisons (kvreplay --label,
	// --system); empty when not given.
	Label  string `json:"label,omitempty"`
	System string `json:"system,omitempty"`
}

// MaxTrial bounds a trial's number (kvreplay --trial, a trial_<T>
// directory): a run's trials are numbered from 0 or 1, and kvreport names
// each one missing below the last.
const MaxTrial = 1 << 10

// Result is the document kvreplay writes for one run (or one rank of a
// run) and kvreport reads, merges and renders (design section 6). Latency
// histograms are carried encoded, so merges across trials and ranks are
// exact. Durations are in seconds unless a name says otherwise (_us:
// microseconds, _ms: milliseconds).
type Result struct {
	Header
	// Trial names the run among its trials (kvreplay --trial); 0 when not
	// given.
	Trial int `json:"trial,omitempty"`
	// Rank and Ranks place the document in a multi-host run (0 of 1 alone).
	Rank  int `json:"rank"`
	Ranks int `json:"ranks"`
	// LocalRank is the rank among those on its host (-1: the launcher
	// did not say), and RankSource where the rank came from (the flag, or
	// the launcher's variable, such as OMPI_COMM_WORLD_RANK or
	// SLURM_PROCID); empty alone.
	LocalRank  int    `json:"local_rank,omitempty"`
	RankSource string `json:"rank_source,omitempty"`
	// StartAt is --start-at, the instant every rank waited for; StartSkewS
	// how late this rank's replay started after it (the ranks' overlap).
	StartAt    *time.Time `json:"start_at,omitempty"`
	StartSkewS float64    `json:"start_skew_s,omitempty"`
	// MergedRanks are the ranks a merged document holds (kvreport merge),
	// so that a rank is never merged twice; empty for one rank's document.
	MergedRanks []int `json:"merged_ranks,omitempty"`
	// RankHealth is the storage_health status of each kvreplay rank a
	// merged document holds, judged on that rank's document alone, in
	// rank order: the pooled criteria must not hide a rank that failed.
	// Nil for one rank's document, and for a merged document written
	// before it, whose warnings said a rank's failure ("rank N:
	// STORAGE_HEALTH FAIL of this rank alone: ...").
	RankHealth []RankStatus `json:"rank_health,omitempty"`
	// Started is when the measured window began; WallS its length.
	Started time.Time `json:"started"`
	WallS   float64   `json:"wall_s"`
	// Complete is false for a run stopped early (a signal, a full disk, an
	// I/O error); IncompleteReason then says why.
	Complete         bool   `json:"complete"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`

	Host   Host            `json:"host"`
	Traces []TraceInfo     `json:"traces"`
	Config json.RawMessage `json:"config"`
	// SizeScale is --size-scale; 1 for a full-size run. A scaled run says
	// so in Warnings too.
	SizeScale float64  `json:"size_scale"`
	Warnings  []string `json:"warnings,omitempty"`
	// Fit is what kvreplay --fit set so that the replay fits the machine
	// it ran on, and why; nil without --fit.
	Fit *Fit `json:"fit,omitempty"`

	// Cells has one entry per tier x operation x phase that occurred.
	Cells []Cell `json:"cells"`
	// Tiers totals the cells of each tier.
	Tiers    []TierTotals `json:"tiers"`
	Requests RequestStats `json:"requests"`
	// Lag is how late rows were issued behind their scheduled time: in
	// an open loop, their trace times; in a closed loop, a user's rows'
	// offsets from their request's release too, which keep no schedule
	// (storage_health judges ClosedLoop.ScheduledLag there, not Lag).
	Lag      Latency     `json:"lag"`
	Timeline []Second    `json:"timeline"`
	Replay   ReplayStats `json:"replay"`
	// RankImbalance compares the ranks of a merged document (kvreport
	// merge); nil for one rank's.
	RankImbalance *RankImbalance `json:"rank_imbalance,omitempty"`
	// ClosedLoop is what a closed-loop replay (kvreplay --closed-loop)
	// measured per user; nil for an open-loop replay.
	ClosedLoop *ClosedLoopStats `json:"closed_loop,omitempty"`
	// Device is the device latency of each tier and operation that had
	// one (kvreplay since issue 26); absent from older documents, whose
	// summary takes the cells' latency from submission instead.
	Device  []DeviceLatency `json:"device_latency,omitempty"`
	Errors  ErrorStats      `json:"errors"`
	Summary Summary         `json:"summary"`
}

// Fit is what kvreplay --fit applied before the replay.
type Fit struct {
	// Applied are the options it set, as a command line gives them
	// ("--size-scale 1/4096"); empty when the replay fit as it was.
	Applied []string `json:"applied"`
	// Why says what the replay needed, what the machine has, and the
	// rates and share assumed.
	Why string `json:"why"`
}

// Host describes the machine a result was measured on.
type Host struct {
	Hostname  string     `json:"hostname"`
	OS        string     `json:"os"`
	Kernel    string     `json:"kernel"`
	Arch      string     `json:"arch"`
	CPUModel  string     `json:"cpu_model"`
	CPUs      int        `json:"cpus"`
	MemoryB   int64      `json:"memory_bytes"`
	GoVersion string     `json:"go_version"`
	TierPaths []PathInfo `json:"tier_paths,omitempty"`
}

// PathInfo describes the storage behind a backend's path.
type PathInfo struct {
	Backend    string `json:"backend"`
	Path       string `json:"path"`
	FileSystem string `json:"filesystem"`
	Device     string `json:"device"`
	Model      string `json:"device_model,omitempty"`
	Direct     bool   `json:"direct_io"`
	// MountOptions are the options of the mount holding the path (its own
	// and its file system's), "" where unknown.
	MountOptions string `json:"mount_options,omitempty"`
	// Gateway names the FUSE program behind a FUSE mount (s3fs, rclone,
	// mount-s3: an object store through a POSIX gateway, as MLPerf's
	// rules require) and its version, where it answers --version.
	Gateway string `json:"gateway,omitempty"`
	// GatewayCommand is the gateway's command line, with the values of
	// credential-like options replaced by REDACTED: its options (cache,
	// part size, parallel requests) shape what the mount measures.
	GatewayCommand string `json:"gateway_command,omitempty"`
	// GPU is the GPU tier's device and copies; nil for other tiers.
	GPU *GPUPath `json:"gpu,omitempty"`
	// S3 is the object tier's requests; nil for other tiers.
	S3 *S3Path `json:"s3,omitempty"`
}

// S3Path is what the S3 tier asked of its server over the run: the calls
// by S3 operation (PutObject, GetObject, UploadPart, ...; a user prices a
// run from them), those that failed after their retries, the retries (HTTP
// requests beyond one per call) and the throttling responses among all
// requests (503 SlowDown, 429), the bytes, and the GETs' time to first
// byte. It never holds credentials.
//
// Its S3Requests (requests to bytes_got, inline in the JSON) are the
// server's whole account of the run, setup included; Measured and Setup
// split it in two that add up to it.
type S3Path struct {
	Endpoint    string `json:"endpoint"`
	Bucket      string `json:"bucket"`
	Prefix      string `json:"prefix"`
	Concurrency int    `json:"concurrency"`
	PartSize    int64  `json:"part_size"`
	S3Requests
	// GetTTFB is of every GET of the run, and so of the measured
	// window's (Measured): the setup makes none (the check lists, the
	// writes before the clock make new objects whole, the clean-up
	// deletes, lists and aborts), as TestS3ResultSplitsSetup checks of a
	// replay with cold objects. A GET's runs from its call to the first
	// byte of the response that brought its bytes: one tried again (a 503,
	// a reset, a body cut short) has its earlier attempts and their
	// backoff in it, as its operation's latency (Cell.Latency,
	// Cell.FirstByte) has them: the reader waited for them.
	// GetTTFBRetried is how many of its GETs were so, that took more than
	// one attempt; absent (0) in documents written before it was counted.
	GetTTFB        Latency `json:"get_ttfb"`
	GetTTFBRetried int64   `json:"get_ttfb_retried,omitempty"`
	// Measured is the share of the requests made in the measured window,
	// from the replay's clock's start (Result.Started) to the replay's
	// end: those the run's figures come from (and the untimed writes made
	// inside it, of an object evicted and read again). Setup is the rest:
	// the check of the bucket, the untimed writes of the cold objects
	// before the clock, and the clean-up after the replay (deletes,
	// listings, aborts). Both are nil when the clock never started (a run
	// stopped in its preparation), and in documents written before they
	// were.
	Measured *S3Requests `json:"measured,omitempty"`
	Setup    *S3Requests `json:"setup,omitempty"`
}

// S3Requests are an S3 tier's requests (the whole account of S3Path, or
// its Measured or Setup share): the calls by S3 operation, those that
// failed after their retries (not those abandoned as the run stopped, nor
// those whose answer was one the tier asked for and acts on: a check that
// finds no object, a conditional PUT refused as the object exists, an API
// the service does not have, a DELETE of an object gone already), the
// retries, the throttling responses, and the bytes: BytesPut is the
// bodies of the PUTs and UploadParts that succeeded, BytesGot every GET
// attempt's body as far as it came (those cut short and tried again
// included).
//
// BytesPutFailed is the bodies of the PUT and UploadPart attempts that
// failed (throttled, refused, cut, timed out; tried again or not), as far
// as the client read them to send (one refused before its body was sent,
// a 503 to an Expect: 100-continue, counts nothing). They are apart from
// BytesPut so that BytesPut stays the bytes the server took (the tier's
// physical writes): the bytes the client sent up are the sum of the two,
// and the ratio of BytesPutFailed to it the upload traffic lost to
// failures. Absent (0) in documents written before it was counted.
type S3Requests struct {
	Requests       map[string]int64 `json:"requests"`
	Failed         map[string]int64 `json:"failed,omitempty"`
	Retries        int64            `json:"retries"`
	Throttled      int64            `json:"throttled"`
	BytesPut       int64            `json:"bytes_put"`
	BytesPutFailed int64            `json:"bytes_put_failed,omitempty"`
	BytesGot       int64            `json:"bytes_got"`
}

// Total is the number of calls made, of every operation.
func (r S3Requests) Total() int64 {
	var n int64
	for _, v := range r.Requests {
		n += v
	}
	return n
}

// GPUPath is what the GPU tier measured: its device, its PCIe link, and
// its copies in each direction, timed by CUDA events on the device.
type GPUPath struct {
	Name     string `json:"name"`
	PCIBusID string `json:"pci_bus_id,omitempty"`
	// PCIeLink is the link's current speed and width as sysfs reports
	// them ("16.0 GT/s PCIe x16"); empty where it does not.
	PCIeLink string `json:"pcie_link,omitempty"`
	Driver   string `json:"driver_version,omitempty"`
	Runtime  string `json:"runtime_version,omitempty"`
	// Copies is how the bytes moved: "h2d and d2h through pinned staging
	// buffers, in order on a stream per direction".
	Copies       string       `json:"copies"`
	HostToDevice GPUDirection `json:"host_to_device"`
	DeviceToHost GPUDirection `json:"device_to_host"`
	// RAMArena is how objects moved between this GPU and the RAM tier
	// went, copied straight between device memory and the RAM tier's
	// arena: "pinned" (cudaHostRegister), or why not; empty when none
	// moved.
	RAMArena string `json:"ram_arena,omitempty"`
	// GDS is what GPUDirect Storage moved between this GPU and files
	// (kvreplay --gds); nil without it.
	GDS *GDSPath `json:"gds,omitempty"`
}

// GDSPath is the GPUDirect Storage path: libcufile, whether the GPU
// memory was registered with it, and the blocks of moves to and from
// files, with the sum of the cuFile calls' wall-clock times and the bytes
// over that sum (GB/s, 10^9 bytes): the rate of one call, as calls run
// several at once.
type GDSPath struct {
	Library            string       `json:"library"`
	BufferRegistration string       `json:"buffer_registration,omitempty"`
	ToFile             GDSDirection `json:"to_file"`
	FromFile           GDSDirection `json:"from_file"`
}

// GDSDirection counts one direction's cuFile calls.
type GDSDirection struct {
	Blocks   int64   `json:"blocks"`
	Bytes    int64   `json:"bytes"`
	CallS    float64 `json:"call_s"`
	CallGBps float64 `json:"per_call_gbps"`
}

// GPUDirection counts one direction's copies: bytes, the time the
// direction's stream was busy with them (CUDA events around each stretch
// of back-to-back copies), and the bytes over that time (GB/s, 10^9
// bytes). A direction's copies run one after another on its stream, so
// the rate is the one the link carried them at while it had them, as a
// cudaMemcpyAsync loop is timed, with what each stretch cost to start and
// to see done, and the gaps where the host queued its next copy late, in
// it: a lower bound on the link's rate.
type GPUDirection struct {
	Copies   int64   `json:"copies"`
	Bytes    int64   `json:"bytes"`
	BusyS    float64 `json:"busy_s"`
	BusyGBps float64 `json:"busy_gbps"`
}

// TraceInfo is the provenance of a replayed trace, and its identity:
// SHA256 (with SizeBytes and Rows) tells whether two results replayed the
// same trace.
type TraceInfo struct {
	File string `json:"file"`
	// Rows are the trace's rows, all of them, known before the run when the
	// prescan read the trace; a trace read only once (a pipe) by a run
	// stopped early has only the rows read before the stop, and ReadInPart
	// set.
	Rows       int64 `json:"rows"`
	ReadInPart bool  `json:"read_in_part,omitempty"`
	// SHA256 is the hex SHA-256 of the trace's content, its CSV text
	// (decompressed when the trace is compressed, so the same trace has
	// the same digest on a pipe and in a .zst file), and SizeBytes that
	// text's length; empty when the trace was not read to its end.
	SHA256     string          `json:"sha256,omitempty"`
	SizeBytes  int64           `json:"size_bytes,omitempty"`
	Compressed bool            `json:"compressed"`
	TimeBase   string          `json:"time_base"`
	EpochStart float64         `json:"epoch_start,omitempty"`
	OutOfOrder int64           `json:"out_of_order"`
	Meta       json.RawMessage `json:"meta,omitempty"`
}

// Cell is what one tier x operation x phase did.
type Cell struct {
	Tier    string `json:"tier"`
	Op      string `json:"op"`
	Phase   string `json:"phase"`
	Backend string `json:"backend"`
	// Ops counts the operations that succeeded: they alone are in the
	// bytes, bandwidths and latencies. FailedOps counts the rows that
	// failed (each also in Errors; not those abandoned when the run was
	// stopped), whose time, from their start, is in BusyS alone, so that a
	// cell whose operations all failed still says so. Absent (0) from
	// documents written before it.
	Ops       int64 `json:"ops"`
	FailedOps int64 `json:"failed_ops,omitempty"`
	// LogicalBytes are the trace's bytes times the size scale; PhysicalBytes
	// what moved after alignment.
	LogicalBytes  int64 `json:"logical_bytes"`
	PhysicalBytes int64 `json:"physical_bytes"`
	// BusyS is the time at least one operation of the cell was in flight.
	BusyS float64 `json:"busy_s"`
	// DeviceBps is the cell's bandwidth: LogicalBytes over BusyS (the
	// device rate); OfferedBps is LogicalBytes over the run's wall time
	// (the offered load).
	DeviceBps  float64 `json:"bandwidth_bytes_per_s"`
	OfferedBps float64 `json:"offered_bytes_per_s"`
	// Latency is measured from submission (the operation's start);
	// FromSchedule from its scheduled time, which includes waiting for
	// earlier operations and workers (coordinated-omission safe).
	Latency      Latency `json:"latency"`
	FromSchedule Latency `json:"latency_from_schedule"`
	// FirstByte is the time from submission to the first byte of the
	// cell's reads, where the backend knows it (s3: each GET's response,
	// the one that brought the bytes: a GET's retries and their backoff
	// are in it, as they are in Latency); nil otherwise. Its count may be
	// below Ops.
	FirstByte *Latency `json:"first_byte,omitempty"`
}

// TierTotals totals a tier's cells. A tier has two rates, kept apart: its
// bandwidth, the device rate (ReadDeviceBps, WriteDeviceBps: bytes over
// the time the tier was busy serving them), which is what the tier can do
// and what kvbench's reports lead with, and the offered load
// (ReadOfferedBps, WriteOfferedBps: bytes over the run's wall time, what
// the reference calls a tier's bandwidth), which falls when anything else
// slows the run. BusyS is the time at least one operation of the tier was
// in flight: the union of their intervals, so that concurrent operations
// count once (the replay engine's busy times).
type TierTotals struct {
	Tier               string `json:"tier"`
	Backend            string `json:"backend"`
	ReadOps            int64  `json:"read_ops"`
	WriteOps           int64  `json:"write_ops"`
	DeleteOps          int64  `json:"delete_ops"`
	ReadBytes          int64  `json:"read_bytes"`
	WriteBytes         int64  `json:"write_bytes"`
	PhysicalReadBytes  int64  `json:"physical_read_bytes"`
	PhysicalWriteBytes int64  `json:"physical_write_bytes"`
	// ReadDeviceBps and WriteDeviceBps are the tier's bandwidth, the
	// device rate: logical bytes read (written) over ReadBusyS
	// (WriteBusyS); 0 when unknown.
	ReadDeviceBps  float64 `json:"read_bandwidth_bytes_per_s"`
	WriteDeviceBps float64 `json:"write_bandwidth_bytes_per_s"`
	// ReadOfferedBps and WriteOfferedBps are the offered load: logical
	// bytes read (written) over the run's wall time.
	ReadOfferedBps  float64 `json:"read_offered_bytes_per_s"`
	WriteOfferedBps float64 `json:"write_offered_bytes_per_s"`
	BusyS           float64 `json:"busy_s"`
	// ReadBusyS and WriteBusyS are BusyS of the tier's reads and of its
	// writes. Documents written before they existed lack them, and have in
	// BusyS the longest busy time of the tier's cells.
	ReadBusyS  float64 `json:"read_busy_s"`
	WriteBusyS float64 `json:"write_busy_s"`
	// FailedOps are the tier's operations that failed, its cells'
	// FailedOps: in no count, byte or rate above, their time in the busy
	// times. A tier whose operations all failed is listed, with them.
	FailedOps int64 `json:"failed_ops,omitempty"`
}

// DeviceLatency is the device span of one tier's operations of one kind
// and phase: a read's I/Os, from the first submitted to the last
// completed; a write's I/Os and, under --fsync, its fdatasync. Unlike a
// cell's latency from submission it holds no open, close or removal of
// the object's files: the span MLPerf Storage scores as device latency
// (Rules.md 6.3.4.3, the reference's storage_{read,write}_device_*_ms,
// which take no Evict phase: the reference times a demotion's copy, but
// keeps no sample of it). Phase is empty in documents written before it,
// whose entries hold every phase.
type DeviceLatency struct {
	Tier    string  `json:"tier"`
	Op      string  `json:"op"`
	Phase   string  `json:"phase,omitempty"`
	Latency Latency `json:"latency"`
}

// Latency is a latency distribution: percentiles in microseconds and the
// whole HdrHistogram, encoded (HdrHistogram V2 compressed, base64), so that
// merges are exact.
type Latency struct {
	Count     int64   `json:"count"`
	MinUS     float64 `json:"min_us"`
	MeanUS    float64 `json:"mean_us"`
	P50US     float64 `json:"p50_us"`
	P90US     float64 `json:"p90_us"`
	P95US     float64 `json:"p95_us"`
	P99US     float64 `json:"p99_us"`
	P999US    float64 `json:"p99_9_us"`
	P9999US   float64 `json:"p99_99_us"`
	MaxUS     float64 `json:"max_us"`
	Histogram string  `json:"histogram,omitempty"`
}

// RequestStats are per-request storage latencies (a request's rows, from
// its first row's scheduled time to its last row's completion) overall and
// by QoS class, with the reference's SLA targets.
type RequestStats struct {
	Count   int64      `json:"count"`
	Latency Latency    `json:"latency"`
	ByQoS   []QoSStats `json:"by_qos"`
	// SLO is the share of requests within kvreplay --slo-ms; nil without
	// it.
	SLO *SLOStats `json:"slo,omitempty"`
}

// SLOStats is the attainment of a service level (kvreplay --slo-ms): the
// requests with a target, and how many were within it, overall and by QoS
// class. Counts, so that merges are exact; Attainment is Within/Count.
// Count includes, as misses, the requests the --duration window cut
// whose released rows already passed their SLO target, or that were due
// longer than it before the window's end and never started
// (ReplayStats.RequestsCutLate says how they count in Requests).
type SLOStats struct {
	TargetMS   float64    `json:"target_ms,omitempty"` // every request's, unless its class has one
	Count      int64      `json:"count"`
	Within     int64      `json:"within"`
	Attainment float64    `json:"attainment"`
	ByQoS      []SLOClass `json:"by_qos,omitempty"`
}

// SLOClass is one QoS class's SLO attainment.
type SLOClass struct {
	QoS        string  `json:"qos"`
	TargetMS   float64 `json:"target_ms"`
	Count      int64   `json:"count"`
	Within     int64   `json:"within"`
	Attainment float64 `json:"attainment"`
}

// QoSStats is one QoS class's requests and compliance with its p95 target:
// the share of requests within it, met at 95 % or more (the definitions
// are results').
type QoSStats struct {
	QoS         string  `json:"qos"`
	Count       int64   `json:"count"`
	TargetP95MS float64 `json:"target_p95_ms"`
	// WithinTarget counts the requests within TargetP95MS, so that merges
	// add counts rather than ratios. Documents written before it existed
	// lack it (it reads as 0 while Compliance is above 0); readers then
	// recover it from Compliance and Count.
	WithinTarget int64   `json:"within_target"`
	Compliance   float64 `json:"compliance"`
	Met          bool    `json:"met"`
	Latency      Latency `json:"latency"`
}

// Second is one second of the run: bytes and operations completed per
// tier, indexed by Tier.
type Second struct {
	T          int             `json:"t"`
	ReadBytes  [NumTiers]int64 `json:"read_bytes"`
	WriteBytes [NumTiers]int64 `json:"write_bytes"`
	Ops        [NumTiers]int64 `json:"ops"`
	LagP99US   float64         `json:"lag_p99_us"`
}

// ReplayStats counts what the replay did besides the trace's rows.
type ReplayStats struct {
	Rows     int64 `json:"rows"`
	RowsDone int64 `json:"rows_done"`
	// RowsMissed are the rows due in an open-loop --duration window that
	// it closed on without releasing them: the run fell behind the
	// trace's pace. In a closed loop, they are the rows released at
	// their trace times, as an open loop's (ClosedLoop.ScheduledLag: rows
	// of no user, and under --users the demotions and deletes of replayed
	// users' objects that left-out users' requests carry), that were so;
	// a user's rows keep no schedule (ClosedLoop.RequestsLeft counts the
	// requests never released). Each counts in Lag (and in a closed loop
	// in ClosedLoop.ScheduledLag), late by at least the time from when it
	// was due to the window's end. It is exact: once what was
	// released completed, the replay reads on (without running the
	// rows) to the first row due after the window's end, however far
	// behind the reader was. It is a lower bound only where the run was
	// stopped (a signal), or the trace failed to read, before that row;
	// its warning then says "at least".
	RowsMissed int64 `json:"rows_missed,omitempty"`
	// SetupRows are the rows run as setup, untimed, before the clock
	// started: those before the sidecar's measured_from_s (kvtrace's
	// --precondition and --decode-only pre-population), which the
	// reference runs before its timed run and resets its statistics
	// after. They are in no figure (Rows and RowsDone included, cells,
	// tiers, requests, lag, timeline, CapacityEvictions, Rematerialised,
	// Syncs, VerifiedBytes: their evictions are SetupCapacityEvictions);
	// their errors are in Errors, their cold objects in ColdPrepared. The
	// measured run is paced from measured_from_s, and --duration's window
	// counts from it. 0 when every trace replayed has no sidecar, or one
	// without measured_from_s.
	SetupRows int64 `json:"setup_rows,omitempty"`
	// RequestsCut are the requests the --duration window closed on with
	// rows not yet released: none of their rows is released after it, and
	// they are not completed requests (their latency would be that of the
	// rows they had), so Requests leaves them out, but for
	// RequestsCutLate. In an open loop they include the requests with a
	// row due before the window's end of which none was released (the
	// run was too far behind to start them): rows_missed's requests. In a
	// closed loop, where a request is due at its release (its user's
	// previous request completed, plus the think time), they include the
	// requests released before the window's end of which none was.
	RequestsCut int64 `json:"requests_cut,omitempty"`
	// RequestsCutLate are the requests of RequestsCut that Requests counts
	// after all, as missing their class's target: their rows released
	// before the window closed already took longer than it, or, for one
	// never started, its first row was due longer than it before the
	// window's end, so they missed it whatever the rows left would have
	// taken. Their latency there is their released rows', or the time
	// from their first row's due time to the window's end, a lower bound;
	// in a closed loop, the time to the window's end of a request whose
	// rows left were due by then (waiting for room or for their objects'
	// turns) when its released rows completed sooner.
	// Leaving them out made a run whose window closed on slow requests, or
	// on requests it was too far behind to start, look faster than it was.
	// Requests.Count less RequestsCutLate is the completed requests. The
	// SLO's attainment (Requests.SLO, --slo-ms) judges its own target: a
	// cut request whose released rows already passed the SLO's target
	// (or, never started, was due longer than it before the window's end)
	// counts there as a miss, with or without a class and whether or not
	// it passed its class's target; one that passed only the SLO's is in
	// Requests.SLO.Count, not in Requests.Count nor RequestsCutLate.
	RequestsCutLate   int64 `json:"requests_cut_late,omitempty"`
	Objects           int64 `json:"objects"`
	ColdPrepared      int64 `json:"cold_prepared"`
	ColdPreparedBytes int64 `json:"cold_prepared_bytes"`
	// CapacityEvictions are objects kvreplay deleted itself to keep Tier-2
	// under --capacity; Rematerialised are reads of such objects, written
	// again untimed first. Both count the measured run's, as Syncs and
	// VerifiedBytes do; SetupCapacityEvictions are those made before the
	// clock: while the cold objects were written (ColdPrepared) and while
	// the setup rows ran (SetupRows).
	CapacityEvictions      int64 `json:"capacity_evictions"`
	SetupCapacityEvictions int64 `json:"setup_capacity_evictions,omitempty"`
	Rematerialised         int64 `json:"rematerialised"`
	// Verify reports --verify; VerifiedBytes are the bytes read and
	// checked (every byte read, in a complete verified run).
	Verify        bool  `json:"verify"`
	VerifiedBytes int64 `json:"verified_bytes"`
	// Fsync reports --fsync: every object write was made durable
	// (fdatasync) before it completed; Syncs counts the syncs.
	Fsync bool  `json:"fsync"`
	Syncs int64 `json:"syncs"`
	// PeakRSSBytes is kvreplay's peak resident memory (0 when unknown).
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// CPUPressure is the share of the measured run during which some task
	// on the machine waited for a CPU (Linux's /proc/pressure/cpu, "some"):
	// near 0 on a machine that had CPUs to spare, high where kvreplay, or
	// what ran beside it, was short of them, so that lag and latency may
	// be the CPU's and not the storage's. Absent where the kernel keeps no
	// pressure figures; a merge keeps the highest rank's.
	CPUPressure *float64 `json:"cpu_pressure,omitempty"`
	Workers     int      `json:"workers"`
	QueueDepth  int      `json:"queue_depth"`
	BlockSize   int64    `json:"block_size"`
	Speed       float64  `json:"speed"`
	Engine      string   `json:"engine"`
	// ClosedLoop reports --closed-loop: each user waited for its storage.
	ClosedLoop bool `json:"closed_loop,omitempty"`
	// DurationS is --duration in seconds: the window the run was bounded
	// to (0: none).
	DurationS float64 `json:"duration_s,omitempty"`
	// Shard is how the trace was split among ranks: key, user or tp
	// (empty for one rank, which replays every row).
	Shard string `json:"shard,omitempty"`
	// MaxConcurrentAllocs is the bound on writes of new contents in flight
	// (kv-cache.py's --max-concurrent-allocs, from the trace's sidecar);
	// absent when unbounded.
	MaxConcurrentAllocs int `json:"max_concurrent_allocs,omitempty"`
}

// RankImbalance is how evenly the ranks of a merged run shared its work:
// the slowest rank (the longest wall time), its share of the bytes moved
// and of the merged window, and how far apart the ranks started.
type RankImbalance struct {
	SlowestRank       int     `json:"slowest_rank"`
	SlowestWallS      float64 `json:"slowest_wall_s"`
	FastestWallS      float64 `json:"fastest_wall_s"`
	SlowestBytesShare float64 `json:"slowest_bytes_share"`
	SlowestTimeShare  float64 `json:"slowest_time_share"`
	StartSpreadS      float64 `json:"start_spread_s"`
}

// ClosedLoopStats are a closed-loop replay's: each user's requests ran one
// after another, the next released when the previous completed plus the
// think time the trace recorded between them.
type ClosedLoopStats struct {
	// Users are the users whose requests ran; UserLimit is --users (0:
	// all the trace's).
	Users     int64 `json:"users"`
	UserLimit int   `json:"user_limit,omitempty"`
	// WindowS is --duration in seconds: no request was released after
	// it (0: unbounded, the trace ran out).
	WindowS float64 `json:"window_s,omitempty"`
	// RequestsReleased and RequestsCompleted count the requests the loop
	// released: the users', and those of no user, which it releases at
	// their trace times as an open loop does (released are completed, cut
	// by the window: Replay.RequestsCut, or, in a run that stopped, failed
	// or abandoned);
	// RequestsLeft those of the replayed users that were never released
	// (the window closed, or the run stopped, first), -1 when unknown (a
	// trace on a pipe stopped by the window or by the run's stop).
	RequestsReleased  int64 `json:"requests_released"`
	RequestsCompleted int64 `json:"requests_completed"`
	RequestsLeft      int64 `json:"requests_left"`
	// TokensGenerated is the Tokens of the completed requests, and
	// StorageIOS the sum of their storage latencies (release to the last
	// row's completion), the reference's total_storage_io_latency; the
	// reference's storage throughput is their ratio. TokensKnown is false
	// when the trace has no Tokens column.
	TokensGenerated int64   `json:"tokens_generated"`
	TokensKnown     bool    `json:"tokens_known"`
	StorageIOS      float64 `json:"storage_io_s"`
	// ScheduledLag is the lag behind the trace's schedule of the rows the
	// loop released at their trace times, as an open loop's: the rows of
	// no user (preconditioning, RAG ingestion, request traces' requests)
	// and, under --users, the demotions and deletes of the replayed
	// users' objects that left-out users' requests carry; each row the
	// window closed on without releasing it (Replay.RowsMissed) counts
	// as late by at least the time from when it was due to the window's
	// end. Those rows have a schedule, and storage_health's schedule
	// criterion judges its P95 ("Schedule Lag P95 (rows at trace times)
	// < 1000ms"), as it judges an open loop's Lag. A user's rows keep
	// none (each request is released when the user's previous one
	// completed, plus think time): they are in Lag, behind their
	// request's release, and judged by no criterion. Nil when the loop
	// released no such row and missed none, at --speed max (no row has
	// a time to keep), and in documents written before it, which are
	// judged as they were.
	ScheduledLag *Latency `json:"scheduled_lag,omitempty"`
	// PerUser is each user's figures, in the order users first appeared.
	PerUser []UserStats `json:"per_user,omitempty"`
}

// UserStats are one user's figures in a closed-loop replay.
type UserStats struct {
	User              uint64  `json:"user"`
	Trace             int     `json:"trace,omitempty"`
	QoS               string  `json:"qos,omitempty"`
	Requests          int64   `json:"requests"`
	RequestsPerSecond float64 `json:"requests_per_second"`
	Tokens            int64   `json:"tokens,omitempty"`
	MeanMS            float64 `json:"mean_ms"`
	P95MS             float64 `json:"p95_ms"`
	MaxMS             float64 `json:"max_ms"`
}

// ErrorStats counts failed operations and keeps the first messages.
type ErrorStats struct {
	Count int64    `json:"count"`
	First []string `json:"first,omitempty"`
}

// Summary carries the reference's metric names (kv-cache.py --output
// summary and cache_stats) where the meaning is the same, so MLPerf users'
// tooling reads kvreplay's results. results.Summarize computes
// it, for kvreplay and for kvreport's merges. Its tier bandwidths
// (tier_*_bandwidth_gbps) keep the reference's meaning under the
// reference's names: bytes over the run's elapsed time, the offered load
// (TierTotals' ReadOfferedBps), not the device rate that kvbench calls a
// tier's bandwidth everywhere else (TierTotals' ReadDeviceBps, the
// document's read_bandwidth_bytes_per_s). Bandwidths are in GB/s and byte
// counts in GB, decimal (10^9 bytes), as every kvbench figure is; kv-cache.py
// divides by 2^30 under the same names, so its figures read 7.4 % lower
// for the same bytes, and kvreport converts them to decimal when it reads
// a kv-cache.py document into a Summary (its MLPerf view reads the
// document's own GiB figures, and says so).
type Summary struct {
	ElapsedTime                   float64 `json:"elapsed_time"`
	TotalRequests                 int64   `json:"total_requests"`
	RequestsPerSecond             float64 `json:"requests_per_second"`
	StorageThroughputTokensPerSec float64 `json:"storage_throughput_tokens_per_sec"`
	TierGPUReadBandwidthGBps      float64 `json:"tier_gpu_read_bandwidth_gbps"`
	TierGPUWriteBandwidthGBps     float64 `json:"tier_gpu_write_bandwidth_gbps"`
	TierCPUReadBandwidthGBps      float64 `json:"tier_cpu_read_bandwidth_gbps"`
	TierCPUWriteBandwidthGBps     float64 `json:"tier_cpu_write_bandwidth_gbps"`
	TierStorageReadBandwidthGBps  float64 `json:"tier_storage_read_bandwidth_gbps"`
	TierStorageWriteBandwidthGBps float64 `json:"tier_storage_write_bandwidth_gbps"`
	TierStorageKVBytesReadGB      float64 `json:"tier_storage_kv_bytes_read_gb"`
	TierStorageKVBytesWrittenGB   float64 `json:"tier_storage_kv_bytes_written_gb"`
	DecodeBytesReadGB             float64 `json:"decode_bytes_read_gb"`
	StorageReadP95MS              float64 `json:"storage_read_p95_ms"`
	StorageWriteP95MS             float64 `json:"storage_write_p95_ms"`
	// CPUP95MS is the P95 of Tier-1's reads and writes pooled (the
	// reference's CPU RAM P95). From a kv-cache.py document it is its
	// storage_health's CPU RAM figure, or its one CPU operation's p95; 0
	// (not measured) when it gives a read and a write p95 and no pooled
	// one.
	CPUP95MS float64 `json:"cpu_p95_ms"`
	// StorageReadDevice* and StorageWriteDevice* are the Tier-2 device
	// latency under the reference's names (its storage_read_device_p95_ms,
	// the figure MLPerf Storage scores, Rules.md 6.3.4.3): Device's Tier-2
	// spans (a read's I/Os; a write's I/Os and its fdatasync under
	// --fsync), and nothing the operation waited for before (a worker, its
	// request's earlier rows, the schedule: those are in
	// latency_from_schedule and the request latency). kvbench moves bytes
	// straight between its aligned buffers and the device, so there is no
	// host copy to take out. A document without Device (older ones) takes
	// its Tier-2 cells' latency from submission, which adds the files'
	// open and close. Absent when the run had no Tier-2 read (write), as
	// the reference's.
	StorageReadDeviceP50MS    float64       `json:"storage_read_device_p50_ms,omitempty"`
	StorageReadDeviceP95MS    float64       `json:"storage_read_device_p95_ms,omitempty"`
	StorageReadDeviceP99MS    float64       `json:"storage_read_device_p99_ms,omitempty"`
	StorageReadDeviceP999MS   float64       `json:"storage_read_device_p999_ms,omitempty"`
	StorageReadDeviceP9999MS  float64       `json:"storage_read_device_p9999_ms,omitempty"`
	StorageWriteDeviceP50MS   float64       `json:"storage_write_device_p50_ms,omitempty"`
	StorageWriteDeviceP95MS   float64       `json:"storage_write_device_p95_ms,omitempty"`
	StorageWriteDeviceP99MS   float64       `json:"storage_write_device_p99_ms,omitempty"`
	StorageWriteDeviceP999MS  float64       `json:"storage_write_device_p999_ms,omitempty"`
	StorageWriteDeviceP9999MS float64       `json:"storage_write_device_p9999_ms,omitempty"`
	StorageIOLatencyMS        Percentiles   `json:"storage_io_latency_ms"`
	StorageHealth             StorageHealth `json:"storage_health"`
	// StorageKVTokensPerSec is kvbench's, not the reference's (reports
	// name it kv_tokens_moved_per_s): the KV tokens whose bytes moved
	// through Tier-2 (reads and writes, the bytes the run moved) per second
	// of wall time; absent when the trace's bytes per token are unknown
	// (kvreplay --model gives them for a trace without a sidecar). It is
	// not storage_throughput_tokens_per_sec, the reference's tokens
	// generated over the total storage I/O time.
	StorageKVTokensPerSec *float64 `json:"storage_kv_tokens_per_sec,omitempty"`
	// NotMeasured names each figure of the document that the run could
	// not measure (a zero there is no measurement) and says why.
	NotMeasured map[string]string `json:"not_measured,omitempty"`
}

// Percentiles in milliseconds, the reference's {mean, p50, p95, p99,
// p999, p9999}.
type Percentiles struct {
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	P9999 float64 `json:"p9999"`
}

// StorageHealth is the reference's PASS/FAIL verdict with its criteria
// (reference section 5), as results decides it for every tool;
// kvbench adds criteria of its own (the schedule's lag, each QoS class's
// SLA) and the statuses INCOMPLETE (a run stopped early) and NO_DATA
// (nothing the criteria measure), which are never a PASS. Reasons say,
// one line each, why a status other than PASS was given: each failed
// criterion by its figures ("interactive p95 62.9 ms > 50 ms target"),
// failed operations, why the run did not complete.
type StorageHealth struct {
	OverallStatus HealthStatus `json:"overall_status"`
	Criteria      []Criterion  `json:"criteria"`
	PassedCount   int          `json:"passed_count"`
	TotalCount    int          `json:"total_count"`
	Reasons       []string     `json:"reasons,omitempty"`
}

// RankStatus is one rank's own storage_health in a merged document: its
// status and, when it is not PASS, the reasons.
type RankStatus struct {
	Rank    int          `json:"rank"`
	Status  HealthStatus `json:"status"`
	Reasons []string     `json:"reasons,omitempty"`
}

// HealthStatus is storage_health's overall status.
type HealthStatus string

// The statuses of storage_health. PASS and FAIL are the reference's;
// INCOMPLETE and NO_DATA are kvbench's, for what the reference would have
// called a PASS without grounds. Only results gives them.
const (
	HealthPass       HealthStatus = "PASS"
	HealthFail       HealthStatus = "FAIL"
	HealthIncomplete HealthStatus = "INCOMPLETE"
	HealthNoData     HealthStatus = "NO_DATA"
)

// Criterion is one storage_health check; Reason says why a failed one
// failed, with its figures.
type Criterion struct {
	Name   string  `json:"name"`
	Target float64 `json:"target"`
	Actual float64 `json:"actual"`
	Unit   string  `json:"unit"`
	Passed bool    `json:"passed"`
	Reason string  `json:"reason,omitempty"`
}

// UpgradeBandwidths gives r, decoded from raw, a document of format
// version 1 or 2, the meaning of version 3: those had the offered load
// under the bandwidth keys (tiers' read_bandwidth_bytes_per_s and
// write_bandwidth_bytes_per_s, cells' bandwidth_bytes_per_s) and the
// device rate under read_device_bytes_per_s, write_device_bytes_per_s and
// busy_bandwidth_bytes_per_s. A rate the document lacks is 0 (unknown),
// as version 1's device rates of tiers are.
func UpgradeBandwidths(r *Result, raw []byte) error {
	var old struct {
		Tiers []struct {
			ReadOffered  float64 `json:"read_bandwidth_bytes_per_s"`
			WriteOffered float64 `json:"write_bandwidth_bytes_per_s"`
			ReadDevice   float64 `json:"read_device_bytes_per_s"`
			WriteDevice  float64 `json:"write_device_bytes_per_s"`
		} `json:"tiers"`
		Cells []struct {
			Offered float64 `json:"bandwidth_bytes_per_s"`
			Device  float64 `json:"busy_bandwidth_bytes_per_s"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return err
	}
	if len(old.Tiers) != len(r.Tiers) || len(old.Cells) != len(r.Cells) {
		return fmt.Errorf("schema: %d tiers and %d cells, decoded as %d and %d", len(old.Tiers), len(old.Cells), len(r.Tiers), len(r.Cells))
	}
	for i, t := range old.Tiers {
		r.Tiers[i].ReadOfferedBps, r.Tiers[i].WriteOfferedBps = t.ReadOffered, t.WriteOffered
		r.Tiers[i].ReadDeviceBps, r.Tiers[i].WriteDeviceBps = t.ReadDevice, t.WriteDevice
	}
	for i, c := range old.Cells {
		r.Cells[i].OfferedBps, r.Cells[i].DeviceBps = c.Offered, c.Device
	}
	return nil
}
