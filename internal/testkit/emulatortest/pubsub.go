package emulatortest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/tztest"
	"github.com/tallycounters/tally/internal/tools/pubsubemu"
)

// PubSub starts a Pub/Sub emulator for t, beside the Firestore emulator
// (PUBSUB_EMULATOR_HOST, if set, names one to use instead), and stops it
// when t ends: it returns its host:port. A test without one fails, saying
// how to install it.
func PubSub(t testing.TB) string {
	t.Helper()
	Require(t)
	if h := os.Getenv(pubsubemu.EnvHost); h != "" {
		return h
	}
	paths := RequirePaths(t)
	jar, err := pubsubemu.Locate(paths)
	if err != nil {
		t.Fatal(err)
	}
	e, err := pubsubemu.Start(context.Background(), paths.Java, jar, "127.0.0.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	return e.Host
}

// DueDocs makes n documents of a collection group of the test's own
// (users/{u}/p{id}), counted with windows of hours of a zone whose hours
// are step long (tztest.Cycle), each with a view folded, and returns
// once the windows of each are due: the layout and the documents' names,
// sorted.
func DueDocs(t testing.TB, fs *firestore.Client, n int, step time.Duration) (core.Layout, []string) {
	t.Helper()
	ctx := context.Background()
	first, changes := tztest.Cycle(time.Now(), step, 10*time.Minute)
	zone, err := tztest.Location("Tally/Cycle", first, changes)
	if err != nil {
		t.Fatal(err)
	}
	l := core.Default()
	group := "p" + ID(t)
	if l.Docs, err = core.ParseCounts("users/*/" + group + ":views,views_h=views per hour keep 5"); err != nil {
		t.Fatal(err)
	}
	l.Zone = zone
	f := fold.NewFolder(fs, l, 100*time.Millisecond)
	var names []string
	for i := range n {
		name := fmt.Sprintf("users/u%d/%s/d%03d", i%3, group, i)
		if _, err := fs.Doc(name).Create(ctx, map[string]any{"title": "a post"}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Shard(fs, name, Life(t, l, fs, name), 0).Set(ctx, map[string]any{"views": firestore.Increment(1)}, firestore.MergeAll); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Fold(ctx, name); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	// Each fold set its next_boundary to the end of its bucket: at most
	// two starts from now.
	for range 2 {
		next := time.Now()
		for _, ch := range changes {
			if ch.At.After(next) {
				next = ch.At
				break
			}
		}
		time.Sleep(time.Until(next.Add(100 * time.Millisecond)))
	}
	slices.Sort(names)
	return l, names
}
