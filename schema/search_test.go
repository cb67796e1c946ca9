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
