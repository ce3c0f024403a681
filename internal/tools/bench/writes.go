package bench

import (
	"context"
	"fmt"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/tallycounters/tally/internal/core"
)

// shardWrites is how many writes the shards of the counters ids, of the
// guide layout in collection coll, took: each write counts itself on its
// shard (core.FieldWrites), so this is how many trigger events they make,
// however many increments group commit put in each write.
func shardWrites(ctx context.Context, fs *firestore.Client, coll string, ids []string) (int64, error) {
	l := core.Default()
	l.Collection = coll
	var n int64
	for _, id := range ids {
		res, err := l.Shards(fs, id, "").NewAggregationQuery().WithSumPath(l.WritesPath(), "w").Get(ctx)
		if err != nil {
			return 0, fmt.Errorf("bench: the writes of %s: %w", id, err)
		}
		v, _ := res["w"].(*firestorepb.Value)
		n += v.GetIntegerValue()
	}
	return n, nil
}
