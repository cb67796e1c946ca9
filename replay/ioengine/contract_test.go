package ioengine_test

import (
	"testing"

	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/replay/ioengine/enginetest"
)

// TestContract holds every registered engine to enginetest's engine
// contract (the queue-full rule among it).
func TestContract(t *testing.T) {
	for _, name := range ioengine.Names() {
		t.Run(name, func(t *testing.T) { enginetest.RunEngine(t, name) })
	}
}
