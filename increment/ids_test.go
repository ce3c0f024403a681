package increment

import (
	"context"
	"strings"
	"testing"
	"time"

	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/auth"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// anyIDs are ids Firestore takes that are not plain ASCII names: each
// names a counter, a counted document or a child of tally's as it is.
var anyIDs = []string{"alice@example.com", "a b", "x:y", "a+b", "100%", "%41", "caf\u00e9", "\U0001F600", strings.Repeat("z", core.MaxIDLength)}

// admin is the Admin SDK's Auth client of the Auth emulator signedIn
// started, to make users with the uids a test needs.
func admin(t *testing.T) *auth.Client {
	t.Helper()
	app, err := firebase.NewApp(context.Background(), &firebase.Config{ProjectID: emulatortest.Project})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Auth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestOnceBuckets: a step marks its bucket, and the next one when its
// commit may fall in it.
func TestOnceBuckets(t *testing.T) {
	at := time.Date(2026, 11, 25, 10, 59, 57, 0, time.UTC)
	if got := onceBuckets(calendar.Hour, at, time.UTC); len(got) != 2 || got[1] != at.Truncate(time.Hour).Add(time.Hour) {
		t.Errorf("3 s before the hour: %v; want this hour and the next", got)
	}
	if got := onceBuckets(calendar.Hour, at.Add(-time.Minute), time.UTC); len(got) != 1 {
		t.Errorf("a minute earlier: %v; want this hour only", got)
	}
}
