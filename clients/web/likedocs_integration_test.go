package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
	"github.com/tallycounters/tally/internal/tools/npmci"
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
	emulatortest.Without(t, "Node.js")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(nodeHelp)
	}
	if _, err := npmci.Install(context.Background(), ".", filepath.Join("firebase", "package.json"), "the web client's build tools", os.Stderr); err != nil {
		t.Fatal(err)
	}
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
	cfg, _ := json.Marshal(map[string]string{"project": stack.DefaultProject, "firestore": s.EmulatorHost, "auth": s.AuthHost,
		"email": "lin@example.com", "password": "secret-password", "post": "posts/" + post.ID})
	nctx, cancel := context.WithTimeout(ctx, 3*time.Minute) // a bound for a machine many times slower
	defer cancel()
	cmd := exec.CommandContext(nctx, node, filepath.Join("e2e", "likedocs.mjs"))
	cmd.Env = append(os.Environ(), "LIKE_CONFIG="+string(cfg))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node e2e/likedocs.mjs: %v\n%s%s", err, out, stderr.String())
	}
	var saw struct {
		ShownOffline bool   `json:"shownOffline"`
		SameUser     bool   `json:"sameUser"`
		UID          string `json:"uid"`
		Refused      string `json:"refused"`
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &saw); err != nil {
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
