package nvme

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/internal/syspath"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/replaytest"
)

func newNVMe(t testing.TB, dir string, opt Options) *Backend {
	t.Helper()
	b, err := New(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// directFS skips t unless dir's file system is one known to take O_DIRECT.
func directFS(t testing.TB, dir string) {
	t.Helper()
	switch fs := host.FSType(dir); fs {
	case "ext4", "xfs", "btrfs", "f2fs":
	default:
		t.Skipf("%s is on %s, not a file system known to take O_DIRECT", dir, fs)
	}
}

func TestConformance(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		return newNVMe(t, t.TempDir(), Options{Direct: true})
	})
}

func TestConformanceCreate(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		dir := filepath.Join(t.TempDir(), "a", "b")
		t.Cleanup(func() {
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Close left %s behind (%v)", dir, err)
			}
		})
		return newNVMe(t, dir, Options{Direct: true, Create: true})
	})
}

func TestConformanceFallback(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		return newNVMe(t, t.TempDir(), Options{Direct: true, refuseDirect: true})
	})
}

// TestDirect checks that O_DIRECT is on where the file system takes it:
// t.TempDir() here is on ext4.
func TestDirect(t *testing.T) {
	dir := t.TempDir()
	directFS(t, dir)
	b := newNVMe(t, dir, Options{Direct: true})
	defer b.Close()
	c := b.Caps()
	if !c.Direct || len(c.Warnings) != 0 || c.Name != "nvme" || c.Align < 4096 || c.Capacity != 0 {
		t.Fatalf("Caps() = %+v, want Direct, no warnings, Align >= 4096", c)
	}
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	fl, err := unix.FcntlInt(o.(*Object).Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fl&unix.O_DIRECT == 0 {
		t.Errorf("the object's file is not open O_DIRECT: flags %#x", fl)
	}
	if dirs, _ := os.ReadDir(dir); len(dirs) != 1 {
		t.Errorf("the probe left files behind: %v", dirs)
	}
}

func TestBuffered(t *testing.T) {
	dir := t.TempDir()
	b := newNVMe(t, dir, Options{})
	defer b.Close()
	c := b.Caps()
	if c.Direct || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "buffered I/O requested: page cache in the numbers") {
		t.Fatalf("Caps() = %+v, want buffered with a warning", c)
	}
}

// TestFallbackSimulated runs the fallback path on any file system.
func TestFallbackSimulated(t *testing.T) {
	dir := t.TempDir()
	b := newNVMe(t, dir, Options{Direct: true, refuseDirect: true})
	defer b.Close()
	c := b.Caps()
	want := fmt.Sprintf("nvme: %s (%s): file system refuses O_DIRECT: buffered I/O, page cache in the numbers", dir, host.FSType(dir))
	if c.Direct || len(c.Warnings) != 1 || c.Warnings[0] != want {
		t.Fatalf("Caps() = %+v, want Direct false and the warning\n%s", c, want)
	}
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if fl, _ := unix.FcntlInt(o.(*Object).Fd(), unix.F_GETFL, 0); fl&unix.O_DIRECT != 0 {
		t.Error("the fallback opened the file O_DIRECT")
	}
}

// TestFallbackTmpfs runs the real fallback on /dev/shm: tmpfs refuses
// O_DIRECT before Linux 6.6 and keeps its files in the page cache after.
func TestFallbackTmpfs(t *testing.T) {
	const shm = "/dev/shm"
	if fs := host.FSType(shm); fs != "tmpfs" {
		t.Skipf("%s is %s, not tmpfs", shm, fs)
	}
	if unix.Access(shm, unix.W_OK) != nil {
		t.Skipf("%s is not writable", shm)
	}
	dir := filepath.Join(shm, fmt.Sprintf("kvbench-nvme-test-%d", os.Getpid()))
	t.Cleanup(func() { os.RemoveAll(dir) })
	b := newNVMe(t, dir, Options{Direct: true, Create: true})
	c := b.Caps()
	prefix := fmt.Sprintf("nvme: %s (tmpfs): ", dir)
	if c.Direct || len(c.Warnings) != 1 || !strings.HasPrefix(c.Warnings[0], prefix) || !strings.HasSuffix(c.Warnings[0], ": buffered I/O, page cache in the numbers") {
		t.Errorf("Caps() = %+v, want Direct false and a warning %q...", c, prefix)
	}
	o, err := b.Open("k", 8192, true)
	if err != nil {
		t.Fatal(err)
	}
	p := replaytest.AlignedBuffer(8192, 4096)
	replaytest.Fill(p, 1, 0)
	if _, err := o.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left %s behind (%v)", dir, err)
	}
}

