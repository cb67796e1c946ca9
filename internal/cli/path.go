package cli

import (
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/internal/syspath"
)

// CheckPath refuses a path given to flag (such as "--dir"; a name without
// dashes gets "--") that is the root directory, or is or lies under one of
// the system directories /etc, /usr, /bin, /sbin, /lib, /lib64, /boot,
// /proc, /sys and /dev. The path is cleaned and made absolute first, and
// symbolic links in its longest existing prefix are resolved, so that
// neither "/tmp/../etc" nor a link to /etc gets through. The error is a usage
// error:
//
//	--dir /etc/x: refusing a path under the system directory /etc
//
// A raw block device lies under /dev: a tool that accepts one checks its own
// explicit flag before calling CheckPath.
func CheckPath(flag, path string) error {
	name := flag
	if name != "" && !strings.HasPrefix(name, "-") {
		name = "--" + name
	}
	prefix := parsemsg.Arg(path) + ": "
	if name != "" {
		prefix = name + " " + prefix
	}
	if path == "" {
		return Usagef("%sempty path", prefix)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Usagef("%s%w", prefix, err)
	}
	if why := systemDir(abs); why != "" {
		return Usagef("%s%s", prefix, why)
	}
	// The links resolved as the kernel follows them: ".." after a link
	// is the parent of its target ("link/../x"), which abs, cleaned,
	// does not see.
	resolved, err := syspath.Reached(path)
	if err != nil {
		return Usagef("%s%w", prefix, err)
	}
	if resolved != abs {
		if why := systemDir(resolved); why != "" {
			return Usagef("%s%s (it resolves to %s)", prefix, why, resolved)
		}
	}
	return nil
}

// systemDir says why the clean absolute path p is refused, or "" if it is
// not (internal/syspath decides).
func systemDir(p string) string {
	sys, exact := syspath.System(p)
	switch {
	case sys == "":
		return ""
	case sys == "/":
		return "refusing the root directory /"
	case exact:
		return "refusing the system directory " + sys
	}
	return "refusing a path under the system directory " + sys
}
