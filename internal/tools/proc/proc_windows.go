package proc

import (
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// groupSys is the job object the process and its children run in. The
// job kills them all when its last handle, held by this process, closes:
// when this process ends, however it ends.
type groupSys struct {
	job windows.Handle
}

// Prepare makes cmd start a process group of its own.
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
}

func (s *groupSys) attach(cmd *exec.Cmd) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("proc: job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("proc: job object: %w", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("proc: open process %d: %w", cmd.Process.Pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(job)
		return fmt.Errorf("proc: job object: %w", err)
	}
	s.job = job
	return nil
}

// Terminate stops every process of the group: Windows has no signal a
// console-less child can be asked to stop with, so it is Kill.
func (g *Group) Terminate() error { return g.Kill() }

// Kill stops every process of the group at once.
func (g *Group) Kill() error {
	if g.sys.job == 0 {
		return g.cmd.Process.Kill()
	}
	return windows.TerminateJobObject(g.sys.job, 1)
}

// Pause is not supported on Windows.
func (g *Group) Pause() error { return ErrUnsupported }

// Resume is not supported on Windows.
func (g *Group) Resume() error { return ErrUnsupported }
