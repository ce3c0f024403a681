// Package extworker stands in for the workers of Firebase's
// firestore-counter extension, for tally's tests and bench: written
// against the extension's protocol (see package extension), it moves
// client shards into partials and partials into their documents, each
// move one transaction, as the extension's workers do, so that tally can
// be run beside a running extension. It also leaves their state where
// the extension keeps it.
package extworker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
)

// prefix is how many characters of a shard's id name the partial its
// counts are moved into: "\t" and the first four.
const prefix = 4

// Worker moves counts as the extension's workers do.
type Worker struct {
	Client *firestore.Client
}

// ToPartials moves the client shards of doc into partials: in one
// transaction, it reads them, adds each one's amounts to the partial of
// its id's prefix with an array union (a blind write, as the extension's
// workers make it), and deletes them. It returns the shards moved.
func (w Worker) ToPartials(ctx context.Context, doc string) (int, error) {
	n := 0
	err := w.Client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		n = 0
		snaps, err := tx.Documents(w.Client.Doc(doc).Collection(extension.Collection)).GetAll()
		if err != nil {
			return err
		}
		sums := map[string]map[string]any{}
		var moved []*firestore.DocumentRef
		for _, s := range snaps {
			id := s.Ref.ID
			if strings.HasPrefix(id, "\t") || len(id) < prefix {
				continue
			}
			p := "\t" + id[:prefix]
			if sums[p] == nil {
				sums[p] = map[string]any{}
			}
			if !addInto(sums[p], s.Data()) {
				continue // not a count: left alone, as the extension leaves it
			}
			moved = append(moved, s.Ref)
		}
		for p, sum := range sums {
			if err := tx.Set(w.Client.Doc(doc).Collection(extension.Collection).Doc(p), update(sum), firestore.MergeAll); err != nil {
				return err
			}
		}
		for _, r := range moved {
			if err := tx.Delete(r); err != nil {
				return err
			}
		}
		n = len(moved)
		return nil
	})
	return n, err
}

// ToDocument moves doc's partials into doc: in one transaction, it reads
// doc and its partials, adds their amounts to doc's fields, and appends
// to each partial the negation of what it held, as the extension's
// workers decrement a partial.
func (w Worker) ToDocument(ctx context.Context, doc string) (int, error) {
	n := 0
	err := w.Client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		n = 0
		ref := w.Client.Doc(doc)
		if _, err := tx.Get(ref); err != nil && !notFound(err) {
			return err
		}
		snaps, err := tx.Documents(ref.Collection(extension.Collection).Where(firestore.DocumentID, ">=", ref.Collection(extension.Collection).Doc("\t")).
			Where(firestore.DocumentID, "<", ref.Collection(extension.Collection).Doc("\n"))).GetAll()
		if err != nil {
			return err
		}
		total := map[string]any{}
		var writes []func() error
		for _, s := range snaps {
			a, err := extension.PartialAmounts(s.Data())
			if err != nil || len(a) == 0 {
				continue
			}
			neg := map[string]any{}
			for _, p := range a.Paths() {
				v := a.Of(p)
				core.SetAt(total, p, add(getPath(total, p), v))
				core.SetAt(neg, p, negate(v))
			}
			r := s.Ref
			writes = append(writes, func() error { return tx.Set(r, update(neg), firestore.MergeAll) })
			n++
		}
		if n == 0 {
			return nil
		}
		if err := tx.Set(ref, increments(total), firestore.MergeAll); err != nil {
			return err
		}
		for _, wr := range writes {
			if err := wr(); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// Run moves the counts of docs every period, shards to partials and
// partials to documents, until ctx is done. A failed move is retried in
// the next round, as the extension's workers retry.
func (w Worker) Run(ctx context.Context, docs []string, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		for _, d := range docs {
			w.ToPartials(ctx, d)
			w.ToDocument(ctx, d)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// LeaveState writes the extension's workers' state at path, as an
// installed extension leaves it: the controller's document and workers
// of its own.
func (w Worker) LeaveState(ctx context.Context, path string, workers int) error {
	ref := w.Client.Doc(path)
	if ref == nil {
		return fmt.Errorf("extworker: %q is not a document's path", path)
	}
	var slices []any
	for i := range workers {
		id := fmt.Sprintf("%04x", i)
		slice := map[string]any{"start": "", "end": ""}
		slices = append(slices, slice)
		if _, err := ref.Collection("workers").Doc(id).Set(ctx, map[string]any{"slice": slice, "timestamp": firestore.ServerTimestamp}); err != nil {
			return err
		}
	}
	_, err := ref.Set(ctx, map[string]any{"workers": slices, "timestamp": firestore.ServerTimestamp})
	return err
}

// update is a partial's update adding amounts: one more entry of its
// list, with an id of its own.
func update(amounts map[string]any) map[string]any {
	return map[string]any{"_updates_": firestore.ArrayUnion(map[string]any{"_id_": uuid.NewString(), "_data_": amounts})}
}

// Increment is a client's increment of field on its shard, as the
// extension's clients make it: a merge-set of a server-side increment,
// field a dotted path of maps. A write that a transaction's lock refused
// (ABORTED: nothing was written) is sent again, as the Firebase SDKs
// send a write again. It returns the write's commit time.
func Increment(ctx context.Context, shard *firestore.DocumentRef, field string, by int64) (time.Time, error) {
	var v any = firestore.Increment(by)
	parts := strings.Split(field, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		v = map[string]any{parts[i]: v}
	}
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		wr, err := shard.Set(ctx, v.(map[string]any), firestore.MergeAll)
		if status.Code(err) != codes.Aborted {
			if err != nil {
				return time.Time{}, err
			}
			return wr.UpdateTime, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, err
		case <-time.After(backoff):
		}
	}
}
