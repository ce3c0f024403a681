package bench

import (
	"context"
	"net/http"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/adder"
)

// clientIncrement writes each increment of tally's mode to its shard
// directly, with no Increment: as an app's clients do where the rules let
// them write shards, and as the Go client does. It writes what Increment
// would (adder, with its cache and group commit), and tally's Rollup folds
// it. A write that fails is no answer: the load counts it as an error.
func (e *env) clientIncrement(coll string, c *firestore.Client) incrementFunc {
	lay := tallyLayout(e.o)
	a := adder.New(c, adder.Config{Layout: lay, DefaultShards: e.o.Shards, AutoCreate: true, CacheTTL: e.o.ShardCacheTTL})
	return func(ctx context.Context, id string, by int64) (answer, error) {
		doc, field := target(coll, id)
		if !lay.OnDocs() {
			doc, field = id, ""
		}
		k, err := lay.Check(doc, field)
		if err != nil {
			return answer{}, err
		}
		shard, committed, err := a.Add(ctx, doc, k, by)
		if err == nil {
			return answer{Shard: shard, Status: http.StatusOK, Committed: committed}, nil
		}
		return answer{}, err
	}
}
