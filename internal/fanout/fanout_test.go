package fanout

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/counter"
)

// TestDecode: a part comes out of a push subscription's body as it went
// into its message; a body that is no part's message is refused, saying
// why.
func TestDecode(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 12345, time.UTC)
	data := `{"job":"windows","at":"` + at.Format(time.RFC3339Nano) + `","seq":3,"names":["posts/a","posts/b"]}`
	body := `{"message":{"data":"` + base64.StdEncoding.EncodeToString([]byte(data)) + `","messageId":"42","publish_time":"x"},"subscription":"projects/p/subscriptions/s"}`
	p, id, err := Decode(strings.NewReader(body))
	if err != nil || id != "42" || p.Job != counter.JobWindows || !p.At.Equal(at) || p.Seq != 3 || len(p.Names) != 2 {
		t.Fatalf("Decode = %+v, %q, %v", p, id, err)
	}
	for name, body := range map[string]string{
		"not JSON":       `{"message":`,
		"no message":     `{"subscription":"s"}`,
		"no data":        `{"message":{"messageId":"1"}}`,
		"data not JSON":  `{"message":{"data":"bm90IGEgcGFydA=="}}`,
		"unknown fields": `{"message":{"data":"` + base64.StdEncoding.EncodeToString([]byte(`{"job":"windows","at":"2026-01-01T00:00:00Z","names":["a"],"purge":true}`)) + `"}}`,
		"no job":         `{"message":{"data":"` + base64.StdEncoding.EncodeToString([]byte(`{"at":"2026-01-01T00:00:00Z","names":["a"]}`)) + `"}}`,
		"no time":        `{"message":{"data":"` + base64.StdEncoding.EncodeToString([]byte(`{"job":"reconcile","names":["a"]}`)) + `"}}`,
		"nothing to do":  `{"message":{"data":"` + base64.StdEncoding.EncodeToString([]byte(`{"job":"reconcile","at":"2026-01-01T00:00:00Z"}`)) + `"}}`,
	} {
		if _, _, err := Decode(strings.NewReader(body)); !errors.Is(err, ErrNotAPart) {
			t.Errorf("%s: Decode error %v, want ErrNotAPart", name, err)
		}
	}
}
