package export

import "github.com/kvbench/kvbench/internal/objname"

// fileName returns the name of the file that holds key in the dir layout:
// the escaping kvreplay's NVMe directory backend uses (objname.FileName),
// so an exported job and a replay touch the same files.
func fileName(key string) string { return objname.FileName(key) }
