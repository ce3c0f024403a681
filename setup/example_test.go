package setup_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/tallycounters/tally/counter"
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

// ExampleConfig builds the configuration in code. A field left zero takes
// the default its setting has (the database, the fold spacing, the
// caches), but a bool is false where its setting's default may be true:
// TALLY_AUTO_CREATE's is, so AutoCreate is set here.
func ExampleConfig() {
	layout, err := counter.LayoutFromEnv(func(k string) string {
		return map[string]string{"TALLY_COLLECTION": "example-config"}[k]
	})
	if err != nil {
		log.Fatal(err)
	}
	set, err := setup.New(context.Background(), setup.Config{Project: "demo-tally-test", Layout: layout, AutoCreate: true}, io.Discard)
	if err != nil {
		log.Fatal(err)
	}
	defer set.Close()
	srv := httptest.NewServer(set.Handler())
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/Increment", "application/json", strings.NewReader(`{"counter":"likes","by":3}`))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.Contains(string(body), `"changed":true`))
	// Output: 200 true
}
