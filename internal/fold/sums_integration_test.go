package fold_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestSumNowFailsWhereShardByShardFails: where the shards' sum() is not
// an int64 (one holds a fraction), the sum is taken shard by shard; if
// that read fails, the sum fails with its error, and no fold is made of
// what it had added before it failed. Without it a fold would write a
// count short of its shards.
func TestSumNowFailsWhereShardByShardFails(t *testing.T) {
	t.Parallel()
	refused := status.Error(codes.Unavailable, "the shards cannot be read now")
	fs := emulatortest.RefusingQueries(t, func(*firestorepb.StructuredQuery) error { return refused })
	ctx := context.Background()
	l, id := core.Default(), "sums-"+uuid.NewString()
	for n, v := range []any{int64(4), 0.5, int64(3)} {
		if _, err := l.Shard(fs, id, "", n).Set(ctx, map[string]any{l.ShardField: v}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := fold.NewFolder(fs, l, time.Second).SumNow(ctx, id, "", time.Time{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("sum %v, error %v; want the shard-by-shard read's error", s.Values, err)
	}

	// The same shards, read: the sum of those it can add, 7.
	s, err = fold.NewFolder(emulatortest.Client(t), l, time.Second).SumNow(ctx, id, "", time.Time{})
	if err != nil || s.Values[0] != 7 || len(s.Skipped) != 1 {
		t.Fatalf("sum %v (skipped %v), error %v; want 7, one shard skipped", s.Values, s.Skipped, err)
	}
}
