package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// A pipeline whose kvreplay failed fails in kvreport too: nothing on
// stdin, a document cut short, or an incomplete run (rendered first) exit
// 1; a complete run, FAIL or not, exits 0.
func TestFailedPipeline(t *testing.T) {
	raw, err := os.ReadFile(docA)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["complete"], doc["incomplete_reason"] = false, "interrupted (interrupt signal received)"
	incomplete, _ := json.Marshal(doc)
	doc["trial"] = 2
	incomplete2, _ := json.Marshal(doc)
	file := t.TempDir() + "/incomplete.json"
	if err := os.WriteFile(file, incomplete, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name, stdin string
		args        []string
		code        int
		stdout      string // held by stdout
		stderr      string
	}{
		{"empty", "", []string{"-"}, 1, "", "kvreport: no document on stdin: did the command before kvreport fail?\n"},
		{"blank", " \n", []string{"-"}, 1, "", "kvreport: no document on stdin: did the command before kvreport fail?\n"},
		{"merge empty", "", []string{"merge", "-"}, 1, "", "kvreport: no document on stdin: did the command before kvreport fail?\n"},
		{"cut short", string(raw[:len(raw)/2]), []string{"-"}, 1, "", "the document is cut short (did the command before kvreport fail?)\n"},
		{"incomplete", string(incomplete), []string{"-"}, 1, "storage_health",
			"kvreport: -#1: an incomplete run (interrupted (interrupt signal received)): rendered, but not a valid measurement (did the command before kvreport fail?)\n"},
		{"incomplete second", string(raw) + string(incomplete2), []string{"-"}, 1, "storage_health", "kvreport: -#2: an incomplete run"},
		{"complete", string(raw), []string{"-"}, 0, "storage_health", ""},
		// A file is the user's choice: rendered, exit 0.
		{"incomplete file", "", []string{file}, 0, "INCOMPLETE", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := kvreport(t, tt.stdin, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errs, tt.stderr) {
				t.Errorf("exit %d, stdout %.100q, stderr %q; want %d, %q, %q", code, out, errs, tt.code, tt.stdout, tt.stderr)
			}
			if tt.code != 0 && strings.Count(errs, "\n") != 1 {
				t.Errorf("want one line on stderr, got %q", errs)
			}
		})
	}

	// A search that a probe stopped (kvreplay exited 1), on stdin.
	s := schema.SearchResult{Header: schema.Header{Format: schema.SearchFormat, FormatVersion: schema.SearchFormatVersion, System: "A"},
		Kind: schema.SearchUsers, Users: 3, TotalUsers: 20, Done: false, AnswerIsLowerBound: true, Reason: "probe 2 did not complete: no space left on device",
		Probes: []schema.SearchProbe{{Users: 3, Pass: true}}}
	b, _ := json.Marshal(s)
	if code, out, errs := kvreport(t, string(b), "-"); code != 1 || out == "" || !strings.Contains(errs, "the search did not finish (probe 2 did not complete") {
		t.Errorf("stopped search: exit %d, stdout %.100q, stderr %q", code, out, errs)
	}
	// One that ran out of probes (--search-probes) measured every probe,
	// and kvreplay exited 0: so does kvreport, its answer rendered
	// unsettled. It exited 1, asking whether kvreplay had failed.
	s.AnswerIsLowerBound, s.Reason = false, "3 users passed, 5 failed (stopped at 3 probes before the boundary was narrow and confirmed)"
	b, _ = json.Marshal(s)
	if code, out, errs := kvreport(t, string(b), "-"); code != 0 || !strings.Contains(out, "not settled") {
		t.Errorf("search out of probes: exit %d, stdout %.100q, stderr %q", code, out, errs)
	}
	s.Done, s.Reason = true, "found"
	b, _ = json.Marshal(s)
	if code, _, errs := kvreport(t, string(b), "-"); code != 0 {
		t.Errorf("finished search: exit %d, stderr %q", code, errs)
	}
}

// Unknown options are answered with the option meant, fio's names too.
func TestUnknownFlagSuggests(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--formt", "md", docA}, "kvreport: unknown flag: --formt (did you mean --format?)\n"},
		{[]string{"--output-format=json", docA}, "kvreport: unknown flag: --output-format (did you mean --format?)\n"},
		{[]string{"merge", "--outptu", "x.json", docA}, "kvreport: unknown flag: --outptu (did you mean --output?)\n"},
	} {
		if code, _, errs := kvreport(t, "", tt.args...); code != 2 || errs != tt.want {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, errs, tt.want)
		}
	}
}
