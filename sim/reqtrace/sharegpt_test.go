package reqtrace

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestShareGPTSample(t *testing.T) {
	r := newReader(t, string(fixture(t, "sharegpt_sample50.json")), FormatShareGPT, Options{})
	got := readAll(t, r)
	if len(got) != 50 {
		t.Fatalf("%d requests, want 50", len(got))
	}
	// Tokens are max(1, len(value)//4) with Python's len: code points.
	for i, want := range []Request{
		{InputTokens: 1238, OutputTokens: 299, Conversation: "aLzORDR_0", Turn: 1},
		{InputTokens: 1189, OutputTokens: 399, Conversation: "1CDVnea_0", Turn: 1},
		{InputTokens: 1002, OutputTokens: 278, Conversation: "WG3PKSJ_36", Turn: 1},
	} {
		if !equalRequest(got[i], want) {
			t.Errorf("request %d = %+v, want %+v", i, got[i], want)
		}
	}
	var in, out int
	for _, q := range got {
		in += q.InputTokens
		out += q.OutputTokens
		if q.Arrival != 0 || q.HashIDs != nil {
			t.Errorf("request %+v: want arrival 0 and no hash ids", q)
		}
	}
	// The sample holds non-ASCII text: counting bytes would give more.
	if in != 53383 || out != 18450 {
		t.Errorf("total tokens %d in, %d out; want 53383 and 18450 (as Python computes them)", in, out)
	}
	if s := r.(Skipper); s.Skipped() != 0 {
		t.Errorf("skipped %d pairs", s.Skipped())
	}
}

