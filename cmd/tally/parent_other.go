//go:build !linux

package main

// stopWithParent does nothing where the kernel cannot signal a parent's
// death.
func stopWithParent() {}
