package extworker

import (
	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
)

// addInto adds the amounts of a client shard's data into sum, a map of
// maps as a partial's update holds them; false, and nothing added, if
// data holds what is not a count.
func addInto(sum map[string]any, data map[string]any) bool {
	a, err := extension.ShardAmounts(data)
	if err != nil {
		return false
	}
	for _, p := range a.Paths() {
		core.SetAt(sum, p, add(getPath(sum, p), a.Of(p)))
	}
	return true
}

func getPath(m map[string]any, p firestore.FieldPath) any {
	for _, seg := range p[:len(p)-1] {
		m, _ = m[seg].(map[string]any)
	}
	return m[p[len(p)-1]]
}

// add is x + y for x nil, an int64 or a float64, and y an int64 or a
// float64.
func add(x, y any) any {
	if x == nil {
		return y
	}
	a, aok := x.(int64)
	b, bok := y.(int64)
	if aok && bok {
		return a + b
	}
	return float(x) + float(y)
}

func float(v any) float64 {
	if i, ok := v.(int64); ok {
		return float64(i)
	}
	return v.(float64)
}

func negate(v any) any {
	if i, ok := v.(int64); ok {
		return -i
	}
	return -v.(float64)
}

// increments is total, a map of maps of amounts, as server-side
// increments of the same fields.
func increments(total map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range total {
		if m, ok := v.(map[string]any); ok {
			out[k] = increments(m)
			continue
		}
		out[k] = firestore.Increment(v)
	}
	return out
}

func notFound(err error) bool { return status.Code(err) == codes.NotFound }