// TestMisalignedBeforeSyscall checks that an I/O that O_DIRECT would fail
// with EINVAL fails with ErrMisaligned instead, before reaching the kernel,
// and that the kernel would indeed have refused it.
func TestMisalignedBeforeSyscall(t *testing.T) {
	dir := t.TempDir()
	directFS(t, dir)
	b := newNVMe(t, dir, Options{Direct: true})
	defer b.Close()
	a := b.Caps().Align
	o, err := b.Open("k", int64(2*a), true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	buf := replaytest.AlignedBuffer(2*a, a)
	_, err = unix.Pwrite(int(o.(*Object).Fd()), buf[1:1+a], 0)
	if !errors.Is(err, syscall.EINVAL) {
		t.Skipf("this file system takes a misaligned O_DIRECT pwrite (%v): nothing to prove", err)
	}
	// Byte-misaligned, and sector- but not block-aligned (which a device
	// with 512-byte sectors would take, but the declared Align refuses).
	for _, p := range [][]byte{buf[1 : 1+a], buf[512 : 512+a]} {
		n, err := o.WriteAt(p, 0)
		if n != 0 || !errors.Is(err, backend.ErrMisaligned) || errors.Is(err, syscall.EINVAL) {
			t.Errorf("WriteAt(misaligned buffer) = %d, %v; want 0, ErrMisaligned from the check, not EINVAL from the kernel", n, err)
		}
		n, err = o.ReadAt(p, 0)
		if n != 0 || !errors.Is(err, backend.ErrMisaligned) || errors.Is(err, syscall.EINVAL) {
			t.Errorf("ReadAt(misaligned buffer) = %d, %v; want 0, ErrMisaligned", n, err)
		}
	}
	if n, err := o.WriteAt(buf[:a], int64(a/2)); n != 0 || !errors.Is(err, backend.ErrMisaligned) {
		t.Errorf("WriteAt(misaligned offset) = %d, %v; want 0, ErrMisaligned", n, err)
	}
}

func TestFileName(t *testing.T) {
	long := strings.Repeat("k", 300)
	for _, tc := range []struct{ key, name string }{
		{"", "%"},
		{"abc-XYZ_0.9", "abc-XYZ_0.9"},
		{"a/b", "a%2Fb"},
		{"a%2Fb", "a%252Fb"},
		{".", "%2E"},
		{"..", "%2E."},
		{"../x", "%2E.%2Fx"},
		{".hidden", "%2Ehidden"},
		{"a.", "a."},
		{"a b~", "a%20b%7E"},
		{"nul\x00", "nul%00"},
		{"é", "%C3%A9"},
		{"\xff", "%FF"},
		{strings.Repeat("k", 200), strings.Repeat("k", 200)},
	} {
		if got := FileName(tc.key); got != tc.name {
			t.Errorf("FileName(%q) = %q, want %q", tc.key, got, tc.name)
		}
	}
	got := FileName(long)
	if len(got) != maxName || !strings.HasPrefix(got, strings.Repeat("k", 135)+"~") {
		t.Errorf("FileName(300 k) = %q (%d bytes), want 135 k, '~' and a hash: 200 bytes", got, len(got))
	}
	// A long key full of escapes is cut between escapes.
	if got := FileName(strings.Repeat("/", 100)); len(got) > maxName || !strings.HasSuffix(strings.Split(got, "~")[0], "%2F") {
		t.Errorf("FileName(100 /) = %q: cut inside an escape", got)
	}
}

// TestFileNameDistinct checks keys that naive escapings confuse.
func TestFileNameDistinct(t *testing.T) {
	keys := []string{
		"", "%", "%25", "%2", "a/b", "a%2Fb", "a%2fb", "a_2Fb", "a:b", ".", "..", "%2E", "%2E.", ".a", "%2Ea", "a~b", "a%7Eb",
		strings.Repeat("k", 300), strings.Repeat("k", 299) + "j", strings.Repeat("k", 200), strings.Repeat("k", 201),
		strings.Repeat("k", 135) + "~" + strings.Repeat("0", 64),
		"A", "a",
	}
	seen := map[string]string{}
	for _, k := range keys {
		n := FileName(k)
		if prev, ok := seen[n]; ok {
			t.Errorf("keys %q and %q share the file name %q", prev, k, n)
		}
		seen[n] = k
		checkName(t, k, n)
	}
}

// checkName fails t unless name is a plain, short file name that decodes
// back to key (when it was not shortened).
func checkName(t *testing.T, key, name string) {
	t.Helper()
	if name == "" || len(name) > maxName || strings.ContainsAny(name, "/\x00") || name[0] == '.' {
		t.Fatalf("FileName(%q) = %q: not a safe file name", key, name)
	}
	if name == "%" {
		if key != "" {
			t.Fatalf("FileName(%q) = %%", key)
		}
		return
	}
	escaped := 0 // the length of the encoding before shortening
	for i := 0; i < len(key); i++ {
		if safeByte(key[i]) && (i > 0 || key[i] != '.') {
			escaped++
		} else {
			escaped += 3
		}
	}
	if strings.Contains(name, "~") {
		if escaped <= maxName {
			t.Fatalf("FileName(%q) = %q: shortened though its encoding has %d bytes", key, name, escaped)
		}
		return
	}
	if escaped > maxName {
		t.Fatalf("FileName(%q) = %q: not shortened though its encoding has %d bytes", key, name, escaped)
	}
	var dec []byte
	for i := 0; i < len(name); i++ {
		if name[i] != '%' {
			dec = append(dec, name[i])
			continue
		}
		var c byte
		if _, err := fmt.Sscanf(name[i+1:i+3], "%02X", &c); err != nil {
			t.Fatalf("FileName(%q) = %q: bad escape at %d", key, name, i)
		}
		dec = append(dec, c)
		i += 2
	}
	if string(dec) != key {
		t.Fatalf("FileName(%q) = %q decodes to %q", key, name, dec)
	}
}

func FuzzFileName(f *testing.F) {
	for _, k := range []string{"", "a/b", "..", ".x", "%2F", strings.Repeat("/", 300)} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) { checkName(t, key, FileName(key)) })
}

