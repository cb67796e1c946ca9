package backend

import (
	"errors"
	"testing"
)

func TestDirectIO(t *testing.T) {
	errProbe := errors.New("nvme: probe /x: permission denied")
	for _, tc := range []struct {
		name    string
		fstype  string
		want    bool
		refused bool
		err     error
		probed  bool
		direct  bool
		warning string
	}{
		{"asked and taken", "ext4", true, false, nil, true, true, ""},
		{"not asked", "ext4", false, false, nil, false, false, "nvme: /x (ext4): buffered I/O requested: page cache in the numbers"},
		{"tmpfs", "tmpfs", true, false, nil, false, false, "nvme: /x (tmpfs): memory file system, no device behind O_DIRECT: buffered I/O, page cache in the numbers"},
		{"ramfs", "ramfs", true, false, nil, false, false, "nvme: /x (ramfs): memory file system, no device behind O_DIRECT: buffered I/O, page cache in the numbers"},
		{"refused", "fuse", true, true, nil, true, false, "nvme: /x (fuse): file system refuses O_DIRECT: buffered I/O, page cache in the numbers"},
		{"probe fails", "ext4", true, false, errProbe, true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probed := false
			direct, warning, err := DirectIO("nvme: /x", tc.fstype, tc.want, func() (bool, error) {
				probed = true
				return tc.refused, tc.err
			})
			if direct != tc.direct || warning != tc.warning || err != tc.err || probed != tc.probed {
				t.Errorf("= %v, %q, %v (probed %v); want %v, %q, %v (probed %v)",
					direct, warning, err, probed, tc.direct, tc.warning, tc.err, tc.probed)
			}
		})
	}
}
