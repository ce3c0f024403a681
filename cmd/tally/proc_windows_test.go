package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// alive reports whether pid is a live process.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	const stillActive = 259
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}

// kill kills the process pid.
func kill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// killGroup kills the process pid: its children are in its job object.
func killGroup(pid int) { kill(pid) }
