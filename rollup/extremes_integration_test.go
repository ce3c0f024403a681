package rollup

import (
	"context"
	"math"
	"math/big"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"
)

// scanExtreme reads every document of q, and answers the greatest (sign
// 1) or least (sign -1) finite number among their field's values, an
// int64 or a float64 as held (an integer over an equal double), or nil
// over none: what max() or min() of it is.
func scanExtreme(t testing.TB, q firestore.Query, field string, sign int) any {
	t.Helper()
	var best any
	it := q.Documents(context.Background())
	defer it.Stop()
	for {
		snap, err := it.Next()
		if err == iterator.Done {
			return best
		}
		if err != nil {
			t.Fatal(err)
		}
		v := snap.Data()[field]
		x, ok := exactNumber(v)
		if !ok {
			continue
		}
		if best == nil {
			best = v
			continue
		}
		b, _ := exactNumber(best)
		_, isInt := v.(int64)
		if c := x.Cmp(b); c*sign > 0 || c == 0 && isInt {
			best = v
		}
	}
}

// exactNumber is v as a big.Float, if it is an integer or a finite double.
func exactNumber(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case int64:
		return new(big.Float).SetInt64(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return big.NewFloat(x), true
	}
	return nil, false
}
