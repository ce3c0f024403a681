package deploy

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/rank"
)

//go:embed counts.rules
var countsSource string

// CountsRules renders the rules for counts on the app's documents: the
// part an app keeps in its own rules (tallyCreate, tallyUpdate and tally's
// subcollections, under the names l gives them), then, as an example of
// the app's own, a match for each counted collection that anyone may read
// and signed-in users may write, never the counts. tally serve runs it as
// it is.
func CountsRules(l core.Layout, signedInReads bool) (string, error) {
	if !l.OnDocs() {
		return "", fmt.Errorf("deploy: no counts on documents are declared (TALLY_COUNTS)")
	}
	if err := l.Validate(); err != nil {
		return "", fmt.Errorf("deploy: %w", err)
	}
	shards, voters, keys := l.Subcollections()
	snippet := strings.NewReplacer(
		"/{path=**}/shards/", "/{path=**}/"+shards+"/",
		"/{path=**}/voters/", "/{path=**}/"+voters+"/",
		"/{path=**}/keys/", "/{path=**}/"+keys+"/",
	).Replace(countsSource)
	read := whoReads(signedInReads)
	var b strings.Builder
	b.WriteString("rules_version = '2';\n\n")
	b.WriteString("service cloud.firestore {\n  match /databases/{database}/documents {\n")
	b.WriteString(snippet)
	b.WriteString("\n    // Example: the app's own rules for its counted collections. Counts\n")
	b.WriteString("    // are read with the document. A signed-in user creates a document\n")
	b.WriteString("    // as its owner (owner: their uid), and only its owner edits or\n")
	b.WriteString("    // deletes it; nobody writes a count or an aggregate.\n")
	for _, d := range l.Docs {
		create, update := countsChecks(d)
		if d.One() {
			// One document of aggregates, such as a site's count of
			// users: the app makes it, on its own account; no client
			// writes it.
			fmt.Fprintf(&b, "    match /%s {\n", d.Collection)
			fmt.Fprintf(&b, "      allow read: if %s;\n", read)
			b.WriteString("      allow write: if false;\n    }\n")
			continue
		}
		path := matchPath(d.Collection)
		fmt.Fprintf(&b, "    match /%s {\n", path)
		fmt.Fprintf(&b, "      allow read: if %s;\n", read)
		fmt.Fprintf(&b, "      allow create: if request.auth != null && request.resource.data.owner == request.auth.uid\n")
		fmt.Fprintf(&b, "        && %s;\n", create)
		fmt.Fprintf(&b, "      allow update: if request.auth != null && resource.data.owner == request.auth.uid\n")
		fmt.Fprintf(&b, "        && request.resource.data.owner == resource.data.owner && %s;\n", update)
		b.WriteString("      allow delete: if request.auth != null && resource.data.owner == request.auth.uid;\n    }\n")
		writeChildRules(&b, path, d.Aggregates, read)
	}
	if len(l.AllBoards()) > 0 {
		// A board's summary, which a page listens to for its place
		// (docs/rank.md); its moves are tally's alone.
		fmt.Fprintf(&b, "    match /%s/{board} {\n      allow read: if %s;\n      allow write: if false;\n    }\n", rank.Collection, read)
	}
	b.WriteString("  }\n}\n")
	return b.String(), nil
}

