package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// stopWithParent has the kernel send this process SIGTERM when its parent
// dies. Under 'go run', a SIGTERM reaches the go command, not this
// program, which would otherwise outlive it with its emulator.
func stopWithParent() {
	parent := os.Getppid()
	if unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0) == nil && os.Getppid() != parent {
		syscall.Kill(os.Getpid(), syscall.SIGTERM) // the parent died before the call
	}
}
