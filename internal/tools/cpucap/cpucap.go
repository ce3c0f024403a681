// Package cpucap confines a process to a share of one CPU, as Cloud Run
// confines an instance of less than one vCPU: a Linux cgroup whose CPU
// controller lets it run for share × 100 ms of every 100 ms period, and
// holds it until the next period once that is spent. It needs a cgroup
// file system this process may write (cgroup v2, or v1's cpu controller),
// which a root user in a container usually has; Confine says so when not.
package cpucap

import "fmt"

// Cap is one process's cgroup.
type Cap struct{ dir string }

// checkShare refuses a share of a CPU Confine cannot give.
func checkShare(share float64) error {
	if share <= 0 || share > 1 {
		return fmt.Errorf("cpucap: share %g: want more than 0, at most 1", share)
	}
	return nil
}
