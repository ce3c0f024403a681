package counter_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestNewDeclared: a client given only the database reads the layout and
// fold spacing the functions recorded there, windows among them; where
// nothing is recorded it says so; and the functions' record is written
// again only when it changes.
func TestNewDeclared(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	ctx := context.Background()
	fs := emulatortest.ClientAt(t, os.Getenv("FIRESTORE_EMULATOR_HOST"), "demo-"+strings.ToLower(emulatortest.ID(t))[:20])
	if _, err := counter.NewDeclared(ctx, fs, counter.Options{}); !errors.Is(err, counter.ErrNotDeclared) {
		t.Fatalf("nothing recorded: %v; want ErrNotDeclared", err)
	}
	env := map[string]string{"TALLY_COUNTS": "posts:views,views_today=views per day", "TALLY_ROLLUP_WINDOW": "300ms"}
	if err := counter.Declare(ctx, fs, env, "a test"); err != nil {
		t.Fatal(err)
	}
	first, err := fs.Doc(counter.DeclaredPath).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := counter.Declare(ctx, fs, env, "a test"); err != nil {
		t.Fatal(err)
	}
	if again, _ := fs.Doc(counter.DeclaredPath).Get(ctx); !again.UpdateTime.Equal(first.UpdateTime) {
		t.Errorf("the same settings were written again")
	}
	c, err := counter.NewDeclared(ctx, fs, counter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Doc("posts/p1").Create(ctx, map[string]any{"title": "hi"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(ctx, "posts/p1", "views", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reconcile(ctx, "posts/p1"); err != nil {
		t.Fatal(err)
	}
	v, err := c.Value(ctx, "posts/p1", "views_today")
	if err != nil || v != int64(2) {
		t.Fatalf("views_today: %v, %v; want 2", v, err)
	}
	values, err := c.Values(ctx, "posts/p1")
	if err != nil || values["views"] != int64(2) || values["views_today"] != int64(2) || len(values) != 2 {
		t.Fatalf("values: %v, %v; want views and views_today 2", values, err)
	}
}
