package core

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/rank"
)

// Declaration declares counts on the app's documents: the documents of
// Collection, a collection path whose document ids may be "*" for any
// (users/*/posts), each hold the count fields Fields, which Increment adds
// to, and the Aggregates, which tally keeps from the app's documents.
// Collection may instead be one document's path (stats/site), which then
// holds aggregates only.
type Declaration struct {
	Collection string
	Fields     []string
	Aggregates []aggregate.Aggregate
	Windows    []bytime.Window
	Ranks      []string // the fields its documents are ranked by (ranks.go)
}

// One reports whether d declares one document rather than a collection's.
func (d Declaration) One() bool { return strings.Count(d.Collection, "/")%2 == 1 }

// ParseCounts reads TALLY_COUNTS: entries separated by ';', each a
// collection path with '*' for any document id, ':', then the count
// fields separated by ','. "posts:likes,views;users/*/posts:likes"
// declares likes and views on every posts/{p}, and likes on every
// users/{u}/posts/{p}. A field may instead be an aggregate of the app's
// documents (see parseAggregate): "posts:likes,comments=count(comments)".
// An entry may name one document, with aggregates only:
// "stats/site:users=count(/users)". An empty string declares nothing.
func ParseCounts(s string) ([]Declaration, error) {
	var out []Declaration
	for _, entry := range aggregate.SplitOutsideQuotes(s, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		coll, fields, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, fmt.Errorf("core: counts %q: want collection:field,field", entry)
		}
		d := Declaration{Collection: strings.Trim(strings.TrimSpace(coll), "/")}
		for _, f := range aggregate.SplitOutsideQuotes(fields, ",") {
			switch f = strings.TrimSpace(f); {
			case f == "":
			case rankDecl.MatchString(f):
				d.Ranks = append(d.Ranks, rankDecl.FindStringSubmatch(f)[1])
			case bytime.IsWindow(f):
				w, err := bytime.Parse(f)
				if err != nil {
					return nil, fmt.Errorf("core: counts on %q: %w", d.Collection, err)
				}
				d.Windows = append(d.Windows, w)
			case strings.Contains(f, "="):
				a, err := aggregate.Parse(f)
				if err == nil {
					if err = validChild(a); err != nil {
						err = fmt.Errorf("aggregate %q: %w", f, err)
					}
				}
				if err != nil {
					return nil, fmt.Errorf("core: counts on %q: %w", d.Collection, err)
				}
				d.Aggregates = append(d.Aggregates, a)
			default:
				d.Fields = append(d.Fields, f)
			}
		}
		out = append(out, d)
	}
	if err := validDocs(out, ShardsCollection, VotersCollection, KeysCollection); err != nil {
		return nil, err
	}
	return out, nil
}

// FormatCounts writes docs as ParseCounts reads them.
func FormatCounts(docs []Declaration) string {
	parts := make([]string, len(docs))
	for i, d := range docs {
		fields := slices.Clone(d.Fields)
		for _, a := range d.Aggregates {
			fields = append(fields, a.String())
		}
		for _, w := range d.Windows {
			fields = append(fields, w.String())
		}
		for _, r := range d.Ranks {
			fields = append(fields, "rank("+r+")")
		}
		parts[i] = d.Collection + ":" + strings.Join(fields, ",")
	}
	return strings.Join(parts, ";")
}

// validDocs checks declarations: collection paths of valid ids, count
// fields that are plain names other than tally's own, none twice, no
// collection named like one of tally's subcollections, and no collection
// of children aggregated onto two declarations.
func validDocs(docs []Declaration, subs ...string) error {
	seen, children := map[string]bool{}, map[string]string{}
	for _, d := range docs {
		if err := validCollection(d, subs); err != nil {
			return err
		}
		if seen[d.Collection] {
			return fmt.Errorf("core: counts on %q are declared twice: list its fields in one entry", d.Collection)
		}
		seen[d.Collection] = true
		if len(d.Fields)+len(d.Aggregates)+len(d.Windows) == 0 {
			return fmt.Errorf("core: counts on %q: no fields", d.Collection)
		}
		if err := validWindows(d); err != nil {
			return err
		}
		if d.One() && len(d.Fields) > 0 {
			return fmt.Errorf("core: counts on the one document %q: it takes aggregates only (%s=count(/collection)); counts are declared on a collection", d.Collection, d.Fields[0])
		}
		if err := validSources(d, subs, children); err != nil {
			return err
		}
		if err := validFields(d); err != nil {
			return err
		}
		if err := validRanks(d); err != nil {
			return err
		}
	}
	return nil
}

