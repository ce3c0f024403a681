package stack

import (
	"cmp"
	"context"
	"path"
	"slices"
	"strings"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/bytime"
)

// SeedDemo adds the demo's posts to the feed's collection if it is empty,
// as the demo page does on its first view: serve does it as it starts, so
// that its banner can name one.
func (s *Stack) SeedDemo(ctx context.Context) error {
	if f := s.feed(); f != nil {
		return s.seed(ctx, f)
	}
	return nil
}

// Example is a count the banner's commands can increment and read: on the
// guide layout, the counter likes (which an increment makes); with counts
// declared, the first plain count on an existing document of its
// collection (one of the demo's posts, after SeedDemo), or, where only
// aggregates are declared, the first aggregate, which is read only.
// Exists is false where no such document exists yet: the banner makes one
// first, as the app would.
func (s *Stack) Example(ctx context.Context) (doc, field string, exists bool, err error) {
	l := s.o.layout()
	if !l.OnDocs() {
		return l.Path("likes"), core.FieldTotal, true, nil
	}
	d := l.Docs[0]
	for _, c := range l.Docs {
		if len(c.Fields) > 0 {
			d = c
			break
		}
	}
	if len(d.Fields) > 0 {
		field = d.Fields[0]
		for _, w := range d.Windows { // a count with a window: the banner reads both
			if w.Kind != bytime.KindTrend && slices.Contains(d.Fields, w.Count) {
				field = w.Count
				break
			}
		}
	} else {
		field = d.Aggregates[0].Field
	}
	if d.One() {
		_, err := s.Functions.Client.Doc(d.Collection).Get(ctx)
		return d.Collection, field, err == nil, nil
	}
	fs := s.Functions.Client
	q := fs.CollectionGroup(path.Base(d.Collection)).Limit(50)
	if !strings.Contains(d.Collection, "*") {
		q = fs.Collection(d.Collection).Limit(1)
	}
	snaps, err := q.Documents(ctx).GetAll()
	if err != nil {
		return "", "", false, err
	}
	for _, snap := range snaps {
		if name := core.Relative(snap.Ref); d.Holds(name) {
			return name, field, true, nil
		}
	}
	return strings.ReplaceAll(d.Collection, "*", "u1") + "/p1", field, false, nil
}

// ExampleWindows are windows of doc's count field that the banner reads
// after its increment: one to get (the first declared), and one whose
// series to print (the first over a few buckets, such as the last 7
// days, else the same); "" if none is declared.
func (s *Stack) ExampleWindows(doc, field string) (get, series string) {
	for _, w := range s.o.layout().WindowsOf(doc) {
		if w.Count != field || w.Kind == bytime.KindTrend {
			continue
		}
		get = cmp.Or(get, w.Field)
		if w.Kind == bytime.KindOver && series == "" {
			series = w.Field
		}
	}
	return get, cmp.Or(series, get)
}
