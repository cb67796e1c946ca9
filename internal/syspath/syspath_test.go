package syspath

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	refused := errors.New("refused")
	for _, c := range []struct{ path, want string }{
		{"/etc", "/etc is a system directory: refused"},
		{"/", "/ is a system directory: refused"},
		{"/usr/local/x", "/usr/local/x is under the system directory /usr: refused"},
		{"/dev/nvme0n1", "/dev/nvme0n1 is under the system directory /dev: refused"},
		{"/dev/shm/kv", ""},
		{"/etcetera", ""},
		{"/mnt/nvme", ""},
	} {
		err := Check(c.path, refused)
		if c.want == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v, want nil", c.path, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want || !errors.Is(err, refused) {
			t.Errorf("Check(%q) = %v, want %q wrapping the caller's error", c.path, err, c.want)
		}
	}
}
