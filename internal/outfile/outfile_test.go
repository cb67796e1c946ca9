package outfile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/outfile"
)

// write creates path, writes s and closes it.
func write(t testing.TB, path, s string) {
	t.Helper()
	f, err := outfile.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if _, err := io.WriteString(f, s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestClassify(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	if err := os.WriteFile(reg, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	toNull := filepath.Join(dir, "to-null")
	if err := os.Symlink("/dev/null", toNull); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	toFD := filepath.Join(dir, "to-fd")
	if err := os.Symlink(fmt.Sprintf("/proc/self/fd/%d", w.Fd()), toFD); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		path string
		kind outfile.Kind
		to   string // Target.Path, "" for path itself
		fd   int
	}{
		{filepath.Join(dir, "new"), outfile.New, "", -1},
		{reg, outfile.Replace, "", -1},
		{link, outfile.Replace, reg, -1},
		{"/dev/null", outfile.InPlace, "", -1},
		{toNull, outfile.InPlace, "", -1},
		{fifo, outfile.InPlace, "", -1},
		{sock, outfile.InPlace, "", -1},
		{"/dev/stdout", outfile.InPlace, "", 1},
		{"/dev/stderr", outfile.InPlace, "", 2},
		{fmt.Sprintf("/dev/fd/%d", w.Fd()), outfile.InPlace, "", int(w.Fd())},
		{fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), w.Fd()), outfile.InPlace, "", int(w.Fd())},
		{toFD, outfile.InPlace, "", int(w.Fd())},
	}
	for _, tt := range tests {
		got, err := outfile.Classify(tt.path)
		if err != nil {
			t.Errorf("Classify(%s): %v", tt.path, err)
			continue
		}
		want := tt.to
		if want == "" {
			want = tt.path
		}
		if got.Kind != tt.kind || got.Path != want || got.FD != tt.fd {
			t.Errorf("Classify(%s) = %v %s fd %d, want %v %s fd %d", tt.path, got.Kind, got.Path, got.FD, tt.kind, want, tt.fd)
		}
	}
	for _, bad := range []string{dir, "", "/proc/1/fd/0/x/../.."} {
		if _, err := outfile.Classify(bad); err == nil {
			t.Errorf("Classify(%q) accepted", bad)
		}
	}
	if _, err := outfile.Classify(dir); !errors.Is(err, outfile.ErrNotWritable) {
		t.Errorf("Classify(directory) = %v, want ErrNotWritable", err)
	}
}

// A block device is never an output; making one needs root (CAP_MKNOD).
func TestClassifyBlockDevice(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "blk")
	if err := syscall.Mknod(dev, syscall.S_IFBLK|0o600, 7<<8); err != nil {
		t.Skipf("cannot make a block device node here: %v", err)
	}
	_, err := outfile.Classify(dev)
	if !errors.Is(err, outfile.ErrNotWritable) || !strings.Contains(err.Error(), "block device") {
		t.Fatalf("Classify(block device) = %v, want a refusal naming it", err)
	}
	if f, err := outfile.Create(context.Background(), dev); err == nil {
		f.Abort()
		t.Fatal("Create on a block device succeeded")
	}
	if fi, err := os.Lstat(dev); err != nil || fi.Mode()&fs.ModeDevice == 0 {
		t.Fatalf("the device node changed: %v, %v", fi, err)
	}
}

// A character device is written in place and stays what it was: the
// output is never renamed over it (as root, /dev/null became a file).
func TestCharDeviceInPlace(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("no private device node (%v): using /dev/null", err)
		dev = "/dev/null"
	}
	f, err := outfile.Create(context.Background(), dev)
	if err != nil {
		t.Fatal(err)
	}
	if !f.InPlace() {
		t.Error("InPlace() = false for a device")
	}
	if _, err := io.WriteString(f, strings.Repeat("x", 1<<16)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(dev)
	if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v, %v", dev, fi.Mode(), err)
	}
	if dev != "/dev/null" {
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("directory holds %v, want the device alone", ents)
		}
	}
}

