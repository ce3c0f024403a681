package emulator

import (
	"net"
	"testing"
)

// TestFreePortBelowTheKernelsPicks: the ports FreePort answers are below
// every port the kernel picks itself, and each answered once, while the
// kernel's picks go on.
func TestFreePortBelowTheKernelsPicks(t *testing.T) {
	low := ephemeralLow()
	seen := map[int]bool{}
	for range 200 {
		kernels, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer kernels.Close()
		p, err := FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if p < lowest || p >= low || p >= kernels.Addr().(*net.TCPAddr).Port || seen[p] {
			t.Fatalf("FreePort answered %d (the kernel's range from %d, its pick %v, answered before: %v)", p, low, kernels.Addr(), seen[p])
		}
		seen[p] = true
	}
}
