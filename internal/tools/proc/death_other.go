//go:build unix && !linux

package proc

import "syscall"

// setDeathSignal does nothing where the kernel has no parent-death signal:
// tally stops its children itself when it ends, on Ctrl-C too.
func setDeathSignal(*syscall.SysProcAttr) {}
