package stack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/setup"
)

// TestStopSavesWhateverEventsDo: with --data, an event that cannot be
// answered (its Rollup never replies) does not cost the data: Stop gives
// the events half its time, folds every counter, then exports within a
// bound of its own, and counts the event left unanswered; a stack started
// again on the data holds what was written, and folds the counter whose
// event was never answered.
func TestStopSavesWhateverEventsDo(t *testing.T) {
	t.Parallel()
	paths := emulatortest.RequirePaths(t)
	cfg, err := setup.ConfigFromEnv(func(k string) string { return map[string]string{"TALLY_AUTO_GROW": "false"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Project = emulatortest.Project
	stuck := make(chan struct{})
	never := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-stuck // Rollup never answers, until the test ends
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(never.Close)
	t.Cleanup(func() { close(stuck) })
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Start(ctx, Options{Config: cfg, Emulator: paths, DataDir: dir, RollupURL: never.URL})
	if err != nil {
		t.Fatal(err)
	}
	id := emulatortest.ID(t)
	if code, body := increment(t, s, `{"counter":"`+id+`","by":3}`); code != http.StatusOK {
		t.Fatalf("increment: %d %s", code, body)
	}
	for s.Bridge.Stats().Received == 0 { // a liveness wait on the emulator's delivery, bounded by the test's own timeout
		time.Sleep(20 * time.Millisecond)
	}
	sctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	began := time.Now()
	err = s.Stop(sctx)
	t.Logf("Stop with 4 s for the events and the folds took %v: %v", time.Since(began).Round(time.Millisecond), err)
	if err != nil || s.Unanswered == 0 {
		t.Errorf("Stop = %v, %d event(s) unanswered; want it to fold every counter and count the event left unanswered", err, s.Unanswered)
	}
	if !s.Saved || emulator.LatestExport(dir) == "" {
		t.Fatalf("Stop saved nothing in %s (saved %v)", dir, s.Saved)
	}

	again, err := Start(ctx, Options{Config: cfg, Emulator: paths, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := again.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}()
	client := emulatortest.ClientAt(t, again.EmulatorHost, emulatortest.Project)
	snap, err := core.Default().Counter(client, id).Get(ctx)
	if err != nil {
		t.Fatalf("the counter after a restart on the data: %v", err)
	}
	if got := snap.Data()[core.FieldTotal]; got != int64(3) {
		t.Errorf("total = %v after a restart on the data, want 3 (its shard, folded as the stack started)", got)
	}
}
