package export

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxName is the longest object file name fileName returns.
const maxName = 200

// fileName returns the name of the file that holds key in the dir layout.
// It is the escaping of kvreplay's NVMe directory backend
// (replay/nvme.FileName), which this package may not import (imports point
// down: trace never sees replay); cmd/kvtrace's tests check that the two
// agree. Bytes outside [A-Za-z0-9._-] and a leading '.' become %XX; a name
// longer than 200 bytes is cut to a prefix, '~' and the key's hex SHA-256.
func fileName(key string) string {
	if key == "" {
		return "%"
	}
	const hexDigits = "0123456789ABCDEF"
	var sb strings.Builder
	sb.Grow(len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		if safeByte(c) && (i > 0 || c != '.') {
			sb.WriteByte(c)
			continue
		}
		sb.WriteByte('%')
		sb.WriteByte(hexDigits[c>>4])
		sb.WriteByte(hexDigits[c&15])
	}
	name := sb.String()
	if len(name) <= maxName {
		return name
	}
	sum := sha256.Sum256([]byte(key))
	h := hex.EncodeToString(sum[:])
	cut := maxName - 1 - len(h)
	if i := strings.LastIndexByte(name[:cut], '%'); i >= 0 && i > cut-3 {
		cut = i
	}
	return name[:cut] + "~" + h
}

func safeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}
