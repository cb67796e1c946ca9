package sim

import (
	"io"
	"time"
)

// GiB is the reference's gigabyte: the --*-gb flags count 1024^3 bytes.
const GiB = 1 << 30

// Generation modes: the virtual time a worker spends per generated token
// after a request's I/O (reference section 3.5).
var generationSecondsPerToken = map[string]float64{"none": 0, "fast": 0.002, "realistic": 0.030}

// Config is everything that shapes a simulation. Its zero value is not
// useful: start from DefaultConfig, which holds the reference's defaults
// (kv-cache.py's flags, config.yaml's values), and call Validate.
//
// Fields marked "no effect" are accepted for command-line compatibility
// with kv-cache.py and only matter for its real-I/O mode; NoEffect lists
// those that were set.
type Config struct {
	// Model is the key of the model in Models.
	Model  string
	Models map[string]Model

	NumUsers int
	Duration time.Duration
	// GPUMemGB is per GPU; the GPU tier is NumGPUs x GPUMemGB GiB.
	GPUMemGB       float64
	NumGPUs        int
	TensorParallel int
	CPUMemGB       float64
	// StorageCapacityGB bounds the NVMe tier; 0 means unlimited, as in the
	// reference's trace mode.
	StorageCapacityGB float64
	// ObjectTier adds Tier-3, unbounded object storage (S3), below the
	// NVMe tier that StorageCapacityGB bounds: what NVMe evicts is
	// demoted to it (an Evict Read on Tier-2, an Evict Write on Tier-3)
	// instead of deleted, and read from it after (mlcommons/storage #285;
	// kvbench's, not the reference's). Traces without it have three tiers.
	ObjectTier bool
	// OpenInput opens the request traces and datasets; nil is os.Open.
	// kvtrace gives one that its signal context ends, so that a named
	// pipe with no writer does not hold it past ^C.
	OpenInput func(path string) (io.ReadCloser, error) `json:"-" yaml:"-"`

	GenerationMode       string // none, fast or realistic
	DisableMultiTurn     bool
	DisablePrefixCaching bool
	EnableRAG            bool
	RAGNumDocs           int

	UseBurstTrace    bool
	BurstTracePath   string
	DatasetPath      string // ShareGPT JSON
	MaxConversations int
	TraceSpeedup     float64
	ReplayCycles     int
	RequestRate      float64
	MaxRequests      int

	// RequestTrace is a kvbench extension: a public request trace turned
	// into KV I/O (mooncake, azure, burstgpt, sharegpt).
	RequestTrace       string
	RequestTraceFormat string // "" detects from content
	// RequestTraceTimeUnit is the unit of a Mooncake-style trace's
	// timestamps: s, ms, us or ns; "" finds it from the first timestamp.
	RequestTraceTimeUnit string
	// RequestTraceBlockTokens is the number of tokens a Mooncake-style
	// trace's hash id stands for; 0 takes Mooncake's 512. Records whose
	// ids do not fit it have their input apportioned over their ids.
	RequestTraceBlockTokens int

	// Arrival is an open arrival process for the synthetic users' requests
	// and for --dataset-path and untimed --request-trace requests: "" (the
	// reference's: users think between requests, a dataset is spaced
	// evenly), ArrivalFixed, ArrivalPoisson or ArrivalGamma, at
	// --request-rate (synthetic users: by default the rate their think
	// times give). ArrivalCV is the gamma gaps' coefficient of variation.
	// The gaps are drawn from a generator of their own, seeded by Seed and
	// ArrivalSeed, so the workload's draws do not change with them.
	Arrival     string
	ArrivalCV   float64
	ArrivalSeed int64

	// SLO adds SLO attainment to the statistics (kvtrace --slo-ms).
	SLO SLO

	PrefillOnly         bool
	DecodeOnly          bool
	Precondition        bool
	PreconditionSizeGB  float64
	PreconditionThreads int // only whether it is 1 (NVMeAccounting)

	Seed int64

	// KeyStyle selects how object keys are named: "kvbench" (no wall-clock
	// time in keys) or "mlperf" (the reference's conv_<user>_<epoch ms>
	// keys, from EpochBase).
	KeyStyle  string
	EpochBase time.Time
	// NoDeletesPeak makes the run find the tiers' peaks of its trace
	// without the Delete rows (Result.Kvbench.PeakLiveBytesNoDeletes):
	// the mlperf dialect's, where a deleted object stays live until its
	// key is written again. It keeps each deleted object's tier and size
	// until then, memory that grows with the run under a bounded tier, so
	// only a trace in that dialect asks for it. Not part of the trace's
	// configuration (its sidecar).
	NoDeletesPeak bool `json:"-"`

	// No effect on a trace (real-I/O options of the reference).
	CacheDir            string
	MaxConcurrentAllocs int
	PerformanceProfile  string
	NoEffect            []string

	// The reference's autoscaler (autoscale.go): it changes no load, but
	// fills the statistics' autoscaling fields, and in capacity mode ends
	// the run at the throughput's peak.
	EnableAutoscaling bool
	AutoscalerMode    string // qos or capacity
	TargetSaturation  float64

	// NVMeAccounting is how the tiers that take demotions (a bounded NVMe
	// tier, and the CPU tier below a GPU tier) count their bytes:
	// AccountingReference (the default) as kv-cache.py's threads end up
	// counting them, AccountingExact as its rule says.
	NVMeAccounting string

	// From config.yaml (the reference's defaults otherwise).
	Eviction        Eviction
	QoS             [numQoSLevels]QoSProfile
	QoSDistribution QoSDistribution
	UserTemplates   []UserTemplate
	RAG             RAGConfig
	DecodeBatchSize int
	MaxTurns        int
	// ConversationStates bounds the conversations whose turns are
	// remembered (the reference's conversation.max_conversations, 1000):
	// starting one more forgets the least recently turned, whose requests
	// still queued then reload no history.
	ConversationStates int
	// EndConversationProbability is the chance a conversation ends before
	// a user's next request; the reference hard-codes 0.2.
	EndConversationProbability float64
	// SystemPromptHitProbability is the chance a request "detects" a system
	// prompt (prefix caching).
	SystemPromptHitProbability float64

	// dynamicsSalt, when set, reseeds the random stream after the user
	// population is drawn: tests average several samples of a run.
	dynamicsSalt uint64
}

