package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/kvbench/kvbench/results"
)

// SLO is a latency service level for kvtrace's statistics: the share of
// completed requests whose end-to-end latency (queueing and generation,
// in virtual time) is within a target. All applies to every request;
// ByQoS, where set, to a QoS class's requests instead.
type SLO struct {
	All   time.Duration               `json:"all"`
	ByQoS [numQoSLevels]time.Duration `json:"by_qos"`
}

// Set reports whether any target is set.
func (s SLO) Set() bool {
	return s.All > 0 || slices.ContainsFunc(s.ByQoS[:], func(d time.Duration) bool { return d > 0 })
}

// target returns the target of a class's requests (0: none).
func (s SLO) target(qos int) time.Duration {
	if s.ByQoS[qos] > 0 {
		return s.ByQoS[qos]
	}
	return s.All
}

// ParseSLO parses --slo-ms: a target in milliseconds for every request,
// and/or class=ms pairs ("500", "interactive=50,batch=2000", or
// "500,interactive=50"), class names as in qos.
func ParseSLO(s string, qos [numQoSLevels]QoSProfile) (SLO, error) {
	var slo SLO
	err := results.ParseSLOItems(s, func(name string, named bool, d time.Duration) error {
		if !named {
			slo.All = d
			return nil
		}
		lvl := slices.IndexFunc(qos[:], func(p QoSProfile) bool { return p.Name == name })
		if lvl < 0 {
			return fmt.Errorf("class %q: want one of %s, %s, %s", name, qos[0].Name, qos[1].Name, qos[2].Name)
		}
		slo.ByQoS[lvl] = d
		return nil
	})
	if err != nil {
		return SLO{}, err
	}
	return slo, nil
}

// SLOAttainment is the share of requests within their SLO, over all
// requests with a target and by QoS class. Requests still in flight at the
// end are not counted (they did not complete).
type SLOAttainment struct {
	Requests   int64                     `json:"requests"`
	Within     int64                     `json:"within"`
	Attainment float64                   `json:"attainment"`
	TargetMS   float64                   `json:"target_ms,omitempty"`
	ByQoS      map[string]*SLOAttainment `json:"by_qos,omitempty"`
}

// sloAttainment counts e2e (seconds) against the SLO, by class (qos, in
// the same order).
func sloAttainment(slo SLO, profiles [numQoSLevels]QoSProfile, e2e []float64, qos []uint8) *SLOAttainment {
	all := &SLOAttainment{ByQoS: map[string]*SLOAttainment{}}
	if slo.All > 0 {
		all.TargetMS = float64(slo.All) / float64(time.Millisecond)
	}
	for lvl := range numQoSLevels {
		if t := slo.target(lvl); t > 0 {
			all.ByQoS[profiles[lvl].Name] = &SLOAttainment{TargetMS: float64(t) / float64(time.Millisecond)}
		}
	}
	for i, lat := range e2e {
		c := all.ByQoS[profiles[qos[i]].Name]
		if c == nil {
			continue
		}
		in := lat <= c.TargetMS/1000
		c.Requests++
		all.Requests++
		if in {
			c.Within++
			all.Within++
		}
	}
	for _, c := range all.ByQoS {
		if c.Requests > 0 {
			c.Attainment = float64(c.Within) / float64(c.Requests)
		}
	}
	if all.Requests > 0 {
		all.Attainment = float64(all.Within) / float64(all.Requests)
	}
	return all
}

// Completion is one completed request, for Hooks.Completed (kvtrace
// --latency-dump). Times are virtual, in seconds from the start of the
// run; the storage latency is 0 until a replay measures it.
type Completion struct {
	Request    uint64  `json:"id"`
	User       string  `json:"user"`
	QoS        string  `json:"qos"`
	Phase      string  `json:"phase"`
	ArrivalS   float64 `json:"arrival_s"`
	CompletedS float64 `json:"completed_s"`
	E2EMS      float64 `json:"e2e_ms"`
	StorageMS  float64 `json:"storage_ms"`
	Tokens     int     `json:"tokens"`
	Context    int     `json:"context_tokens"`
	WithinSLO  *bool   `json:"within_slo,omitempty"`
}

// phaseNames are the request phases as Completion names them.
var phaseNames = [...]string{phasePrefill: "prefill", phasePrefillDecode: "prefill_decode", phaseDecode: "decode"}
