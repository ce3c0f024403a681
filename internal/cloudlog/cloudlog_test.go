package cloudlog

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCloudLoggingShape(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf, slog.LevelInfo)
	log.Debug("hidden")
	log.Warn("rollup: will retry", "counter", "likes", "event_id", "e1")
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not one JSON line: %q", buf.String())
	}
	if got["severity"] != "WARNING" || got["message"] != "rollup: will retry" || got["counter"] != "likes" || got["event_id"] != "e1" {
		t.Errorf("entry = %v", got)
	}
	if _, ok := got["level"]; ok {
		t.Errorf("entry keeps slog's level key: %v", got)
	}
}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"": slog.LevelInfo, "debug": slog.LevelDebug, "WARNING": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseLevel("loud"); err == nil {
		t.Error("ParseLevel took an unknown level")
	}
}

// TestFilesGetJSONPeopleGetLines: a file (as a pipe, or Cloud Run's
// output) gets JSON lines; a person's line shows the time of day.
func TestFilesGetJSONPeopleGetLines(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	New(f, slog.LevelInfo).Info("rollup: fold", "counter", "likes")
	f.Close()
	b, _ := os.ReadFile(f.Name())
	if !json.Valid(bytes.TrimSpace(b)) {
		t.Errorf("a file got %q; want a JSON line", b)
	}
	at := time.Date(2026, 11, 28, 20, 46, 12, 345e6, time.UTC)
	if a := forPeople(nil, slog.Time(slog.TimeKey, at)); a.Value.String() != "20:46:12.345" {
		t.Errorf("a person's line shows the time as %q", a.Value)
	}
}
