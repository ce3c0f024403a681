package aggregate

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// A document's aggregates are kept per part of each aggregated collection:
// a range of child ids [lo, hi), whose aggregations at one read time the
// document holds in _tally.parts.{source}.{key}, with that time. A
// child's write refolds only its part (one aggregation over at most about
// PartMax children), and the aggregate is the sum over the parts. The
// parts of a source partition all ids: the first starts at "", each ends
// where the next starts. A part of more than PartMax children is split at
// a fold, all at one read time, into equal ranges of ids of about
// PartMax/2 children each (splits), moving nothing.

// PartMax is the most children a part holds before a fold splits it.
const PartMax = 1000

// FieldParts is the bookkeeping map of the parts of each source.
const FieldParts = "parts"

// idAlphabet is the characters of Firestore's automatic ids, in order.
const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Part is one part's aggregations, as of At.
type Part struct {
	At time.Time
	N  int64            // children in the part
	V  map[string]any   // each aggregate's value over the part: a count's int64; a sum's, or an average's sum, as Firestore's sum() gives it
	C  map[string]int64 // a sum's or an average's count of the children whose field is a number
	// X: beside a sum whose value does not say it exactly (a double, or
	// integers past int64), the exact sum (total.exact), so that the parts
	// add up as Firestore's sum() over them all would.
	X map[string]map[string]any
}

// PartKey is the map key of the part that starts at lo.
func PartKey(lo string) string { return "r" + lo }

// PartLo is the start of the part of key.
func PartLo(key string) string { return strings.TrimPrefix(key, "r") }

// Source is the key of an aggregate's collection in _tally.parts: the
// collection id under the document, or "/" and the path from the root.
func (a Aggregate) Source() string {
	if a.Root {
		return "/" + a.Child
	}
	return a.Child
}

// Parts is a source's parts: key to part.
type Parts map[string]Part

// Keys are the parts' keys in the order of their ranges.
func (ps Parts) Keys() []string {
	keys := make([]string, 0, len(ps))
	for k := range ps {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return PartLo(keys[i]) < PartLo(keys[j]) })
	return keys
}

// Of is the key of the part that holds child (the one that starts last at
// or before it), and where that part ends ("" at the end of all ids); ok
// is false if there are no parts yet. It is called for each held event, so
// it scans the parts once and allocates nothing.
func (ps Parts) Of(child string) (key, hi string, ok bool) {
	for k := range ps {
		switch lo := PartLo(k); {
		case lo <= child && (!ok || lo > PartLo(key)):
			key, ok = k, true
		case lo > child && (hi == "" || lo < hi):
			hi = lo
		}
	}
	return key, hi, ok
}

// idDigits is how many characters of an id place it on the line of ids
// that splits divides: 62^10 places, within an int64.
const idDigits = 10

// idPlace is where the id s falls on the line of ids: its first idDigits
// characters as a number in base 62 (a character outside the alphabet as
// the nearest one below it).
func idPlace(s string) int64 {
	var v int64
	for i := range idDigits {
		d := 0
		if i < len(s) {
			d = strings.LastIndexFunc(idAlphabet, func(r rune) bool { return byte(r) <= s[i] })
			d = max(d, 0)
		}
		v = v*int64(len(idAlphabet)) + int64(d)
	}
	return v
}

// idAt is the shortest id at the place v.
func idAt(v int64) string {
	b := make([]byte, idDigits)
	for i := idDigits - 1; i >= 0; i-- {
		b[i] = idAlphabet[v%int64(len(idAlphabet))]
		v /= int64(len(idAlphabet))
	}
	return strings.TrimRight(string(b), idAlphabet[:1])
}

// splits are the starts of the parts that [lo, hi), holding n children,
// splits into, lo first: equal ranges of the line of ids, as many as put
// about PartMax/2 in each if the ids are uniform (as Firestore's automatic
// ids are). A range too narrow to divide is not split.
func splits(lo, hi string, n int64) []string {
	k := max(2, (n+PartMax/2-1)/(PartMax/2))
	from, to := idPlace(lo), int64(1)
	for range idDigits {
		to *= int64(len(idAlphabet))
	}
	if hi != "" {
		to = idPlace(hi)
	}
	out := []string{lo}
	for i := int64(1); i < k; i++ {
		s := idAt(from + (to-from)/k*i)
		if s > out[len(out)-1] && (hi == "" || s < hi) {
			out = append(out, s)
		}
	}
	return out
}

