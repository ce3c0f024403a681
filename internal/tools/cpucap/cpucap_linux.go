package cpucap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// period is the CPU controller's accounting period: a confined process
// runs at most share × period in each.
const period = 100_000 // µs

// root is where the cgroup file systems are mounted.
var root = "/sys/fs/cgroup"

// Confine moves process pid into a cgroup of its own that lets it use at
// most share of one CPU (0 < share ≤ 1).
func Confine(pid int, share float64) (*Cap, error) {
	if err := checkShare(share); err != nil {
		return nil, err
	}
	quota := strconv.Itoa(max(1000, int(share*period)))
	name := "tally-cpucap-" + strconv.Itoa(pid)
	var c *Cap
	var settings [][2]string
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil { // v2
		c = &Cap{dir: filepath.Join(root, name)}
		settings = [][2]string{{"cpu.max", quota + " " + strconv.Itoa(period)}}
		// The controller must be on for the root's children; it may
		// already be, and a write that turns it on again is harmless.
		os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte("+cpu"), 0)
	} else {
		c = &Cap{dir: filepath.Join(root, "cpu", name)}
		settings = [][2]string{{"cpu.cfs_period_us", strconv.Itoa(period)}, {"cpu.cfs_quota_us", quota}}
	}
	if err := os.Mkdir(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("cpucap: make a cgroup (this needs a cgroup file system it may write, as root has in most containers): %w", err)
	}
	for _, s := range append(settings, [2]string{"cgroup.procs", strconv.Itoa(pid)}) {
		if err := os.WriteFile(filepath.Join(c.dir, s[0]), []byte(s[1]), 0); err != nil {
			c.Remove()
			return nil, fmt.Errorf("cpucap: set %s: %w", s[0], err)
		}
	}
	return c, nil
}

// Remove deletes the cgroup, once its process has ended.
func (c *Cap) Remove() error {
	if err := os.Remove(c.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cpucap: remove %s: %w", c.dir, err)
	}
	return nil
}

// Throttled reports how long the CPU controller held the process back
// for its share so far, where the cgroup tells (v2's cpu.stat
// throttled_usec, v1's throttled_time).
func (c *Cap) Throttled() (time.Duration, bool) {
	b, err := os.ReadFile(filepath.Join(c.dir, "cpu.stat"))
	if err != nil {
		return 0, false
	}
	var key string
	var v int64
	for line := range strings.Lines(string(b)) {
		if _, err := fmt.Sscan(line, &key, &v); err != nil {
			continue
		}
		switch key {
		case "throttled_usec":
			return time.Duration(v) * time.Microsecond, true
		case "throttled_time": // ns
			return time.Duration(v), true
		}
	}
	return 0, false
}