// A FIFO is written in place: its reader gets the output.
func TestFIFOInPlace(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		b, err := os.ReadFile(fifo)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(b)
	}()
	write(t, fifo, "through the fifo")
	if s := <-got; s != "through the fifo" {
		t.Fatalf("reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO changed: %v, %v", fi, err)
	}
}

// A FIFO with no reader waits for one until the context ends.
func TestFIFONoReaderCancelled(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt"))
	f, err := outfile.Create(ctx, fifo)
	if err == nil {
		f.Abort()
		t.Fatal("Create of a FIFO with no reader succeeded after cancel")
	}
	if !strings.Contains(err.Error(), "interrupt") {
		t.Fatalf("error %v does not give the cause", err)
	}
}

// A socket is connected to and written.
func TestSocketInPlace(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(c)
		c.Close()
		got <- string(b)
	}()
	write(t, sock, "to the socket")
	if s := <-got; s != "to the socket" {
		t.Fatalf("listener got %q", s)
	}
}

// A descriptor named by path (/dev/stdout, /proc/self/fd/N) is written
// through, and nothing is renamed over the link.
func TestDescriptorInPlace(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	name := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
	write(t, name, "through the descriptor")
	w.Close()
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "through the descriptor" {
		t.Fatalf("pipe got %q, %v", b, err)
	}
}

// A regular file reached through a descriptor (stdout redirected to a
// file) is appended to, not replaced.
func TestDescriptorRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("before "); err != nil {
		t.Fatal(err)
	}
	write(t, fmt.Sprintf("/dev/fd/%d", f.Fd()), "after")
	if b, _ := os.ReadFile(path); string(b) != "before after" {
		t.Fatalf("file holds %q", b)
	}
}

// A link to a regular file stays a link: the file it names is replaced.
func TestSymlinkKept(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("target.json", link); err != nil {
		t.Fatal(err)
	}
	write(t, link, "new")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("target holds %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Errorf("target's mode %v, want 0600 kept", fi.Mode().Perm())
	}
}

// A link that names nothing yet is written through, as a shell's
// redirection would: the file it names is created and the link stays
// (the output was renamed over nothing and Close failed: "a symlink
// appeared at the path", after the whole run).
func TestDanglingSymlinkWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("sub/new.json", link); err != nil {
		t.Fatal(err)
	}
	chain := filepath.Join(dir, "chain.json")
	if err := os.Symlink("link.json", chain); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{link, chain} {
		write(t, path, "new "+path)
		for _, l := range []string{link, chain} {
			if fi, err := os.Lstat(l); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("%s was replaced: %v, %v", l, fi, err)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "sub", "new.json")); string(b) != "new "+path {
			t.Fatalf("target holds %q", b)
		}
		if ents, _ := os.ReadDir(filepath.Join(dir, "sub")); len(ents) != 1 {
			t.Fatalf("temporary file left: %v", ents)
		}
		if err := os.Remove(filepath.Join(dir, "sub", "new.json")); err != nil {
			t.Fatal(err)
		}
	}
}

// What appears at the path between Create and Close and is not a regular
// file is not renamed over.
func TestNoRenameOverSpecial(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	f, err := outfile.Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, outfile.ErrNotWritable) || !strings.Contains(err.Error(), "a named pipe appeared at the path") {
		t.Fatalf("Close = %v, want ErrNotWritable naming a named pipe", err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v, %v", fi, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary file left: %v", ents)
	}
}

func TestTypeName(t *testing.T) {
	for _, tt := range []struct {
		mode fs.FileMode
		want string
	}{
		{fs.ModeSymlink | 0o777, "symbolic link"},
		{fs.ModeDevice | fs.ModeCharDevice | 0o666, "character device"}, // /dev/null's
		{fs.ModeDevice | 0o660, "block device"},
		{fs.ModeNamedPipe | 0o600, "named pipe"},
		{fs.ModeSocket | 0o755, "socket"},
		{fs.ModeDir | 0o755, "directory"},
		{fs.ModeIrregular, "file of mode ?---------"},
	} {
		if got := outfile.TypeName(tt.mode); got != tt.want {
			t.Errorf("TypeName(%v) = %q, want %q", tt.mode, got, tt.want)
		}
	}
}
