package counter

import (
	"errors"
	"strings"
	"testing"
)

// TestGuardedTurnsAPanicIntoTheDocumentsError: a fold that panics on a
// document's data answers an error naming the document, which a job
// reports before it goes on; a fold's own error and success pass as they
// are.
func TestGuardedTurnsAPanicIntoTheDocumentsError(t *testing.T) {
	err := guarded("users/u1", func() error {
		var drifts []Drift
		_ = drifts[0].NumShards // what a document with no count once did
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "users/u1") || !strings.Contains(err.Error(), "index out of range") {
		t.Errorf("a panicking fold answered %v", err)
	}
	want := errors.New("refused")
	if err := guarded("users/u2", func() error { return want }); err != want {
		t.Errorf("a failing fold answered %v, want its own error", err)
	}
	if err := guarded("users/u3", func() error { return nil }); err != nil {
		t.Errorf("a fold that succeeded answered %v", err)
	}
}
