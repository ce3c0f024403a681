package counter_test

import (
	"context"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestRemoveOrphansTakesTheLivesRecords: once a counted document is gone,
// Reconcile removes its lives whole, each life's own document (the record
// of moves out of it, package lives) with its shards.
func TestRemoveOrphansTakesTheLivesRecords(t *testing.T) {
	t.Parallel()
	coll := "o" + emulatortest.ID(t)
	c, fs, l := docsClient(t, coll+":likes")
	ctx := context.Background()
	name := coll + "/gone"
	if _, err := fs.Doc(name).Create(ctx, map[string]any{"title": "soon gone"}); err != nil {
		t.Fatal(err)
	}
	life := emulatortest.Life(t, l, fs, name)
	if err := c.Add(ctx, name, "likes", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lives(fs, name).Doc(life).Set(ctx, map[string]any{"into": "1", "moved": map[string]any{"likes": 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Doc(name).Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	left, err := l.Lives(fs, name).DocumentRefs(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("after RemoveOrphans, %s keeps lives %v", name, left)
	}
}
