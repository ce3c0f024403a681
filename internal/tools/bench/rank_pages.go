package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// pageSize is the bench's page of a board: the web's default.
const pageSize = 20

// pageOffsets are where the bench reads pages of a board of n posts: the
// top, the next, then evenly down to the last page, and one past it.
func pageOffsets(n int) []int {
	out := []int{0, pageSize}
	for i := 1; i < 10; i++ {
		out = append(out, n*i/10+7) // off the cells' and parts' tops, where most pages start
	}
	return append(out, n-pageSize, n)
}

// pages reads a page of the settled board at each of pageOffsets, and
// checks each against every post's likes read at its read time, sorted
// (ties by path, from the last): their paths and places.
func (run *rankRun) pages(ctx context.Context, r *report.RankRun) error {
	var reads []int
	var took []time.Duration
	for _, offset := range pageOffsets(run.n) {
		before := run.rankOps.Reads()
		began := time.Now()
		p, err := run.ranker.Board(ctx, rankColl, rankField, offset, pageSize)
		if err != nil {
			return fmt.Errorf("bench: a page at %d: %w", offset, err)
		}
		took = append(took, time.Since(began))
		reads = append(reads, p.Reads)
		r.Pages++
		if billed := int(run.rankOps.Reads() - before); billed != p.Reads {
			return fmt.Errorf("bench: a page at %d told %d reads and cost %d", offset, p.Reads, billed)
		}
		posts, err := likesAt(ctx, run.fs.Collection(rankColl), p.AsOf)
		if err != nil {
			return fmt.Errorf("bench: the truth of a page at %d: %w", offset, err)
		}
		slices.SortFunc(posts, func(a, b likedPost) int { return cmp.Or(cmp.Compare(b.likes, a.likes), cmp.Compare(b.doc, a.doc)) })
		exact := p.Of == int64(len(posts)) && len(p.Documents) == max(min(pageSize, len(posts)-offset), 0)
		for i, d := range p.Documents {
			at := offset + i
			first := slices.IndexFunc(posts, func(x likedPost) bool { return x.likes == posts[at].likes })
			exact = exact && d.Document == posts[at].doc && d.Rank == int64(first+1)
		}
		if exact {
			r.PagesExact++
		}
		run.o.progress(fmt.Sprintf("%d posts: pages", run.n), fmt.Sprintf("%d read", r.Pages), time.Since(began), false)
	}
	slices.Sort(reads)
	slices.Sort(took)
	r.PageReadsP50, r.PageReadsMax, r.PageP50MS = reads[len(reads)/2], reads[len(reads)-1], ms(percentile(took, 0.5))
	return nil
}
