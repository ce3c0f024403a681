package deploy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tallycounters/tally/internal/extension"
)

// ExtensionRules renders the rules the firestore-counter extension's
// clients need, for the counters named by fields (dotted paths, as the
// clients name them: likes, stats.views): anyone (or, with signedInReads,
// a signed-in user) may read a shard or partial, which the clients sum;
// a client may create and update a shard, never a partial (an id that
// begins with a tab), holding finite numbers in those fields and nothing
// else; nobody lists or deletes one but tally. A shard's id is the
// client's own secret: rules cannot tell whose it is.
func ExtensionRules(fields []string, signedInReads bool) (string, error) {
	if len(fields) == 0 {
		return "", fmt.Errorf("deploy: name the fields the extension's clients count (--extension-fields likes,stats.views)")
	}
	root := &fieldTree{}
	for _, f := range fields {
		if err := root.add(f); err != nil {
			return "", err
		}
	}
	read := "true"
	if signedInReads {
		read = "request.auth != null"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "    // The firestore-counter extension's clients (%s): each adds to its\n", strings.Join(fields, ", "))
	b.WriteString("    // own shard, D/" + extension.Collection + "/{its id}, and reads it, its partials and D;\n")
	b.WriteString("    // tally's Rollup moves the shards into D. A client creates and updates\n")
	b.WriteString("    // a shard, never a partial (its id begins with a tab), holding finite\n")
	b.WriteString("    // numbers in the counters' fields and nothing else.\n")
	b.WriteString("    match /{path=**}/" + extension.Collection + "/{shard} {\n")
	fmt.Fprintf(&b, "      allow get: if %s;\n", read)
	b.WriteString("      allow create, update: if !shard.matches('\\\\t.*')\n")
	fmt.Fprintf(&b, "        && %s;\n", root.check("request.resource.data"))
	b.WriteString("    }\n")
	return b.String(), nil
}

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
// fields only, each a finite number, or a map as the tree has it.
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
			conds = append(conds, fmt.Sprintf("(!('%s' in %s) || %s is number && %s * 0 == 0)", n, expr, v, v))
			continue
		}
		conds = append(conds, fmt.Sprintf("(!('%s' in %s) || %s is map && %s)", n, expr, v, sub.check(v)))
	}
	return strings.Join(conds, "\n          && ")
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
