package rollup

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/testkit/testio"
	"github.com/tallycounters/tally/internal/tools/eventarc"
	"github.com/tallycounters/tally/internal/tools/opcount"
	"github.com/tallycounters/tally/internal/trigger"
)

// createdEvent is the event of the creation of the document at name, as
// Eventarc sends it, built from the document as the emulator holds it,
// dated at its creation.
func createdEvent(t *testing.T, name string) event.Event {
	t.Helper()
	snap, err := emulatortest.Client(t).Doc(name).Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	doc := eventarc.Snapshot(snap)
	doc.Updated = doc.Created // the document as its creation wrote it
	e := eventarc.Written(emulatortest.Project, "(default)", nil, doc)
	e.SetType(trigger.Created)
	return e
}

// TestCreatedGetsEveryCount: a post the app creates gets every count and
// aggregate at once, at its true value: 0 for its likes and views, what
// its comments hold for its aggregates, also when it is created after
// them or again over them; a count the app gave it stays. Its creation
// costs one write of the post, no read for its counts, and one read for
// each aggregated collection of no more than a thousand children (the
// children read, for a sum or an average).
func TestCreatedGetsEveryCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, l, name := newPost(t, allForms)
	ops := &opcount.Ops{}
	counted, err := opcount.Client(ctx, os.Getenv("FIRESTORE_EMULATOR_HOST"), emulatortest.Project, ops)
	if err != nil {
		t.Fatal(err)
	}
	defer counted.Close()
	var logs testio.Buffer
	h := New(counted, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: testWindow, Logger: cloudlog.New(&logs, slog.LevelDebug)})
	defer func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	}()
	post := func() map[string]any {
		t.Helper()
		snap, err := client.Doc(name).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return snap.Data()
	}
	ops.Reset()
	if err := h.Handle(ctx, createdEvent(t, name)); err != nil {
		t.Fatal(err)
	}
	got := post()
	want := map[string]any{"likes": int64(0), "comments": int64(0), "shown": int64(0), "score": int64(0), "stars": nil}
	for f, w := range want {
		if v, ok := got[f]; !ok || v != w {
			t.Errorf("a new post: %s = %v (held %v), want %v", f, v, ok, w)
		}
	}
	reads, writes := ops.Reads(), ops.Writes()
	t.Logf("a new post's first fold: %d reads, %d writes", reads, writes)
	if writes > 1 || reads > 3 {
		t.Errorf("a new post's counts cost %d reads and %d writes; want a read of the post, one read for its comments, and its one write", reads, writes)
	}

	// Created after its comments, and again over them, with likes the app set.
	comments := client.Doc(name).Collection("comments")
	for i := range 5 {
		if _, err := comments.NewDoc().Create(ctx, map[string]any{"score": int64(i), "hidden": i == 0, "stars": 4.0}); err != nil {
			t.Fatal(err)
		}
	}
	for _, again := range []map[string]any{{"title": "again"}, {"title": "and again", "likes": int64(0)}} {
		if _, err := client.Doc(name).Delete(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Doc(name).Create(ctx, again); err != nil {
			t.Fatal(err)
		}
		if err := h.Handle(ctx, createdEvent(t, name)); err != nil {
			t.Fatal(err)
		}
		check(t, client, name, comments.Query, "created over its comments")
		if got := post(); got["likes"] != int64(0) || got["title"] != again["title"] {
			t.Errorf("created over its comments: likes %v, title %v", got["likes"], got["title"])
		}
	}
	// A creation's event delivered again, late, changes nothing and costs no write.
	time.Sleep(2 * testWindow)
	ops.Reset()
	if err := h.Handle(ctx, createdEvent(t, name)); err != nil {
		t.Fatal(err)
	}
	if ops.Writes() != 0 {
		t.Errorf("a creation's event delivered again wrote %d times", ops.Writes())
	}
}
