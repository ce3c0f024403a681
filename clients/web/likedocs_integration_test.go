package web_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// TestLikeDocumentsFromTwoDevices runs docs/mobile.md's like as a
// document end to end, under the rules that page gives, with the Firebase
// JS SDK standing in for a mobile one: a like written offline is shown at
// once and counted once the device is back online; a second device of
// the same user writing its like adds nothing; a like for another user is
// refused. A second user's like then makes the count 2: the fold that
// counts it comes after both devices' writes, so 2 is the count with each
// user once.
func TestLikeDocumentsFromTwoDevices(t *testing.T) {
	t.Parallel()
	node := needNode(t)
	s := startWith(t, stack.Options{AppRules: mobileRules(t)}, setup.EnvAuth, setup.AuthFirebase, setup.EnvCounts, "posts:views,likes=count(likes)")
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	post := newPost(t, fs)
	if _, err := authemu.SignUp(s.AuthHost, "lin@example.com", "secret-password"); err != nil {
		t.Fatal(err)
	}
	out := runE2E(t, node, "likedocs.mjs", "LIKE_CONFIG", map[string]string{"project": stack.DefaultProject, "firestore": s.EmulatorHost, "auth": s.AuthHost,
		"email": "lin@example.com", "password": "secret-password", "post": "posts/" + post.ID})
	var saw struct {
		ShownOffline bool   `json:"shownOffline"`
		SameUser     bool   `json:"sameUser"`
		UID          string `json:"uid"`
		Refused      string `json:"refused"`
	}
	if err := json.Unmarshal(out, &saw); err != nil {
		t.Fatalf("the devices said %q: %v", out, err)
	}
	if !saw.ShownOffline || !saw.SameUser || saw.Refused != "permission-denied" {
		t.Errorf("the devices saw %+v; want the offline like shown at once, one user on both, and a like for another refused", saw)
	}
	emulatortest.WaitField(t, post, "likes", 1)
	if _, err := post.Collection("likes").Doc("another-user").Create(ctx, map[string]any{"at": time.Now()}); err != nil {
		t.Fatal(err)
	}
	emulatortest.WaitField(t, post, "likes", 2)
	likes, err := post.Collection("likes").Documents(ctx).GetAll()
	if err != nil || len(likes) != 2 {
		t.Errorf("the post has %d like documents (%v); want 2, one per user", len(likes), err)
	}
}

// mobileRules writes the app's rules file docs/mobile.md gives into a
// directory of the test's, and names it, for serve --rules.
func mobileRules(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "mobile.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- mobile test: rules -->\n```\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/mobile.md has no rules block")
	}
	file := filepath.Join(t.TempDir(), "app.rules")
	if err := os.WriteFile(file, m[1], 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
