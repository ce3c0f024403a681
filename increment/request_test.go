package increment

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/httpjson"
)

func TestParseRequest(t *testing.T) {
	long := strings.Repeat("a", 1501)
	tests := []struct {
		name, query, ctype, body, encoding string
		want                               Request
		status                             int // 0: valid
	}{
		{name: "json", ctype: "application/json", body: `{"counter":"likes","by":3}`, want: Request{Counter: "likes", By: 3}},
		{name: "json charset", ctype: "application/json; charset=utf-8", body: `{"counter":"likes"}`, want: Request{Counter: "likes", By: 1}},
		{name: "by defaults to 1", ctype: "application/json", body: `{"counter":"a.b-c_D9"}`, want: Request{Counter: "a.b-c_D9", By: 1}},
		{name: "by null", ctype: "application/json", body: `{"counter":"x","by":null}`, status: 400},
		{name: "vote null", ctype: "application/json", body: `{"counter":"x","vote":null}`, status: 400},
		{name: "field null", ctype: "application/json", body: `{"counter":"x","field":null}`, status: 400},
		{name: "once null", ctype: "application/json", body: `{"counter":"x","once":null}`, status: 400},
		{name: "counter null", ctype: "application/json", body: `{"counter":null}`, status: 400},
		{name: "negative", ctype: "application/json", body: `{"counter":"x","by":-1000}`, want: Request{Counter: "x", By: -1000}},
		{name: "query", query: "counter=likes&by=-2", want: Request{Counter: "likes", By: -2}},
		{name: "query default by", query: "counter=likes", want: Request{Counter: "likes", By: 1}},
		{name: "1,500 bytes", query: "counter=" + long[:1500], want: Request{Counter: long[:1500], By: 1}},
		{name: "space", query: "counter=a+b", want: Request{Counter: "a b", By: 1}},
		{name: "unicode", query: "counter=caf%C3%A9", want: Request{Counter: "caf\u00e9", By: 1}},
		{name: "an email", ctype: "application/json", body: `{"counter":"alice@example.com"}`, want: Request{Counter: "alice@example.com", By: 1}},

		{name: "by too big", ctype: "application/json", body: `{"counter":"x","by":1001}`, status: 400},
		{name: "by too small", query: "counter=x&by=-1001", status: 400},
		{name: "by zero", query: "counter=x&by=0", status: 400},
		{name: "by float", ctype: "application/json", body: `{"counter":"x","by":1.5}`, status: 400},
		{name: "by string", ctype: "application/json", body: `{"counter":"x","by":"2"}`, status: 400},
		{name: "by overflow", query: "counter=x&by=99999999999999999999", status: 400},
		{name: "query by not a number", query: "counter=x&by=two", status: 400},
		{name: "no counter", ctype: "application/json", body: `{"by":1}`, status: 400},
		{name: "empty request", status: 400},
		{name: "counter too long", query: "counter=" + long, status: 400},
		{name: "slash", query: "counter=a/b", status: 400},
		{name: "dot", query: "counter=.", status: 400},
		{name: "dotdot", query: "counter=..", status: 400},
		{name: "reserved", query: "counter=__x__", status: 400},
		{name: "counter not a string", ctype: "application/json", body: `{"counter":5}`, status: 400},
		{name: "unknown field", ctype: "application/json", body: `{"counter":"x","step":2}`, status: 400},
		{name: "not json", ctype: "application/json", body: `counter=x`, status: 400},
		{name: "two values", ctype: "application/json", body: `{"counter":"x"}{"counter":"y"}`, status: 400},
		{name: "a stray brace after", ctype: "application/json", body: `{"counter":"x"}}`, status: 400},
		{name: "a stray bracket after", ctype: "application/json", body: `{"counter":"x"}]`, status: 400},
		{name: "trailing space is fine", ctype: "application/json", body: "{\"counter\":\"x\"} \n", want: Request{Counter: "x", By: 1}},
		{name: "truncated", ctype: "application/json", body: `{"counter":"x"`, status: 400},
		{name: "body and query", query: "counter=y", ctype: "application/json", body: `{"counter":"x"}`, status: 400},
		{name: "form body", ctype: "application/x-www-form-urlencoded", body: `counter=x`, status: 415},
		{name: "duplicate key", ctype: "application/json", body: `{"counter":"x","by":1,"by":900}`, status: 400},
		{name: "duplicate counter", ctype: "application/json", body: `{"counter":"x","counter":"y"}`, status: 400},
		{name: "key in capitals", ctype: "application/json", body: `{"COUNTER":"x"}`, status: 400},
		{name: "key in mixed case", ctype: "application/json", body: `{"counter":"x","By":2}`, status: 400},
		{name: "query vote", query: "counter=x&vote=true", want: Request{Counter: "x", By: 1, Vote: ptr(true)}},
		{name: "query vote taken back", query: "counter=x&vote=false", want: Request{Counter: "x", By: -1, Vote: ptr(false)}},
		{name: "query vote not a boolean", query: "counter=x&vote=1", status: 400},
		{name: "query vote and by", query: "counter=x&vote=true&by=2", status: 400},
		{name: "query unknown key", query: "counter=x&foo=1", status: 400},
		{name: "query key in capitals", query: "counter=x&Counter=zz", status: 400},
		{name: "body and an unknown query key", query: "foo=1", ctype: "application/json", body: `{"counter":"x"}`, status: 400},
		{name: "body and vote in the query", query: "vote=false", ctype: "application/json", body: `{"counter":"x"}`, status: 400},
		{name: "duplicate in query", query: "counter=x&counter=y", status: 400},
		{name: "by twice in query", query: "counter=x&by=1&by=900", status: 400},
		{name: "gzip body", ctype: "application/json", encoding: "gzip", body: `{"counter":"x"}`, status: 415},
		{name: "identity encoding", ctype: "application/json", encoding: "identity", body: `{"counter":"x"}`, want: Request{Counter: "x", By: 1}},
		{name: "no content type", body: `{"counter":"x"}`, status: 415},
		{name: "too large", ctype: "application/json", body: `{"counter":"` + strings.Repeat("x", maxBody) + `"}`, status: 413},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/?"+tc.query, strings.NewReader(tc.body))
			if tc.ctype != "" {
				r.Header.Set("Content-Type", tc.ctype)
			}
			if tc.encoding != "" {
				r.Header.Set("Content-Encoding", tc.encoding)
			}
			req, err := parseRequest(httptest.NewRecorder(), r, false)
			if err == nil {
				_, err = req.validate(core.Default(), DefaultMaxStep)
			}
			if tc.status == 0 {
				if err != nil {
					t.Fatalf("error %v, want %+v", err, tc.want)
				}
				if !reflect.DeepEqual(req, tc.want) {
					t.Errorf("got %+v, want %+v", req, tc.want)
				}
				return
			}
			if got, _, _ := httpjson.Answer(err); err == nil || got != tc.status {
				t.Errorf("got %+v, %v (status %d); want status %d", req, err, got, tc.status)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
