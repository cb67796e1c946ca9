package reqtrace_test

import (
	"fmt"
	"io"
	"log"

	"github.com/kvbench/kvbench/sim/reqtrace"
)

// Read a trace whose format Open detects, one request at a time.
func ExampleOpen() {
	f, err := reqtrace.Open("testdata/burstgpt_1_head30.csv", reqtrace.FormatAuto, reqtrace.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println("format:", f.Format())
	var req reqtrace.Request
	for i := 0; i < 3; i++ {
		if err := f.Next(&req); err == io.EOF {
			break
		} else if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%v: %d tokens in, %d out\n", req.Arrival, req.InputTokens, req.OutputTokens)
	}
	// Output:
	// format: burstgpt
	// 0s: 472 tokens in, 18 out
	// 40s: 1087 tokens in, 230 out
	// 1m53s: 417 tokens in, 276 out
}

// Summarize a Mooncake trace: requests, tokens and prefix-block reuse.
func ExampleSummarize() {
	f, err := reqtrace.Open("testdata/mooncake_head200.jsonl", reqtrace.FormatMooncake, reqtrace.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	s, err := reqtrace.Summarize(f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d requests over %v, mean input %.0f, mean output %.0f, %d block references, %d distinct (%.0f%% reuse)\n",
		s.Requests, s.Span, s.MeanInput(), s.MeanOutput(), s.BlockRefs, s.DistinctBlocks, 100*s.Reuse())
	// Output:
	// 200 requests over 1m12s, mean input 13911, mean output 357, 5537 block references, 5215 distinct (6% reuse)
}
