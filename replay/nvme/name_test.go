package nvme

import "github.com/kvbench/kvbench/internal/objname"

// maxName and safeByte are objname's, for this package's tests.
const maxName = objname.MaxName

func safeByte(c byte) bool { return objname.SafeByte(c) }
