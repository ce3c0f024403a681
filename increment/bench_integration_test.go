package increment

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/cputime"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// BenchmarkHandler is one whole increment: parse, cached shard count, and the
// shard write to the emulator; with the CPU time it took.
func BenchmarkHandler(b *testing.B) {
	c := emulatortest.Client(b)
	h := New(c, Config{Layout: layouttest.Public(core.Default()), AutoCreate: true})
	body := `{"counter":"bench-handler","by":1}`
	b.ReportAllocs()
	cpu := cputime.Used()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	// The process's CPU time, its gRPC client's included (the emulator is
	// a process of its own): what an Increment instance spends on one.
	b.ReportMetric(float64((cputime.Used()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}
