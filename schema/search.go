package schema

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The search document's identity. Version 2 names a probe's bytes over
// its elapsed time, and the capacity search's peak of them, the offered
// load (offered_bytes_per_s, peak_offered_bytes_per_s), as the result
// document does (format 3's *_offered_bytes_per_s); version 1 had the
// same figures under bandwidth_bps and peak_bandwidth_bps
// (UpgradeSearchOffered reads them). Readers read both.
const (
	SearchFormat        = "kvbench-search"
	SearchFormatVersion = 2
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
	// Pass says whether the probe met its search's criteria, and Reason
	// why or why not, from the same facts: the criterion that failed with
	// its figures, or what passed. A users probe passes when every QoS
	// class met its SLA (95 % of its requests within its target) and
	// storage_health is PASS; a capacity probe passes when storage_health
	// is PASS (the load was served within the latency profile). A probe
	// that is not a measurement never passes.
	Pass   bool   `json:"pass"`
	Reason string `json:"reason,omitempty"`
	// NotMeasured says why the probe is not a measurement, empty when it
	// is one: its run stopped for a reason other than --duration (a full
	// disk, an I/O error, a signal; its trace, or its users' requests,
	// ran out before the window closed) or operations failed. The search
	// stops at such a probe.
	NotMeasured string `json:"not_measured,omitempty"`
	// UsersByQoS counts a users probe's users by QoS class: the sample
	// keeps the trace's mix (SearchResult.UserSelection).
	UsersByQoS map[string]int `json:"users_by_qos,omitempty"`
	// What the probe measured. OfferedBps is the offered load: the bytes
	// read and written by the tiers on Tier-2's backend (Tier-2 alone in
	// the default tier map; every tier's when the traces have no Tier-2
	// row) over the probe's elapsed time, the sum of their read and write
	// *_offered_bytes_per_s in the result; it falls when the device makes
	// the run longer, and is not a device rate. The search's reason names
	// the tiers.
	WallS             float64            `json:"wall_s"`
	Requests          int64              `json:"requests"`
	RequestsPerSecond float64            `json:"requests_per_second"`
	TokensPerSecond   float64            `json:"storage_throughput_tokens_per_sec"`
	OfferedBps        float64            `json:"offered_bytes_per_s"`
	P95MSByQoS        map[string]float64 `json:"p95_ms_by_qos,omitempty"`
	Health            string             `json:"storage_health"`
	// TierPaths are where the probe's tiers lived and what an object
	// store's was asked (its result's host.tier_paths: each probe makes
	// its tiers afresh, an S3 tier under a run prefix of its own).
	TierPaths []PathInfo `json:"tier_paths,omitempty"`
}

// SearchResult is what a search (kvreplay --search) writes: the answer, its confidence, and every
// probe in the order it ran.
type SearchResult struct {
	Header
	// Trial names the search among its trials (kvreplay --trial), as a
	// result's does; 0 when not given.
	Trial int    `json:"trial,omitempty"`
	Kind  string `json:"kind"`
	// WindowS is each probe's --duration.
	WindowS float64 `json:"window_s"`
	// Users search: the largest number of users that passed (0: none),
	// of TotalUsers; Confidence is the share of the probes at the answer
	// that passed, and Resolution the gap to the smallest failing count
	// found (1: exact; absent where no count failed a probe: the answer
	// is then a lower bound).
	Users      int     `json:"users,omitempty"`
	TotalUsers int     `json:"total_users,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	Resolution int     `json:"resolution,omitempty"`
	// UserSelection says which users a users probe of n replays.
	UserSelection string `json:"user_selection,omitempty"`
	// Capacity search: the peak offered load the system delivered (a
	// probe's OfferedBps) and the --speed that reached it; Plateau says
	// the search saw the offered load stop rising with --speed (false: it
	// ran out of probes first), and SaturatedFromFirstProbe that it was at
	// its plateau from the first probe: doubling the lowest --speed probed
	// did not raise it.
	PeakOfferedBps          float64 `json:"peak_offered_bytes_per_s,omitempty"`
	PeakSpeed               float64 `json:"peak_speed,omitempty"`
	Plateau                 bool    `json:"plateau,omitempty"`
	SaturatedFromFirstProbe bool    `json:"saturated_from_first_probe,omitempty"`
	// Done says the search finished; Reason what it found or why it
	// stopped.
	Done   bool   `json:"done"`
	Reason string `json:"reason"`
	// AnswerIsLowerBound says the search stopped before its answer was
	// found (a probe that is not a measurement, a signal, a failed
	// setup): the answer (Users, PeakOfferedBps) is what the probes
	// before the stop measured, a lower bound; LowerBoundReason says why.
	AnswerIsLowerBound bool            `json:"answer_is_lower_bound,omitempty"`
	LowerBoundReason   string          `json:"lower_bound_reason,omitempty"`
	Probes             []SearchProbe   `json:"probes"`
	Host               Host            `json:"host"`
	Traces             []TraceInfo     `json:"traces"`
	Config             json.RawMessage `json:"config,omitempty"`
	Warnings           []string        `json:"warnings,omitempty"`
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

// MarshalJSON writes a users search's answer even when it is 0 (a search
// whose every probe failed serves no user: the answer is there, not left
// out), and leaves users out of a capacity search.
func (s SearchResult) MarshalJSON() ([]byte, error) {
	type plain SearchResult
	if s.Kind != SearchUsers {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		plain
		Users int `json:"users"`
	}{plain(s), s.Users})
}

// UpgradeSearchOffered gives d, decoded from raw, a search document of
// format version 1, the names of version 2: version 1 had the probes'
// offered load under bandwidth_bps and the capacity search's peak under
// peak_bandwidth_bps.
func UpgradeSearchOffered(d *SearchResult, raw []byte) error {
	var old struct {
		Peak   float64 `json:"peak_bandwidth_bps"`
		Probes []struct {
			Offered float64 `json:"bandwidth_bps"`
		} `json:"probes"`
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return err
	}
	if len(old.Probes) != len(d.Probes) {
		return fmt.Errorf("schema: %d probes, decoded as %d", len(old.Probes), len(d.Probes))
	}
	d.PeakOfferedBps = old.Peak
	for i, p := range old.Probes {
		d.Probes[i].OfferedBps = p.Offered
	}
	d.FormatVersion = SearchFormatVersion
	return nil
}
