package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version returns the version of the running binary for --version and for
// result documents: the main module's version ("devel" for a build from a
// work tree), then the VCS revision (12 hex digits, "+dirty" when the tree
// had changes) and the Go version, as in "devel (a1b2c3d4e5f6+dirty,
// go1.26.8)" or "v1.2.0 (go1.26.8)". It works, with less detail, in a
// binary built without build information.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	return versionOf(bi, ok)
}

func versionOf(bi *debug.BuildInfo, ok bool) string {
	version, goVersion := "devel", runtime.Version()
	var revision string
	var dirty bool
	if ok && bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	b.WriteString(version)
	b.WriteString(" (")
	if revision != "" {
		b.WriteString(revision[:min(12, len(revision))])
		if dirty {
			b.WriteString("+dirty")
		}
		b.WriteString(", ")
	}
	b.WriteString(goVersion)
	b.WriteString(")")
	return b.String()
}
