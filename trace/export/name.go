package export

import (
	"github.com/kvbench/kvbench/internal/objname"
	"github.com/kvbench/kvbench/schema"
)

// fileName returns the name of the file that holds key's copy on tier in
// the dir layout: the name kvreplay's NVMe directory backend gives it,
// objname.FileName of the engine's objname.ObjectName ("2_" and the
// escaped key on Tier-2), so that an exported job and a replay touch the
// same files, and the copies of one key on two tiers two files.
func fileName(tier schema.Tier, key string) string {
	return objname.FileName(objname.ObjectName(int(tier), key))
}
