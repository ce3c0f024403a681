package setup_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/tallycounters/tally/setup"
)

// ExampleNew serves tally's functions from an app's own Go server, built
// from the settings the deployed functions read from their environment.
func ExampleNew() {
	settings := map[string]string{"GOOGLE_CLOUD_PROJECT": "demo-tally-test"} // os.Getenv in the app
	cfg, err := setup.ConfigFromEnv(func(k string) string { return settings[k] })
	if err != nil {
		log.Fatal(err)
	}
	set, err := setup.New(context.Background(), cfg, io.Discard)
	if err != nil {
		log.Fatal(err)
	}
	defer set.Close()
	srv := httptest.NewServer(set.Handler()) // /Increment, /Rollup, /Reconcile
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/Increment", "application/json", strings.NewReader(`{"counter":"example-setup","by":2}`))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.Contains(string(body), `"changed":true`))
	// Output: 200 true
}
