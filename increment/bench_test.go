package increment

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/core"
)

func BenchmarkParseRequest(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"counter":"likes","by":1}`))
		r.Header.Set("Content-Type", "application/json")
		req, err := parseRequest(nil, r, false)
		if err == nil {
			_, err = req.validate(core.Default(), DefaultMaxStep)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
