package web_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// TestMobileRecipe runs docs/mobile.md end to end with the JS SDK standing
// in for a native one, against serve's stack reached at its addresses, as
// an iOS simulator reaches them (TestServeOnGivenPorts checks the ports
// serve is given), with the page's counts and rules: a like as a
// document, a comment, a view once an hour with an Idempotency-Key (sent again as a retry, it is
// answered as the first and counted once; a second within the hour is not
// counted), one listener that sees every count, and the feed by views
// today and by trend, the post most viewed and liked first.
func TestMobileRecipe(t *testing.T) {
	t.Parallel()
	node := needNode(t)
	s := startWith(t, stack.Options{AppRules: mobileRules(t)}, setup.EnvAuth, setup.AuthFirebase,
		setup.EnvCounts, "posts:views,likes=count(likes),comments=count(comments),views_today=views per day,hot=trend(likes + views/10, 6h)")
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	post, other := fs.Collection("posts").Doc(emulatortest.ID(t)), fs.Collection("posts").Doc("other-"+emulatortest.ID(t))
	for _, p := range []string{post.ID, other.ID} {
		if _, err := fs.Collection("posts").Doc(p).Create(ctx, map[string]any{"title": "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	out := runE2E(t, node, "mobile.mjs", "MOBILE_CONFIG", map[string]string{"project": stack.DefaultProject, "firestore": s.EmulatorHost, "auth": s.AuthHost,
		"url": s.FunctionsURL + "/Increment", "post": "posts/" + post.ID, "other": "posts/" + other.ID})
	var saw struct {
		First, Retried, Again map[string]any
		Counts                map[string]int
		ByToday, ByHot        []string
	}
	if err := json.Unmarshal(out, &saw); err != nil {
		t.Fatalf("the app said %q: %v", out, err)
	}
	if saw.First["changed"] != true || !reflect.DeepEqual(saw.First, saw.Retried) || saw.Again["changed"] != false {
		t.Errorf("views: first %v, its retry %v, another within the hour %v; want counted, answered the same, and not counted", saw.First, saw.Retried, saw.Again)
	}
	if want := map[string]int{"likes": 1, "comments": 1, "views": 2, "viewsToday": 2}; !reflect.DeepEqual(saw.Counts, want) {
		t.Errorf("the listener saw %v; want %v", saw.Counts, want)
	}
	if strings.Join(saw.ByToday, ",") != post.ID+","+other.ID || strings.Join(saw.ByHot, ",") != post.ID+","+other.ID {
		t.Errorf("the feed by views today %v, by trend %v; want the post, then the other", saw.ByToday, saw.ByHot)
	}
}
