//go:build !linux

package cpucap

import (
	"errors"
	"time"
)

// Confine needs Linux's cgroups.
func Confine(pid int, share float64) (*Cap, error) {
	if err := checkShare(share); err != nil {
		return nil, err
	}
	return nil, errors.New("cpucap: confining a process to a share of a CPU needs Linux's cgroups")
}

// Remove does nothing: there is no cgroup.
func (c *Cap) Remove() error { return nil }

// Throttled tells nothing.
func (c *Cap) Throttled() (time.Duration, bool) { return 0, false }
