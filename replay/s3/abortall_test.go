package s3_test

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// ghostUploads is a server's listing of multipart uploads that shows
// uploads for a while after they were aborted (as eventually consistent
// listings do): an abort of one ends it (204), an abort of it again
// answers 404 NoSuchUpload, and it stays listed.
type ghostUploads struct {
	mu      sync.Mutex
	keys    []string       // in the listing's order, one upload each
	aborted map[string]int // aborts of each key's upload
	lists   atomic.Int64
}

type listUploadsResult struct {
	XMLName            xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListMultipartUploadsResult"`
	Bucket             string
	KeyMarker          string
	UploadIDMarker     string `xml:"UploadIdMarker"`
	NextKeyMarker      string
	NextUploadIDMarker string `xml:"NextUploadIdMarker"`
	MaxUploads         int
	IsTruncated        bool
	Uploads            []listedUpload `xml:"Upload"`
}

type listedUpload struct {
	Key      string
	UploadID string `xml:"UploadId"`
}

// serve answers the listing of the uploads and their aborts; false for
// any other request.
func (g *ghostUploads) serve(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodGet && q.Has("uploads"):
		g.lists.Add(1)
		max, _ := strconv.Atoi(q.Get("max-uploads"))
		res := listUploadsResult{Bucket: bucket, KeyMarker: q.Get("key-marker"), UploadIDMarker: q.Get("upload-id-marker"), MaxUploads: max}
		g.mu.Lock()
		for _, k := range g.keys {
			if !strings.HasPrefix(k, q.Get("prefix")) || k <= res.KeyMarker {
				continue
			}
			if len(res.Uploads) == max {
				res.IsTruncated = true
				break
			}
			res.Uploads = append(res.Uploads, listedUpload{Key: k, UploadID: "id-" + k})
			res.NextKeyMarker, res.NextUploadIDMarker = k, "id-"+k
		}
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/xml")
		out, _ := xml.Marshal(res)
		w.Write(append([]byte(xml.Header), out...))
		return true
	case r.Method == http.MethodDelete && q.Has("uploadId"):
		key := strings.TrimPrefix(r.URL.Path, "/"+bucket+"/")
		g.mu.Lock()
		g.aborted[key]++
		n := g.aborted[key]
		g.mu.Unlock()
		if n > 1 {
			s3Error(w, http.StatusNotFound, "NoSuchUpload")
			return true
		}
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}

// TestAbortAllListedAfterAbort: Close's abort of the run's leftover
// multipart uploads ends against a server that lists them a while after
// they were aborted (their aborts again answered 404 NoSuchUpload, which
// is no failure): each is aborted once, the pages after them too, and
// Close returns. It listed the first page again after every abort that
// went through, and took the NoSuchUpload of an upload listed again for
// one: it never ended.
func TestAbortAllListedAfterAbort(t *testing.T) {
	defer s3.SetUploadsPage(2)()
	srv := start(t, s3test.Options{KeepAlive: true})
	g := &ghostUploads{aborted: map[string]int{}}
	var on atomic.Bool
	endpoint := hookProxy(t, srv.Endpoint, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
		return on.Load() && g.serve(w, r)
	})
	b := newBackend(t, endpoint, s3.Config{RunID: "ghosts"})
	for i := range 5 {
		g.keys = append(g.keys, fmt.Sprintf("%sorphan-%d", b.RunPrefix(), i))
	}
	on.Store(true)
	done := make(chan error, 1)
	go func() { done <- b.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Close went on 10 s against a listing of uploads aborted already (%d listings)", g.lists.Load())
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range g.keys {
		if g.aborted[k] != 1 {
			t.Errorf("the upload of %s was aborted %d times, want once", k, g.aborted[k])
		}
	}
	// A listing a page of new uploads, and one a page of uploads aborted
	// already, each page but the last, and the last.
	if n := g.lists.Load(); n > 6 {
		t.Errorf("%d listings of 5 uploads 2 a page; want at most 6", n)
	}
	if st := b.Stats(); st.Failed["AbortMultipartUpload"] != 0 {
		t.Errorf("failed %v: want no failed abort", st.Failed)
	}
}
