package main

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestProgressOnATerminalOfNoWidth: a pseudo-terminal nobody sized (as a
// program driving the bench through one may leave it) gets the lines a
// file gets, not bars it cannot draw; sized, it gets bars.
func TestProgressOnATerminalOfNoWidth(t *testing.T) {
	t.Parallel()
	tty := openPTY(t)
	if g := newProgress(tty); g.p != nil {
		t.Error("a terminal of no width got bars")
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
		t.Fatal(err)
	}
	g := newProgress(tty)
	if g.p == nil {
		t.Error("a terminal 120 columns wide got no bars")
	} else {
		g.p.Shutdown()
	}
}

// openPTY opens a new pseudo-terminal's far end, of no size, closed when
// the test ends.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}
