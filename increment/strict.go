package increment

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/tallycounters/tally/internal/core"
)

// exactKeys checks that raw is a JSON object whose keys are among allowed,
// spelled exactly, each at most once, none null. encoding/json alone would match keys
// case-insensitively and keep the last of two: a request must mean one thing.
// Anything else about raw is left to the decoder.
func exactKeys(raw []byte, allowed ...string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil // not an object: the decoder says why
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := t.(string)
		switch {
		case seen[key]:
			return errorf(core.Invalid, "key %q appears twice in the body; give it once", truncate(key))
		case !slices.Contains(allowed, key):
			return errorf(core.Invalid, "unknown key %q in the body; the keys are %q (lower case)", truncate(key), allowed)
		}
		seen[key] = true
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		if string(value) == "null" {
			// encoding/json would leave the field as it was: by 1, no
			// vote, the default field. A key given means its value.
			return errorf(core.Invalid, "key %q is null; give it a value, or leave it out", truncate(key))
		}
	}
	return nil
}
