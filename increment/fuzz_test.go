package increment

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/httpjson"
)

// FuzzParseRequest feeds the request parser arbitrary bodies, content types
// and query strings, public or not. It must never panic; what it refuses is
// a 4xx with a message that is valid UTF-8; what it takes came from one
// valid JSON object, or from the query, and reads back the same once
// encoded again.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []struct {
		body, contentType, query string
		public                   bool
	}{
		{`{"counter":"likes","by":1}`, "application/json", "", false},
		{`{"counter":"likes","by":-3}`, "application/json; charset=utf-8", "", true},
		{`{"counter":"post-1-likes","vote":true}`, "application/json", "", true},
		{`{"counter":"likes","vote":false,"by":1}`, "application/json", "", false},
		{`{"counter":"likes","counter":"views"}`, "application/json", "", false},
		{`{"COUNTER":"likes"}`, "application/json", "", false},
		{`{"counter":"likes","by":1.5}`, "application/json", "", false},
		{`{"counter":"likes","by":99999999999999999999}`, "application/json", "", false},
		{`{"counter":"likes"} {}`, "application/json", "", false},
		{`{"counter":"likes"}}`, "application/json", "", false},
		{`{"counter":"caf\u00e9"}`, "application/json", "", false},
		{"{\"counter\":\"\xff\xfe\"}", "application/json", "", false},
		{`counter=likes`, "application/x-www-form-urlencoded", "", true},
		{"", "", "counter=likes&by=2", false},
		{"", "", "counter=likes&counter=views", false},
		{"", "", "counter=%zz", false},
		{"", "", "counter=likes", true},
		{" ", "application/json", "counter=likes", true},
		{`{"counter":"likes"}`, "application/json", "counter=views", false},
		{`[1,2]`, "application/json", "", false},
		{`null`, "application/json", "", false},
	} {
		f.Add([]byte(s.body), s.contentType, s.query, s.public)
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType, query string, public bool) {
		got, err := parse(body, contentType, query, public)
		if err != nil {
			var he *core.Error
			var hr *httpjson.Refusal
			if !errors.As(err, &he) && !errors.As(err, &hr) {
				t.Fatalf("error %v (%T) is not one a caller is told", err, err)
			}
			status, msg, _ := httpjson.Answer(err)
			if status < 400 || status > 499 {
				t.Fatalf("status %d for %q", status, err)
			}
			if !utf8.ValidString(msg) {
				t.Fatalf("message is not valid UTF-8: %q", msg)
			}
			return
		}
		if len(bytes.TrimSpace(body)) > 0 && !json.Valid(body) {
			t.Fatalf("took %+v from a body that is not JSON: %q", got, body)
		}
		if public && len(bytes.TrimSpace(body)) == 0 {
			t.Fatalf("a public Increment took %+v from no body", got)
		}
		if _, err := got.validate(core.Default(), DefaultMaxStep); err != nil {
			return
		}
		again, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if got.Vote != nil {
			again, _ = json.Marshal(map[string]any{"counter": got.Counter, "vote": *got.Vote})
		}
		back, err := parse(again, "application/json", "", public)
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("%+v encoded as %s reads back as %+v, %v", got, again, back, err)
		}
	})
}

func parse(body []byte, contentType, query string, public bool) (Request, error) {
	r := httptest.NewRequest(http.MethodPost, "/Increment", bytes.NewReader(body))
	r.URL.RawQuery = query
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return parseRequest(httptest.NewRecorder(), r, public)
}
