//go:build unix

package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

type groupSys struct{}

func (groupSys) attach(*exec.Cmd) error { return nil }

// Prepare makes cmd start a process group of its own, which on Linux is
// also killed if this process dies first.
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

func (g *Group) signal(s syscall.Signal) error {
	err := syscall.Kill(-g.cmd.Process.Pid, s)
	if errors.Is(err, syscall.ESRCH) {
		return nil // gone already
	}
	return err
}

// Terminate asks every process of the group to stop (SIGTERM), and
// continues it (SIGCONT), so that a group stopped where it was (Pause, or
// a user's SIGSTOP) acts on it at once, as a shell's kill does.
func (g *Group) Terminate() error {
	if err := g.signal(syscall.SIGTERM); err != nil {
		return err
	}
	return g.signal(syscall.SIGCONT)
}

// Kill stops every process of the group at once (SIGKILL).
func (g *Group) Kill() error { return g.signal(syscall.SIGKILL) }

// Pause stops every process of the group where it is (SIGSTOP).
func (g *Group) Pause() error { return g.signal(syscall.SIGSTOP) }

// Resume continues a paused group (SIGCONT).
func (g *Group) Resume() error { return g.signal(syscall.SIGCONT) }
