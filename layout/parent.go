package layout

import (
	"errors"
	"fmt"
)

// ErrNoCounter means a counter's parent document does not exist. The
// packages that report it all return this one value, so errors.Is works
// whichever of them a caller used.
var ErrNoCounter = errors.New("counter does not exist")

// NumShards reads num_shards from a parent's data: 0 when it is absent, an
// error when it is not a whole number in [1, MaxShards]. A whole double
// (as some clients write numbers) counts.
func NumShards(data map[string]any) (int, error) {
	v, ok := data[FieldNumShards]
	if !ok || v == nil {
		return 0, nil
	}
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case float64:
		if n = int64(x); float64(n) != x {
			n = 0
		}
	}
	if n < 1 || n > MaxShards {
		return 0, fmt.Errorf("%s is %v, want an integer in [1, %d]", FieldNumShards, v, MaxShards)
	}
	return int(n), nil
}
