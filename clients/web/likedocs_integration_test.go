package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
	s := startLocal(t, setup.EnvAuth, setup.AuthFirebase, setup.EnvCounts, "posts:views,likes=count(likes)")
	loadMobileRules(t, s)
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	post := fs.Collection("posts").Doc(emulatortest.ID(t))
	if _, err := post.Create(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
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

// loadMobileRules replaces the example rules' match for the posts' likes
// with the one docs/mobile.md gives, and loads them into the emulator.
func loadMobileRules(t *testing.T, s *stack.Stack) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "mobile.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- mobile test: rules -->\n```\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/mobile.md has no rules block")
	}
	rules, err := os.ReadFile(s.Rules)
	if err != nil {
		t.Fatal(err)
	}
	example := regexp.MustCompile(`(?s)    match /posts/\{doc0\}/likes/\{child\} \{.*?\n    \}\n`)
	if !example.Match(rules) {
		t.Fatalf("the example rules have no match for the posts' likes:\n%s", rules)
	}
	mine := "    " + strings.ReplaceAll(strings.TrimSpace(string(m[1])), "\n", "\n    ") + "\n"
	rules = example.ReplaceAll(rules, []byte(mine))
	body, _ := json.Marshal(map[string]any{"rules": map[string]any{"files": []map[string]string{{"name": "firestore.rules", "content": string(rules)}}}})
	req, _ := http.NewRequest(http.MethodPut, "http://"+s.EmulatorHost+"/emulator/v1/projects/"+stack.DefaultProject+":securityRules", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("loading the rules: %s", resp.Status)
	}
}
