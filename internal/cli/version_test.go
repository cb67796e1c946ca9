package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "devel (" + runtime.Version() + ")"},
		{"devel, no vcs", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, true, "devel (go1.26.8)"},
		{"dirty", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", "a1b2c3d4e5f6a7b8c9d0", "vcs.modified", "true")}, true,
			"devel (a1b2c3d4e5f6+dirty, go1.26.8)"},
		{"clean", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"},
			Settings: settings("vcs.revision", "a1b2c3d4e5f6a7b8c9d0", "vcs.modified", "false")}, true,
			"v1.2.0 (a1b2c3d4e5f6, go1.26.8)"},
		{"short revision", &debug.BuildInfo{Main: debug.Module{Version: ""}, Settings: settings("vcs.revision", "abc")}, true,
			"devel (abc, " + runtime.Version() + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(tt.bi, tt.ok); got != tt.want {
				t.Fatalf("versionOf = %q, want %q", got, tt.want)
			}
		})
	}
	if v := Version(); !strings.Contains(v, "go1.") {
		t.Fatalf("Version() = %q, want the Go version in it", v)
	}
}
