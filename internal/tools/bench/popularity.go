package bench

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
)

// How a run's increments spread over its counters.
const (
	PopularityUniform = "uniform" // each increment to a counter drawn at random
	PopularityZipf    = "zipf"    // Zipf's law: a few counters take most increments, most are quiet
	PopularityClient  = "client"  // each client increments a counter of its own
	PopularityHot     = "hot"     // one counter takes HotShare of the load, the rest spread evenly over the others
	PopularityTurns   = "turns"   // each increment to the next document in turn, so that all take the same share
)

// HotShare is the share of the load that PopularityHot gives its one hot
// counter, the first.
const HotShare = 0.9

// ZipfS is the exponent of PopularityZipf: counter k (from 0) is drawn
// with weight 1/(k+1)^ZipfS.
const ZipfS = 1.1

// picker gives each client its way of choosing the next counter, from the
// client's own random source.
type picker func(client int, r *rand.Rand) func() int

// newPicker returns the picker of popularity over n counters, which are
// the counts of n/per documents, per to a document, next to each other
// (see env.counterIDs).
func newPicker(popularity string, n, per int) (picker, error) {
	switch popularity {
	case "", PopularityUniform:
		return func(_ int, r *rand.Rand) func() int { return func() int { return r.IntN(n) } }, nil
	case PopularityZipf:
		return func(_ int, r *rand.Rand) func() int {
			if n == 1 {
				return func() int { return 0 }
			}
			z := rand.NewZipf(r, ZipfS, 1, uint64(n-1))
			return func() int { return int(z.Uint64()) }
		}, nil
	case PopularityClient:
		return func(client int, _ *rand.Rand) func() int { return func() int { return client % n } }, nil
	case PopularityHot:
		return func(_ int, r *rand.Rand) func() int {
			return func() int {
				if n == 1 || r.Float64() < HotShare {
					return 0
				}
				return 1 + r.IntN(n-1)
			}
		}, nil
	case PopularityTurns:
		return inTurns(n, per), nil
	}
	return nil, fmt.Errorf("bench: popularity %q: want %s, %s, %s, %s or %s", popularity, PopularityUniform, PopularityZipf, PopularityClient, PopularityHot, PopularityTurns)
}

// inTurns spreads increments evenly over n counters, the counts of n/per
// documents: each document in turn, and a document's next count on the
// round after, so that fewer increments than documents are on as many
// documents, one each.
func inTurns(n, per int) picker {
	if per < 1 || n%per != 0 {
		per = 1
	}
	docs := n / per
	var next atomic.Int64
	return func(int, *rand.Rand) func() int {
		return func() int {
			k := int(next.Add(1) - 1)
			return k%docs*per + k/docs%per
		}
	}
}
