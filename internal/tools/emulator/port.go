package emulator

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// The kernel's own picks (each outgoing connection, each listener on
// port 0) come from its ephemeral range; a port found free there may be
// taken by one of them before whoever it was found for binds it, as a
// test's bridge port once was while its emulator started. FreePort picks
// below that range instead, at random, and never the same port twice in
// one process.
var ports = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// lowest is the first port FreePort picks from.
const lowest = 10000

// FreePort answers a port on host that nothing listens on now, from below
// the range the kernel picks ports from itself, so that none of its picks
// takes it before the caller (or the process the caller starts) binds it.
func FreePort(host string) (int, error) {
	ports.Lock()
	defer ports.Unlock()
	top := ephemeralLow()
	for range 1000 {
		p := lowest + rand.IntN(top-lowest)
		if ports.given[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			continue
		}
		l.Close()
		ports.given[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("emulator: no free port on %s from %d to %d", host, lowest, top-1)
}

// ephemeralLow is the first port of the kernel's ephemeral range: Linux
// says, elsewhere 32768 (Linux's default; below the IANA range, 49152, of
// other systems).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= lowest+1000 {
		return 32768
	}
	return n
}
