package nvme

import (
	"fmt"

	"github.com/kvbench/kvbench/internal/outfile"
)

// makeDirs makes dir and its missing parents (outfile.MakeDirs), and
// returns those it made, deepest first, for outfile.RemoveDirs.
func makeDirs(dir string) ([]string, error) {
	made, err := outfile.MakeDirs(dir)
	if err != nil {
		return nil, fmt.Errorf("nvme: %w", err)
	}
	return made, nil
}
