package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// OpenRead opens the file at path for reading as os.Open does, except
// that a named pipe (FIFO) does not block the caller in open(2) until a
// writer comes, where no signal could reach it: it is opened non-blocking
// and OpenRead waits, until ctx is done, for its first data or for a
// writer to come and go (an empty stream). Reads of the pipe also stop
// when ctx is done. The errors of a stopped wait or read match ctx.Err().
// Close must be called. Its errors name the path as FileError does.
func OpenRead(ctx context.Context, path string) (io.ReadCloser, error) {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		f, err := os.Open(path)
		if err != nil {
			return nil, FileError(err)
		}
		return f, nil
	}
	// Non-blocking, a FIFO opens at once, and the Go runtime polls it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, FileError(err)
	}
	p := &pipeReader{f: f, name: f.Name(), ctx: ctx}
	p.stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	if err := p.waitWriter(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// OpenStdin returns standard input to read until ctx is done. A pipe or
// FIFO there is read through an open file description of its own
// (/proc/self/fd/0), non-blocking, whose reads stop when ctx is done (a
// signal), as OpenRead's do: a producer that stalls with its end open
// would hold a blocking read of os.Stdin, and with it the tool, past any
// signal but SIGKILL. Standard input's own description is left as it was
// (blocking, for whatever reads it after), and Close closes only the new
// one. Anything else (a file, a terminal, or a pipe where /proc is not
// mounted) is os.Stdin, whose Close does nothing.
func OpenStdin(ctx context.Context) io.ReadCloser {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		return io.NopCloser(os.Stdin)
	}
	// Not waitWriter's wait: the shell opened the pipe, so a writer came,
	// and a read that finds none left returns end of file.
	f, err := os.OpenFile("/proc/self/fd/0", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return io.NopCloser(os.Stdin)
	}
	p := &pipeReader{f: f, name: "standard input", ctx: ctx}
	p.stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	return p
}

// pipeReader is a FIFO opened by OpenRead, or standard input's pipe
// (OpenStdin), which messages call name.
type pipeReader struct {
	f    *os.File
	name string
	ctx  context.Context
	stop func() bool
}

// waitWriter returns once the pipe has data or a writer came and closed
// it. Until a writer comes, a read of a FIFO opened non-blocking finds no
// writer and returns end of file; poll(2) does not report the hang-up until
// one came (Linux: fifo_open), so it waits for the first writer.
func (p *pipeReader) waitWriter() error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return fmt.Errorf("open %s: %w", p.name, err)
	}
	var perr error
	err = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if err != nil && err != unix.EINTR {
			perr = err
			return true
		}
		return n > 0
	})
	if err == nil {
		err = perr
	}
	if err != nil {
		return p.err("open %s: waiting for a writer: %w", err)
	}
	return nil
}

// err formats err for the pipe, as ctx's error when ctx stopped it.
func (p *pipeReader) err(format string, err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		err = pe.Err // the path is named once
	}
	if errors.Is(err, os.ErrDeadlineExceeded) && p.ctx.Err() != nil {
		err = p.ctx.Err()
	}
	return fmt.Errorf(format, p.name, err)
}

func (p *pipeReader) Read(b []byte) (int, error) {
	n, err := p.f.Read(b)
	if err != nil && err != io.EOF {
		err = p.err("read %s: %w", err)
	}
	return n, err
}

func (p *pipeReader) Close() error {
	p.stop()
	return p.f.Close()
}
