package s3_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestConnectionDropped: a server that closes the connection with no
// response (a crash, a reset mid-request) has the PUT or GET tried again
// within the attempts, and the bytes are right; one that does so on every
// attempt fails the operation (counted failed, not done) with one line
// that names the request, says what happened and how many attempts were
// made, not the SDK's account of it ("operation error S3: PutObject,
// exceeded maximum number of attempts, 3, https response error
// StatusCode: 0, RequestID: , HostID: , request send failed, ...").
func TestConnectionDropped(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	b := newBackend(t, px.Endpoint, s3.Config{MaxAttempts: 3, MaxBackoff: time.Millisecond})
	defer b.Close()
	const size = 64 << 10
	p := make([]byte, size)
	replaytest.Fill(p, 5, 0)
	write := func(key string) error {
		o, err := b.Open(key, size, true)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		_, err = o.WriteAt(p, 0)
		return err
	}
	read := func(key string) error {
		o, err := b.Open(key, size, false)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		q := make([]byte, size)
		if _, err := o.ReadAt(q, 0); err != nil {
			return err
		}
		if !bytes.Equal(p, q) {
			t.Errorf("%s: the bytes read differ from those written", key)
		}
		return nil
	}
	px.Drop(2)
	if err := write("k"); err != nil {
		t.Fatalf("a PUT dropped twice, of 3 attempts: %v", err)
	}
	px.Drop(2)
	if err := read("k"); err != nil {
		t.Fatalf("a GET dropped twice, of 3 attempts: %v", err)
	}
	// Every request the server was sent counts, the one Go's transport
	// sends again by itself too (a GET whose kept connection closed
	// before any answer), which the SDK never sees.
	st := b.Stats()
	if sent := px.Served() + px.Drops(); px.Drops() != 4 || st.Retries != 4 || len(st.Failed) != 0 || st.Total()+st.Retries != sent {
		t.Errorf("after 4 dropped attempts: %d dropped, %d requests and %d retries counted, failed %v; want 4 dropped and retried, none failed, %d sent",
			px.Drops(), st.Total(), st.Retries, st.Failed, sent)
	}
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"PUT " + b.RunPrefix() + "k2", func() error { return write("k2") }},
		{"GET " + b.RunPrefix() + "k", func() error { return read("k") }},
	} {
		px.Drop(100)
		err := op.do()
		px.Drop(0)
		if err == nil || !strings.Contains(err.Error(), op.name+": the connection failed (") || !strings.Contains(err.Error(), "), after 3 attempts") ||
			strings.Contains(err.Error(), "operation error") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s dropped on every attempt: %v; want one line saying the connection failed, after 3 attempts", op.name, err)
		}
	}
	if st := b.Stats(); st.Failed["PutObject"] != 1 || st.Failed["GetObject"] != 1 {
		t.Errorf("failed %v: want a PUT and a GET", st.Failed)
	}
}

// TestCutBodyAttempts: a GET whose body was cut short is tried again
// within the request's attempts, not with as many again: a cut body and
// then a 503 of MaxAttempts 2 fail the read after 2 requests (the retry
// of the cut body was a call of its own, allowed MaxAttempts more: 3, and
// up to MaxAttempts squared in a storm), and the error counts both.
func TestCutBodyAttempts(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	b := newBackend(t, px.Endpoint, s3.Config{MaxAttempts: 2, MaxBackoff: time.Millisecond})
	defer b.Close()
	const size = 64 << 10
	p := make([]byte, size)
	replaytest.Fill(p, 3, 0)
	o, err := b.Open("k", size, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	sent := func() int64 { return px.Served() + px.Refused() + px.Cuts() }
	before := sent()
	px.Cut(1)
	px.Fail(1)
	_, err = o.ReadAt(make([]byte, size), 0)
	px.Fail(0)
	if n := sent() - before; n != 2 || err == nil || !strings.Contains(err.Error(), "SlowDown") || !strings.Contains(err.Error(), "after 2 attempts") {
		t.Errorf("a GET cut, then refused with 503, of 2 attempts: %v, after %d requests; want it to fail after 2 attempts", err, n)
	}
	if st := b.Stats(); st.Failed["GetObject"] != 1 || st.Retries != 1 {
		t.Errorf("failed %v, %d retries: want one GET failed, one retry", st.Failed, st.Retries)
	}
}
