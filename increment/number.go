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
