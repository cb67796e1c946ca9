package s3

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestExtentError: a GET's response is checked against what was asked
// of the object as the run wrote it: a ranged one's Content-Range (the
// range, and the object's size as its total), a whole one's
// Content-Length.
func TestExtentError(t *testing.T) {
	const size = 10000
	for _, tc := range []struct {
		name   string
		ranged bool
		off, n int64
		cr     string
		length int64 // -1: none
		want   string
	}{
		{"range", true, 100, 50, "bytes 100-149/10000", 50, ""},
		{"range, total unknown", true, 100, 50, "bytes 100-149/*", 50, ""},
		{"range, truncated", true, 100, 50, "bytes 100-149/5000", 50, "the object has 5000 bytes, not the 10000 the run wrote"},
		{"range, grown", true, 100, 50, "bytes 100-149/20000", 50, "the object has 20000 bytes, not the 10000 the run wrote"},
		{"range, cut at the new end", true, 100, 50, "bytes 100-119/120", 20, "the object has 120 bytes, not the 10000"},
		{"another range", true, 100, 50, "bytes 0-49/10000", 50, "the server sent bytes 0-49 of the object, not the 100-149 asked"},
		{"no Content-Range", true, 100, 50, "", size, `the server answered the range 100-149 without a valid Content-Range ("")`},
		{"Content-Range unparsable", true, 100, 50, "bytes 100-149", 50, "without a valid Content-Range"},
		{"Content-Range backwards", true, 100, 50, "bytes 149-100/10000", 50, "without a valid Content-Range"},
		{"Content-Range past its total", true, 100, 50, "bytes 100-149/120", 50, "without a valid Content-Range"},
		{"Content-Range of another unit", true, 100, 50, "items 100-149/10000", 50, "without a valid Content-Range"},
		{"whole", false, 0, size, "", size, ""},
		{"whole, no length", false, 0, size, "", -1, ""},
		{"whole, truncated", false, 0, size, "", 4000, "the object has 4000 bytes, not the 10000 the run wrote: another client replaced or truncated it"},
		{"whole, grown", false, 0, size, "", 40000, "the object has 40000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &s3.GetObjectOutput{}
			if tc.cr != "" {
				out.ContentRange = aws.String(tc.cr)
			}
			if tc.length >= 0 {
				out.ContentLength = aws.Int64(tc.length)
			}
			err := extentError(out, tc.ranged, tc.off, tc.n, size)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("extentError = %v; want %q", err, tc.want)
			}
		})
	}
}

// FuzzParseContentRange: a Content-Range read is a range within its
// total, and written back as a server writes it, it reads the same; one
// refused is refused whole (zeros).
func FuzzParseContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-9/10", "bytes 5-5/*", "bytes 9-0/10", "bytes 0-10/10", "bytes -1-2/3",
		"bytes 0-9", "items 0-9/10", "bytes 0-9/x", "bytes 1-2/3/4", "bytes +1-2/3", "bytes 0-9223372036854775807/*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		first, last, total, ok := parseContentRange(s)
		if !ok {
			if first != 0 || last != 0 || total != 0 {
				t.Fatalf("%q refused, with %d-%d/%d", s, first, last, total)
			}
			return
		}
		if first < 0 || last < first || total < -1 || total >= 0 && last >= total {
			t.Fatalf("%q: %d-%d/%d is not a range within its total", s, first, last, total)
		}
		tot := "*"
		if total >= 0 {
			tot = strconv.FormatInt(total, 10)
		}
		again := fmt.Sprintf("bytes %d-%d/%s", first, last, tot)
		f2, l2, t2, ok2 := parseContentRange(again)
		if !ok2 || f2 != first || l2 != last || t2 != total {
			t.Fatalf("%q read as %q, which reads as %d-%d/%d (%v)", s, again, f2, l2, t2, ok2)
		}
	})
}
