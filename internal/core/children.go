package core

import (
	"slices"
	"strings"

	"github.com/tallycounters/tally/internal/core/aggregate"
)

// Aggregates are the aggregates the document at name holds.
func (l Layout) Aggregates(name string) []aggregate.Aggregate { return l.kind().aggregates(name) }

// ParentOf finds the counted document whose aggregates the document at
// path is a child of: the parent's path and the child, or ok false if
// path is in no aggregated collection.
func (l Layout) ParentOf(path string) (parent string, child aggregate.Child, ok bool) {
	segs := strings.Split(path, "/")
	if len(segs)%2 == 1 || len(segs) < 2 {
		return "", aggregate.Child{}, false
	}
	for _, s := range segs {
		if ValidID(s) != nil {
			return "", aggregate.Child{}, false
		}
	}
	coll := segs[:len(segs)-1]
	for _, d := range l.Docs {
		for _, a := range d.Aggregates {
			if !matchPattern(strings.Split(d.ChildPattern(a), "/"), coll) {
				continue
			}
			child := aggregate.Child{Source: a.Source(), ID: segs[len(segs)-1]}
			if d.One() {
				return d.Collection, child, true
			}
			return strings.Join(coll[:len(coll)-1], "/"), child, true
		}
	}
	return "", aggregate.Child{}, false
}

// ChildReads are the fields of the child document at path that the
// aggregates over its collection read (summed, averaged or filtered on),
// each once; ok is false if path is in no aggregated collection. An edit
// of a child that changes none of them changes no aggregate.
func (l Layout) ChildReads(path string) (fields []string, ok bool) {
	segs := strings.Split(path, "/")
	if len(segs)%2 == 1 || len(segs) < 2 {
		return nil, false
	}
	coll := segs[:len(segs)-1]
	for _, d := range l.Docs {
		for _, a := range d.Aggregates {
			if !matchPattern(strings.Split(d.ChildPattern(a), "/"), coll) {
				continue
			}
			ok = true
			if a.Of != "" && !slices.Contains(fields, a.Of) {
				fields = append(fields, a.Of)
			}
			for _, f := range a.Where {
				if !slices.Contains(fields, f.Field) {
					fields = append(fields, f.Field)
				}
			}
		}
	}
	return fields, ok
}

// matchPattern reports whether the segments segs match pat, whose "*"
// matches any one.
func matchPattern(pat, segs []string) bool {
	if len(pat) != len(segs) {
		return false
	}
	for i, p := range pat {
		if p != "*" && p != segs[i] {
			return false
		}
	}
	return true
}

// IsAggregate reports whether field of the document at name is one of its
// aggregates, which no increment may write.
func (l Layout) IsAggregate(name, field string) bool {
	for _, a := range l.Aggregates(name) {
		if a.Field == field {
			return true
		}
	}
	return false
}

// Valued reports whether the aggregates of the document at name sum or
// average over the collection src: its parts then keep their children's
// records, and a child's event is folded by reading the child.
func (l Layout) Valued(name, src string) bool {
	return aggregate.Valued(l.Aggregates(name), src)
}
