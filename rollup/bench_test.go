package rollup

import (
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

func BenchmarkDecode(b *testing.B) {
	t0 := time.Now()
	e := eventarc.Written("demo", "(default)",
		eventarc.IntDoc("counters/likes/shards/3", "count", 41, t0), eventarc.IntDoc("counters/likes/shards/3", "count", 42, t0.Add(time.Millisecond)))
	d := decoder{Layout: core.Default(), Project: "demo"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decode(e, t0); err != nil {
			b.Fatal(err)
		}
	}
}
