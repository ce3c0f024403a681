package stack

import (
	"context"
	"testing"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestNewPostInTheFeed: a post the app creates, through the emulator's
// own delivery of its creation's event, gets every count and aggregate,
// so that the README's feed, ordered by comments, shows it; one created
// after its comments holds them at once, with no comment written after.
func TestNewPostInTheFeed(t *testing.T) {
	t.Parallel()
	_, client := startCounts(t, aggregateForms)
	ctx := context.Background()
	fresh := client.Collection("posts").Doc(emulatortest.ID(t) + "-new")
	if _, err := fresh.Create(ctx, map[string]any{"title": "new"}); err != nil {
		t.Fatal(err)
	}
	settled(t, fresh, map[string]any{"likes": int64(0), "views": int64(0), "comments": int64(0), "shown": int64(0), "score": int64(0)})
	feed, err := client.Collection("posts").OrderBy("comments", firestore.Desc).Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range feed {
		found = found || d.Ref.ID == fresh.ID
	}
	if !found {
		t.Errorf("the feed ordered by comments leaves out the new post (%d posts)", len(feed))
	}

	late := client.Collection("posts").Doc(emulatortest.ID(t) + "-late")
	for i := range 4 {
		if _, err := late.Collection("comments").NewDoc().Create(ctx, map[string]any{"score": int64(i), "hidden": i == 0, "stars": 5}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := late.Create(ctx, map[string]any{"title": "late"}); err != nil {
		t.Fatal(err)
	}
	settled(t, late, truth(t, client, late.Collection("comments").Query))
}
