package extension

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"cloud.google.com/go/firestore"
)

// The extension's names.
const (
	// Collection is the subcollection of a counted document D that holds
	// its shards (D/_counter_shards_/{a client's id}) and partials
	// (D/_counter_shards_/\t…).
	Collection = "_counter_shards_"
	// partialPrefix begins a partial's id: one to four tabs, then a
	// prefix of the shard ids it took counts from.
	partialPrefix = "\t"
	// fieldUpdates is a partial's one field: the amounts moved into it
	// and out of it, each {_id_: a unique id, _data_: amounts}, added
	// with an array union so that the workers need no transaction.
	fieldUpdates = "_updates_"
	fieldData    = "_data_"
	// DefaultStatePath is where the extension keeps its workers' state,
	// unless its install chose another path (INTERNAL_STATE_PATH).
	DefaultStatePath = "_firebase_ext_/sharded_counter"
	// workersCollection holds a document per worker under the state.
	workersCollection = "workers"
)

// Owner is, for the path of a document relative to the database root,
// the path of the document whose shard or partial it is, and whether it
// is a partial; ok is false if it is neither.
func Owner(path string) (doc string, partial, ok bool) {
	segs := strings.Split(path, "/")
	n := len(segs)
	if n < 4 || n%2 != 0 || segs[n-2] != Collection || segs[n-1] == "" {
		return "", false, false
	}
	return strings.Join(segs[:n-2], "/"), strings.HasPrefix(segs[n-1], partialPrefix), true
}

// Amounts are the counts a shard or partial holds, by field path: each an
// int64, or a float64 once a double was added to it.
type Amounts map[string]any

// key is the map key of a field path.
func key(p firestore.FieldPath) string { return strings.Join(p, "\x00") }

// path is the field path of a map key.
func path(k string) firestore.FieldPath { return strings.Split(k, "\x00") }

// Paths are the field paths of a, in order.
func (a Amounts) Paths() []firestore.FieldPath {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]firestore.FieldPath, len(keys))
	for i, k := range keys {
		out[i] = path(k)
	}
	return out
}

// Of is the amount at field path p, nil if none.
func (a Amounts) Of(p firestore.FieldPath) any { return a[key(p)] }

// Add adds b to a, as numbers add in Firestore: integers stay integers
// unless their sum would pass int64 (an error: nothing of b is added).
func (a Amounts) Add(b Amounts) error {
	next := Amounts{}
	for k, v := range b {
		s, err := plus(a[k], v)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.ReplaceAll(k, "\x00", "."), err)
		}
		next[k] = s
	}
	maps.Copy(a, next)
	return nil
}

// plus is x + y, for x nil (nothing yet), an int64 or a float64.
func plus(x, y any) (any, error) {
	switch {
	case x == nil:
		return y, nil
	case isInt(x) && isInt(y):
		a, b := x.(int64), y.(int64)
		s := a + b
		if b > 0 && s < a || b < 0 && s > a {
			return nil, fmt.Errorf("the sum passes int64")
		}
		return s, nil
	}
	return asFloat(x) + asFloat(y), nil
}

func isInt(v any) bool { _, ok := v.(int64); return ok }

func asFloat(v any) float64 {
	if i, ok := v.(int64); ok {
		return float64(i)
	}
	return v.(float64)
}

// ShardAmounts are the amounts of a client's shard, from its data: every
// number it holds at any depth of maps. A value that is neither (a string,
// a list, a time; NaN or an infinity, which no count can be) is an error
// naming it: the shard is not the extension's protocol, and is left alone.
func ShardAmounts(data map[string]any) (Amounts, error) {
	a := Amounts{}
	return a, leaves(data, nil, a)
}

func leaves(m map[string]any, at firestore.FieldPath, into Amounts) error {
	for k, v := range m {
		p := append(slices.Clip(at), k)
		switch x := v.(type) {
		case int64:
			into[key(p)] = x
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s is %v, not a count", strings.Join(p, "."), x)
			}
			into[key(p)] = x
		case map[string]any:
			if err := leaves(x, p, into); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s holds %T, not a number", strings.Join(p, "."), v)
		}
	}
	return nil
}

// PartialAmounts are the amounts of a partial, from its data: the sum of
// the amounts of each of its updates (each update's _data_, as a shard's).
// Numbers beside _updates_ are counted as a shard's.
func PartialAmounts(data map[string]any) (Amounts, error) {
	rest := map[string]any{}
	for k, v := range data {
		if k != fieldUpdates {
			rest[k] = v
		}
	}
	sum, err := ShardAmounts(rest)
	if err != nil {
		return nil, err
	}
	updates, ok := data[fieldUpdates].([]any)
	if _, there := data[fieldUpdates]; there && !ok {
		return nil, fmt.Errorf("%s is not a list", fieldUpdates)
	}
	for i, u := range updates {
		m, _ := u.(map[string]any)
		d, ok := m[fieldData].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d] has no map %s", fieldUpdates, i, fieldData)
		}
		a, err := ShardAmounts(d)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", fieldUpdates, i, err)
		}
		if err := sum.Add(a); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// AmountsOf are the amounts of the shard or partial with document id id.
func AmountsOf(id string, data map[string]any) (Amounts, error) {
	if strings.HasPrefix(id, partialPrefix) {
		return PartialAmounts(data)
	}
	return ShardAmounts(data)
}
