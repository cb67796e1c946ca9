package reqtrace

import (
	"io"
	"time"
)

// Stats describe a request trace as a whole.
type Stats struct {
	Requests     int64         // requests read
	Span         time.Duration // Arrival of the last request: the trace's duration
	InputTokens  int64         // sum of InputTokens
	OutputTokens int64         // sum of OutputTokens
	// BlockRefs is the number of Mooncake hash ids, counted with
	// repetition; DistinctBlocks counts each id once.
	BlockRefs      int64
	DistinctBlocks int64
	// Skipped is how many records the Reader dropped (see Skipper).
	Skipped int64
}

// MeanInput returns the mean InputTokens per request, 0 for no requests.
func (s Stats) MeanInput() float64 { return mean(s.InputTokens, s.Requests) }

// MeanOutput returns the mean OutputTokens per request, 0 for no requests.
func (s Stats) MeanOutput() float64 { return mean(s.OutputTokens, s.Requests) }

// Reuse returns the fraction of block references that are to a block
// referenced before, 1 - DistinctBlocks/BlockRefs; 0 without blocks.
func (s Stats) Reuse() float64 {
	if s.BlockRefs == 0 {
		return 0
	}
	return 1 - float64(s.DistinctBlocks)/float64(s.BlockRefs)
}

func mean(sum, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// Summarize reads r to the end and returns its Stats. On an error other
// than io.EOF it returns the Stats of the requests before it, and the
// error. It holds every distinct Mooncake block id in memory (a map of 8
// bytes a block and its overhead), nothing else.
func Summarize(r Reader) (Stats, error) {
	var s Stats
	var req Request
	blocks := make(map[int64]struct{})
	var err error
	for {
		if err = r.Next(&req); err != nil {
			break
		}
		s.Requests++
		s.Span = max(s.Span, req.Arrival)
		s.InputTokens += int64(req.InputTokens)
		s.OutputTokens += int64(req.OutputTokens)
		s.BlockRefs += int64(len(req.HashIDs))
		for _, id := range req.HashIDs {
			blocks[id] = struct{}{}
		}
	}
	s.DistinctBlocks = int64(len(blocks))
	if sk, ok := r.(Skipper); ok {
		s.Skipped = sk.Skipped()
	}
	if err == io.EOF {
		err = nil
	}
	return s, err
}
