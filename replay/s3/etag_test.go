package s3

import "testing"

// TestEtagOf: an ETag is compared without its quotes, and a weak one
// (W/) is none: a weak tag never matches an If-Match (RFC 9110 13.1.1),
// so a gateway that answered its PUTs with weak tags would have failed
// every read with 412.
func TestEtagOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"9b2cf535f27731c974343645a3985328"`, "9b2cf535f27731c974343645a3985328"},
		{`9b2cf535f27731c974343645a3985328`, "9b2cf535f27731c974343645a3985328"},
		{` "3858f62230ac3c915f300c664312c11f-2" `, "3858f62230ac3c915f300c664312c11f-2"},
		{`W/"9b2cf535f27731c974343645a3985328"`, ""},
		{`""`, ""},
		{``, ""},
	} {
		in := tc.in
		if got := etagOf(&in); got != tc.want {
			t.Errorf("etagOf(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := etagOf(nil); got != "" {
		t.Errorf("etagOf(nil) = %q", got)
	}
}
