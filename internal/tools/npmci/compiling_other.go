//go:build !linux

package npmci

// compiling is "" where the processes of an install cannot be read.
func compiling(string) string { return "" }
