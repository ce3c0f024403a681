package setup

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/extworker"
)

// TestReconcileSweepsTheExtensionsShards: with TALLY_EXTENSION_COUNTERS,
// the scheduled Reconcile moves a shard of the extension's that no event
// brought a move to (its event lost), and leaves the state of an
// extension that still runs as it is.
func TestReconcileSweepsTheExtensionsShards(t *testing.T) {
	fs := emulatortest.Client(t)
	cfg, err := ConfigFromEnv(func(k string) string {
		return map[string]string{EnvProject: emulatortest.Project, EnvExtension: "pages:visits", EnvExtQuiet: "1ms"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	set, err := New(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	page := fs.Doc("pages/" + emulatortest.ID(t))
	if _, err := extworker.Increment(ctx, page.Collection(extension.Collection).Doc("0b7c-client"), "visits", 3); err != nil {
		t.Fatal(err)
	}
	state := extension.DefaultStatePath // where a running extension keeps it
	if err := (extworker.Worker{Client: fs}).LeaveState(ctx, state, 1); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	set.Reconcile.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
	var rep JobReport
	if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil || w.Code != http.StatusOK || rep.ExtensionShards < 1 {
		t.Fatalf("Reconcile: %d %s; want 200 with the extension's shard found", w.Code, w.Body)
	}
	snap, err := page.Get(ctx)
	if err != nil || snap.Data()["visits"] != int64(3) {
		t.Errorf("the page after Reconcile: %v, %v; want visits 3", snap.Data(), err)
	}
	if _, err := fs.Doc(state).Get(ctx); err != nil {
		t.Errorf("Reconcile removed the extension's state: %v", err)
	}
}
