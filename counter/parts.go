package counter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// The jobs past one invocation. The boundary job and Reconcile list their
// documents (Split) in parts of at most a part size each, and each part
// runs on its own (RunPart): in parallel invocations when the parts fan
// out through Pub/Sub, as deployed, or here. A part is idempotent: a
// boundary fold and a reconcile are each a compare-and-set at a read
// time, so a part run twice, or a document in two parts, moves nothing
// twice.

// The jobs that run in parts.
const (
	JobWindows   = "windows"   // the boundary job: moves the windows of the documents due
	JobReconcile = "reconcile" // Reconcile: folds every counter, and reports drift
)

// DefaultPartSize is how many documents a part holds at most unless told.
const DefaultPartSize = 1000

// Part is one part of a job: the documents it moves or reconciles, or a
// listing to go on with. It is what a Pub/Sub message carries, as JSON.
type Part struct {
	Job   string    `json:"job"`             // JobWindows or JobReconcile
	At    time.Time `json:"at"`              // when the job began: documents due then move to the start of its bucket
	Seq   int       `json:"seq"`             // the part's number in its job, from 1 (a listing's: its first part's)
	Names []string  `json:"names,omitempty"` // the documents (counter names) of the part
	After *Cursor   `json:"after,omitempty"` // or: the job's listing, to go on from this cursor
}

// Cursor is where a listing stopped: after the document Path (its path
// in the database), whose next_boundary was Boundary, in the Query'th
// query; or, for the guide layout's counters, before the page Token.
type Cursor struct {
	Query    int       `json:"query"`
	Boundary time.Time `json:"boundary,omitzero"`
	Path     string    `json:"path,omitempty"`
	Token    string    `json:"token,omitempty"`
}

// Validate says what is wrong with a part that came from outside.
func (p Part) Validate() error {
	switch {
	case p.Job != JobWindows && p.Job != JobReconcile:
		return fmt.Errorf("counter: a part of job %q: want %s or %s", p.Job, JobWindows, JobReconcile)
	case p.At.IsZero():
		return errors.New("counter: a part without the time its job began (at)")
	case len(p.Names) == 0 && p.After == nil:
		return errors.New("counter: a part with neither names nor a listing to go on with")
	case len(p.Names) > 0 && p.After != nil:
		return errors.New("counter: a part with both names and a listing to go on with")
	}
	return nil
}

// ID names the job a part is of, in logs.
func (p Part) ID() string { return p.Job + "@" + p.At.UTC().Format(time.RFC3339Nano) }

// SplitReport is what a listing of a job found.
type SplitReport struct {
	Job   string `json:"job"`
	Due   int    `json:"due"`            // documents listed: due at a boundary, or counters to reconcile
	Parts int    `json:"parts"`          // parts handed on, of at most the part size each
	More  bool   `json:"more,omitempty"` // the listing stopped at its deadline, and a part goes on with it
}

// Split lists the documents of the job of p (from p.After, if it goes on
// with a listing) in parts of at most size names each, numbered from
// p.Seq, and hands each to emit as it is made. The boundary job's
// listing reads only the names and next_boundary of the documents due at
// p.At; Reconcile's, the name of every counter. Once deadline passes (if
// it is not zero), a listing stops and hands emit one more part, which
// goes on from there.
func (c *Client) Split(ctx context.Context, p Part, size int, deadline time.Time, emit func(Part) error) (SplitReport, error) {
	if size <= 0 {
		size = DefaultPartSize
	}
	rep := SplitReport{Job: p.Job}
	seq := max(p.Seq, 1)
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		part := Part{Job: p.Job, At: p.At, Seq: seq, Names: batch}
		seq++
		batch = nil
		rep.Parts++
		return emit(part)
	}
	add := func(name string) error {
		rep.Due++
		batch = append(batch, name)
		if len(batch) >= size {
			return flush()
		}
		return nil
	}
	list := c.listDue
	if p.Job == JobReconcile {
		list = c.listCounters
	}
	stopped, err := list(ctx, p, deadline, add)
	if err == nil {
		err = flush()
	}
	if err != nil || stopped == nil {
		return rep, err
	}
	rep.More = true
	return rep, emit(Part{Job: p.Job, At: p.At, Seq: seq, After: stopped})
}

