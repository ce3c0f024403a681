package stack

import (
	"context"
	"path"
	"strings"

	"github.com/tallycounters/tally/counting"
)

// Example is a count the banner's commands can increment and read: on the
// guide layout, the counter likes (which an increment makes); with counts
// declared, the first plain count on an existing document of its
// collection, after the demo has added its posts to an empty feed. Exists
// is false where no such document exists yet: the banner makes one first,
// as the app would. Field is "" where only aggregates are declared.
func (s *Stack) Example(ctx context.Context) (doc, field string, exists bool, err error) {
	l := s.o.Config.Layout
	if !l.OnDocs() {
		return l.Path("likes"), counting.FieldTotal, true, nil
	}
	if f := s.feed(); f != nil {
		if err := s.seed(ctx, f); err != nil {
			return "", "", false, err
		}
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
		if name := strings.TrimPrefix(snap.Ref.Path, s.docsPrefix()); in(d.Collection, name) {
			return name, field, true, nil
		}
	}
	return strings.ReplaceAll(d.Collection, "*", "u1") + "/p1", field, false, nil
}

// docsPrefix is what a document's full path starts with, before its name.
func (s *Stack) docsPrefix() string {
	return "projects/" + s.o.Config.Project + "/databases/" + s.o.Config.Database + "/documents/"
}

// in reports whether the document name is one of the collection pattern's
// ('*' for any document id).
func in(pattern, name string) bool {
	want, got := strings.Split(pattern, "/"), strings.Split(name, "/")
	if len(got) != len(want)+1 {
		return false
	}
	for i, w := range want {
		if w != "*" && w != got[i] {
			return false
		}
	}
	return true
}
