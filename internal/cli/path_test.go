package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

func TestCheckPath(t *testing.T) {
	tmp := t.TempDir()
	tests := []struct {
		flag, path string
		msg        string // "" when allowed
	}{
		{"--dir", "/etc/x", "--dir /etc/x: refusing a path under the system directory /etc"},
		{"dir", "/etc/x", "--dir /etc/x: refusing a path under the system directory /etc"},
		{"--dir", "/etc", "--dir /etc: refusing the system directory /etc"},
		{"--dir", "/etc/", "--dir /etc/: refusing the system directory /etc"},
		{"--dir", "/", "--dir /: refusing the root directory /"},
		{"--dir", "//", "--dir //: refusing the root directory /"},
		{"--dir", "/usr/local/kv", "--dir /usr/local/kv: refusing a path under the system directory /usr"},
		{"--dir", "/bin", "refusing the system directory /bin"},
		{"--dir", "/sbin/x", "under the system directory /sbin"},
		{"--dir", "/lib/x", "under the system directory /lib"},
		{"--dir", "/lib64/x", "under the system directory /lib64"},
		{"--dir", "/boot/efi", "under the system directory /boot"},
		{"--dir", "/proc/self", "under the system directory /proc"},
		{"--dir", "/sys/block", "under the system directory /sys"},
		{"--dir", "/dev/shm/kv", ""}, // tmpfs: allowed, as the NVMe backends allow it (they warn: buffered I/O)
		{"--file", "/dev/nvme0n1", "--file /dev/nvme0n1: refusing a path under the system directory /dev"},
		{"--dir", "/tmp/../etc/kv", "--dir /tmp/../etc/kv: refusing a path under the system directory /etc"},
		{"--dir", "/mnt/nvme/../../usr", "refusing the system directory /usr"},
		{"-o", "/etc/kv.json", "-o /etc/kv.json: refusing"},
		{"", "/etc/kv", "/etc/kv: refusing a path under the system directory /etc"},
		{"--dir", "", `--dir "": empty path`},
		{"--dir", "/etcetera/x", ""},
		{"--dir", "/libx", ""},
		{"--dir", "/devices", ""},
		{"--dir", "/mnt/nvme", ""},
		{"--dir", "/tmp/kvbench", ""},
		{"--dir", tmp, ""},
		{"--dir", "relative/dir", ""},
	}
	for _, tt := range tests {
		t.Run(tt.flag+" "+tt.path, func(t *testing.T) {
			err := cli.CheckPath(tt.flag, tt.path)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("CheckPath(%q, %q) = %v, want nil", tt.flag, tt.path, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckPath(%q, %q) = nil, want %q", tt.flag, tt.path, tt.msg)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("CheckPath(%q, %q) = %q, want it to contain %q", tt.flag, tt.path, err, tt.msg)
			}
			if cli.ExitCode(err) != cli.ExitUsage {
				t.Fatalf("CheckPath error is not a usage error")
			}
		})
	}
}

// A symbolic link into a system directory is refused, for the link itself
// and for a path not yet created beneath it.
func TestCheckPathSymlink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "etc")
	if err := os.Symlink("/etc", link); err != nil {
		t.Skip("cannot create symlinks:", err)
	}
	for _, p := range []string{link, filepath.Join(link, "new", "dir")} {
		err := cli.CheckPath("--dir", p)
		if err == nil || !strings.Contains(err.Error(), "system directory /etc (it resolves to /etc") {
			t.Errorf("CheckPath(%q) = %v, want a refusal naming /etc", p, err)
		}
	}
	if err := cli.CheckPath("--dir", filepath.Join(dir, "new")); err != nil {
		t.Errorf("CheckPath of a fresh path under a temp dir: %v", err)
	}
}
