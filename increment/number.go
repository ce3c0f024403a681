package increment

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Number is a float64 that JSON always carries: a finite value as a JSON
// number, and NaN and the infinities, which JSON has no number for, as
// the strings "NaN", "Infinity" and "-Infinity", as Firestore's own REST
// API writes them (JavaScript's Number() reads each back).
type Number float64

// Ranked is a ranked document's value as JSON: an integer as it is
// stored, exactly (past 2^53 too, where a float64 no longer tells
// neighbouring integers apart), or else a Number.
type Ranked struct {
	Float float64
	Int   *int64
}

// MarshalJSON writes the integer, or the Number.
func (r Ranked) MarshalJSON() ([]byte, error) {
	if r.Int != nil {
		return strconv.AppendInt(nil, *r.Int, 10), nil
	}
	return Number(r.Float).MarshalJSON()
}

// UnmarshalJSON reads an integer exactly, or a Number.
func (r *Ranked) UnmarshalJSON(b []byte) error {
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		r.Int, r.Float = &n, float64(n)
		return nil
	}
	var n Number
	err := n.UnmarshalJSON(b)
	r.Int, r.Float = nil, float64(n)
	return err
}

// MarshalJSON writes n as a JSON number, or as one of the strings above.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Infinity"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads a JSON number, or one of the strings MarshalJSON
// writes.
func (n *Number) UnmarshalJSON(b []byte) error {
	var f float64
	switch string(b) {
	case `"NaN"`:
		f = math.NaN()
	case `"Infinity"`:
		f = math.Inf(1)
	case `"-Infinity"`:
		f = math.Inf(-1)
	default:
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("increment: %s is not a number", b)
		}
	}
	*n = Number(f)
	return nil
}