// conv renders a ShareGPT element: id (omitted when "-") and turns as
// from:value pairs.
func conv(id string, turns ...string) string {
	var b strings.Builder
	b.WriteString("{")
	if id != "-" {
		fmt.Fprintf(&b, "%q: %s, ", "id", id)
	}
	b.WriteString(`"conversations": [`)
	for i, t := range turns {
		from, value, _ := strings.Cut(t, ":")
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"from": %q, "value": %q}`, from, value)
	}
	b.WriteString("]}")
	return b.String()
}

func TestShareGPTPairs(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name    string
		in      string
		max     int
		want    []Request
		skipped int64
	}{
		{
			"multi-turn",
			"[" + conv(`"a"`, "human:"+x(40), "gpt:"+x(8), "human:"+x(4), "gpt:"+x(3)) + "]",
			0,
			[]Request{{InputTokens: 10, OutputTokens: 2, Conversation: "a", Turn: 1}, {InputTokens: 1, OutputTokens: 1, Conversation: "a", Turn: 2}},
			0,
		},
		{
			"gpt first: every pair is misaligned and dropped",
			"[" + conv(`"g"`, "gpt:hello", "human:"+x(40), "gpt:"+x(40)) + "]",
			0, nil, 1,
		},
		{
			"system first, then aligned from the second pair on",
			"[" + conv(`"s"`, "system:be nice", "human:hi", "human:"+x(20), "gpt:"+x(20)) + "]",
			0,
			[]Request{{InputTokens: 5, OutputTokens: 5, Conversation: "s", Turn: 2}},
			1,
		},
		{
			"odd turn count: the last human turn has no answer",
			"[" + conv(`"o"`, "human:"+x(8), "gpt:"+x(8), "human:"+x(8)) + "]",
			0,
			[]Request{{InputTokens: 2, OutputTokens: 2, Conversation: "o", Turn: 1}},
			0,
		},
		{
			"missing, empty, null and numeric ids",
			"[" + conv("-", "human:a", "gpt:b") + ", " + conv(`""`, "human:a", "gpt:b") + ", " + conv("null", "human:a", "gpt:b") + ", " + conv("17", "human:a", "gpt:b") + "]",
			0,
			[]Request{
				{InputTokens: 1, OutputTokens: 1, Conversation: "conv_0", Turn: 1},
				{InputTokens: 1, OutputTokens: 1, Conversation: "conv_1", Turn: 1},
				{InputTokens: 1, OutputTokens: 1, Conversation: "conv_2", Turn: 1},
				{InputTokens: 1, OutputTokens: 1, Conversation: "17", Turn: 1},
			},
			0,
		},
		{
			"index counts elements without pairs",
			"[" + conv(`"e"`) + ", " + conv("-", "human:a", "gpt:b") + "]",
			0,
			[]Request{{InputTokens: 1, OutputTokens: 1, Conversation: "conv_1", Turn: 1}},
			0,
		},
		{
			"caps",
			"[" + conv(`"c"`, "human:"+x(4*20000), "gpt:"+x(4*3000)) + "]",
			0,
			[]Request{{InputTokens: ShareGPTMaxInputTokens, OutputTokens: ShareGPTMaxOutputTokens, Conversation: "c", Turn: 1}},
			0,
		},
		{
			"characters, not bytes",
			"[" + conv(`"u"`, "human:"+strings.Repeat("é", 8), "gpt:"+strings.Repeat("日本", 4)) + "]",
			0,
			[]Request{{InputTokens: 2, OutputTokens: 2, Conversation: "u", Turn: 1}},
			0,
		},
		{
			"roles are case-sensitive, as in the reference",
			"[" + conv(`"r"`, "Human:a", "GPT:b", "user:a", "assistant:b") + "]",
			0, nil, 2,
		},
		{
			"max conversations",
			"[" + conv(`"1"`, "human:a", "gpt:b") + ", " + conv(`"2"`, "human:a", "gpt:b") + ", " + conv(`"3"`, "human:a", "gpt:b") + "]",
			2,
			[]Request{{InputTokens: 1, OutputTokens: 1, Conversation: "1", Turn: 1}, {InputTokens: 1, OutputTokens: 1, Conversation: "2", Turn: 1}},
			0,
		},
		{
			"max conversations: the rest is not read, even if broken",
			"[" + conv(`"1"`, "human:a", "gpt:b") + ", {broken",
			1,
			[]Request{{InputTokens: 1, OutputTokens: 1, Conversation: "1", Turn: 1}},
			0,
		},
		{
			"extra fields, missing conversations, null values",
			`[{"id": "z", "prompt_tokens": 3, "meta": {"a": [1]}, "conversations": [{"from": "human", "value": null, "x": 1}, {"from": "gpt", "value": "abcdefgh"}]}, {"id": "none"}, {"id": "n", "conversations": null}]`,
			0,
			[]Request{{InputTokens: 1, OutputTokens: 2, Conversation: "z", Turn: 1}},
			0,
		},
		{"empty array", " [ ] \n", 0, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReader(t, tc.in, FormatShareGPT, Options{MaxConversations: tc.max})
			got := readAll(t, r)
			if len(got) != len(tc.want) {
				t.Fatalf("%d requests %+v, want %d", len(got), got, len(tc.want))
			}
			for i := range tc.want {
				if !equalRequest(got[i], tc.want[i]) || got[i].Conversation != tc.want[i].Conversation {
					t.Errorf("request %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			s := r.(Skipper)
			if s.Skipped() != tc.skipped {
				t.Errorf("skipped %d, want %d", s.Skipped(), tc.skipped)
			}
			for _, err := range s.SkipErrors() {
				wantParseError(t, err, 1, "conversations", ErrNotPair)
			}
		})
	}
}

func TestShareGPTErrors(t *testing.T) {
	good := conv(`"a"`, "human:a", "gpt:b")
	for _, tc := range []struct {
		name   string
		in     string
		before int // requests before the error
		line   int
		column string
	}{
		{"empty", "", 0, 1, ""},
		{"object, not array", `{"id": "a"}`, 0, 1, ""},
		{"string", `"conversations"`, 0, 1, ""},
		{"truncated", "[\n" + good + ",\n" + `{"id": "b", "conversations": [`, 1, 3, ""},
		{"no closing bracket", "[\n" + good + "\n", 1, 3, ""},
		{"syntax error", "[\n" + good + ",\n\n{\"id\" \"b\"}]", 1, 4, ""},
		{"element a number", "[\n" + good + ",\n 7]", 1, 3, ""},
		{"element null", "[\n" + good + ",\n null]", 1, 3, ""},
		{"from a number", "[\n" + `{"conversations": [{"from": 1, "value": "x"}]}` + "]", 0, 2, "conversations.from"},
		{"value an object", "[\n" + `{"conversations": [{"from": "human",` + "\n" + `"value": {}}]}` + "]", 0, 3, "conversations.value"},
		{"conversations an object", `[{"conversations": {}}]`, 0, 1, "conversations"},
		{"id an object", "[" + good + ",\n" + `{"id": {}, "conversations": []}]`, 1, 2, "id"},
		{"trailing data", "[" + good + "]\n[]", 1, 2, ""},
		{"trailing garbage", "[" + good + "] x", 1, 1, ""},
		{"closing brace", "[" + good + "}", 1, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.in), FormatShareGPT, Options{Name: "s.json"})
			var got []Request
			if err == nil {
				got, err = readAllErr(r)
			}
			pe := wantParseError(t, err, tc.line, tc.column, ErrBadJSON)
			if len(got) != tc.before {
				t.Errorf("%d requests before the error, want %d", len(got), tc.before)
			}
			if pe.File != "s.json" {
				t.Errorf("File %q", pe.File)
			}
			if r != nil {
				if err2 := r.Next(&Request{}); err2 != err {
					t.Errorf("error not sticky: then %v", err2)
				}
			}
		})
	}
}

// TestShareGPTTooLong lowers the conversation limit (64 MiB by default) to
// test it without the memory.
func TestShareGPTTooLong(t *testing.T) {
	in := "[\n" + conv(`"a"`, "human:a", "gpt:b") + ",\n" + conv(`"b"`, "human:"+strings.Repeat("y", 5000), "gpt:b") + "]"
	r, err := NewReader(iotest.HalfReader(strings.NewReader(in)), FormatShareGPT, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.(*shareGPT).lc.limit = 1000
	got, err := readAllErr(r)
	wantParseError(t, err, 3, "", ErrTooLong)
	if len(got) != 1 {
		t.Errorf("%d requests before the error, want 1", len(got))
	}
	// Many small conversations stay under a small limit: it is per
	// conversation, not per file.
	var b strings.Builder
	b.WriteString("[")
	for i := range 200 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(conv(`"c"`, "human:"+strings.Repeat("z", 100), "gpt:b"))
	}
	b.WriteString("]")
	r = newReader(t, b.String(), FormatShareGPT, Options{})
	r.(*shareGPT).lc.limit = 1000
	if got := readAll(t, r); len(got) != 200 {
		t.Errorf("%d requests, want 200", len(got))
	}
	if n := len(r.(*shareGPT).lc.win); n > 1000+lineChunk {
		t.Errorf("line window holds %d bytes", n)
	}
}

func TestShareGPTLineOfSkip(t *testing.T) {
	in := "[\n" + conv(`"a"`, "human:a", "gpt:b") + ",\n\n  " + conv(`"b"`, "gpt:a", "human:b") + "\n]\n"
	r := newReader(t, in, FormatShareGPT, Options{Name: "s.json"})
	if got := readAll(t, r); len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	errs := r.(Skipper).SkipErrors()
	if len(errs) != 1 {
		t.Fatalf("SkipErrors %v", errs)
	}
	pe := wantParseError(t, errs[0], 4, "conversations", ErrNotPair)
	if want := `reqtrace: s.json:4: conversations: "gpt,human": not a human/gpt pair: conversation "b" turn 1: want human then gpt`; pe.Error() != want {
		t.Errorf("got  %s\nwant %s", pe.Error(), want)
	}
	if err := r.Next(&Request{}); err != io.EOF {
		t.Errorf("after the end: %v", err)
	}
}
