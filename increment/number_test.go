package increment

import (
	"encoding/json"
	"math"
	"testing"
)

// TestNumberCarriesEveryFloat: a rank's value reaches a client as JSON
// whatever it is, NaN and the infinities included, and reads back the same.
func TestNumberCarriesEveryFloat(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{1.5, `{"v":1.5}`}, {-3, `{"v":-3}`}, {1e21, `{"v":1e+21}`},
		{math.Inf(1), `{"v":"Infinity"}`}, {math.Inf(-1), `{"v":"-Infinity"}`}, {math.NaN(), `{"v":"NaN"}`},
	} {
		b, err := json.Marshal(struct {
			V Number `json:"v"`
		}{Number(c.v)})
		got := string(b)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%v as JSON = %s, want %s", c.v, got, c.want)
		}
		var back struct {
			V Number `json:"v"`
		}
		if err := json.Unmarshal([]byte(got), &back); err != nil || float64(back.V) != c.v && !math.IsNaN(c.v) || math.IsNaN(c.v) != math.IsNaN(float64(back.V)) {
			t.Errorf("%s read back as %v, %v", got, back.V, err)
		}
	}
}
