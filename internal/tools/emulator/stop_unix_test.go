//go:build unix

package emulator

import (
	"bufio"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/tools/proc"
)

// TestStopKillsWhatDoesNotExit: a process group that outlives SIGTERM is
// killed after the grace, and Stop counts it stopped (Killed says so), for
// what it held is gone either way.
func TestStopKillsWhatDoesNotExit(t *testing.T) {
	defer func(g time.Duration) { stopGrace = g }(stopGrace)
	stopGrace = 100 * time.Millisecond
	cmd := exec.Command("sh", "-c", `trap "" TERM; echo trapped; while :; do sleep 1; done`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	group, err := proc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "trapped\n" {
		t.Fatalf("the shell said %q, %v", line, err)
	}
	e := &Emulator{cmd: cmd, group: group, said: &Tail{}, done: make(chan struct{})}
	go func() { e.err = cmd.Wait(); close(e.done) }()
	if err := e.Stop(); err != nil {
		t.Errorf("Stop = %v; want the group stopped", err)
	}
	if !e.Killed() {
		t.Errorf("Killed = false for a shell that ignores SIGTERM (it ended with %v)", e.err)
	}
	// Its children go with it: gone once the system has reaped them (a
	// liveness bound).
	for deadline := time.Now().Add(time.Minute); syscall.Kill(-cmd.Process.Pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the process group %d outlived Stop", cmd.Process.Pid)
		}
	}
}
