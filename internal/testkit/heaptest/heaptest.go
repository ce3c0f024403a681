// Package heaptest measures what a structure costs the Go heap, for the
// benchmarks of what each counter an instance has seen costs it.
package heaptest

import (
	"runtime"
	"testing"
)

// PerCounter runs fill, which builds a structure holding n counters and
// returns it, and reports the live heap that structure takes: in all
// (heap-MiB) and per counter (B/counter-seen).
func PerCounter(b *testing.B, n int, fill func() any) {
	before := liveHeap()
	kept := fill()
	heap := liveHeap() - before
	runtime.KeepAlive(kept)
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(heap)/float64(n), "B/counter-seen")
}

// liveHeap is the bytes of heap objects live after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
