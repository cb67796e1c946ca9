//go:build !linux

package host

func kernelRelease() string             { return "" }
func sysinfoMemory() int64              { return 0 }
func statfsType(string) string          { return "" }
func statfsSpace(string) (int64, int64) { return -1, -1 }
func deviceNumber(string) string        { return "" }
func blockDeviceNumber(string) string   { return "" }

// PeakRSS is unknown off Linux.
func PeakRSS() int64 { return 0 }

// readPressure: pressure stall information is Linux's.
func readPressure(string) []byte { return nil }