// Eviction holds the waterfall eviction's watermarks (config.yaml
// eviction, reference section 1.4).
type Eviction struct {
	TargetUsageRatio     float64 // non-terminal tiers evict down to this share
	LargeEntryLimitRatio float64 // objects over this share of a tier skip it
	MaxRecursionDepth    int
	MaxEvictionsHardCap  int
	MaxEvictionsMin      int
}

// The QoS levels, as indexes of Config.QoS.
const (
	QoSInteractive = iota
	QoSResponsive
	QoSBatch
	numQoSLevels
)

// QoSProfile is a QoS level's priority and latency targets (reference
// section 3.6).
type QoSProfile struct {
	Name        string
	Priority    int
	TargetP95   time.Duration
	TargetP99   time.Duration
	TargetP999  time.Duration
	TargetP9999 time.Duration
}

// QoSDistribution draws a QoS level: r < Interactive is interactive,
// r < Responsive responsive, else batch.
type QoSDistribution struct {
	InteractiveProbability float64
	ResponsiveThreshold    float64
}

// UserTemplate is a synthetic user profile (reference section 3.1): ranges
// are inclusive; think times in seconds.
type UserTemplate struct {
	Name          string
	ContextMin    int
	ContextMax    int
	GenerationMin int
	GenerationMax int
	ThinkMin      float64
	ThinkMax      float64
}