// countsChecks are the conditions, in the rules, of a client's create and
// update of a document d declares: its counts absent or 0 and never
// changed (tallyCreate, tallyUpdate); its aggregates and windows absent
// or at their zero, and its trends absent or -Infinity, never changed
// (tallyKeeps, tallyTrend); and, at creation, each field tally keeps as
// an integer one (tallyInt).
func countsChecks(d core.Declaration) (create, update string) {
	quote := func(f string) string { return "'" + f + "'" }
	zeros := make([]string, len(d.Fields))
	ints := slices.Clone(d.Fields)
	for i, f := range d.Fields {
		zeros[i] = quote(f) + ": 0"
	}
	z := "{" + strings.Join(zeros, ", ") + "}"
	create, update = "tallyCreate("+z+")", "tallyUpdate("+z+")"
	var kept, trends []string
	for _, a := range d.Aggregates {
		if a.Op != aggregate.OpCount && a.Op != aggregate.OpSum { // an average, a greatest, a least: null over none
			kept = append(kept, quote(a.Field)+": null")
			continue
		}
		kept = append(kept, quote(a.Field)+": 0")
		ints = append(ints, a.Field)
	}
	for _, w := range d.Windows {
		if w.Kind == bytime.KindTrend {
			trends = append(trends, quote(w.Field))
			continue
		}
		kept = append(kept, quote(w.Field)+": 0")
		ints = append(ints, w.Field)
	}
	if len(kept)+len(trends) > 0 {
		keeps := " && tallyKeeps({" + strings.Join(kept, ", ") + "}, [" + strings.Join(trends, ", ") + "])"
		create += keeps
		update += keeps
	}
	for _, f := range ints {
		create += " && tallyInt(" + quote(f) + ")"
	}
	for _, w := range d.Windows {
		if w.Kind == bytime.KindTrend {
			create += " && tallyTrend(" + quote(w.Field) + ")"
		}
	}
	return create, update
}

// matchPath is a counted collection's documents as a rules match path:
// users/*/posts is users/{doc0}/posts/{doc1}.
func matchPath(collection string) string {
	segs := strings.Split(collection, "/")
	for i := range segs {
		if segs[i] == "*" {
			segs[i] = fmt.Sprintf("{doc%d}", i/2)
		}
	}
	return strings.Join(segs, "/") + fmt.Sprintf("/{doc%d}", len(segs)/2)
}

// writeChildRules writes, as an example of the app's own, a match for each
// collection under the counted documents at path that an aggregate counts:
// anyone may read its documents; a signed-in user creates one as its
// owner, and only its owner edits or deletes it. Only tally's Rollup
// writes the aggregates they make.
func writeChildRules(b *strings.Builder, path string, aggs []aggregate.Aggregate, read string) {
	var done []string
	for _, a := range aggs {
		if a.Root || slices.Contains(done, a.Child) {
			continue
		}
		done = append(done, a.Child)
		finite := ""
		for _, f := range summed(aggs, a.Child) {
			check := "tallyFinite"
			if slices.ContainsFunc(aggs, func(b aggregate.Aggregate) bool {
				return !b.Root && b.Child == a.Child && b.Of == f && (b.Op == aggregate.OpMax || b.Op == aggregate.OpMin)
			}) {
				check = "tallyNumber" // compared: a number, or absent
			}
			finite += fmt.Sprintf(" && %s('%s')", check, f)
		}
		fmt.Fprintf(b, "    match /%s/%s/{child} {\n", path, a.Child)
		fmt.Fprintf(b, "      allow read: if %s;\n", read)
		fmt.Fprintf(b, "      allow create: if request.auth != null && request.resource.data.owner == request.auth.uid%s;\n", finite)
		b.WriteString("      allow update: if request.auth != null && resource.data.owner == request.auth.uid\n")
		fmt.Fprintf(b, "        && request.resource.data.owner == resource.data.owner%s;\n", finite)
		b.WriteString("      allow delete: if request.auth != null && resource.data.owner == request.auth.uid;\n    }\n")
	}
}

// summed are the children's fields that aggs sum, average or compare in the child
// collection child, each once, in the order declared.
func summed(aggs []aggregate.Aggregate, child string) []string {
	var out []string
	for _, a := range aggs {
		if !a.Root && a.Child == child && a.Of != "" && !slices.Contains(out, a.Of) {
			out = append(out, a.Of)
		}
	}
	return out
}

// whoReads is the rules' condition on a read of what tally keeps for
// clients to read: anyone's, or with signedInReads a signed-in user's.
func whoReads(signedInReads bool) string {
	if signedInReads {
		return "request.auth != null"
	}
	return "true"
}
