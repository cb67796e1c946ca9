// Package objname owns how an object key becomes a file name: the NVMe
// directory layout of kvreplay names its files so, and kvtrace's fio
// exporter names the same files. It uses the standard library only.
package objname

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxName is the longest file name FileName returns, well under the 255
// bytes of Linux file systems.
const MaxName = 200

// ObjectName returns the name kvreplay gives a backend's copy of a trace's
// key on tier, the trace tier's number (2 for Tier-2): the tier's digit,
// '_' and the key ("2_k"), so that tiers mapped to one backend keep
// separate copies while a demotion moves one. A directory backend keeps
// that copy in the file FileName(ObjectName(tier, key)).
func ObjectName(tier int, key string) string {
	return string(rune('0'+tier)) + "_" + key
}

// FileName returns the name of the file that holds key in a backend's
// directory. Distinct keys get distinct names, and no name is a path:
//
//   - bytes outside [A-Za-z0-9._-] are percent-encoded as %XX (upper-case
//     hex), '%' included, so the encoding decodes back to the key: "a/b" is
//     "a%2Fb" and "a%2Fb" is "a%252Fb";
//   - a leading '.' is encoded too ("%2E"), so no name is ".", ".." or a
//     hidden file, and the backend's own dot-files never collide with one;
//   - a name longer than 200 bytes is cut to a prefix and a '~' followed by
//     the hex SHA-256 of the key. '~' never appears in an encoded name
//     (it is %7E there), so a shortened name equals no other, unless two
//     keys' SHA-256 do;
//   - the empty key is "%", which no encoding of a non-empty key is.
//
// On a case-insensitive file system, keys that differ only in case share a
// file; Linux file systems used for NVMe are case-sensitive.
func FileName(key string) string {
	if key == "" {
		return "%"
	}
	const hexDigits = "0123456789ABCDEF"
	var sb strings.Builder
	sb.Grow(len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		if SafeByte(c) && (i > 0 || c != '.') {
			sb.WriteByte(c)
			continue
		}
		sb.WriteByte('%')
		sb.WriteByte(hexDigits[c>>4])
		sb.WriteByte(hexDigits[c&15])
	}
	name := sb.String()
	if len(name) <= MaxName {
		return name
	}
	sum := sha256.Sum256([]byte(key))
	h := hex.EncodeToString(sum[:])
	cut := MaxName - 1 - len(h)
	// Cut before an escape rather than through it, for the reader's sake.
	if i := strings.LastIndexByte(name[:cut], '%'); i >= 0 && i > cut-3 {
		cut = i
	}
	return name[:cut] + "~" + h
}

// SafeByte reports whether FileName keeps byte c as it is.
func SafeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}