// RAGConfig holds the RAG workload's parameters (reference section 3.4).
type RAGConfig struct {
	ChunkSizeTokens    int
	TopKChunks         int
	MaxChunkBytes      int64
	RequestProbability float64
	Distribution       string // zipfian, uniform or random
	SmallDocTokensMin  int
	SmallDocTokensMax  int
	LargeDocTokensMin  int
	LargeDocTokensMax  int
	MaxDocuments       int // 0: unlimited
}

// DefaultConfig returns the reference's defaults: kv-cache.py's flag
// defaults and config.yaml's values.
func DefaultConfig() Config {
	return Config{
		Model:              DefaultModel,
		Models:             BuiltinModels(),
		NumUsers:           100,
		Duration:           60 * time.Second,
		GPUMemGB:           16,
		NumGPUs:            1,
		TensorParallel:     1,
		CPUMemGB:           32,
		GenerationMode:     "realistic",
		RAGNumDocs:         10,
		BurstTracePath:     "BurstGPT/data/BurstGPT_1.csv",
		MaxConversations:   500,
		TraceSpeedup:       1,
		ArrivalCV:          2,
		KeyStyle:           "kvbench",
		EpochBase:          time.Unix(1767225600, 0).UTC(), // 2026-01-01T00:00:00Z
		PerformanceProfile: "latency",
		AutoscalerMode:     "qos",
		TargetSaturation:   0.8,
		Eviction: Eviction{
			TargetUsageRatio:     0.8,
			LargeEntryLimitRatio: 0.95,
			MaxRecursionDepth:    10,
			MaxEvictionsHardCap:  5000,
			MaxEvictionsMin:      1000,
		},
		QoS: [numQoSLevels]QoSProfile{
			{Name: "interactive", Priority: 3, TargetP95: 50 * time.Millisecond, TargetP99: 100 * time.Millisecond, TargetP999: 150 * time.Millisecond, TargetP9999: 200 * time.Millisecond},
			{Name: "responsive", Priority: 2, TargetP95: 100 * time.Millisecond, TargetP99: 200 * time.Millisecond, TargetP999: 350 * time.Millisecond, TargetP9999: 500 * time.Millisecond},
			{Name: "batch", Priority: 1, TargetP95: 1000 * time.Millisecond, TargetP99: 5000 * time.Millisecond, TargetP999: 7500 * time.Millisecond, TargetP9999: 10000 * time.Millisecond},
		},
		QoSDistribution: QoSDistribution{InteractiveProbability: 0.15, ResponsiveThreshold: 0.50},
		UserTemplates: []UserTemplate{
			{Name: "chatbot", ContextMin: 512, ContextMax: 4096, GenerationMin: 50, GenerationMax: 200, ThinkMin: 0.1, ThinkMax: 0.5},
			{Name: "coding", ContextMin: 4096, ContextMax: 25000, GenerationMin: 100, GenerationMax: 500, ThinkMin: 0.2, ThinkMax: 1.0},
			{Name: "document", ContextMin: 4096, ContextMax: 16384, GenerationMin: 200, GenerationMax: 800, ThinkMin: 0.3, ThinkMax: 1.5},
		},
		RAG: RAGConfig{
			ChunkSizeTokens:    512,
			TopKChunks:         5,
			MaxChunkBytes:      256 << 20,
			RequestProbability: 0.1,
			Distribution:       "zipfian",
			SmallDocTokensMin:  4000,
			SmallDocTokensMax:  12000,
			LargeDocTokensMin:  1024,
			LargeDocTokensMax:  4096,
		},
		DecodeBatchSize:            32,
		MaxTurns:                   50,
		NVMeAccounting:             AccountingReference,
		ConversationStates:         1000,
		EndConversationProbability: 0.2,
		SystemPromptHitProbability: 0.2,
	}
}

