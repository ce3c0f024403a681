package aggregate

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"
)

// A part of a collection that a sum or an average is declared over (a
// Valued source) keeps a record of each child it counted: the child's id,
// the read time its values were taken at, and its value of each summed
// field. A child's event is then applied by its value, once, whatever
// events are duplicated, late or reordered: the fold reads the child at
// its read time and replaces its record. Firestore cannot sum a range of
// ids on its own (no index has fields after __name__), so this is how a
// sum stays within its part's children. The records are kept in a
// document of tally's under the counted document's life
// (.../lives/{life}/parts/{id}, partdoc.go), as one bytes field.

// Kinds of a summed field's value on a child.
const (
	kindNone   = iota // absent, or no number: neither summed nor averaged
	kindInt           // an integer
	kindDouble        // a double, NaN and the infinities included
)

// Num is a child's value of a summed field, as Firestore's sum() takes it.
type Num struct {
	Kind uint8
	I    int64
	F    float64
}

// numOf is v, a field's value as the firestore package reads it, as a Num.
func numOf(v any) Num {
	switch x := v.(type) {
	case int64:
		return Num{Kind: kindInt, I: x}
	case float64:
		return Num{Kind: kindDouble, F: x}
	}
	return Num{}
}

// record is one child of a valued part.
type record struct {
	ID   string
	At   time.Time // the read time of Vals
	Vals []Num     // in the order of the part's summed fields
}

// recordsVersion is the first byte of an encoding; another is refused.
const recordsVersion = 1

// encodeRecords writes records (sorted by id) as a part document's bytes.
func encodeRecords(recs []record) []byte {
	b := []byte{recordsVersion}
	for _, r := range recs {
		b = binary.AppendUvarint(b, uint64(len(r.ID)))
		b = append(b, r.ID...)
		b = binary.AppendVarint(b, r.At.UnixMicro())
		for _, v := range r.Vals {
			b = append(b, v.Kind)
			switch v.Kind {
			case kindInt:
				b = binary.AppendVarint(b, v.I)
			case kindDouble:
				b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.F))
			}
		}
	}
	return b
}

var errRecords = errors.New("aggregate: a part's records are damaged")

// decodeRecords reads what encodeRecords wrote, each record with fields
// values.
func decodeRecords(b []byte, fields int) ([]record, error) {
	if len(b) == 0 || b[0] != recordsVersion {
		return nil, errRecords
	}
	var out []record
	for b = b[1:]; len(b) > 0; {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, errRecords
		}
		r := record{ID: string(b[k : k+int(n)]), Vals: make([]Num, fields)}
		b = b[k+int(n):]
		at, k := binary.Varint(b)
		if k <= 0 {
			return nil, errRecords
		}
		r.At, b = time.UnixMicro(at).UTC(), b[k:]
		for i := range r.Vals {
			if len(b) == 0 {
				return nil, errRecords
			}
			v := Num{Kind: b[0]}
			b = b[1:]
			switch v.Kind {
			case kindNone:
			case kindInt:
				if v.I, k = binary.Varint(b); k <= 0 {
					return nil, errRecords
				}
				b = b[k:]
			case kindDouble:
				if len(b) < 8 {
					return nil, errRecords
				}
				v.F, b = math.Float64frombits(binary.BigEndian.Uint64(b)), b[8:]
			default:
				return nil, errRecords
			}
			r.Vals[i] = v
		}
		out = append(out, r)
	}
	if !slices.IsSortedFunc(out, func(a, b record) int { return strings.Compare(a.ID, b.ID) }) {
		return nil, errRecords
	}
	return out, nil
}

// summedFields are the fields a valued source's aggregates sum or
// average, sorted, each once.
func summedFields(aggs []Aggregate, src string) []string {
	var out []string
	for _, a := range aggs {
		if a.Source() == src && a.Op != OpCount && !slices.Contains(out, a.recorded()) {
			out = append(out, a.recorded())
		}
	}
	slices.Sort(out)
	return out
}

