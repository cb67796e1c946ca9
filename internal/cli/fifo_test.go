package cli_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
)

// mkfifo makes a named pipe in a temporary directory.
func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// within runs f, on another goroutine (f must not call t.Fatal), and fails
// t if it has not returned in a long while: the code under test blocks for
// good when it is wrong (open(2) of a FIFO without a writer), and the test
// should say so rather than hang.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still blocked", what)
	}
}

// TestOpenReadFIFO: a FIFO without a writer does not block OpenRead past
// its context, whether cancelled before or during the wait; with a writer
// its bytes are read, and a writer that closes at once makes an empty
// stream; a read waiting on a silent writer stops with the context too.
func TestOpenReadFIFO(t *testing.T) {
	t.Run("cancelled before", func(t *testing.T) {
		p := mkfifo(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		within(t, "OpenRead", func() {
			r, err := cli.OpenRead(ctx, p)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("OpenRead = %v, %v; want context.Canceled", r, err)
			}
		})
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		p := mkfifo(t)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			r, err := cli.OpenRead(ctx, p)
			if r != nil {
				r.Close()
			}
			errc <- err
		}()
		cancel()
		within(t, "OpenRead", func() {
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("OpenRead: %v; want context.Canceled", err)
			}
		})
	})
	for _, data := range []string{"Timestamp,Operation\n", ""} {
		t.Run("writer "+`"`+data+`"`, func(t *testing.T) {
			p := mkfifo(t)
			go func() {
				w, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
					return
				}
				io.WriteString(w, data)
				w.Close()
			}()
			within(t, "OpenRead and read", func() {
				r, err := cli.OpenRead(context.Background(), p)
				if err != nil {
					t.Error(err)
					return
				}
				defer r.Close()
				if b, err := io.ReadAll(r); err != nil || string(b) != data {
					t.Errorf("read %q, %v; want %q", b, err, data)
				}
			})
		})
	}
	t.Run("silent writer", func(t *testing.T) {
		p := mkfifo(t)
		wc := make(chan *os.File, 1)
		go func() {
			w, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
			}
			io.WriteString(w, "x")
			wc <- w
		}()
		ctx, cancel := context.WithCancel(context.Background())
		within(t, "OpenRead and read", func() {
			r, err := cli.OpenRead(ctx, p)
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			b := make([]byte, 8)
			if n, err := r.Read(b); n != 1 || err != nil {
				t.Errorf("first read: %d, %v", n, err)
				return
			}
			cancel()
			if n, err := r.Read(b); n != 0 || !errors.Is(err, context.Canceled) {
				t.Errorf("read after cancel: %d, %v; want context.Canceled", n, err)
			}
		})
		if w := <-wc; w != nil {
			w.Close()
		}
	})
	t.Run("regular file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "f")
		os.WriteFile(p, []byte("abc"), 0o644)
		r, err := cli.OpenRead(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if b, _ := io.ReadAll(r); string(b) != "abc" {
			t.Errorf("read %q", b)
		}
		if _, err := cli.OpenRead(context.Background(), p+".none"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("missing file: %v", err)
		}
	})
}