// NVMe accounting modes (Config.NVMeAccounting).
//
// kv-cache.py reserves a CPU victim's size on NVMe before demoting it;
// its workers evict from stale snapshots, so two of them often pick the
// same victim, both reserve, one moves it, and the other's reservation is
// never given back. Its NVMe usage counter then runs ahead of the bytes
// the tier holds (by about 10 GiB on average under a 20 GiB cap, measured
// on the reference with 50 workers on 2 CPUs), the tier evicts early, and
// every so often it empties completely, when the counter is recounted.
// Under --storage-capacity-gb its traces serve about half the Tier-2
// decode reads its rule would (Tier-2 share of decode reads 0.076-0.105
// over four runs of the 50-user 20 GiB configuration, 0.19-0.21 with the
// race removed by a lock or one worker; 0.062-0.092 against 0.15-0.18 for
// the 10 GiB preconditioned one).
//
// A GPU victim's demotion into the CPU tier takes the same path, and its
// CPU counter leaks alike; the CPU tier is recounted only when it has
// emptied. Below a GPU tier, kv-cache.py's CPU tier holds well under what
// its watermark allows: 0.42 and 0.44 GiB on average of a 1 GiB tier in
// two runs whose rule alone holds 0.75 (tiny-1b, 40 users, 2 x 1 GiB GPUs,
// TP 2), 2.2 GiB of 4 against 2.6 (the published llama3.1-8b trace with a
// 2 GiB GPU tier); and a decode-only run's pre-population, by one thread
// per CPU, leaves the CPU tier nearly empty (testdata/reference/differential).
//
// Two workers collide only while both are evicting into the same tier,
// so the leak grows with the rate of demotions: in realistic mode (6
// requests a second) kv-cache.py's tiers hold what their rule alone holds
// (the CPU tier below a 1 GiB GPU tier, 30 users; a 10 GiB NVMe tier, 30
// users, held 14 objects at the end, as kvtrace's rule alone does, where
// a fixed share of races left 8), and at 70 requests a second nearly
// (llama2-7b, 30 users, 8 GiB GPU, 16 GiB CPU). Where its Python is
// saturated, it races more still (150 users on 2 CPUs: 260 requests a
// second of the 400 its users ask, and the CPU tier held 13 % less than
// kvtrace's, whose host is never saturated).
//
// AccountingReference models the race: a demotion into a bounded tier (a
// bounded NVMe tier, or the CPU tier below a GPU tier) races when another
// request demoted into the same tier less than a window of virtual time
// before it (raceWindowCPU, raceWindowNVMe; while more than one worker
// runs), and then reserves, and evicts for, the victim's size a second
// time, never given back. The windows were calibrated on
// TestDifferentialFigures's runs with a GPU tier or an NVMe cap and on
// TestNVMeAccounting's two configurations: at 120 requests a second they
// race about 2 % of the demotions into the CPU tier and 5 % of those into
// the NVMe tier (9 % at 200), and they put the CPU tier's mean within 9 %
// of kv-cache.py's in ten runs of eight configurations with a GPU tier (a
// fixed 5 % of the demotions, the earlier model, left eight of them 5-19 %
// under it). Every demotion races while preconditioning with
// more than one thread (the reference's default is one per CPU) or
// pre-populating a decode-only run (always one thread per CPU). The race
// draws nothing: the run's draws, and every trace with neither a GPU tier
// above a CPU tier nor a Tier-2 cap, are the same in both modes.
// AccountingExact applies the rule alone.
const (
	AccountingReference = "reference"
	AccountingExact     = "exact"
)

// raceWindowCPU and raceWindowNVMe are how soon after another request's
// demotion into the CPU tier, or into a bounded NVMe tier, a demotion into
// it races in AccountingReference's run: in effect the time a
// kv-cache.py worker's eviction takes, its snapshot going stale, on the
// loaded 2-CPU machine the reference ran on.
const (
	raceWindowCPU  = 700 * time.Microsecond
	raceWindowNVMe = 2 * time.Millisecond
)
