package listen_test

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/fsrpc"
	"github.com/tallycounters/tally/internal/listen"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// ending ends the client's listen streams on demand with the error the
// server would have sent, as a connection to the emulator sees it; or
// stalls them: they stay open, and hand on nothing.
type ending struct {
	mu        sync.Mutex
	err       error
	cancels   []context.CancelFunc
	open      []*endable
	stallNext bool // the next stream opened stalls from its start
}

// stall stalls each open listen stream.
func (e *ending) stall() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.open {
		s.stalled.Store(true)
	}
}

// end ends each open listen stream with err.
func (e *ending) end(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.err = err
	for _, c := range e.cancels {
		c()
	}
	e.cancels = nil
}

func (e *ending) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if method != "/google.firestore.v1.Firestore/Listen" {
		return streamer(ctx, desc, cc, method, opts...)
	}
	sctx, cancel := context.WithCancel(ctx)
	s, err := streamer(sctx, desc, cc, method, opts...)
	if err != nil {
		cancel()
		return nil, err
	}
	st := &endable{ClientStream: s, e: e}
	e.mu.Lock()
	e.err = nil
	e.cancels = append(e.cancels, cancel)
	e.open = append(e.open, st)
	st.stalled.Store(e.stallNext)
	e.stallNext = false
	e.mu.Unlock()
	return st, nil
}

type endable struct {
	grpc.ClientStream
	e       *ending
	stalled atomic.Bool
}

func (s *endable) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	for err == nil && s.stalled.Load() {
		err = s.ClientStream.RecvMsg(m) // what a stalled stream receives goes nowhere
	}
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	if err != nil && s.e.err != nil {
		return s.e.err
	}
	return err
}

// follow listens to doc with listen.Snapshots until ctx ends, sending the
// title of each snapshot, then the error it ended with.
func follow(ctx context.Context, doc *firestore.DocumentRef) (<-chan string, <-chan error) {
	titles, ended := make(chan string, 16), make(chan error, 1)
	go func() {
		for snap, err := range listen.Snapshots(ctx, doc) {
			if err != nil {
				ended <- err
				return
			}
			title, _ := snap.Data()["title"].(string)
			titles <- title
		}
		ended <- nil
	}()
	return titles, ended
}

func next(t *testing.T, titles <-chan string) string {
	t.Helper()
	select {
	case title := <-titles:
		return title
	case <-time.After(emulatortest.Liveness): // a liveness bound
		t.Fatal("no snapshot within a minute")
		return ""
	}
}

