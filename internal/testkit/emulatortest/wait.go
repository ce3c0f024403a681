package emulatortest

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
)

// WaitField waits until the document's integer field is want, and fails
// the test if it is not within Liveness: the wait ends on the document,
// the bound only on a hang.
func WaitField(t testing.TB, d *firestore.DocumentRef, field string, want int64) {
	t.Helper()
	var got any
	for deadline := time.Now().Add(Liveness); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if snap, err := d.Get(context.Background()); err == nil {
			if got = snap.Data()[field]; got == want {
				return
			}
		}
	}
	t.Fatalf("%s.%s is %v, want %d", d.Path, field, got, want)
}
