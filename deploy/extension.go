package deploy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tallycounters/tally/internal/extension"
)

// ExtensionRules renders the rules the firestore-counter extension's
// clients need, for the counters declared (TALLY_EXTENSION_COUNTERS),
// one match block a declaration: under a declared document only, anyone
// (or, with signedInReads, a signed-in user) may read a shard or partial,
// which the clients sum; a client may create and update a shard, never a
// partial, holding whole numbers within ±2^53 (what a JavaScript number
// holds exactly) in the declared fields and nothing else; nobody lists or
// deletes one but tally. A shard's id is letters, digits, '-' and '_'
// (extension.ShardID: the extension's web client takes a UUID), which
// keeps out the partials' tab and any other character a pattern might
// read otherwise; it is the client's own secret: rules cannot tell whose
// it is. No other path takes a shard: not a document's below a declared
// one, not one at the root.
func ExtensionRules(counters extension.Counters, signedInReads bool) (string, error) {
	if len(counters) == 0 {
		return "", fmt.Errorf("deploy: declare the extension's counters (--extension-counters 'pages:likes,stats.views')")
	}
	read := whoReads(signedInReads)
	var b strings.Builder
	b.WriteString("    // The firestore-counter extension's clients (" + counters.String() + "): each\n")
	b.WriteString("    // adds to its own shard, D/" + extension.Collection + "/{its id}, and reads it, its\n")
	b.WriteString("    // partials and D; tally's Rollup moves the shards into D. A client\n")
	b.WriteString("    // creates and updates a shard of a declared document, never a partial\n")
	b.WriteString("    // (its id begins with a tab), holding whole numbers in the declared\n")
	b.WriteString("    // fields and nothing else.\n")
	for _, c := range counters {
		root := &fieldTree{}
		for _, f := range c.Fields {
			if err := root.add(f); err != nil {
				return "", err
			}
		}
		docs := c.Collection // one document
		if strings.Count(docs, "/")%2 == 0 {
			docs = matchPath(docs)
		}
		fmt.Fprintf(&b, "    match /%s/%s/{shard} {\n", docs, extension.Collection)
		fmt.Fprintf(&b, "      allow get: if %s;\n", read)
		fmt.Fprintf(&b, "      allow create, update: if shard.matches('%s')\n", strings.ReplaceAll(extension.ShardID.String(), `\`, `\\`))
		fmt.Fprintf(&b, "        && %s;\n", root.check("request.resource.data"))
		b.WriteString("    }\n")
	}
	return b.String(), nil
}

// maxShardValue bounds a count in a client's shard: 2^53 - 1, the largest
// integer a JavaScript number holds exactly.
const maxShardValue = 1<<53 - 1

// fieldTree is the counters' fields as maps of maps: a leaf is a count.
type fieldTree struct {
	leaf  bool
	names []string
	subs  map[string]*fieldTree
}

func (t *fieldTree) add(field string) error {
	segs := strings.Split(field, ".")
	for i, s := range segs {
		if s == "" || strings.ContainsAny(s, "'\\`") {
			return fmt.Errorf("deploy: %q is not a field's path (dotted names, such as stats.views)", field)
		}
		if t.subs == nil {
			t.subs = map[string]*fieldTree{}
		}
		sub, ok := t.subs[s]
		last := i == len(segs)-1
		switch {
		case !ok:
			t.names = append(t.names, s)
			sub = &fieldTree{leaf: last}
			t.subs[s] = sub
		case sub.leaf != last:
			return fmt.Errorf("deploy: %q is a count and a map of counts at once", field)
		}
		t = sub
	}
	return nil
}

// check is the rules' condition that the map at expr holds the tree's
// fields only, each a whole number within ±maxShardValue, or a map as the
// tree has it.
func (t *fieldTree) check(expr string) string {
	names := slices.Clone(t.names)
	slices.Sort(names)
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + "'"
	}
	conds := []string{fmt.Sprintf("%s.keys().hasOnly([%s])", expr, strings.Join(quoted, ", "))}
	for _, n := range names {
		v := fmt.Sprintf("%s['%s']", expr, n)
		sub := t.subs[n]
		if sub.leaf {
			conds = append(conds, fmt.Sprintf("(!('%s' in %s) || %s is int && %s <= %d && %s >= -%d)", n, expr, v, v, maxShardValue, v, maxShardValue))
			continue
		}
		conds = append(conds, fmt.Sprintf("(!('%s' in %s) || %s is map && %s)", n, expr, v, sub.check(v)))
	}
	return strings.Join(conds, "\n          && ")
}

// ExtensionReads renders a stand-in for the app's own rules of the
// documents the extension's counters are on, which its clients listen to:
// anyone (or, with signedInReads, a signed-in user) may read one, and no
// client writes one. tally serve enforces it when it is given no rules of
// the app's (serve --rules): a deploy never adds it, for reads of the
// app's documents are the app's rules' to grant.
func ExtensionReads(counters extension.Counters, signedInReads bool) string {
	read := whoReads(signedInReads)
	var b strings.Builder
	b.WriteString("    // In place of the app's own rules (serve --rules): the declared\n")
	b.WriteString("    // documents, which the extension's clients listen to, are read by\n")
	b.WriteString("    // anyone, and written by no client.\n")
	for _, c := range counters {
		docs := c.Collection // one document
		if strings.Count(docs, "/")%2 == 0 {
			docs = matchPath(docs)
		}
		fmt.Fprintf(&b, "    match /%s {\n      allow read: if %s;\n      allow write: if false;\n    }\n", docs, read)
	}
	return b.String()
}

// WithExtension is tally's rules src with the extension's rules ext in
// its block of documents, before the example of the app's own rules, so
// that tally rules --merge merges them too.
func WithExtension(src, ext string) (string, error) {
	if at := strings.Index(src, exampleMarker); at >= 0 {
		return src[:at] + ext + "\n" + src[at:], nil
	}
	_, end, err := documentsBlock(src)
	if err != nil {
		return "", err
	}
	line := strings.LastIndex(src[:end], "\n") + 1 // the start of the brace's line
	return src[:line] + "\n" + ext + src[line:], nil
}
