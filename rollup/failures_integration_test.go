package rollup

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/testkit/testio"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// TestOneAggregateFailingFreezesNothing: Firestore refuses, for good, the
// query of one aggregate (a filtered count whose index it lacks). Every
// event is answered, not held to be sent again; the post's other
// aggregates and its likes are written as ever; the refused one keeps the
// value of the first fold (which read the one comment there was, hidden,
// and counted it with no query); and the log says which document, which
// aggregate and why, at a severity the fold-failure alarm counts.
func TestOneAggregateFailingFreezesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, l, name := newPost(t, "posts:likes,comments=count(comments),shown=count(comments where hidden == false),score=sum(comments.score)")
	client := emulatortest.Refusing(t, func(q *firestorepb.StructuredQuery) error {
		if strings.Contains(q.GetWhere().String(), `field_path:"hidden"`) {
			return status.Error(codes.FailedPrecondition, "The query requires an index. You can create it here: https://console.firebase.google.com/...")
		}
		return nil
	})
	var logs testio.Buffer
	h := New(client, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: testWindow, Logger: cloudlog.New(&logs, slog.LevelInfo)})
	comments := client.Doc(name).Collection("comments")
	for i := range 3 {
		ref := comments.NewDoc()
		if _, err := ref.Create(ctx, map[string]any{"hidden": i == 0, "score": int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		snap, err := ref.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Handle(ctx, eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.Snapshot(snap))); err != nil {
			t.Fatalf("a comment's event: %v; want it answered, the failure being for good", err)
		}
	}
	adder := adder.New(client, adder.Config{Layout: l})
	likes := core.Count{Field: "likes", Shard: "likes"}
	if _, _, err := adder.Add(ctx, name, likes, 1); err != nil {
		t.Fatal(err)
	}
	life := emulatortest.Life(t, l, client, name)
	shard, err := l.Shard(client, name, life, 0).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.Snapshot(shard))); err != nil {
		t.Fatalf("a like's event: %v", err)
	}
	snap, err := client.Doc(name).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := snap.Data()
	if got["likes"] != int64(1) || got["comments"] != int64(3) || got["score"] != int64(6) || got["shown"] != int64(0) {
		t.Errorf("post = likes %v, comments %v, score %v, shown %v; want 1, 3, 6 and shown kept at 0", got["likes"], got["comments"], got["score"], got["shown"])
	}
	log := logs.String()
	for _, want := range []string{`"severity":"ERROR"`, `"message":"rollup: cannot fold an aggregate`, `"aggregate":"shown"`, `"counter":"` + name + `"`, "requires an index"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %s:\n%s", want, log)
		}
	}
}