// TestOddKeysStayInside writes keys that look like paths and checks that
// only plain files appeared, all in the directory.
func TestOddKeysStayInside(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "d")
	b := newNVMe(t, dir, Options{Direct: true, Create: true, Keep: true})
	keys := []string{"../x", "../../y", "/abs", "a/b/c", "..", ".", "", strings.Repeat("/", 300)}
	for _, k := range keys {
		o, err := b.Open(k, 4096, true)
		if err != nil {
			t.Fatalf("Open(%q): %v", k, err)
		}
		o.Close()
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 1 || ents[0].Name() != "d" {
		t.Errorf("files appeared beside the directory: %v", ents)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(keys) {
		t.Errorf("%d files for %d keys: %v", len(ents), len(keys), ents)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			t.Errorf("%s is not a regular file", e.Name())
		}
	}
}

func TestSystemDirs(t *testing.T) {
	for _, d := range []string{"/", "/etc", "/etc/kvbench", "/usr/local/x", "/bin", "/sbin", "/lib", "/lib64/x", "/boot", "/proc", "/proc/self", "/sys/x", "/dev", "/dev/nvme0n1"} {
		_, err := New(d, Options{Direct: true, Create: true})
		if !errors.Is(err, ErrSystemDir) {
			t.Errorf("New(%q) = %v, want ErrSystemDir", d, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "nvme: ") {
			t.Errorf("New(%q): %q does not start with nvme:", d, err)
		}
	}
	for _, d := range []string{"/etcetera", "/usrx/y", "/dev/shm", "/dev/shm/x", "/tmp/x", "/home/u/kv", "/mnt/nvme"} {
		if err := syspath.Check(d, ErrSystemDir); err != nil {
			t.Errorf("syspath.Check(%q) = %v, want nil", d, err)
		}
	}
	// A link into a system directory is one too.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{link, filepath.Join(link, "sub", "dir")} {
		if _, err := New(d, Options{Create: true}); !errors.Is(err, ErrSystemDir) {
			t.Errorf("New(%q) = %v, want ErrSystemDir", d, err)
		}
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir string
		opt Options
	}{
		{"", Options{}},
		{filepath.Join(dir, "missing"), Options{}},
		{file, Options{}},
		{file, Options{Create: true}},
		{filepath.Join(file, "sub"), Options{Create: true}},
	} {
		if _, err := New(tc.dir, tc.opt); err == nil || !strings.HasPrefix(err.Error(), "nvme: ") {
			t.Errorf("New(%q, %+v) = %v, want an nvme: error", tc.dir, tc.opt, err)
		}
	}
}

