package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Trigger is an Eventarc trigger the emulator fires for document writes.
type Trigger struct {
	EventType string // e.g. google.cloud.firestore.document.v1.written
	Database  string // default "(default)"
	Pattern   string // e.g. counters/{counterId}/shards/{shardId}
}

// RegisterTrigger makes the emulator at host deliver t's events for project
// to its --functions_emulator address, at
// /functions/projects/{project}/triggers/{key}. Registering again replaces it.
func RegisterTrigger(ctx context.Context, host, project, key string, t Trigger) error {
	if t.Database == "" {
		t.Database = "(default)"
	}
	body, _ := json.Marshal(map[string]any{
		"eventType": t.EventType,
		"database":  t.Database,
		"namespace": "(default)",
		"document":  map[string]string{"value": t.Pattern, "matchType": "PATH_PATTERN"},
	})
	u := fmt.Sprintf("http://%s/emulator/v1/projects/%s/eventarcTrigger?eventarcTriggerId=%s",
		host, url.PathEscape(project), url.QueryEscape(key))
	if err := postJSON(ctx, u, body); err != nil {
		return fmt.Errorf("emulator: register trigger %s: %w", key, err)
	}
	return nil
}

// postJSON posts body to the emulator's admin API at u and wants 200 OK.
func postJSON(ctx context.Context, u string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}
