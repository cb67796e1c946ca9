//go:build !linux

package cli

import "os"

func isTTY(*os.File) bool { return true }