// listDue calls add with each document due at p.At, from p.After on,
// reading its name and next_boundary only, in order, until deadline:
// then it returns where it stopped (nil if it listed them all).
func (c *Client) listDue(ctx context.Context, p Part, deadline time.Time, add func(string) error) (*Cursor, error) {
	next := c.folder.NextBoundaryPath()
	for i, q := range c.folder.DueQueries(p.At) {
		if p.After != nil && i < p.After.Query {
			continue
		}
		q = q.SelectPaths(next).OrderByPath(next, firestore.Asc).OrderBy(firestore.DocumentID, firestore.Asc)
		if p.After != nil && i == p.After.Query {
			q = q.StartAfter(p.After.Boundary, c.fs.Doc(p.After.Path))
		}
		var stopped *Cursor
		err := fsrpc.EachDocument(ctx, q, func(snap *firestore.DocumentSnapshot) (bool, error) {
			if name, ok := c.folder.DueName(snap.Ref); ok {
				if err := add(name); err != nil {
					return false, err
				}
			}
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				b, _ := snap.DataAtPath(next)
				at, _ := b.(time.Time)
				stopped = &Cursor{Query: i, Boundary: at, Path: core.Relative(snap.Ref)}
				return false, nil
			}
			return true, nil
		})
		if err != nil {
			return nil, fmt.Errorf("counter: list the documents due at %s: %w", p.At.Format(time.RFC3339), err)
		}
		if stopped != nil {
			return stopped, nil
		}
	}
	return nil, nil
}

// listCounters calls add with each counter, from p.After on, until
// deadline: then it returns where it stopped (nil if it listed them all).
func (c *Client) listCounters(ctx context.Context, p Part, deadline time.Time, add func(string) error) (*Cursor, error) {
	return c.eachCounter(ctx, p.After, deadline, add)
}

// eachCounter calls add with each counter, in order, from the cursor
// from (nil: the first): the parents of the collection of counters (and
// their shards' parents that do not exist, as Google's samples leave
// them), a page at a time, or the documents of the counted collections,
// by name only. Once deadline (if not zero) has passed it stops, at the
// end of a page of the collection of counters, and returns where.
func (c *Client) eachCounter(ctx context.Context, from *Cursor, deadline time.Time, add func(string) error) (*Cursor, error) {
	late := func() bool { return !deadline.IsZero() && !time.Now().Before(deadline) }
	if !c.layout.OnDocs() {
		return c.eachParent(ctx, from, late, add)
	}
	for i, g := range c.layout.CollectionGroups() {
		if from != nil && i < from.Query {
			continue
		}
		q := c.fs.CollectionGroup(g).Select().OrderBy(firestore.DocumentID, firestore.Asc)
		if from != nil && i == from.Query && from.Path != "" {
			q = q.StartAfter(c.fs.Doc(from.Path))
		}
		var stopped *Cursor
		err := fsrpc.EachDocument(ctx, q, func(snap *firestore.DocumentSnapshot) (bool, error) {
			if p := core.Relative(snap.Ref); c.layout.Matches(p) {
				if err := add(p); err != nil {
					return false, err
				}
			}
			if late() {
				stopped = &Cursor{Query: i, Path: core.Relative(snap.Ref)}
			}
			return stopped == nil, nil
		})
		if err != nil {
			return nil, fmt.Errorf("counter: list %s: %w", g, err)
		}
		if stopped != nil {
			return stopped, nil
		}
	}
	return nil, nil
}

// listPage is how many counters the guide layout's listing asks for a
// page at a time.
const listPage = 10 * DefaultPartSize

// eachParent calls add with each parent of the collection of counters,
// from the page from names, until late says so at the end of a page.
func (c *Client) eachParent(ctx context.Context, from *Cursor, late func() bool, add func(string) error) (*Cursor, error) {
	it := c.fs.Collection(c.layout.Collection).DocumentRefs(ctx)
	// Pages of ten parts' names: the emulator's every page costs a scan of
	// all it holds, and its pages are small unless asked.
	it.PageInfo().MaxSize = cmp.Or(c.page, listPage)
	if from != nil {
		it.PageInfo().Token = from.Token
	}
	for {
		ref, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("counter: list counters: %w", err)
		}
		if err := add(ref.ID); err != nil {
			return nil, err
		}
		if pi := it.PageInfo(); late() && pi.Remaining() == 0 && pi.Token != "" {
			return &Cursor{Token: pi.Token}, nil
		}
	}
}
