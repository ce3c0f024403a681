package lives_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/lives"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestMoveTakesEachStrayOnce: a post gets 3 likes, is deleted, gets 4
// more in its first life (counted nowhere: no post was there), is created
// again, and gets 2 more in its first life (a stale cache's): four movers
// at once, and one more after them, move exactly those 2 into the new
// life; a later stray moves on its own; a move of the post's own life, of
// a later one, or of a post that is gone moves nothing.
func TestMoveTakesEachStrayOnce(t *testing.T) {
	t.Parallel()
	c := emulatortest.Client(t)
	ctx := context.Background()
	coll := "p" + emulatortest.ID(t)
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts(coll + ":likes,views"); err != nil {
		t.Fatal(err)
	}
	name := coll + "/post"
	m := lives.New(c, l, fold.NewFolder(c, l, fold.DefaultSpacing))
	add := func(life string, n int64) time.Time {
		t.Helper()
		wr, err := l.Shard(c, name, life, 1).Set(ctx, adder.ShardFields(l, map[string]int64{"likes": n}, firestore.Delete, firestore.Delete), firestore.MergeAll)
		if err != nil {
			t.Fatal(err)
		}
		return wr.UpdateTime
	}
	create := func() string {
		t.Helper()
		wr, err := c.Doc(name).Create(ctx, map[string]any{"title": "hello"})
		if err != nil {
			t.Fatal(err)
		}
		return l.LifeOf(wr.UpdateTime)
	}
	first := create()
	add(first, 3)
	if _, err := c.Doc(name).Delete(ctx); err != nil {
		t.Fatal(err)
	}
	add(first, 4)
	if moved, err := m.Move(ctx, name, first, time.Now()); err != nil || moved != nil {
		t.Errorf("a move of a post that is gone: %v, %v; want nothing", moved, err)
	}
	second := create()
	last := add(first, 2)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := m.Move(ctx, name, first, last); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if moved, err := m.Move(ctx, name, first, last); err != nil || len(moved) != 0 {
		t.Errorf("a move after the others: %v, %v; want nothing left", moved, err)
	}
	likes := func(want int64) {
		t.Helper()
		snap, err := l.Shard(c, name, second, 0).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := snap.Data()["likes"]; got != want {
			t.Errorf("the new life's shard 0 holds %v likes, want %d", got, want)
		}
	}
	likes(2)
	last = add(first, 1)
	if moved, err := m.Move(ctx, name, first, last); err != nil || moved["likes"] != 1 {
		t.Errorf("a later stray: moved %v, %v; want 1 like", moved, err)
	}
	likes(3)
	for _, life := range []string{second, "9" + second} {
		if moved, err := m.Move(ctx, name, life, last); err != nil || moved != nil {
			t.Errorf("a move of life %s, the post's or a later one: %v, %v; want nothing", life, moved, err)
		}
	}
}
