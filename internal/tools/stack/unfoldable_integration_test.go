package stack

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/setup"
)

// hugeBody is a body with which the post at name is within Firestore's
// 1 MiB a document, by 30 bytes, and too big to take tally's fields: its
// fold is refused, for good. (A document's size is its name's, its length
// plus 17, plus each field's name and value, each its length plus 1, plus
// 32 bytes.)
func hugeBody(name string) string {
	return strings.Repeat("x", 1<<20-30-(len(name)+17)-(len("body")+1)-1-32)
}

// TestOneDocumentStopsNothing: a post whose fold Firestore refuses for
// good (it is too big to take its counts) neither stops the stack from
// starting nor a reconcile of everything from finishing: every other post
// is folded, and the stack says which could not be, and why.
func TestOneDocumentStopsNothing(t *testing.T) {
	t.Parallel()
	paths := emulatortest.RequirePaths(t)
	cfg, err := setup.ConfigFromEnv(func(k string) string {
		return map[string]string{"TALLY_COUNTS": "posts:likes,comments=count(comments)"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Project = emulatortest.Project
	e, err := emulatortest.Start(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	ctx := context.Background()
	client := emulatortest.ClientAt(t, e.Host(), emulatortest.Project)
	huge, fine := "posts/"+emulatortest.ID(t)+"-huge", "posts/"+emulatortest.ID(t)+"-fine"
	if _, err := client.Doc(huge).Create(ctx, map[string]any{"body": hugeBody(huge)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Doc(fine).Create(ctx, map[string]any{"body": "short"}); err != nil {
		t.Fatal(err)
	}
	s, err := Start(ctx, Options{Config: cfg, Emulator: paths, ExternalHost: e.Host()})
	if err != nil {
		t.Fatalf("Start: %v; want it to start whatever one document holds", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s.Stop(ctx) // it says the huge post is not folded
	}()
	if len(s.Unsettled) != 1 || s.Unsettled[0].Counter != huge || !strings.Contains(s.Unsettled[0].Err.Error(), "maximum entity size") {
		t.Errorf("Unsettled = %v; want the huge post, and why", s.Unsettled)
	}
	snap, err := client.Doc(fine).Get(ctx)
	if err != nil || snap.Data()["likes"] != int64(0) || snap.Data()["comments"] != int64(0) {
		t.Errorf("the other post = %v, %v; want it folded, likes and comments 0", snap.Data(), err)
	}
	var reported []string
	admin := counter.New(client, counter.Options{Layout: cfg.Layout})
	err = admin.ReconcileAll(ctx, func(d counter.Drift, err error) {
		if err != nil {
			reported = append(reported, d.Counter)
		}
	})
	if !errors.Is(err, counter.ErrSomeFailed) || len(reported) != 1 || reported[0] != huge {
		t.Errorf("ReconcileAll = %v, reported %v; want it to finish, saying the huge post could not be folded", err, reported)
	}
}
