package counting

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Docs declares counts on the app's documents: the documents of
// Collection, a collection path whose document ids may be "*" for any
// (users/*/posts), each hold the count fields Fields.
type Docs struct {
	Collection string
	Fields     []string
}

// fieldName is a count field: a plain identifier, which needs no quoting
// in a field path, a query or security rules.
var fieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// ParseCounts reads TALLY_COUNTS: entries separated by ';', each a
// collection path with '*' for any document id, ':', then the count
// fields separated by ','. "posts:likes,views;users/*/posts:likes"
// declares likes and views on every posts/{p}, and likes on every
// users/{u}/posts/{p}. An empty string declares nothing.
func ParseCounts(s string) ([]Docs, error) {
	var out []Docs
	for _, entry := range strings.Split(s, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		coll, fields, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, fmt.Errorf("counting: counts %q: want collection:field,field", entry)
		}
		d := Docs{Collection: strings.Trim(strings.TrimSpace(coll), "/")}
		for _, f := range strings.Split(fields, ",") {
			if f = strings.TrimSpace(f); f != "" {
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
func FormatCounts(docs []Docs) string {
	parts := make([]string, len(docs))
	for i, d := range docs {
		parts[i] = d.Collection + ":" + strings.Join(d.Fields, ",")
	}
	return strings.Join(parts, ";")
}

// validDocs checks declarations: collection paths of valid ids, count
// fields that are plain names other than tally's own, none twice, and no
// collection named like one of tally's subcollections.
func validDocs(docs []Docs, subs ...string) error {
	seen := map[string]bool{}
	for _, d := range docs {
		segs := strings.Split(d.Collection, "/")
		if len(segs)%2 == 0 {
			return fmt.Errorf("counting: counts on %q: a collection path has an odd number of segments (posts, users/*/posts)", d.Collection)
		}
		for i, s := range segs {
			if i%2 == 1 && s == "*" {
				continue
			}
			if err := ValidID(s); err != nil {
				return fmt.Errorf("counting: counts on %q: segment %q: %w", d.Collection, s, err)
			}
			if i%2 == 0 && slices.Contains(subs, s) {
				return fmt.Errorf("counting: counts on %q: %q is one of tally's subcollections (%s)", d.Collection, s, strings.Join(subs, ", "))
			}
		}
		if seen[d.Collection] {
			return fmt.Errorf("counting: counts on %q are declared twice: list its fields in one entry", d.Collection)
		}
		seen[d.Collection] = true
		if len(d.Fields) == 0 {
			return fmt.Errorf("counting: counts on %q: no fields", d.Collection)
		}
		fields := map[string]bool{}
		for _, f := range d.Fields {
			switch {
			case !fieldName.MatchString(f):
				return fmt.Errorf("counting: counts on %q: field %q is not a plain name (letters, digits and '_', not starting with a digit)", d.Collection, f)
			case f == FieldBookkeeping || strings.HasPrefix(f, "__"):
				return fmt.Errorf("counting: counts on %q: field %q is reserved", d.Collection, f)
			case fields[f]:
				return fmt.Errorf("counting: counts on %q: field %q is given twice", d.Collection, f)
			}
			fields[f] = true
		}
	}
	return nil
}

// match finds the declaration whose collection holds the document at path.
func (l Layout) match(path string) (Docs, error) {
	segs := strings.Split(path, "/")
	if len(segs)%2 == 1 {
		return Docs{}, fmt.Errorf("%w: %s is not a document path (collection/id)", ErrUndeclared, truncate(path))
	}
	for _, s := range segs {
		if err := ValidID(s); err != nil {
			return Docs{}, fmt.Errorf("document %s: %w", truncate(path), err)
		}
	}
	coll := segs[:len(segs)-1]
	for _, d := range l.Docs {
		pat := strings.Split(d.Collection, "/")
		if len(pat) != len(coll) {
			continue
		}
		ok := true
		for i, p := range pat {
			if p != "*" && p != coll[i] {
				ok = false
				break
			}
		}
		if ok {
			return d, nil
		}
	}
	return Docs{}, fmt.Errorf("%w: %s is in no counted collection; counts are declared on %s", ErrUndeclared, truncate(path), l.declared())
}

// declared lists the declared counts for an error message.
func (l Layout) declared() string {
	parts := make([]string, len(l.Docs))
	for i, d := range l.Docs {
		parts[i] = d.Collection + " (" + strings.Join(d.Fields, ", ") + ")"
	}
	return strings.Join(parts, "; ")
}

// TriggerPatterns are the Eventarc path patterns of the shard documents,
// one per counted collection: what Rollup is triggered on.
func (l Layout) TriggerPatterns() []string {
	shards := "/" + l.shardsName() + "/{shardId}"
	if !l.OnDocs() {
		return []string{l.Collection + "/{counterId}" + shards}
	}
	out := make([]string, len(l.Docs))
	for i, d := range l.Docs {
		segs := strings.Split(d.Collection, "/")
		for j := range segs {
			if segs[j] == "*" {
				segs[j] = fmt.Sprintf("{doc%d}", j/2)
			}
		}
		out[i] = strings.Join(segs, "/") + fmt.Sprintf("/{doc%d}/%s/{life}", len(segs)/2, LivesCollection) + shards
	}
	return out
}

// Matches reports whether the document at path is a counted one.
func (l Layout) Matches(path string) bool {
	if !l.OnDocs() {
		id, ok := strings.CutPrefix(path, l.Collection+"/")
		return ok && ValidID(id) == nil
	}
	_, err := l.match(path)
	return err == nil
}

// CollectionGroups are the collection ids whose documents may be
// counted: the last segment of each declaration, each once.
func (l Layout) CollectionGroups() []string {
	if !l.OnDocs() {
		return []string{l.Collection}
	}
	var out []string
	for _, d := range l.Docs {
		last := d.Collection[strings.LastIndex(d.Collection, "/")+1:]
		if !slices.Contains(out, last) {
			out = append(out, last)
		}
	}
	return out
}
