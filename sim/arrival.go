package sim

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// Arrival processes (Config.Arrival). The reference has none of its own:
// its synthetic users wait a think time between requests (a closed loop)
// and its ShareGPT replay spaces requests evenly at --request-rate.
const (
	// ArrivalFixed spaces requests evenly: 1/rate apart.
	ArrivalFixed = "fixed"
	// ArrivalPoisson draws exponential gaps: a Poisson process, whose
	// inter-arrival coefficient of variation is 1.
	ArrivalPoisson = "poisson"
	// ArrivalGamma draws gamma gaps of Config.ArrivalCV: burstier than
	// Poisson above 1, smoother below.
	ArrivalGamma = "gamma"
)

// arrivalStream is the second seed of the arrival process's generator,
// so that its draws never share a stream with the workload's.
const arrivalStream = 0x6172726976616c73 // "arrivals"

// arrivals draws the gaps between requests of an open arrival process of
// a mean rate, from a generator of its own (seeded by Config.Seed and
// Config.ArrivalSeed),
// so the workload's draws are the same whatever the arrivals.
type arrivals struct {
	kind  string
	mean  float64 // seconds between arrivals
	shape float64 // gamma's k = 1/cv^2
	rng   *rand.Rand
}

func newArrivals(cfg *Config, rate float64) *arrivals {
	// The mean gap is at least minSpacing, as rateGap's.
	a := &arrivals{kind: cfg.Arrival, mean: max(1/rate, minSpacing.Seconds()), rng: rand.New(rand.NewPCG(uint64(cfg.Seed), arrivalStream^uint64(cfg.ArrivalSeed)))}
	if a.kind == ArrivalGamma {
		a.shape = 1 / (cfg.ArrivalCV * cfg.ArrivalCV)
	}
	return a
}

// next returns the time to the next arrival.
func (a *arrivals) next() time.Duration {
	var s float64
	switch a.kind {
	case ArrivalPoisson:
		s = a.rng.ExpFloat64() * a.mean
	case ArrivalGamma:
		s = gamma(a.rng, a.shape) * a.mean / a.shape
	default:
		s = a.mean
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}

// gamma draws from the gamma distribution of shape k and scale 1:
// Marsaglia and Tsang's method ("A simple method for generating gamma
// variables", ACM TOMS 26(3), 2000), and for k < 1 its boost, a draw of
// shape k+1 times U^(1/k).
func gamma(r *rand.Rand, k float64) float64 {
	if k < 1 {
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		return gamma(r, k+1) * math.Pow(u, 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// closedLoopRate is the request rate of the synthetic users' closed loop
// when nothing waits: the sum of each user's 1/think time. An open arrival
// process without --request-rate runs at it.
func (e *engine) closedLoopRate() float64 {
	var r float64
	for _, u := range e.users {
		// A user thinks at least minSpacing (thinkTime): without the
		// bound, users of think time 0 gave a rate of 0, arrivals an
		// infinite gap and rows a negative time.
		r += 1 / max(u.think, minSpacing.Seconds())
	}
	return r
}

// describe names the process: "poisson", "gamma cv 2", "fixed".
func (a *arrivals) describe() string {
	if a.kind == ArrivalGamma {
		return "gamma cv " + strconv.FormatFloat(1/math.Sqrt(a.shape), 'g', 4, 64)
	}
	return a.kind
}
