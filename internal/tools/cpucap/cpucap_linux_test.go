package cpucap

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestConfineHoldsBack confines a busy loop to a tenth of a CPU and reads
// back that the controller held it: the cgroup's own throttle figure, not
// a timing.
func TestConfineHoldsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("TestConfineHoldsBack: -short leaves out what needs a writable cgroup file system")
	}
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c, err := Confine(cmd.Process.Pid, 0.1)
	if err != nil {
		t.Fatalf("%v\n(run the tests as root in a container, or with a cgroup file system this user may write)", err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if err := c.Remove(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
			t.Errorf("the cgroup %s is left: %v", c.dir, err)
		}
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if held, ok := c.Throttled(); !ok {
			t.Fatal("the cgroup tells no throttled time")
		} else if held > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a busy loop confined to a tenth of a CPU was never held back in a minute")
		}
	}
}

func TestConfineRefusesShare(t *testing.T) {
	for _, share := range []float64{0, -1, 1.5} {
		if _, err := Confine(os.Getpid(), share); err == nil {
			t.Errorf("share %g: no error", share)
		}
	}
}