func setup(t *testing.T) (*ending, *firestore.DocumentRef) {
	emulatortest.Require(t)
	e := &ending{}
	fs, err := fsrpc.EmulatorClient(context.Background(), os.Getenv("FIRESTORE_EMULATOR_HOST"), emulatortest.Project, firestore.DefaultDatabaseID,
		[]grpc.DialOption{grpc.WithChainStreamInterceptor(e.intercept)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	doc := fs.Collection("posts").Doc(emulatortest.ID(t))
	if _, err := doc.Set(context.Background(), map[string]any{"title": "v1"}); err != nil {
		t.Fatal(err)
	}
	return e, doc
}

func TestResumesAfterTheServerCancels(t *testing.T) {
	e, doc := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	titles, ended := follow(ctx, doc)
	if got := next(t, titles); got != "v1" {
		t.Fatalf("first snapshot %q, want v1", got)
	}
	// Unchanged while the stream is down: the reopened stream's first
	// snapshot is not handed on.
	e.end(status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL"))
	time.Sleep(300 * time.Millisecond) // past the first backoff: the stream is open again
	retitle(t, ctx, doc, "v2")
	if got := next(t, titles); got != "v2" {
		t.Fatalf("after the stream was cancelled: %q, want v2 (and v1 only once)", got)
	}
	// Changed while the stream is down: the change comes with the new stream.
	e.end(status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL"))
	retitle(t, ctx, doc, "v3")
	if got := next(t, titles); got != "v3" {
		t.Fatalf("after a change while the stream was down: %q, want v3", got)
	}
	cancel()
	if err := <-ended; err != nil {
		t.Errorf("ended with %v once the caller's context ended, want no error", err)
	}
}

// TestResumesAfterTheStreamStalls: a stream that stays open and silent
// while its document changes (as the emulator's were seen to, for minutes,
// under load), or that never hands on its first snapshot, is found by the
// watchdog and opened again, and the change comes; a stream of a document
// that does not change is left open.
func TestResumesAfterTheStreamStalls(t *testing.T) {
	defer listen.SetStallCheck(100 * time.Millisecond)()
	e, doc := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	titles, _ := follow(ctx, doc)
	if got := next(t, titles); got != "v1" {
		t.Fatalf("first snapshot %q, want v1", got)
	}
	before := listen.Stalls()
	time.Sleep(time.Second) // ten checks of an unchanged document
	if n := listen.Stalls() - before; n != 0 {
		t.Errorf("%d streams of a document that did not change were taken as stalled, want none", n)
	}
	e.stall()
	retitle(t, ctx, doc, "v2")
	if got := next(t, titles); got != "v2" {
		t.Fatalf("after the stream stalled: %q, want v2", got)
	}
	e.mu.Lock()
	e.stallNext = true
	e.mu.Unlock()
	e.end(status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL"))
	retitle(t, ctx, doc, "v3")
	if got := next(t, titles); got != "v3" {
		t.Fatalf("after a stream that never answered: %q, want v3", got)
	}
}

func TestEndsOnAFailureForGood(t *testing.T) {
	e, doc := setup(t)
	titles, ended := follow(context.Background(), doc)
	if got := next(t, titles); got != "v1" {
		t.Fatalf("first snapshot %q, want v1", got)
	}
	endForGood(t, e, ended)
}

// TestQueryResumesAfterTheServerCancels: a query's listener whose stream
// the server cancels opens it again, and sees the changes made meanwhile;
// one that fails for good ends with the error.
func TestQueryResumesAfterTheServerCancels(t *testing.T) {
	e, doc := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	titles, ended := make(chan string, 16), make(chan error, 1)
	go func() {
		for snap, err := range listen.Query(ctx, doc.Parent.Where("title", ">=", "")) {
			if err != nil {
				ended <- err
				return
			}
			for _, ch := range snap.Changes {
				if ch.Doc.Ref.ID == doc.ID {
					title, _ := ch.Doc.Data()["title"].(string)
					titles <- title
				}
			}
		}
		ended <- nil
	}()
	if got := next(t, titles); got != "v1" {
		t.Fatalf("first snapshot %q, want v1", got)
	}
	e.end(status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL"))
	retitle(t, ctx, doc, "v2")
	// The reopened stream lists every result again: v1 may come once more
	// if it opened before the change.
	got := next(t, titles)
	if got == "v1" {
		got = next(t, titles)
	}
	if got != "v2" {
		t.Fatalf("after the stream was cancelled: %q, want v2", got)
	}
	endForGood(t, e, ended)
}

// retitle sets doc's title. The emulator answers a commit Canceled ("call
// already cancelled") when it hands the change to a listen stream the
// client has just cancelled, though the write is applied; the same write
// is made again then, which the listener sees as one version or two of
// the same title.
func retitle(t *testing.T, ctx context.Context, doc *firestore.DocumentRef, title string) {
	t.Helper()
	for tries := 1; ; tries++ {
		_, err := doc.Set(ctx, map[string]any{"title": title})
		if err == nil {
			return
		}
		if status.Code(err) != codes.Canceled || tries == 5 {
			t.Fatal(err)
		}
	}
}

// endForGood fails the listener's stream for good and checks that it ends
// with that error.
func endForGood(t *testing.T, e *ending, ended <-chan error) {
	t.Helper()
	e.end(status.Error(codes.PermissionDenied, "denied"))
	select {
	case err := <-ended:
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("ended with %v, want the listener's PermissionDenied", err)
		}
	case <-time.After(emulatortest.Liveness): // a liveness bound
		t.Fatal("the listener did not end within a minute of failing for good")
	}
}
