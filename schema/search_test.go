package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSearchUsersZero: a users search that served no user says users 0;
// a capacity search has no users key; the other fields are as without the
// custom encoding.
func TestSearchUsersZero(t *testing.T) {
	for _, tc := range []struct {
		doc  SearchResult
		want string // a substring, or "!" and a substring that must not be there
	}{
		{SearchResult{Kind: SearchUsers, Users: 0, TotalUsers: 10}, `"users":0}`},
		{SearchResult{Kind: SearchUsers, Users: 3, TotalUsers: 10}, `"users":3}`},
		{SearchResult{Kind: SearchCapacity, WindowS: 5}, `!"users"`},
	} {
		b, err := json.Marshal(tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		if want, not := strings.CutPrefix(tc.want, "!"); not && strings.Contains(got, want) || !not && !strings.Contains(got, want) {
			t.Errorf("%s search: %s, want %q", tc.doc.Kind, got, tc.want)
		}
		var back SearchResult
		if err := json.Unmarshal(b, &back); err != nil || back.Users != tc.doc.Users || back.Kind != tc.doc.Kind {
			t.Errorf("%s: read back %+v, %v", got, back, err)
		}
	}
}

// TestSearchOfferedKeys: a probe's bytes over its elapsed time, and a
// capacity search's peak of them, are written under offered names, never
// under a bandwidth name (a bandwidth is a device rate); a version 1
// document's bandwidth_bps and peak_bandwidth_bps read back as them.
func TestSearchOfferedKeys(t *testing.T) {
	d := SearchResult{Kind: SearchCapacity, PeakOfferedBps: 2.5e9, Probes: []SearchProbe{{Speed: 1, OfferedBps: 2.5e9}}}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{`"peak_offered_bytes_per_s":2500000000`, `"offered_bytes_per_s":2500000000`} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in %s", want, got)
		}
	}
	if strings.Contains(got, "bandwidth") {
		t.Errorf("a bandwidth key for the offered load: %s", got)
	}
	v1 := `{"format":"kvbench-search","format_version":1,"kind":"capacity","peak_bandwidth_bps":3e8,` +
		`"probes":[{"speed":0.25,"bandwidth_bps":2e8},{"speed":0.5,"bandwidth_bps":3e8}]}`
	var old SearchResult
	if err := json.Unmarshal([]byte(v1), &old); err != nil {
		t.Fatal(err)
	}
	if err := UpgradeSearchOffered(&old, []byte(v1)); err != nil {
		t.Fatal(err)
	}
	if old.PeakOfferedBps != 3e8 || old.Probes[0].OfferedBps != 2e8 || old.Probes[1].OfferedBps != 3e8 || old.FormatVersion != SearchFormatVersion {
		t.Errorf("version 1 upgraded: %+v", old)
	}
	if err := UpgradeSearchOffered(&old, []byte(`{"probes":[]}`)); err == nil {
		t.Errorf("probes that do not match: no error")
	}
}
