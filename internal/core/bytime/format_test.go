package bytime

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"
)

// windowFixture is testdata/formats/window.json, which the web client's
// tests read too: a window's state, as the functions store it, and the
// series a reader makes of it.
type windowFixture struct {
	Window string
	Zone   string
	State  struct {
		Bucket time.Time
		Base   int64
		Series map[string]int64
	}
	Stored map[string]any
}

// TestWindowFormat: a window's state is stored as the fixture holds it,
// field for field, and read back from it as it was.
func TestWindowFormat(t *testing.T) {
	b, err := os.ReadFile("../../../testdata/formats/window.json")
	if err != nil {
		t.Fatal(err)
	}
	var f windowFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	w, err := Parse(f.Window)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocation(f.Zone)
	if err != nil {
		t.Fatal(err)
	}
	st := State{Bucket: f.State.Bucket, Base: f.State.Base, Series: f.State.Series}
	// As JSON, the stored map and the fixture's are the same document.
	got, err := json.Marshal(st.Stored(w, loc))
	if err != nil {
		t.Fatal(err)
	}
	var gotMap map[string]any
	if err := json.Unmarshal(got, &gotMap); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotMap, f.Stored) {
		t.Errorf("stored as %v, want the fixture's %v", gotMap, f.Stored)
	}
	// Read back as Firestore gives it: timestamps as time.Time, integers
	// as int64.
	stored := map[string]any{}
	for k, v := range f.Stored {
		stored[k] = v
	}
	for _, k := range []string{"b", "n"} {
		if stored[k], err = time.Parse(time.RFC3339, f.Stored[k].(string)); err != nil {
			t.Fatal(err)
		}
	}
	stored["v"] = int64(f.Stored["v"].(float64))
	series := map[string]any{}
	for k, v := range f.Stored["s"].(map[string]any) {
		series[k] = int64(v.(float64))
	}
	stored["s"] = series
	if back := States(map[string]any{w.Field: stored})[w.Field]; !reflect.DeepEqual(back, st) {
		t.Errorf("read back as %+v, want %+v", back, st)
	}
}
