package schema

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The search document's identity.
const (
	SearchFormat        = "kvbench-search"
	SearchFormatVersion = 1
)

// Kinds of search.
const (
	SearchUsers    = "users"
	SearchCapacity = "capacity"
)

// SearchProbe is one replay of a search and what it measured.
type SearchProbe struct {
	// Users is the probe's number of users (a users search); Speed its
	// --speed factor (a capacity search).
	Users int     `json:"users,omitempty"`
	Speed float64 `json:"speed,omitempty"`
	// Pass says whether the probe met the users search's criteria: every
	// QoS class within its p95 target, storage_health PASS, no failed
	// operation, complete. Reason says why not.
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"`
	// What the probe measured.
	WallS             float64            `json:"wall_s"`
	Requests          int64              `json:"requests"`
	RequestsPerSecond float64            `json:"requests_per_second"`
	TokensPerSecond   float64            `json:"storage_throughput_tokens_per_sec"`
	BandwidthBps      float64            `json:"bandwidth_bps"`
	P95MSByQoS        map[string]float64 `json:"p95_ms_by_qos,omitempty"`
	Health            string             `json:"storage_health"`
}

// SearchResult is what a search (kvreplay --search) writes: the answer, its confidence, and every
// probe in the order it ran.
type SearchResult struct {
	Format        string   `json:"format"`
	FormatVersion int      `json:"format_version"`
	Tool          string   `json:"tool"`
	ToolVersion   string   `json:"tool_version"`
	CommandLine   []string `json:"command_line"`
	Label         string   `json:"label,omitempty"`
	System        string   `json:"system,omitempty"`
	Kind          string   `json:"kind"`
	// WindowS is each probe's --duration.
	WindowS float64 `json:"window_s"`
	// Users search: the largest number of users that passed (0: none),
	// of TotalUsers; Confidence is the share of the probes at the answer
	// that passed, and Resolution the gap to the smallest failing count
	// found (1: exact).
	Users      int     `json:"users,omitempty"`
	TotalUsers int     `json:"total_users,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	Resolution int     `json:"resolution,omitempty"`
	// Capacity search: the peak delivered bandwidth and the --speed that
	// reached it; Plateau says the search saw the bandwidth stop
	// improving (false: it ran out of probes first).
	PeakBandwidthBps float64 `json:"peak_bandwidth_bps,omitempty"`
	PeakSpeed        float64 `json:"peak_speed,omitempty"`
	Plateau          bool    `json:"plateau,omitempty"`
	// Done says the search finished; Reason what it found or why it
	// stopped.
	Done     bool            `json:"done"`
	Reason   string          `json:"reason"`
	Probes   []SearchProbe   `json:"probes"`
	Host     Host            `json:"host"`
	Traces   []TraceInfo     `json:"traces"`
	Config   json.RawMessage `json:"config,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
}

// P95s renders the probe's p95 per QoS class, in class order
// ("interactive 12.1, batch 30.2" in ms), "-" when no class completed a
// request.
func (p SearchProbe) P95s() string {
	var parts []string
	for q := QoSInteractive; q < NumQoS; q++ {
		if v, ok := p.P95MSByQoS[q.String()]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f", q, v))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
