package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// TestMobileRecipe runs docs/mobile.md end to end with the JS SDK standing
// in for a native one, against serve's stack on the ports it was given,
// with the page's counts and rules: a like as a document, a comment, a
// view once an hour with an Idempotency-Key (sent again as a retry, it is
// answered as the first and counted once; a second within the hour is not
// counted), one listener that sees every count, and the feed by views
// today and by trend, the post most viewed and liked first.
func TestMobileRecipe(t *testing.T) {
	t.Parallel()
	node := needNode(t)
	ports, s := startOnFreePorts(t, setup.EnvAuth, setup.AuthFirebase,
		setup.EnvCounts, "posts:views,likes=count(likes),comments=count(comments),views_today=views per day,hot=trend(likes + views/10, 6h)")
	if want := fmt.Sprintf("127.0.0.1:%d", ports[1]); s.EmulatorHost != want || s.AuthHost != fmt.Sprintf("127.0.0.1:%d", ports[2]) {
		t.Fatalf("the stack is at %s and %s; want the ports given, %s and %d", s.EmulatorHost, s.AuthHost, want, ports[2])
	}
	loadMobileRules(t, s)
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	post, other := fs.Collection("posts").Doc(emulatortest.ID(t)), fs.Collection("posts").Doc("other-"+emulatortest.ID(t))
	for _, p := range []string{post.ID, other.ID} {
		if _, err := fs.Collection("posts").Doc(p).Create(ctx, map[string]any{"title": "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	out := runE2E(t, node, "mobile.mjs", "MOBILE_CONFIG", map[string]string{"project": stack.DefaultProject, "firestore": s.EmulatorHost, "auth": s.AuthHost,
		"url": fmt.Sprintf("http://127.0.0.1:%d/Increment", ports[0]), "post": "posts/" + post.ID, "other": "posts/" + other.ID})
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

// startOnFreePorts is startOn on ports found free: a port found free may
// be taken by another process before the stack binds it, so it tries
// again on others, as serve's user would.
func startOnFreePorts(t *testing.T, env ...string) ([3]int, *stack.Stack) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		var ports [3]int
		for i := range ports {
			var err error
			if ports[i], err = emulator.FreePort("127.0.0.1"); err != nil {
				t.Fatal(err)
			}
		}
		s, err := tryStartOn(t, ports, env...)
		if err == nil || !strings.Contains(err.Error(), "address already in use") || attempt == 3 {
			if err != nil {
				t.Fatal(err)
			}
			return ports, s
		}
	}
}