// TestClose checks what Close removes: the files it created, never files
// it found, and the directory only when it made it (Create) and not Keep.
func TestClose(t *testing.T) {
	write := func(t *testing.T, b *Backend, key string) {
		t.Helper()
		o, err := b.Open(key, 4096, true)
		if err != nil {
			t.Fatal(err)
		}
		o.Close()
	}
	t.Run("existing dir", func(t *testing.T) {
		dir := t.TempDir()
		foreign := filepath.Join(dir, "foreign")
		if err := os.WriteFile(foreign, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		b := newNVMe(t, dir, Options{Direct: true})
		write(t, b, "k1")
		write(t, b, "k2")
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != "foreign" {
			t.Errorf("after Close the directory holds %v, want only foreign", ents)
		}
	})
	t.Run("create", func(t *testing.T) {
		root := t.TempDir()
		dir := filepath.Join(root, "x", "y")
		b := newNVMe(t, dir, Options{Direct: true, Create: true})
		write(t, b, "k")
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if ents, _ := os.ReadDir(root); len(ents) != 0 {
			t.Errorf("after Close %s holds %v, want nothing", root, ents)
		}
	})
	t.Run("create existing", func(t *testing.T) {
		dir := t.TempDir() // as os.MkdirTemp made it
		b := newNVMe(t, dir, Options{Direct: true, Create: true})
		write(t, b, "k")
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Close left the directory it was given (%v)", err)
		}
	})
	t.Run("keep", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "kept")
		b := newNVMe(t, dir, Options{Direct: true, Create: true, Keep: true})
		write(t, b, "k")
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "k")); err != nil {
			t.Errorf("Keep: %v", err)
		}
		// A later run finds the object.
		b = newNVMe(t, dir, Options{Direct: true})
		defer b.Close()
		o, err := b.Open("k", 4096, false)
		if err != nil {
			t.Fatalf("Open of a kept object: %v", err)
		}
		if _, err := b.Open("k", 8192, false); err == nil {
			t.Error("Open of a 4096-byte file as 8192 bytes succeeded")
		}
		if err := o.Remove(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "k")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Remove of a found object left its file (%v)", err)
		}
	})
}

// TestStaleRemove checks that an Object whose object was replaced does not
// remove the replacement.
func TestStaleRemove(t *testing.T) {
	b := newNVMe(t, t.TempDir(), Options{Direct: true})
	defer b.Close()
	old, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	o, err := b.Open("k", 8192, true)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if err := old.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open("k", 8192, false); err != nil {
		t.Errorf("a stale Remove removed the replacement: %v", err)
	}
}

func TestFd(t *testing.T) {
	b := newNVMe(t, t.TempDir(), Options{Direct: true})
	defer b.Close()
	obj, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	f, ok := obj.(interface{ Fd() uintptr })
	if !ok {
		t.Fatal("the Object has no Fd method")
	}
	var st, want unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(filepath.Join(b.Dir(), "k"), &want); err != nil {
		t.Fatal(err)
	}
	if st.Ino != want.Ino || st.Size != 4096 {
		t.Errorf("Fd() is inode %d of %d bytes, want inode %d of 4096", st.Ino, st.Size, want.Ino)
	}
}

// TestErrors checks the wrapping of system errors.
func TestErrors(t *testing.T) {
	o := &Object{key: "k", path: "/d/2_k"}
	for _, tc := range []struct {
		in        error
		is        []error
		isNot     []error
		msgSuffix string
	}{
		{&os.PathError{Op: "write", Path: "/d/2_k", Err: syscall.ENOSPC}, []error{backend.ErrNoSpace, syscall.ENOSPC}, nil, `write "k" at offset 8192 (/d/2_k): no space left on device`},
		{syscall.EDQUOT, []error{backend.ErrNoSpace, syscall.EDQUOT}, nil, `write "k" at offset 8192 (/d/2_k): disk quota exceeded`},
		{&os.PathError{Op: "write", Path: "/d/2_k", Err: syscall.EIO}, []error{syscall.EIO}, []error{backend.ErrNoSpace}, `write "k" at offset 8192 (/d/2_k): input/output error`},
		{os.ErrClosed, []error{backend.ErrClosed}, nil, `write "k" (/d/2_k): closed`},
	} {
		err := o.ioErr("write", 8192, tc.in)
		for _, target := range tc.is {
			if !errors.Is(err, target) {
				t.Errorf("%v: not %v", err, target)
			}
		}
		for _, target := range tc.isNot {
			if errors.Is(err, target) {
				t.Errorf("%v: is %v", err, target)
			}
		}
		if want := "nvme: " + tc.msgSuffix; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	}
}
