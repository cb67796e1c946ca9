package host

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// GatewayCommand returns the command line of the FUSE gateway serving the
// mount at point ("s3fs kvb /mnt/s3 -o url=http://... -o
// use_path_request_style"): the process under procRoot ("/proc") whose
// arguments name the mount point, preferring one whose program is
// gateway (the name Gateway gives). A gateway's behaviour is in its
// options (cache, multipart size, parallel requests), which the mount's
// own options do not show. The value of an option that looks like a
// credential is replaced by "REDACTED" (RedactArgs). "" when no process
// is found or /proc cannot be read (another PID namespace).
func GatewayCommand(procRoot, point, gateway string) string {
	ents, err := os.ReadDir(procRoot)
	if err != nil || point == "" {
		return ""
	}
	clean := filepath.Clean(point)
	var found []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		named := false
		for _, a := range args[1:] {
			if a != "" && filepath.Clean(a) == clean {
				named = true
				break
			}
		}
		if !named {
			continue
		}
		if gateway != "" && filepath.Base(args[0]) == gateway {
			return strings.Join(RedactArgs(args), " ")
		}
		if found == nil {
			found = args
		}
	}
	if found == nil {
		return ""
	}
	return strings.Join(RedactArgs(found), " ")
}

// secretWords mark an option whose value is a credential.
var secretWords = []string{"secret", "password", "passwd", "token", "access_key", "access-key", "accesskey", "key_id", "key-id", "keyid", "credential", "session"}

// isSecret reports whether the option name holds a credential. A file
// naming one (passwd_file) is a path, not a secret.
func isSecret(name string) bool {
	name = strings.ToLower(strings.TrimLeft(name, "-"))
	if strings.HasSuffix(name, "_file") || strings.HasSuffix(name, "-file") {
		return false
	}
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// RedactArgs returns args with the values of credential-like options
// replaced by REDACTED, in each form gateways take them: --name=value,
// --name value, and the comma-separated name=value lists of -o
// (s3fs, mount).
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		name, _, eq := strings.Cut(a, "=")
		switch {
		case i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && isSecret(args[i-1]) && !strings.HasPrefix(a, "-"):
			out[i] = "REDACTED"
		case strings.HasPrefix(a, "-") && eq && isSecret(name):
			out[i] = name + "=REDACTED"
		case i > 0 && args[i-1] == "-o":
			opts := strings.Split(a, ",")
			for j, o := range opts {
				if name, _, ok := strings.Cut(o, "="); ok && isSecret(name) {
					opts[j] = name + "=REDACTED"
				}
			}
			out[i] = strings.Join(opts, ",")
		}
	}
	return out
}
