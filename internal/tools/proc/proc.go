// Package proc runs the child processes tally starts (the emulators' Java
// and Node.js, Chromium, bench instances) so that each dies with its
// children: in a process group of its own where the OS has them, which on
// Linux the kernel also kills when tally dies, and in a job object that
// dies with tally on Windows. Stop only ever signals the group of a process
// this package started.
package proc

import (
	"errors"
	"os/exec"
)

// ErrUnsupported is returned by Pause and Resume where the OS cannot stop
// and continue a process group.
var ErrUnsupported = errors.New("proc: not supported on this OS")

// Group is a started process and the processes it starts.
type Group struct {
	cmd *exec.Cmd
	sys groupSys
}

// Start starts cmd in a group of its own.
func Start(cmd *exec.Cmd) (*Group, error) {
	Prepare(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &Group{cmd: cmd}
	if err := g.sys.attach(cmd); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	return g, nil
}
