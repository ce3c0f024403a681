package stack

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/extworker"
)

// TestExtensionCountersOnTheStack: with TALLY_EXTENSION_COUNTERS, the
// emulator's own delivery of the extension's shard writes brings Rollup's
// moves, on a named database, at any depth: 40 clients of the
// extension's protocol, each on a shard of its own, like a post whose
// likes TALLY_COUNTS declares with a window (each shard also adding to a
// nested stats.views, a field tally does not declare), a post two levels
// down, and a page that does not exist yet; Increment adds likes to the
// same post. The post's likes, today's likes and views, the deeper post's
// and the page's visits all come out exact, and no shard is left.
func TestExtensionCountersOnTheStack(t *testing.T) {
	t.Parallel()
	paths := emulatortest.RequirePaths(t)
	s, _ := startConfig(t, paths, envConfig(t, map[string]string{
		"TALLY_DATABASE":           "counted",
		"TALLY_EXTENSION_COUNTERS": "posts:likes,stats.views;users/*/posts:likes;pages:visits",
		"TALLY_COUNTS":             "posts:likes,likes_today=likes per day",
		"TALLY_ROLLUP_WINDOW":      docsWindow.String(),
	}))
	fs := s.Functions.Client
	ctx := context.Background()
	liked, deep, page := fs.Doc("posts/"+emulatortest.ID(t)), fs.Doc("users/u1/posts/p2"), fs.Doc("pages/home")
	if _, err := liked.Create(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			shard := fmt.Sprintf("%08x-client", i*7919)
			for range 5 {
				for _, w := range []struct {
					doc   *firestore.DocumentRef
					field string
				}{{liked, "likes"}, {liked, "stats.views"}, {deep, "likes"}, {page, "visits"}} {
					if _, err := extworker.Increment(ctx, w.doc.Collection(extension.Collection).Doc(shard), w.field, 1); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	for range 3 {
		if code, body := increment(t, s, `{"counter":"posts/`+liked.ID+`","field":"likes"}`); code != http.StatusOK {
			t.Fatalf("increment: %d %s", code, body)
		}
	}
	wg.Wait()
	// A client's views come after its likes, on the same shard: a move may
	// take its likes a quiet time before its last view, which the next
	// move takes. The deep post and the page are made by the first move of
	// their shards, which may come after the post's last.
	for _, w := range []struct {
		doc   *firestore.DocumentRef
		field firestore.FieldPath
		want  int64
	}{{liked, firestore.FieldPath{"likes"}, 203}, {liked, firestore.FieldPath{"likes_today"}, 203}, {liked, firestore.FieldPath{"stats", "views"}, 200},
		{deep, firestore.FieldPath{"likes"}, 200}, {page, firestore.FieldPath{"visits"}, 200}} {
		emulatortest.Until(t, fmt.Sprintf("%s's %v at %d", w.doc.Path, w.field, w.want), func() (any, bool) {
			snap, err := w.doc.Get(ctx)
			if status.Code(err) == codes.NotFound {
				return "no document yet", false
			}
			if err != nil {
				return err, false
			}
			v, _ := snap.DataAtPath(w.field)
			return v, v == w.want
		})
	}
	waitDelivered(t, s)
	for _, d := range []*firestore.DocumentRef{liked, deep, page} {
		if left, err := d.Collection(extension.Collection).DocumentRefs(ctx).GetAll(); err != nil || len(left) != 0 {
			t.Errorf("%s has %d shards left (%v); want none", d.Path, len(left), err)
		}
	}
}