// validSources checks the collections d aggregates: none of tally's
// subcollections, from the root for one document, and none aggregated
// onto another declaration than d (children: each collection of
// children already seen, and the declaration it is aggregated onto).
func validSources(d Declaration, subs []string, children map[string]string) error {
	for _, a := range d.Aggregates {
		if !a.Root && (slices.Contains(subs, a.Child) || a.Child == LivesCollection) {
			return fmt.Errorf("core: counts on %q: %s: %q is one of tally's subcollections", d.Collection, a, a.Child)
		}
		if !a.Root && d.One() {
			return fmt.Errorf("core: counts on the one document %q: %s: give the collection from the root (/%s)", d.Collection, a, a.Child)
		}
		src := d.ChildPattern(a)
		if other, ok := children[src]; ok && other != d.Collection {
			return fmt.Errorf("core: %s is aggregated onto both %q and %q: a collection's documents are aggregated onto one place", src, other, d.Collection)
		}
		children[src] = d.Collection
	}
	return nil
}

// validFields checks the fields d declares, of its counts, windows and
// aggregates alike: plain names other than tally's own, none twice.
func validFields(d Declaration) error {
	names := slices.Clone(d.Fields)
	for _, w := range d.Windows {
		names = append(names, w.Field)
	}
	for _, a := range d.Aggregates {
		names = append(names, a.Field)
	}
	fields := map[string]bool{}
	for _, f := range names {
		switch {
		case !aggregate.FieldName.MatchString(f):
			return fmt.Errorf("core: counts on %q: field %q is not a plain name (letters, digits and '_', not starting with a digit)", d.Collection, f)
		case f == FieldBookkeeping || strings.HasPrefix(f, "__"):
			return fmt.Errorf("core: counts on %q: field %q is reserved", d.Collection, f)
		case fields[f]:
			return fmt.Errorf("core: counts on %q: field %q is given twice", d.Collection, f)
		}
		fields[f] = true
	}
	return nil
}

// validCollection checks a declaration's path: a collection path of ids
// and "*", or one document's path of ids.
func validCollection(d Declaration, subs []string) error {
	segs := strings.Split(d.Collection, "/")
	for i, s := range segs {
		if i%2 == 1 && s == "*" && !d.One() {
			continue
		}
		if err := ValidName(s); err != nil {
			return fmt.Errorf("core: counts on %q: segment %q: %w", d.Collection, s, err)
		}
		if i%2 == 0 && slices.Contains(subs, s) {
			return fmt.Errorf("core: counts on %q: %q is one of tally's subcollections (%s)", d.Collection, s, strings.Join(subs, ", "))
		}
	}
	return nil
}

// Holds reports whether the document at path is one d declares: in its
// collection ('*' for any document id), or, for one document, that one.
func (d Declaration) Holds(path string) bool {
	if d.One() {
		return d.Collection == path
	}
	pat, segs := strings.Split(d.Collection, "/"), strings.Split(path, "/")
	if len(segs) != len(pat)+1 {
		return false
	}
	for i, p := range pat {
		if p != "*" && p != segs[i] {
			return false
		}
	}
	return true
}

// declarations are the declarations of a layout of counts on documents.
type declarations []Declaration

// match finds the declaration whose collection holds the document at path.
func (docs declarations) match(path string) (Declaration, error) {
	segs := strings.Split(path, "/")
	if len(segs)%2 == 1 {
		return Declaration{}, fmt.Errorf("%w: %s is not a document path (collection/id)", ErrUndeclared, truncate(path))
	}
	if len(path) > MaxPathLength {
		return Declaration{}, fmt.Errorf("document %s: %w: its path is longer than %d bytes", truncate(path), ErrInvalidID, MaxPathLength)
	}
	for _, s := range segs {
		if err := ValidID(s); err != nil {
			return Declaration{}, fmt.Errorf("document %s: %w", truncate(path), err)
		}
	}
	for _, d := range docs {
		if d.Holds(path) {
			return d, nil
		}
	}
	return Declaration{}, fmt.Errorf("%w: %s is in no counted collection; counts are declared on %s", ErrUndeclared, truncate(path), docs.declared())
}

