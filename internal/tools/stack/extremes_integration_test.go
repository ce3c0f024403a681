package stack

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// extremesSpec declares a player's best and worst game, and best ranked
// game, and ranks players by their best.
const extremesSpec = `players:best=max(games.points),worst=min(games.points),` +
	`top=max(games.points where ranked == true),rank(best)`

// TestBestAndWorstEndToEnd: 1,000 games created, edited and deleted at
// once, through the emulator's own delivery of their events to Rollup,
// leave a player's best and worst (and best ranked) game equal to a scan
// of its games: finite numbers only, integers and doubles as the games
// hold them; deleting the game that holds the best brings the next best;
// and the player is ranked by it.
func TestBestAndWorstEndToEnd(t *testing.T) {
	t.Parallel()
	cfg, client := startCounts(t, extremesSpec)
	ctx := context.Background()
	player := client.Collection("players").Doc(emulatortest.ID(t))
	if _, err := player.Create(ctx, map[string]any{"name": "ada"}); err != nil {
		t.Fatal(err)
	}
	games := player.Collection("games")

	// 400 games at once, then 600 edits and deletes of them at once; a
	// few hold what is no finite number (the rules refuse it; this
	// client writes past them).
	points := func() any {
		switch n := rand.N(20); {
		case n == 0:
			return "lost"
		case n == 1:
			return math.Inf(1)
		case n < 10:
			return rand.N(int64(2000)) - 1000
		default:
			return float64(rand.N(4000)-2000) / 4
		}
	}
	refs := make([]*firestore.DocumentRef, 400)
	for i := range refs {
		refs[i] = games.NewDoc()
	}
	run := func(n int, op func(i int) error) {
		var wg sync.WaitGroup
		work := make(chan int)
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					if err := op(i); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		for i := range n {
			work <- i
		}
		close(work)
		wg.Wait()
	}
	run(len(refs), func(i int) error {
		_, err := refs[i].Create(ctx, map[string]any{"points": points(), "ranked": i%3 != 0})
		return err
	})
	run(600, func(i int) error {
		ref := refs[rand.N(len(refs))]
		var err error
		switch i % 4 {
		case 0:
			_, err = ref.Delete(ctx)
		case 1:
			_, err = ref.Set(ctx, map[string]any{"ranked": rand.N(2) == 0}, firestore.MergeAll)
		default:
			_, err = ref.Set(ctx, map[string]any{"points": points()}, firestore.MergeAll)
		}
		return err
	})
	settled(t, player, scanExtremes(t, games))

	// A best game of all, then deleted: the next best is the best again.
	champion := games.NewDoc()
	if _, err := champion.Create(ctx, map[string]any{"points": int64(5000), "ranked": true}); err != nil {
		t.Fatal(err)
	}
	want := scanExtremes(t, games)
	if want["best"] != int64(5000) {
		t.Fatalf("the scan's best is %v, not the champion's", want["best"])
	}
	settled(t, player, want)
	if _, err := champion.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	got := settled(t, player, scanExtremes(t, games))
	t.Logf("player after the best game's deletion: %v", got)

	cl := counter.New(client, counter.Options{Layout: cfg.Layout})
	if place, err := cl.Rank(ctx, "players/"+player.ID, "best"); err != nil || place.Rank != 1 || place.Of != 1 {
		t.Errorf("Rank(best) = %+v, %v; want #1 of 1", place, err)
	}
}

// scanExtremes reads every game, and says what a player's best, worst
// and best ranked game are (nil over none).
func scanExtremes(t *testing.T, games *firestore.CollectionRef) map[string]any {
	t.Helper()
	var best, worst, top any
	it := games.Documents(context.Background())
	defer it.Stop()
	for {
		snap, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		v := snap.Data()["points"]
		if !finiteNumber(v) {
			continue
		}
		if best == nil || numberAbove(v, best) {
			best = v
		}
		if worst == nil || numberAbove(worst, v) {
			worst = v
		}
		if snap.Data()["ranked"] == true && (top == nil || numberAbove(v, top)) {
			top = v
		}
	}
	return map[string]any{"best": best, "worst": worst, "top": top}
}

// finiteNumber reports whether v is an integer or a finite double.
func finiteNumber(v any) bool {
	switch x := v.(type) {
	case int64:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return false
}

// numberAbove reports whether a is greater than b, or equal to it and an
// integer where b is a double (the values here are within 2^53).
func numberAbove(a, b any) bool {
	fa, fb := asFloat(a), asFloat(b)
	_, aInt := a.(int64)
	_, bInt := b.(int64)
	return fa > fb || fa == fb && aInt && !bInt
}

func asFloat(v any) float64 {
	if i, ok := v.(int64); ok {
		return float64(i)
	}
	return v.(float64)
}
