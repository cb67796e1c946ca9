//go:build !linux

package host

// ProbeDirectIO knows nothing off Linux.
func ProbeDirectIO(dir string) DirectIO {
	return DirectIO{FileSystem: statfsType(dir), Align: DefaultDirectAlign}
}
