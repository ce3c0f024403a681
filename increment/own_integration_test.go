package increment

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestKeyedStepInQuietDocument: with InDocument, a plain step with an
// Idempotency-Key of a quiet document is written into the document itself
// with its key's record, in one commit of two writes, and answered so; a
// retry with the key, at once and once the document is quiet again, gets
// the first answer and counts nothing more; the key sent with another
// step is refused with nothing written; a step within the spacing of the
// last goes to a shard (or, on a machine so slow that the spacing passed
// between them, into the document a spacing later), its key kept as well.
func TestKeyedStepInQuietDocument(t *testing.T) {
	const spacing = time.Second
	l := postsLayout(t)
	c, ops := emulatortest.CountingClient(t)
	h := New(c, Config{Layout: layouttest.Public(l), InDocument: true, Spacing: spacing})
	name := "posts/" + emulatortest.ID(t)
	ctx := context.Background()
	if _, err := c.Doc(name).Create(ctx, map[string]any{"title": "hi"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(spacing) // quiet since its making
	ops.Reset()
	likes := func(by int64, key string) (int, Response, string) {
		return call(h, "", fmt.Sprintf(`{"counter":%q,"field":"likes","by":%d}`, name, by), "Idempotency-Key", key)
	}
	code, first, raw := likes(3, "k1")
	if code != http.StatusOK || !first.InDocument || first.Shard != -1 || first.Committed == "" {
		t.Fatalf("a keyed step of a quiet document: %d %s; want 200, in the document, with its commit time", code, raw)
	}
	if ops.Writes() != 2 || ops.Transactions() != 1 {
		t.Errorf("it wrote %d documents in %d transactions; want 2 (the document and the key's record) in 1", ops.Writes(), ops.Transactions())
	}
	inDoc := func(want int64) {
		t.Helper()
		snap, err := c.Doc(name).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		own, _ := snap.DataAtPath(l.OwnPath(core.Count{Field: "likes", Shard: "likes"}))
		if n, _ := snap.Data()["likes"].(int64); n != want || own != want || snap.Data()["title"] != "hi" {
			t.Errorf("the document: %v; want likes %d, its own part %d, the title kept", snap.Data(), want, want)
		}
	}
	inDoc(3)
	if snap, err := c.Doc(name).Get(ctx); err != nil {
		t.Fatal(err)
	} else if written, _ := snap.DataAtPath(l.WrittenPath()); written == nil || first.Committed != written.(time.Time).UTC().Format(time.RFC3339Nano) {
		t.Errorf("answered committed %s, and the document's written is %v: a listener could not tell it holds the step", first.Committed, written)
	}
	writes := ops.Writes()
	for _, wait := range []time.Duration{0, spacing} { // at once, then quiet again: the record is there either way
		time.Sleep(wait)
		if code, again, raw := likes(3, "k1"); code != http.StatusOK || again != first {
			t.Errorf("a retry after %v: %d %s; want the first answer %+v", wait, code, raw, first)
		}
	}
	if code, _, raw := likes(5, "k1"); code != http.StatusUnprocessableEntity {
		t.Errorf("the key with another step: %d %s; want 422", code, raw)
	}
	if ops.Writes() != writes {
		t.Errorf("retries and a refusal wrote %d documents; want none", ops.Writes()-writes)
	}
	inDoc(3)
	if got := fieldSums(t, c, l, name); len(got) != 0 {
		t.Errorf("shards %v; want none", got)
	}
	// Two steps at once: the first into the document, the next, within
	// its spacing, to a shard; each key answers its own again.
	_, a, _ := likes(1, "k2")
	code, b, raw := likes(1, "k3")
	if code != http.StatusOK || !a.InDocument {
		t.Fatalf("two steps at once: %+v and %d %s; want both taken, the first in the document", a, code, raw)
	}
	if _, again, _ := likes(1, "k3"); again != b {
		t.Errorf("a retry of the second step: %+v, want %+v", again, b)
	}
	if b.InDocument { // the spacing passed between them
		at, _ := time.Parse(time.RFC3339Nano, a.Committed)
		bt, _ := time.Parse(time.RFC3339Nano, b.Committed)
		if bt.Sub(at) < spacing {
			t.Errorf("two writes into the document %v apart, within the spacing %v", bt.Sub(at), spacing)
		}
		inDoc(5)
		return
	}
	inDoc(4)
	if got := fieldSums(t, c, l, name); got["likes"] != 1 || b.Shard < 0 {
		t.Errorf("shards %v, the step's shard %d; want likes 1 on it", got, b.Shard)
	}
}
