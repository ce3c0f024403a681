package rollup

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// TestChildGoneBeforeAnyFold: a game made and deleted before any fold
// read it, its part holding no child, has both its events answered (the
// deletion's, then its creation's, late), each by one fold, and the sum
// stays exact. A fold that scans a part reads every child of it, gone
// ones too: it covers their events.
func TestChildGoneBeforeAnyFold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := emulatortest.Client(t)
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("players:points=sum(games.points)"); err != nil {
		t.Fatal(err)
	}
	var folds atomic.Int64
	h := New(client, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: testWindow, OnFold: func(FoldInfo) { folds.Add(1) }})
	name := "players/" + emulatortest.ID(t)
	if _, err := client.Doc(name).Create(ctx, map[string]any{"name": "ada"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, createdEvent(t, name)); err != nil {
		t.Fatal(err)
	}
	game := client.Collection(name + "/games").NewDoc()
	if _, err := game.Create(ctx, map[string]any{"points": int64(10)}); err != nil {
		t.Fatal(err)
	}
	snap, err := game.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := game.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		name string
		e    event.Event
	}{
		{"the deletion", eventarc.Written(emulatortest.Project, "(default)", eventarc.Snapshot(snap), nil)},
		{"the creation, late", eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.Snapshot(snap))},
	} {
		time.Sleep(2 * testWindow)
		folds.Store(0)
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := h.Handle(cctx, e.e)
		cancel()
		if n := folds.Load(); err != nil || n > 1 {
			t.Errorf("%s: %v after %d folds; want it answered by one", e.name, err, n)
		}
	}
	if snap, err := client.Doc(name).Get(ctx); err != nil || snap.Data()["points"] != int64(0) {
		t.Errorf("points = %v (%v), want 0", snap.Data()["points"], err)
	}
}
