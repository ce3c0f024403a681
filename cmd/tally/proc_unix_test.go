//go:build unix

package main

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// alive reports whether pid is a live process (a zombie counts as gone,
// where /proc says so).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || !bytes.Contains(stat, []byte(") Z "))
}

// kill kills the process pid.
func kill(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// killGroup kills the process group whose leader is pid.
func killGroup(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }
