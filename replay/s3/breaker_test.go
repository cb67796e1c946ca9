package s3_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestCloseAfterStall: one request of the run went Timeout without an
// answer, which has every later request refused at once. Close must still
// remove what the run made (its objects, its claim, its unfinished upload)
// from a server that answers again, and from one that stays silent stop
// within about a Timeout, saying it stopped answering. Every request sent
// is counted.
func TestCloseAfterStall(t *testing.T) {
	for _, answers := range []bool{true, false} {
		t.Run(map[bool]string{true: "server answers again", false: "server stays silent"}[answers], func(t *testing.T) {
			srv := start(t, s3test.Options{KeepAlive: true})
			px := s3test.Throttle(t, srv)
			const timeout = 300 * time.Millisecond
			b := newBackend(t, px.Endpoint, s3.Config{PartSize: s3.MinPartSize, MaxAttempts: 2, MaxBackoff: time.Millisecond, Timeout: timeout})
			prefix := b.RunPrefix()
			const size = 64 << 10
			p := make([]byte, size)
			replaytest.Fill(p, 3, 0)
			o, err := b.Open("k", size, true)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := o.WriteAt(p, 0); err != nil {
				t.Fatal(err)
			}
			big, err := b.Open("big", s3.MinPartSize+size, true)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := big.WriteAt(make([]byte, s3.MinPartSize), 0); err != nil {
				t.Fatal(err)
			}
			px.Hang(s3test.Silent)
			if _, err := o.ReadAt(make([]byte, size), 0); err == nil || !strings.Contains(err.Error(), "sent nothing for 300ms") {
				t.Fatalf("a read from a silent server: %v", err)
			}
			o.Close()
			if answers {
				px.Hang(s3test.Answer)
			}
			begin := time.Now()
			err = b.Close()
			took := time.Since(begin)
			if answers {
				if err != nil {
					t.Errorf("Close, the server answering again: %v", err)
				}
				noneUnder(t, srv, prefix)
				st := b.Stats()
				if sent := px.Served() + px.Hung(); st.Total()+st.Retries != sent {
					t.Errorf("the backend counts %d requests (%v) and %d retries; the server was sent %d", st.Total(), st.Requests, st.Retries, sent)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), "stopped answering") || took > 4*timeout+time.Second {
					t.Errorf("Close against a silent server: %v after %v; want it to say the server stopped answering, within about %v", err, took, timeout)
				}
				px.Hang(s3test.Answer)
			}
		})
	}
}
