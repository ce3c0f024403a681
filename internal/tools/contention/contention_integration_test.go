package contention

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// proxied starts a proxy to the test emulator and returns a client through
// it, and one straight to the emulator.
func proxied(t *testing.T, o Options) (*Proxy, *firestore.Client, *firestore.Client) {
	t.Helper()
	direct := emulatortest.Client(t)
	o.Target = os.Getenv("FIRESTORE_EMULATOR_HOST")
	p, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, emulatortest.ClientAt(t, p.Addr, emulatortest.Project), direct
}

// TestHotDocument writes one document 60 times at once through a proxy
// that lets it take 10 writes at once and hardly any after: the 10 are
// answered OK, the rest are refused with ABORTED, and the document holds
// exactly the writes answered OK: a refused one never reached the
// emulator.
func TestHotDocument(t *testing.T) {
	t.Parallel()
	p, c, direct := proxied(t, Options{Rate: 0.001, Burst: 10, MaxWait: 200 * time.Millisecond})
	id := emulatortest.ID(t)
	ref := c.Collection("hot").Doc(id)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codesSeen := map[codes.Code]int{}
	for range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ref.Set(context.Background(), map[string]any{"n": firestore.Increment(1)}, firestore.MergeAll)
			mu.Lock()
			codesSeen[status.Code(err)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	ok, aborted := codesSeen[codes.OK], codesSeen[codes.Aborted]
	if ok != 10 || aborted != 50 {
		t.Fatalf("answers by code %v: want OK for the 10 of the burst, ABORTED for the other 50", codesSeen)
	}
	snap, err := direct.Collection("hot").Doc(id).Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := snap.Data()["n"].(int64); n != int64(ok) {
		t.Errorf("the document holds %d; %d writes were answered OK", n, ok)
	}
	st := p.Stats()
	if st.Aborted != int64(aborted) || st.Commits != 60 {
		t.Errorf("stats %+v; want 60 commits, %d aborted", st, aborted)
	}
}

// TestSlowed writes one document twice in a row where it takes a write
// every 5 s: the second waits for its turn, and both are written.
func TestSlowed(t *testing.T) {
	t.Parallel()
	p, c, _ := proxied(t, Options{Rate: 0.2, Burst: 1, MaxWait: time.Minute})
	ref := c.Collection("slow").Doc(emulatortest.ID(t))
	for range 2 {
		if _, err := ref.Set(context.Background(), map[string]any{"n": firestore.Increment(1)}, firestore.MergeAll); err != nil {
			t.Fatal(err)
		}
	}
	if st := p.Stats(); st.Commits != 2 || st.Slowed != 1 || st.Aborted != 0 {
		t.Errorf("stats %+v: want 2 commits, the second slowed", st)
	}
}

// TestSpreadWrites writes 60 documents at once, one write each, and reads
// and queries through the proxy: nothing waits or is refused, and what is
// read is what was written.
func TestSpreadWrites(t *testing.T) {
	t.Parallel()
	p, c, _ := proxied(t, Options{Rate: 1, Burst: 1, MaxWait: time.Millisecond})
	coll := c.Collection(emulatortest.ID(t))
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := coll.Doc(fmt.Sprint(i)).Set(context.Background(), map[string]any{"i": i})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	docs, err := coll.Documents(context.Background()).GetAll()
	if err != nil || len(docs) != 60 {
		t.Fatalf("a query through the proxy: %d documents, %v", len(docs), err)
	}
	res, err := coll.NewAggregationQuery().WithSum("i", "s").Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s := res["s"].(*firestorepb.Value).GetIntegerValue(); s != 1770 {
		t.Errorf("sum through the proxy: %v, want 1770", s)
	}
	if st := p.Stats(); st.Slowed != 0 || st.Aborted != 0 || st.Commits != 60 {
		t.Errorf("stats %+v: want 60 commits, none slowed or refused", st)
	}
}

// TestListenThrough holds a listener through the proxy while a document
// changes: it sees each change, and stops when asked.
func TestListenThrough(t *testing.T) {
	t.Parallel()
	_, c, direct := proxied(t, Options{})
	id := emulatortest.ID(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.Collection("listened").Doc(id).Snapshots(ctx)
	defer it.Stop()
	if _, err := it.Next(); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := direct.Collection("listened").Doc(id).Set(ctx, map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
		snap, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := snap.Data()["i"].(int64); got != int64(i) {
			t.Fatalf("the listener saw %d, want %d", got, i)
		}
	}
}
