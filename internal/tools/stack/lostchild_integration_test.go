package stack

import (
	"context"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestChildTooBigForAnEvent: a comment of about 1 MB (a valid Firestore
// document) with a score, whose event the bridge refuses at Eventarc's
// 512 KiB, as Eventarc would not deliver it, is counted in every
// aggregate, its sum and average included, by the next fold of its part:
// the next small comment's. The part finds its records one short of its
// children and reads them again. Before, the count was right and the sum
// and the average left it out until a reconcile.
func TestChildTooBigForAnEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, client, doc := aggregatedPost(t)
	comments := doc.Collection("comments")
	if _, err := comments.Doc("a-small").Create(ctx, map[string]any{"score": int64(1), "stars": int64(2), "hidden": false}); err != nil {
		t.Fatal(err)
	}
	settled(t, doc, truth(t, client, comments.Query))
	refused := s.Bridge.Stats().Refused
	if _, err := comments.Doc("b-huge").Create(ctx, map[string]any{"score": int64(1000), "stars": int64(5), "hidden": false,
		"text": strings.Repeat("x", 1_000_000)}); err != nil {
		t.Fatal(err)
	}
	emulatortest.Until(t, "the bridge to refuse the huge comment's event", func() (any, bool) {
		st := s.Bridge.Stats()
		return st, st.Refused > refused
	})
	if _, err := comments.Doc("c-small").Create(ctx, map[string]any{"score": int64(1), "stars": int64(2), "hidden": true}); err != nil {
		t.Fatal(err)
	}
	want := truth(t, client, comments.Query)
	if want["score"] != int64(1002) || want["comments"] != int64(3) {
		t.Fatalf("Firestore's own aggregation: %v; want 3 comments scoring 1002", want)
	}
	settled(t, doc, want)
}
