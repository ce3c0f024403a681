package bench

import (
	"context"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestBenchRank runs bench --rank on a small board: every like is
// answered, ranks are read under load, each checked against the posts at its read time and exact, in at
// most three reads, and no summary or post takes two writes in a second;
// pages of the board, from its top to past its end, are exact too.
func TestBenchRank(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	rep, err := RunRank(context.Background(), RankOptions{
		Setup: Setup{Project: emulatortest.Project, Emulator: paths, Duration: 6 * time.Second, Rate: 50, DuplicateRate: 0.2, DelayRate: 0.2},
		Docs:  []int{300},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Runs[0]
	if r.Refused != 0 {
		t.Errorf("Increment refused %d of the bench's likes", r.Refused)
	}
	if r.Samples == 0 || r.Exact != r.Samples || r.SampleErrors != 0 {
		t.Errorf("%d ranks checked, %d exact, %d failed: want every one exact", r.Samples, r.Exact, r.SampleErrors)
	}
	if r.Pages != len(pageOffsets(300)) || r.PagesExact != r.Pages || r.PageReadsMax > 1+pageSize+rank.CrowdPart {
		t.Errorf("%d pages read, %d exact, at most %d reads: want every one exact", r.Pages, r.PagesExact, r.PageReadsMax)
	}
	if r.ReadsMax > 3 || r.MaxExtraFold > 1 || r.SummaryMaxPerS > 1 || r.PostMaxPerS > 1 || r.Folds == 0 {
		t.Errorf("run %+v: want at most 3 reads a rank, 1 move a fold, 1 write a second", r)
	}
}
