package reqtrace

import (
	"errors"
	"math"
	"testing"
	"time"
)

// TestSummarizeFullTraces asserts the figures shared/data/README.md gives
// for the full traces, which the tests read from ../../../shared/data.
func TestSummarizeFullTraces(t *testing.T) {
	t.Run("mooncake", func(t *testing.T) {
		s := summarizeFile(t, sharedFile(t, "mooncake/conversation_trace.jsonl"), FormatMooncake)
		want := Stats{
			Requests:       12031,
			Span:           3536999 * time.Millisecond, // about 59 minutes
			InputTokens:    144793823,
			OutputTokens:   4122048,
			BlockRefs:      288500,
			DistinctBlocks: 182790,
		}
		if s != want {
			t.Errorf("Stats\n got %+v\nwant %+v", s, want)
		}
		near(t, "mean input", s.MeanInput(), 12035, 0.5)
		near(t, "mean output", s.MeanOutput(), 343, 0.5)
		near(t, "reuse", s.Reuse(), 0.37, 0.005)
	})
	t.Run("azure", func(t *testing.T) {
		s := summarizeFile(t, sharedFile(t, "azure2023/AzureLLMInferenceTrace_code.csv"), FormatAzure)
		want := Stats{
			Requests:     8819,
			Span:         57*time.Minute + 15948056*time.Microsecond, // 18:17:03.9799600 to 19:14:19.9280160
			InputTokens:  18059974,
			OutputTokens: 245896,
		}
		if s != want {
			t.Errorf("Stats\n got %+v\nwant %+v", s, want)
		}
		near(t, "mean context", s.MeanInput(), 2048, 0.5)
		near(t, "mean generated", s.MeanOutput(), 28, 0.5)
	})
	t.Run("sharegpt raw", func(t *testing.T) {
		// The source file names its ids conversation_id, so the reference,
		// reading "id", falls back to conv_<index> for every conversation;
		// its turns are those of sharegpt_sample50.json.
		f, err := Open(sharedFile(t, "sharegpt/sharegpt_sample50_raw.json"), FormatAuto, Options{MaxConversations: DefaultMaxConversations})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		got := readAll(t, f)
		if len(got) != 50 || got[0].Conversation != "conv_0" || got[49].Conversation != "conv_49" || got[0].InputTokens != 1238 {
			t.Errorf("%d requests, first %+v", len(got), got[0])
		}
	})
}

func summarizeFile(t *testing.T, path string, want Format) Stats {
	t.Helper()
	f, err := Open(path, FormatAuto, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Format() != want {
		t.Errorf("detected %v, want %v", f.Format(), want)
	}
	s, err := Summarize(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s %.3f, want %v ± %v", what, got, want, tol)
	}
}

func TestSummarizeFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		f    Format
		want Stats
	}{
		{"burstgpt_1_head30.csv", FormatBurstGPT, Stats{Requests: 30, Span: 2288 * time.Second, InputTokens: 17722, OutputTokens: 10280}},
		{"sharegpt_sample50.json", FormatShareGPT, Stats{Requests: 50, InputTokens: 53383, OutputTokens: 18450}},
		{"mooncake_head200.jsonl", FormatMooncake, Stats{Requests: 200, Span: 72 * time.Second, InputTokens: 2782179, OutputTokens: 71379, BlockRefs: 5537, DistinctBlocks: 5215}},
		{"azure_code_head200.csv", FormatAzure, Stats{Requests: 200, Span: 199089585 * time.Microsecond, InputTokens: 414215, OutputTokens: 4907}},
	} {
		t.Run(tc.f.String(), func(t *testing.T) {
			s, err := Summarize(newReader(t, string(fixture(t, tc.file)), tc.f, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if s != tc.want {
				t.Errorf("Stats\n got %+v\nwant %+v", s, tc.want)
			}
		})
	}
}

func TestSummarizePartial(t *testing.T) {
	in := "Timestamp,Request tokens,Response tokens\n1,10,1\nx,1,1\n3,20,2\n\"4,1,1\n"
	s, err := Summarize(newReader(t, in, FormatBurstGPT, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	// The last row opens a quote it never closes: csv (like Python's, not
	// strict) reads it as one field to the end, so the row is too short.
	if want := (Stats{Requests: 2, Span: 2 * time.Second, InputTokens: 30, OutputTokens: 3, Skipped: 2}); s != want {
		t.Errorf("Stats %+v, want %+v", s, want)
	}
	if s.MeanInput() != 15 || s.MeanOutput() != 1.5 || s.Reuse() != 0 {
		t.Errorf("means %v %v, reuse %v", s.MeanInput(), s.MeanOutput(), s.Reuse())
	}
	if (Stats{}).MeanInput() != 0 {
		t.Error("mean of nothing is not 0")
	}

	in = `{"timestamp": 0, "input_length": 512, "output_length": 1, "hash_ids": [1]}` + "\n{\n"
	s, err = Summarize(newReader(t, in, FormatMooncake, Options{}))
	if !errors.Is(err, ErrBadJSON) || s.Requests != 1 || s.DistinctBlocks != 1 {
		t.Errorf("Summarize = %+v, %v; want the first request and ErrBadJSON", s, err)
	}
}
