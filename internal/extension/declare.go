package extension

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
)

// Counter declares counters of the extension's: the documents of
// Collection (a collection path whose document ids may be "*" for any,
// users/*/posts; or one document's path, stats/site) each count Fields
// (dotted paths, stats.views) in shards their clients write.
type Counter struct {
	Collection string
	Fields     []string
}

// Counters are the extension's counters an app declares
// (TALLY_EXTENSION_COUNTERS). A shard is moved only into a document they
// hold, and only for the fields they name there: the rules let clients
// write nothing else, and the mover, which writes with the functions'
// rights, checks it again.
type Counters []Counter

// ShardID is what a client's shard id may be: letters, digits, '-' and
// '_' (the extension's web client takes a UUID), never a tab, which
// begins the ids of the extension's workers' partials, nor any other
// character a rule's pattern might read otherwise.
var ShardID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// reserved are the names of tally's own collections, and the extension's
// own: no declared collection may be one of them, so that no move ever
// reaches tally's bookkeeping (lives and their shards, voters and keys,
// aggregates' parts, boards, the recorded settings) or a shard itself.
var reserved = []string{core.DefaultCollection, core.ShardsCollection, core.VotersCollection, core.KeysCollection,
	core.LivesCollection, core.PartsCollection, "tally_ranks", "tally_config", Collection, "_firebase_ext_"}

// ParseCounters reads TALLY_EXTENSION_COUNTERS, in TALLY_COUNTS' syntax:
// entries separated by ';', each a collection path with '*' for any
// document id (or one document's path), ':', then the fields its
// documents count, separated by ','. "pages:likes,stats.views;
// users/*/posts:likes" declares likes and stats.views on every pages/{p},
// and likes on every users/{u}/posts/{p}. An empty string, or "false",
// declares none.
func ParseCounters(s string) (Counters, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "false", "0":
		return nil, nil
	case "true", "1":
		return nil, fmt.Errorf("extension: counters %q: name the documents and the fields the extension's clients count, "+
			"as TALLY_COUNTS does: pages:likes,stats.views;users/*/posts:likes", s)
	}
	var out Counters
	for _, entry := range strings.Split(s, ";") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		coll, fields, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, fmt.Errorf("extension: counters %q: want collection:field,field (pages:likes,stats.views)", entry)
		}
		c := Counter{Collection: strings.Trim(strings.TrimSpace(coll), "/")}
		for _, f := range strings.Split(fields, ",") {
			if f = strings.TrimSpace(f); f != "" {
				c.Fields = append(c.Fields, f)
			}
		}
		if err := c.check(); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o Counter) bool { return o.Collection == c.Collection }) {
			return nil, fmt.Errorf("extension: counters on %q are declared twice: list its fields in one entry", c.Collection)
		}
		out = append(out, c)
	}
	return out, nil
}

// check checks a declaration: a path of collection names (none of
// tally's or the extension's own) and ids, '*' for any id of a
// collection's documents; fields that are dotted paths of plain names,
// none of them tally's, none twice, none both a count and a map of counts.
func (c Counter) check() error {
	if c.Collection == "" {
		return fmt.Errorf("extension: counters %q: no collection", c.Collection)
	}
	for i, s := range strings.Split(c.Collection, "/") {
		if i%2 == 1 && s == "*" && !c.one() {
			continue
		}
		if err := core.ValidName(s); err != nil {
			return fmt.Errorf("extension: counters on %q: segment %q: %w", c.Collection, s, err)
		}
		if i%2 == 0 && (slices.Contains(reserved, s) || strings.HasSuffix(s, core.LimitsSuffix)) {
			return fmt.Errorf("extension: counters on %q: %q is a collection of tally's or the extension's own", c.Collection, s)
		}
	}
	if len(c.Fields) == 0 {
		return fmt.Errorf("extension: counters on %q: no fields", c.Collection)
	}
	for i, f := range c.Fields {
		for _, s := range strings.Split(f, ".") {
			if !aggregate.FieldName.MatchString(s) || s == core.FieldBookkeeping || strings.HasPrefix(s, "__") {
				return fmt.Errorf("extension: counters on %q: %q is not a field's path of plain names (likes, stats.views), other than tally's own %s",
					c.Collection, f, core.FieldBookkeeping)
			}
		}
		for _, g := range c.Fields[:i] {
			if g == f || strings.HasPrefix(g, f+".") || strings.HasPrefix(f, g+".") {
				return fmt.Errorf("extension: counters on %q: %q and %q: a field is declared once, as a count or as a map of counts", c.Collection, g, f)
			}
		}
	}
	return nil
}

// one reports whether c declares one document rather than a collection's.
func (c Counter) one() bool { return strings.Count(c.Collection, "/")%2 == 1 }

// Holds reports whether the document at path (from the database root) is
// one c declares.
func (c Counter) Holds(path string) bool {
	return core.Declaration{Collection: c.Collection}.Holds(path)
}

// Of is the declaration that holds the document at path, if any.
func (cs Counters) Of(path string) (Counter, bool) {
	for _, c := range cs {
		if c.Holds(path) {
			return c, true
		}
	}
	return Counter{}, false
}

// Counts reports whether c declares the field at path p (a count, not a
// map of counts).
func (c Counter) Counts(p []string) bool { return slices.Contains(c.Fields, strings.Join(p, ".")) }

// Documents are the path patterns of the declared documents, '*' for any
// id.
func (cs Counters) Documents() []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Collection
		if !c.one() {
			out[i] += "/*"
		}
	}
	return out
}

// String writes cs as ParseCounters reads them.
func (cs Counters) String() string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Collection + ":" + strings.Join(c.Fields, ",")
	}
	return strings.Join(parts, ";")
}
