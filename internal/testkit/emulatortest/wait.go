package emulatortest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
)

// Until checks every 100 ms until check says done, and fails the test,
// with what it waited for and what it last saw, if that is not within
// Liveness: the wait ends on what it waits for, the bound only on a hang.
func Until(t testing.TB, what string, check func() (seen any, done bool)) {
	t.Helper()
	var seen any
	for deadline := time.Now().Add(Liveness); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var done bool
		if seen, done = check(); done {
			return
		}
	}
	t.Fatalf("waited %v for %s; last saw %v", Liveness, what, seen)
}

// WaitField waits until the document's integer field is want (Until).
func WaitField(t testing.TB, d *firestore.DocumentRef, field string, want int64) {
	t.Helper()
	Until(t, fmt.Sprintf("%s.%s to be %d", d.Path, field, want), func() (any, bool) {
		snap, err := d.Get(context.Background())
		if err != nil {
			return err, false
		}
		got := snap.Data()[field]
		return got, got == want
	})
}

// WaitTotal waits until the total of counter id, in the guide layout, is
// want (Until).
func WaitTotal(t testing.TB, fs *firestore.Client, id string, want int64) {
	t.Helper()
	WaitField(t, fs.Collection(core.DefaultCollection).Doc(id), "total", want)
}
