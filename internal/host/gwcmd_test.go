package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGatewayCommand finds the gateway of a mount point among a fake
// /proc's processes, by the mount point in its arguments, preferring the
// gateway's own program to another process naming the same path.
func TestGatewayCommand(t *testing.T) {
	proc := t.TempDir()
	procs := map[string][]string{
		"1":    {"/sbin/init"},
		"20":   {"bash", "-c", "ls /mnt/s3"},
		"300":  {"s3fs", "kvb", "/mnt/s3/", "-o", "passwd_file=/etc/p,url=http://127.0.0.1:7070", "-o", "use_path_request_style"},
		"4000": {"rclone", "mount", "remote:b", "/mnt/rc", "--s3-secret-access-key", "abc123", "--vfs-cache-mode=full", "--s3-access-key-id=AKIA"},
		"self": {"not a pid"},
	}
	for pid, args := range procs {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "cmdline"), []byte(strings.Join(args, "\x00")+"\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ point, gateway, want string }{
		{"/mnt/s3", "s3fs", "s3fs kvb /mnt/s3/ -o passwd_file=/etc/p,url=http://127.0.0.1:7070 -o use_path_request_style"},
		{"/mnt/rc", "rclone", "rclone mount remote:b /mnt/rc --s3-secret-access-key REDACTED --vfs-cache-mode=full --s3-access-key-id=REDACTED"},
		{"/mnt/none", "s3fs", ""},
	} {
		if got := GatewayCommand(proc, tc.point, tc.gateway); got != tc.want {
			t.Errorf("GatewayCommand(%q, %q) =\n%q\nwant\n%q", tc.point, tc.gateway, got, tc.want)
		}
	}
	if got := GatewayCommand(filepath.Join(proc, "missing"), "/mnt/s3", "s3fs"); got != "" {
		t.Errorf("no /proc: %q", got)
	}
}

// TestRedactArgs: credential-like options lose their values in every form
// gateways take them; paths to credential files and other options stay.
func TestRedactArgs(t *testing.T) {
	in := []string{"mount-s3", "--token", "T0K", "-o", "ro,secret_key=S,passwd_file=/p,session=x", "--password=pw", "--cache", "/c", "--key-id", "K"}
	want := "mount-s3 --token REDACTED -o ro,secret_key=REDACTED,passwd_file=/p,session=REDACTED --password=REDACTED --cache /c --key-id REDACTED"
	if got := strings.Join(RedactArgs(in), " "); got != want {
		t.Errorf("RedactArgs =\n%q\nwant\n%q", got, want)
	}
}
