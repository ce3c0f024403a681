package extension

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
)

func TestOwner(t *testing.T) {
	for _, c := range []struct {
		path, doc string
		partial   bool
		ok        bool
	}{
		{"posts/p1/_counter_shards_/0b7c", "posts/p1", false, true},
		{"posts/p1/_counter_shards_/\t\tab", "posts/p1", true, true},
		{"users/u/posts/p1/_counter_shards_/x", "users/u/posts/p1", false, true},
		{"posts/p1/shards/0", "", false, false},
		{"_counter_shards_/x", "", false, false},
		{"posts/p1/_counter_shards_", "", false, false},
		{"posts/p1/_counter_shards_/x/more/y", "", false, false},
	} {
		doc, partial, ok := Owner(c.path)
		if doc != c.doc || partial != c.partial || ok != c.ok {
			t.Errorf("Owner(%q) = %q, %t, %t; want %q, %t, %t", c.path, doc, partial, ok, c.doc, c.partial, c.ok)
		}
	}
}

func TestAmounts(t *testing.T) {
	for _, c := range []struct {
		name string
		id   string
		data map[string]any
		want map[string]any // dotted path: amount
		err  string
	}{
		{"a shard of two counters", "s1", map[string]any{"likes": int64(2), "views": int64(5)}, map[string]any{"likes": int64(2), "views": int64(5)}, ""},
		{"a nested field", "s1", map[string]any{"stats": map[string]any{"views": int64(3), "clicks": 1.5}}, map[string]any{"stats.views": int64(3), "stats.clicks": 1.5}, ""},
		{"an empty shard", "s1", map[string]any{}, map[string]any{}, ""},
		{"a string", "s1", map[string]any{"likes": int64(1), "who": "bo"}, nil, "who holds string"},
		{"NaN", "s1", map[string]any{"likes": math.NaN()}, nil, "likes is NaN"},
		{"an infinity", "s1", map[string]any{"s": map[string]any{"x": math.Inf(1)}}, nil, "s.x is +Inf"},
		{"a partial", "\t\tab", map[string]any{"_updates_": []any{
			map[string]any{"_id_": "u1", "_data_": map[string]any{"likes": int64(4), "stats": map[string]any{"views": int64(1)}}},
			map[string]any{"_id_": "u2", "_data_": map[string]any{"likes": int64(-1)}},
		}}, map[string]any{"likes": int64(3), "stats.views": int64(1)}, ""},
		{"a partial without updates", "\tabcd", map[string]any{}, map[string]any{}, ""},
		{"a partial with a bad update", "\tabcd", map[string]any{"_updates_": []any{"x"}}, nil, "_updates_[0] has no map _data_"},
		{"a partial whose updates are not a list", "\tabcd", map[string]any{"_updates_": "x"}, nil, "not a list"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := AmountsOf(c.id, c.data)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v; want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]any{}
			for _, p := range a.Paths() {
				got[strings.Join(p, ".")] = a.Of(p)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("amounts %v; want %v", got, c.want)
			}
		})
	}
}

func TestAmountsAdd(t *testing.T) {
	a := Amounts{}
	p := firestore.FieldPath{"likes"}
	if err := a.Add(Amounts{key(p): int64(math.MaxInt64 - 1)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(Amounts{key(p): int64(1), key(firestore.FieldPath{"x"}): 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(Amounts{key(p): int64(1), key(firestore.FieldPath{"x"}): 0.5}); err == nil || !strings.Contains(err.Error(), "passes int64") {
		t.Errorf("an overflow: %v; want refused", err)
	}
	if a.Of(p) != int64(math.MaxInt64) || a.Of(firestore.FieldPath{"x"}) != 0.5 {
		t.Errorf("after a refused add: %v; want it unchanged", a)
	}
	if err := a.Add(Amounts{key(p): -2.0}); err != nil || a.Of(p) != float64(math.MaxInt64)-2 {
		t.Errorf("an integer and a double: %v, %v; want a double", a.Of(p), err)
	}
}