// declared lists the declared counts for an error message.
func (docs declarations) declared() string {
	parts := make([]string, len(docs))
	for i, d := range docs {
		fields := slices.Clone(d.Fields)
		for _, a := range d.Aggregates {
			fields = append(fields, a.Field)
		}
		parts[i] = d.Collection + " (" + strings.Join(fields, ", ") + ")"
	}
	return strings.Join(parts, "; ")
}

// validWindows checks d's windows: each per or over window of one of its
// counts (not of an aggregate: see below), each trend of its counts and
// aggregates.
func validWindows(d Declaration) error {
	size := 0
	for _, w := range d.Windows {
		size += w.Bytes()
	}
	if size > bytime.MaxWindowBytes {
		return fmt.Errorf("core: counts on %q: its windows could take %d bytes of each document, by Firestore's storage sizes "+
			"(%d a bucket a series keeps, its start and count, and about 100 a window); tally keeps a document's windows "+
			"within %d bytes, a quarter of Firestore's 1 MiB a document, so that the app's fields have room: keep fewer buckets, or declare fewer windows",
			d.Collection, size, bytime.BucketBytes, bytime.MaxWindowBytes)
	}
	if GuideWindows(d) {
		return nil // windows of the guide layout's counters (see Layout.Windows)
	}
	for _, w := range d.Windows {
		for _, c := range w.Counts() {
			switch {
			case slices.Contains(d.Fields, c):
			case slices.ContainsFunc(d.Aggregates, func(a aggregate.Aggregate) bool { return a.Field == c }) && w.Kind == bytime.KindTrend:
			case slices.ContainsFunc(d.Aggregates, func(a aggregate.Aggregate) bool { return a.Field == c }):
				// An aggregate at a past instant would need every part of
				// its collection aggregated again at that instant (a read
				// per 1,000 children, and every child of a sum), where a
				// count needs one read.
				return fmt.Errorf("core: counts on %q: %s: %s is an aggregate, which is kept in total only; "+
					"count by time what is incremented (declare a count, and increment it beside the children), or trend it", d.Collection, w, c)
			default:
				return fmt.Errorf("core: counts on %q: %s: %s is not a count of %s (declare it: %s:%s,...)", d.Collection, w, c, d.Collection, d.Collection, c)
			}
		}
	}
	return nil
}

// GuideWindows reports whether d declares windows of the guide layout's
// counters: of their total, and nothing else (counters:today=total per day).
func GuideWindows(d Declaration) bool {
	if len(d.Fields)+len(d.Aggregates) > 0 || len(d.Windows) == 0 || strings.Contains(d.Collection, "/") {
		return false
	}
	for _, w := range d.Windows {
		for _, c := range w.Counts() {
			if c != FieldTotal {
				return false
			}
		}
	}
	return true
}

// ChildPattern is the collection of a's children as a path with '*' for
// any id: posts/*/comments for comments under each posts/{p}, users for
// /users.
func (d Declaration) ChildPattern(a aggregate.Aggregate) string {
	if a.Root {
		return a.Child
	}
	if d.One() {
		return d.Collection + "/" + a.Child
	}
	return d.Collection + "/*/" + a.Child
}

// rankDecl is a declaration of rank in TALLY_COUNTS: rank(field).
var rankDecl = regexp.MustCompile(`^rank\(\s*([^()\s]*)\s*\)$`)

// ranked is what d declares, as package rank reads it.
func (d Declaration) ranked() rank.Declared {
	return rank.Declared{Collection: d.Collection, Counts: d.Fields, Aggregates: d.Aggregates, Windows: d.Windows, Ranks: d.Ranks}
}

// validRanks checks the fields d ranks by (rank.Declared.Check).
func validRanks(d Declaration) error {
	if err := d.ranked().Check(d.One() || strings.Contains(d.Collection, "*")); err != nil {
		return fmt.Errorf("core: counts on %q: %w", d.Collection, err)
	}
	return nil
}

// validChild checks an aggregate's collection: an id, or a path from the
// root with an odd number of segments.
func validChild(a aggregate.Aggregate) error {
	segs := strings.Split(a.Child, "/")
	if !a.Root && len(segs) != 1 {
		return fmt.Errorf("the collection %q: give a collection id under the document (comments), or a path from the root (/users)", a.Child)
	}
	if len(segs)%2 == 0 {
		return fmt.Errorf("the collection /%s is a document path, not a collection's", a.Child)
	}
	for _, s := range segs {
		if err := ValidName(s); err != nil {
			return fmt.Errorf("the collection %q: segment %q: %w", a.Child, s, err)
		}
	}
	return nil
}
