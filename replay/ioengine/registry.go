package ioengine

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// An engine is known by the name it registers, as fio's engines register
// themselves with register_ioengine: replay's configuration and
// kvreplay's --engine ask the registry, so an engine is one file of this
// package whose init calls Register, and nothing else names it.

// Kind says how a replay uses an engine.
type Kind uint8

const (
	// Shared: one engine serves every backend's objects it Serves (io_uring,
	// one ring for every file); the objects it does not serve (RAM's) go to
	// a Pooled engine of their backend's.
	Shared Kind = iota
	// Pooled: one engine for each backend that keeps data, so that a slow
	// device never holds another's blocks behind its own (psync's pools,
	// whose workers block in the device's calls). A Pooled engine must
	// serve any backend.Object.
	Pooled
)

// Info describes a registered engine.
type Info struct {
	Name string
	// New makes the engine; it wraps ErrUnavailable when the machine does
	// not offer it (the replay then falls back to Fallback, saying so).
	New  Factory
	Kind Kind
	// Doc is a short phrase for --engine's help ("io_uring, batched").
	Doc string
}

// Fallback is the engine of the objects a Shared engine does not serve,
// and of everything when the engine asked for is unavailable: a pool of
// goroutines calling ReadAt and WriteAt serves any object.
const Fallback = "psync"

var registry struct {
	mu      sync.Mutex
	engines map[string]Info
}

// Register makes an engine known by info.Name. It panics on a name
// registered twice, an empty name or a nil factory: those are programming
// errors, found by the first run of any test.
func Register(info Info) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if info.Name == "" || info.New == nil {
		panic(fmt.Sprintf("ioengine: Register %q: needs a name and a factory", info.Name))
	}
	if _, dup := registry.engines[info.Name]; dup {
		panic(fmt.Sprintf("ioengine: Register %q: registered twice", info.Name))
	}
	if registry.engines == nil {
		registry.engines = map[string]Info{}
	}
	registry.engines[info.Name] = info
}

// Lookup returns the engine registered as name.
func Lookup(name string) (Info, bool) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	info, ok := registry.engines[name]
	return info, ok
}

// Names returns the registered engines' names, sorted.
func Names() []string {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	names := make([]string, 0, len(registry.engines))
	for n := range registry.engines {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Help describes the registered engines for a flag's help: "psync (a pool
// of ...), uring (...)".
func Help() string {
	var parts []string
	for _, n := range Names() {
		info, _ := Lookup(n)
		if info.Doc == "" {
			parts = append(parts, n)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", n, info.Doc))
	}
	return strings.Join(parts, ", ")
}

// Check returns an error naming the registered engines when name is not
// one of them.
func Check(name string) error {
	if _, ok := Lookup(name); ok {
		return nil
	}
	return fmt.Errorf("no such engine: want one of %s", strings.Join(Names(), ", "))
}
