package bytime

import (
	"testing"
	"time"
)

// TestTrendReadsAsDeclared: a trend's weights and half-life read as a
// declaration writes them.
func TestTrendReadsAsDeclared(t *testing.T) {
	w := Window{Kind: KindTrend, Terms: []Term{{Field: "likes", Weight: 1}, {Field: "views", Weight: 0.1}, {Field: "shares", Weight: 2.5}}}
	if got := w.Weighs(); got != "likes + views/10 + 2.5*shares" {
		t.Errorf("Weighs: %q", got)
	}
	for d, want := range map[time.Duration]string{6 * time.Hour: "6h", 90 * time.Minute: "90m", 48 * time.Hour: "2d", 7 * 24 * time.Hour: "1w", 90 * time.Second: "1m30s"} {
		if w.HalfLife = d; w.HalvesEvery() != want {
			t.Errorf("HalvesEvery(%v) = %q, want %q", d, w.HalvesEvery(), want)
		}
	}
}
