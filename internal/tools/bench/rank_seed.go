package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/rank"
)

// rankColl and rankField are the board bench --rank measures.
const (
	rankColl  = "posts"
	rankField = "likes"
)

// seedLikes are n posts' likes by Zipf's law: the k-th most liked of n
// has n/2/k (so half the posts have none), in a random order of ids.
func seedLikes(n int, r *rand.Rand) []int64 {
	likes := make([]int64, n)
	for k := range n {
		likes[k] = int64(n / 2 / (k + 1))
	}
	r.Shuffle(n, func(i, j int) { likes[i], likes[j] = likes[j], likes[i] })
	return likes
}

// crowdedLikes are n posts' likes spread evenly over four cells of the
// board, from 2^20 (a cell there spans 8,192 integers): n/4 posts in
// each, so that at 10,000 posts and more every cell is crowded.
func crowdedLikes(n int, r *rand.Rand) []int64 {
	likes := make([]int64, n)
	for i := range likes {
		likes[i] = 1<<20 + r.Int64N(4<<13)
	}
	return likes
}

// seedBoard makes n posts with likes as tally would have left them after
// folds, with no event: each post holds its likes and records its cell,
// shard 0 of its life holds the likes, and the board's summary counts
// them, as of after the last write.
func seedBoard(ctx context.Context, fs *firestore.Client, l core.Layout, b rank.Board, likes []int64, progress func(int)) error {
	bw := fs.BulkWriter(ctx)
	jobs := make([]*firestore.BulkWriterJob, len(likes))
	cells := map[int64]int64{}
	for i, v := range likes {
		cell := b.Grid.Cell(float64(v))
		cells[cell]++
		data := map[string]any{"title": "a post", rankField: v, core.FieldBookkeeping: map[string]any{rank.FieldRank: map[string]any{rankField: cell}}}
		var err error
		if jobs[i], err = bw.Create(fs.Doc(seedName(i)), data); err != nil {
			return fmt.Errorf("bench: seed posts: %w", err)
		}
		if i%5000 == 0 {
			progress(i)
		}
	}
	bw.Flush()
	last := time.Time{}
	for i, j := range jobs {
		res, err := j.Results()
		if err != nil {
			return fmt.Errorf("bench: seed %s: %w", seedName(i), err)
		}
		shard := l.Shards(fs, seedName(i), l.LifeOf(res.UpdateTime)).Doc("0")
		if _, err := bw.Create(shard, map[string]any{rankField: likes[i]}); err != nil {
			return fmt.Errorf("bench: seed shards: %w", err)
		}
		if i%5000 == 0 {
			progress(len(likes) + i)
		}
		last = maxTime(last, res.UpdateTime)
	}
	bw.End()
	at := last.Add(time.Millisecond)
	if wait := time.Until(at); wait > 0 {
		time.Sleep(wait)
	}
	return rank.Seed(ctx, fs, b, rank.Summary{Cells: cells, Of: int64(len(likes)), AsOf: at})
}

// seedName is the path of the i-th post seeded.
func seedName(i int) string { return fmt.Sprintf("%s/p%06d", rankColl, i) }

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
