package proc

import "syscall"

// setDeathSignal has the kernel kill the child if this process dies.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
