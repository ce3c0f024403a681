//go:build unix

package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestServeSavesAStalledEmulator: serve --data, stopped while its
// emulator is stalled (SIGSTOP) right after two increments, waits for it
// within the bound it says, answers the events that waited on it, folds,
// saves, and exits 0: the next start has the counts. Stalled past
// --save-timeout, it says the data was not saved and exits 1, leaving
// the data saved last as it was. Before, it printed "stopped", exited 0,
// and saved nothing.
func TestServeSavesAStalledEmulator(t *testing.T) {
	emulatortest.Require(t)
	t.Parallel()
	stall := func(pid int, sig syscall.Signal) {
		t.Helper()
		if err := syscall.Kill(-pid, sig); err != nil { // the emulator's process group
			t.Fatal(err)
		}
	}
	restartTotal := func(dir, counter string) int64 {
		t.Helper()
		again, out, stderr := start(t, nil, "serve", "--port", "0", "--data", dir)
		r := waitReady(t, out, stderr)
		got := total(t, r.emulator, counter)
		again.Process.Signal(syscall.SIGTERM)
		waitExit(t, again)
		return got
	}
	t.Run("stalled for 12 s", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cmd, out, stderr := start(t, nil, "serve", "--port", "0", "--data", dir)
		r := waitReady(t, out, stderr)
		for range 2 {
			if !incrementVia(t, r.functions, "kept") {
				t.Fatal("an increment failed")
			}
		}
		stall(r.pid, syscall.SIGSTOP) // the increments' events and folds in flight, or not: either way
		cmd.Process.Signal(syscall.SIGINT)
		time.Sleep(12 * time.Second)
		stall(r.pid, syscall.SIGCONT)
		if code := waitExit(t, cmd); code != 0 {
			t.Fatalf("exit status %d: %s", code, stderr)
		}
		for _, want := range []string{"within 2m0s, however long the emulator takes to answer", "the data is saved in " + dir} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("serve said %q; want %q", stderr, want)
			}
		}
		if got := restartTotal(dir, "kept"); got != 2 {
			t.Errorf("after a restart, the total is %d, want the 2 acknowledged", got)
		}
	})
	t.Run("stalled past --save-timeout", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cmd, out, stderr := start(t, nil, "serve", "--port", "0", "--data", dir)
		r := waitReady(t, out, stderr)
		if !incrementVia(t, r.functions, "kept") {
			t.Fatal("an increment failed")
		}
		waitTotal(t, r.emulator, "kept", 1)
		cmd.Process.Signal(syscall.SIGINT)
		if code := waitExit(t, cmd); code != 0 {
			t.Fatalf("the first run: exit status %d: %s", code, stderr)
		}

		cmd, out, stderr = start(t, nil, "serve", "--port", "0", "--data", dir, "--save-timeout", "5s")
		r = waitReady(t, out, stderr)
		if !incrementVia(t, r.functions, "kept") {
			t.Fatal("an increment failed")
		}
		waitTotal(t, r.emulator, "kept", 2)
		stall(r.pid, syscall.SIGSTOP)
		t.Cleanup(func() { syscall.Kill(-r.pid, syscall.SIGCONT) })
		cmd.Process.Signal(syscall.SIGINT)
		if code := waitExit(t, cmd); code != 1 {
			t.Errorf("exit status %d with the data not saved, want 1: %s", code, stderr)
		}
		if !strings.Contains(stderr.String(), "the data was not saved in "+dir) || strings.Contains(stderr.String(), "tally serve: stopped") {
			t.Errorf("serve said %q; want it to say the data was not saved, and not that it stopped as asked", stderr)
		}
		if !gone(r.pid) {
			t.Errorf("the stalled emulator (pid %d) outlived serve", r.pid)
		}
		if got := restartTotal(dir, "kept"); got != 1 {
			t.Errorf("after a restart, the total is %d, want the 1 saved last", got)
		}
	})
}