// Values are the aggregates' values over parts, as Firestore's
// own aggregations over the children give them: a count's int64; a sum's
// int64, or float64 once a child's value is a double or the integers'
// sum is past int64 (NaN and the infinities as IEEE 754 has them); an
// average's float64, or nil over no numbers; a greatest's or a least's
// finite number, an int64 or a float64 as the child holds it, or nil over
// none (extreme.go).
func Values(aggs []Aggregate, parts map[string]Parts) map[string]any {
	out := make(map[string]any, len(aggs))
	for _, a := range aggs {
		if a.Op == OpCount {
			var n int64
			for _, part := range parts[a.Source()] {
				v, _ := part.V[a.Field].(int64)
				n += v
			}
			out[a.Field] = n
			continue
		}
		if extreme(a.Op) {
			var e extremum
			for _, part := range parts[a.Source()] {
				if v, ok := part.V[a.Field]; ok {
					e.add(a.Op, numOf(v))
				}
			}
			out[a.Field] = e.value()
			continue
		}
		var t total
		for _, part := range parts[a.Source()] {
			t.merge(part.total(a.Field))
		}
		if a.Op == OpAvg {
			out[a.Field] = t.avg()
		} else {
			out[a.Field] = t.sum()
		}
	}
	return out
}

// total is the part's sum of the aggregate field's numbers.
func (part Part) total(field string) total {
	return totalFrom(part.V[field], part.X[field], part.C[field])
}

// PartsFrom reads _tally.parts from a counted document's bookkeeping;
// entries of the wrong shape are left out, so the next fold of their
// range... finds no part there, and refolds from the start of the source.
func PartsFrom(book map[string]any) map[string]Parts {
	m, _ := book[FieldParts].(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]Parts, len(m))
	for src, v := range m {
		entries, _ := v.(map[string]any)
		ps := Parts{}
		for key, e := range entries {
			em, _ := e.(map[string]any)
			at, ok := em["at"].(time.Time)
			if !ok || !strings.HasPrefix(key, "r") {
				continue
			}
			part := Part{At: at, V: map[string]any{}, C: map[string]int64{}}
			part.N, _ = em["n"].(int64)
			vs, _ := em["v"].(map[string]any)
			for f, x := range vs {
				switch x.(type) {
				case int64, float64:
					part.V[f] = x
				}
			}
			cs, _ := em["c"].(map[string]any)
			for f, x := range cs {
				part.C[f], _ = x.(int64)
			}
			xs, _ := em["x"].(map[string]any)
			for f, x := range xs {
				if m, ok := x.(map[string]any); ok {
					if part.X == nil {
						part.X = map[string]map[string]any{}
					}
					part.X[f] = m
				}
			}
			ps[key] = part
		}
		if _, ok := ps[PartKey("")]; ok { // a partition starts at ""; without it, none is kept
			out[src] = ps
		}
	}
	return out
}

// Stored is a part as _tally.parts holds it.
func (part Part) Stored() map[string]any {
	m := map[string]any{"at": part.At, "n": part.N, "v": part.V}
	if len(part.C) > 0 {
		m["c"] = part.C
	}
	if len(part.X) > 0 {
		m["x"] = part.X
	}
	return m
}

// PartFold is one part of a source refolded at one read time, [Lo, Hi),
// as Parts: one, or more if it was split.
type PartFold struct {
	Source string
	Lo, Hi string
	Parts  Parts
	// Same: a part of a valued source whose document, and the counted
	// document, hold every child asked for already; nothing to write.
	Same bool
	// Children: of a valued source, each child asked for, with the read
	// time of the value the part holds of it.
	Children []Child
	// Scanned: of a valued source, every child of the range was read.
	Scanned bool
	// Failed: aggregates that could not be aggregated, for good; their
	// values are kept as they were.
	Failed []Failure
	// docs: the part documents of a valued source to write, before the
	// counted document.
	docs []partWrite
}

// fits reports whether the fold's range is still one part of ps (or ps
// has none and it starts at ""), and whether that part's values are older.
func (pf PartFold) fits(ps Parts) (same, newer bool) {
	at := pf.Parts[PartKey(pf.Lo)].At
	if len(ps) == 0 {
		return pf.Lo == "" && pf.Hi == "", true
	}
	old, ok := ps[PartKey(pf.Lo)]
	_, hi, _ := ps.Of(pf.Lo)
	return ok && hi == pf.Hi, old.At.Before(at)
}

// Merge applies folds onto parts, those that fit, and returns the
// result and the folds applied; misfit says a fold's range is no longer
// one part (another fold split it).
func Merge(parts map[string]Parts, folds []PartFold) (out map[string]Parts, applied []PartFold, misfit bool) {
	out = make(map[string]Parts, len(parts))
	for src, ps := range parts {
		out[src] = maps.Clone(ps)
	}
	for _, pf := range folds {
		if pf.Same {
			continue
		}
		same, newer := pf.fits(out[pf.Source])
		misfit = misfit || !same
		if !same || !newer {
			continue
		}
		if out[pf.Source] == nil {
			out[pf.Source] = Parts{}
		}
		for k, part := range pf.Parts {
			out[pf.Source][k] = part
		}
		applied = append(applied, pf)
	}
	return out, applied, misfit
}

// Sources are the sources of aggs, each once, in order.
func Sources(aggs []Aggregate) []string {
	var out []string
	for _, a := range aggs {
		if !slices.Contains(out, a.Source()) {
			out = append(out, a.Source())
		}
	}
	return out
}
