package nvme

import "github.com/kvbench/kvbench/internal/objname"

// FileName returns the name of the file that holds key in a backend's
// directory: objname.FileName, which kvtrace's fio exporter uses too.
// Distinct keys get distinct names, and no name is a path.
func FileName(key string) string { return objname.FileName(key) }
