package trace_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

const seedDir = "testdata/fuzz-seeds"

// fuzzMaxRecords bounds the work of one fuzz input: a small zstd input can
// expand to many rows.
const fuzzMaxRecords = 1 << 16

// seedFiles returns the seed corpus, failing tb if it is missing.
func seedFiles(tb testing.TB) map[string][]byte {
	tb.Helper()
	ents, err := os.ReadDir(seedDir)
	if err != nil {
		tb.Fatal(err)
	}
	seeds := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(seedDir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		seeds[e.Name()] = b
	}
	if len(seeds) < 10 {
		tb.Fatalf("%d seed files in %s, want at least 10", len(seeds), seedDir)
	}
	return seeds
}

// TestFuzzSeeds pins what each seed is, so that the fuzzer starts from
// the inputs it is meant to.
func TestFuzzSeeds(t *testing.T) {
	want := map[string]struct {
		rows int
		err  error // nil: reads to io.EOF
	}{
		"kvbench.csv":        {5, nil},
		"kvbench.csv.zst":    {5, nil},
		"mlperf.csv":         {3, nil},
		"reference_crlf.csv": {3, nil},
		"reordered_bom.csv":  {2, nil},
		"bad_header.csv":     {0, trace.ErrBadHeader},
		"bad_enum.csv":       {0, trace.ErrBadEnum},
		"bad_fieldcount.csv": {0, trace.ErrFieldCount},
		"bad_key_quote.csv":  {0, trace.ErrBadKey},
		"truncated.csv.zst":  {0, trace.ErrTruncated},
		"corrupt.zst":        {0, trace.ErrCorrupt},
	}
	seeds := seedFiles(t)
	for name, w := range want {
		data, ok := seeds[name]
		if !ok {
			t.Errorf("seed %s is missing", name)
			continue
		}
		recs, err := readRecords(t, trace.NewReader(bytes.NewReader(data)))
		if w.err == nil && err != io.EOF || w.err != nil && !errors.Is(err, w.err) {
			t.Errorf("%s: %v, want %v", name, err, w.err)
		}
		if len(recs) != w.rows {
			t.Errorf("%s: %d records, want %d", name, len(recs), w.rows)
		}
		if strings.HasSuffix(name, ".zst") != bytes.HasPrefix(data, zstdMagic) {
			t.Errorf("%s: zstd magic and name disagree", name)
		}
	}
}

// FuzzReader: no input makes the Reader panic or report anything but a
// *ParseError wrapping one sentinel; every record it returns is valid and
// survives a round trip through a kvbench Writer.
func FuzzReader(f *testing.F) {
	for _, data := range seedFiles(f) {
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"\n",
		h8 + "\n" + g8 + "\n",
		h6 + "\r\n" + g6 + "\r\n" + g6 + "\r\n",
		hr + "\n" + rowR("Timestamp", "1") + "\n",
		h6 + "\n" + "999999999.9999999,Read,1,Tier-0,k,Decode\n",
		h6 + "\n" + "1000000000,Read,1,Tier-0,k,Decode\n5,Read,1,Tier-0,k,Decode\n",
		h8 + "\n" + `0,Read,1,Tier-0,"a,b",Decode,,` + "\n",
		h6 + ",Tier\n",
		"\x28\xb5\x2f\xfd",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := trace.NewReader(bytes.NewReader(data))
		r.Name = "fuzz.csv"
		defer r.Close()
		var recs []schema.Record
		var rec schema.Record
		var err error
		for len(recs) < fuzzMaxRecords {
			if err = r.Read(&rec); err != nil {
				break
			}
			checkRecord(t, &rec)
			recs = append(recs, cloneRecord(&rec))
		}
		if r.Rows() != int64(len(recs)) {
			t.Fatalf("Rows() = %d after %d records", r.Rows(), len(recs))
		}
		if err != nil && err != io.EOF {
			checkFuzzError(t, r, err)
		}
		if len(recs) > 0 {
			if hdr, herr := r.Header(); herr != nil || len(hdr) < 6 {
				t.Fatalf("Header() = %q, %v after reading records", hdr, herr)
			}
		}
		roundTripRecords(t, recs)
	})
}

// checkRecord fails t unless rec is a record the format allows.
func checkRecord(t *testing.T, rec *schema.Record) {
	t.Helper()
	if !rec.Op.Valid() || !rec.Tier.Valid() || !rec.Phase.Valid() || !rec.QoS.Valid() || rec.Size < 0 {
		t.Fatalf("invalid record %s (%+v)", rec.String(), *rec)
	}
	if len(rec.Key) == 0 || !utf8.Valid(rec.Key) {
		t.Fatalf("key %q is empty or not UTF-8", rec.Key)
	}
	for _, c := range string(rec.Key) {
		if unicode.IsSpace(c) || unicode.IsControl(c) || c == ',' || c == '"' {
			t.Fatalf("key %q holds %q", rec.Key, c)
		}
	}
}

// checkFuzzError fails t unless err is a sticky *ParseError that wraps
// exactly one sentinel and renders on one line.
func checkFuzzError(t *testing.T, r *trace.Reader, err error) {
	t.Helper()
	var pe *trace.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) from a bytes.Reader is not a *ParseError", err, err)
	}
	if pe.Line < 1 || pe.Column < 0 {
		t.Fatalf("error at line %d column %d: %v", pe.Line, pe.Column, err)
	}
	if pe.Line > r.Line()+1 {
		t.Fatalf("error at line %d, but the Reader is at line %d", pe.Line, r.Line())
	}
	u := pe.Unwrap()
	if u == nil {
		t.Fatalf("ParseError %v unwraps to nil", err)
	}
	n := 0
	for _, s := range sentinels {
		if u == s {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("ParseError %v unwraps to %v (%T), not a sentinel", err, u, u)
	}
	if pe.File != "fuzz.csv" {
		t.Fatalf("File = %q", pe.File)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") || !strings.HasPrefix(msg, "trace: fuzz.csv:") {
		t.Fatalf("Error() = %q", msg)
	}
	if len(pe.Value) > 64+3 {
		t.Fatalf("Value of %d bytes", len(pe.Value))
	}
	var rec schema.Record
	if err2 := r.Read(&rec); err2 != err {
		t.Fatalf("Read after %v = %v: not sticky", err, err2)
	}
}

// roundTripRecords writes recs with a kvbench Writer and reads them back.
// Times are written to the microsecond; records whose Time the kvbench
// dialect cannot carry (negative after epoch normalisation, or at or past
// EpochThreshold) must be refused and are skipped.
func roundTripRecords(t *testing.T, recs []schema.Record) {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []schema.Record
	for i := range recs {
		rec := recs[i]
		rounded := rec.Time/time.Microsecond*time.Microsecond + (rec.Time%time.Microsecond+500)/time.Microsecond*time.Microsecond
		err := w.Write(&rec)
		if rec.Time < 0 || rounded >= maxVirtual {
			if !errors.Is(err, trace.ErrBadNumber) {
				t.Fatalf("Write(%s) = %v, want ErrBadNumber: the time cannot be carried", rec.String(), err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Write(%s) of a record just read: %v", rec.String(), err)
		}
		rec.Time = rounded
		want = append(want, rec)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := trace.NewReader(&buf)
	got, err := readRecords(t, r)
	if err != io.EOF {
		t.Fatalf("reading back what the Writer wrote: %v", err)
	}
	if _, ok := r.Epoch(); ok {
		t.Fatalf("the Writer's kvbench output reads as an epoch trace")
	}
	diffRecords(t, got, want)
}