// recorded is what a part records of each child for a, which sums,
// averages or compares: its field, or, if a filters the children it
// takes, its field where the filters hold ("points where ranked ==
// true"), none for a child they do not pass.
func (a Aggregate) recorded() string {
	if len(a.Where) == 0 {
		return a.Of
	}
	return a.Of + " where " + a.conditions()
}

// recording is what a part records of each child for one name that
// recorded wrote: the child's field, where it passes the filters.
type recording struct {
	of    string
	where []Filter
}

// recordings reads the names recorded wrote, once for all the children
// a refold reads.
func recordings(fields []string) []recording {
	out := make([]recording, len(fields))
	for i, f := range fields {
		of, cond, _ := strings.Cut(f, " where ")
		where, _ := parseFilters(cond) // as recorded wrote them
		out[i] = recording{of: of, where: where}
	}
	return out
}

// Valued reports whether any aggregate of src sums, averages or compares
// a field of the children.
func Valued(aggs []Aggregate, src string) bool { return len(summedFields(aggs, src)) > 0 }

// total is an exact sum of Nums: the integers' sum exactly, beside the
// doubles' sum, so that a sum of integers past int64 is a double, as
// Firestore's sum() makes it, and one that comes back within it is an
// integer again. Its zero value is an empty sum.
type total struct {
	i       *big.Int // the integers' sum; nil is 0
	f       float64  // the doubles' sum
	doubles bool     // some value was a double
	n       int64    // numbers summed
}

// add adds v, if it is a number.
func (t *total) add(v Num) {
	switch v.Kind {
	case kindInt:
		t.addInt(big.NewInt(v.I))
	case kindDouble:
		t.f += v.F
		t.doubles = true
	default:
		return
	}
	t.n++
}

func (t *total) addInt(x *big.Int) {
	if t.i == nil {
		t.i = new(big.Int)
	}
	t.i.Add(t.i, x)
}

// merge adds u to t.
func (t *total) merge(u total) {
	if u.i != nil {
		t.addInt(u.i)
	}
	t.f += u.f
	t.doubles = t.doubles || u.doubles
	t.n += u.n
}

// ints is the integers' sum as an int64, if it is one.
func (t total) ints() (int64, bool) {
	if t.i == nil {
		return 0, true
	}
	return t.i.Int64(), t.i.IsInt64()
}

// float is the whole sum as a double.
func (t total) float() float64 {
	if t.i == nil {
		return t.f
	}
	f, _ := new(big.Float).SetInt(t.i).Float64()
	return f + t.f
}

// sum is the sum as Firestore's sum() gives it: an int64 if every value
// was an integer and their sum fits, else a float64.
func (t total) sum() any {
	if n, ok := t.ints(); ok && !t.doubles {
		return n
	}
	return t.float()
}

// avg is the average as Firestore's average() gives it: a float64, or
// nil over no numbers.
func (t total) avg() any {
	if t.n == 0 {
		return nil
	}
	return t.float() / float64(t.n)
}

// exact is what a part keeps beside a sum's value so that parts add up
// exactly: nil when the value says all (integers whose sum fits), else
// the integers' sum in base 10 ("i"), the doubles' sum ("f") and whether
// there were doubles ("d").
func (t total) exact() map[string]any {
	if _, ok := t.ints(); ok && !t.doubles {
		return nil
	}
	i := "0"
	if t.i != nil {
		i = t.i.String()
	}
	return map[string]any{"i": i, "f": t.f, "d": t.doubles}
}

// totalFrom reads a part's sum: its value v (an int64 or a float64), what
// exact kept beside it (x, or nil), and how many numbers it summed (n).
func totalFrom(v any, x map[string]any, n int64) total {
	t := total{n: n}
	if s, ok := x["i"].(string); ok {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			t.i = i
		}
		t.f, _ = x["f"].(float64)
		t.doubles, _ = x["d"].(bool)
		return t
	}
	switch v := v.(type) {
	case int64:
		t.i = big.NewInt(v)
	case float64:
		t.f, t.doubles = v, true
	}
	return t
}
