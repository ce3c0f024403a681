package deploy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// documentsMatch opens the block of a rules file that holds the rules of
// a database's documents.
var documentsMatch = regexp.MustCompile(`match\s+/databases/\{[^}]+\}/documents\s*\{`)

// exampleMarker starts, in CountsRules' output, the example rules of the
// counted collections, after tally's own.
const exampleMarker = "    // Example: the app's own rules"

// A Merge is an app's rules with tally's merged in (Rules), and, for each
// counted collection the app's rules match already and write without
// tally's conditions, what its rules must add (Notes): rules that allow a
// write allow it whatever other rules say, so the app's own must keep the
// counts as the example does.
type Merge struct {
	Rules string
	Notes []string
}

// The markers of tally's part in an app's merged rules: a merge again
// (a deploy of another version) replaces what is between them.
const (
	mergeBegin = "    // tally: from 'tally rules --merge'."
	mergeEnd   = "    // tally: end of tally's part."
)

// MergeRules merges tally's rules (CountsRules', Rules', with the
// extension clients' or not) into the app's: tally's functions and
// matches at the head of the app's block of documents, between markers,
// and the example's match of each counted collection the app does not
// match itself; tally's part of an earlier merge is replaced. Every rule
// of the app's stays as it is: where the app matches a counted collection
// itself, Notes says which conditions its create and update must add. A
// merge that cannot be made (no block of documents; an earlier part of
// tally's with no end marker; rules of version 1 where tally's need 2)
// is an error that says why.
func MergeRules(app, tally string) (Merge, error) {
	app, err := withoutTallys(app)
	if err != nil {
		return Merge{}, err
	}
	at := documentsMatch.FindStringIndex(app)
	if at == nil {
		return Merge{}, fmt.Errorf("deploy: the app's rules have no match /databases/{database}/documents block to merge into")
	}
	if strings.Contains(tally, "rules_version = '2'") && !version2.MatchString(app) {
		return Merge{}, fmt.Errorf("deploy: tally's rules need rules_version = '2' (their {path=**} wildcards), and the app's rules are of version 1: " +
			"add rules_version = '2'; at their head, after checking what it changes of their own {name=**} wildcards, and merge again")
	}
	body, err := documentsBody(tally)
	if err != nil {
		return Merge{}, err
	}
	own, example, _ := strings.Cut(body, exampleMarker)
	var m Merge
	var add []string
	for _, block := range matchBlocks(example) {
		if re := matchOf(block); re != nil && re.MatchString(app) {
			if n := note(block, appBlock(app, re)); n != "" {
				m.Notes = append(m.Notes, n)
			}
			continue
		}
		add = append(add, block)
	}
	inserted := "\n" + mergeBegin + "\n" + strings.TrimRight(strings.TrimLeft(own, "\n"), " \n") + "\n"
	for _, b := range add {
		inserted += "\n" + b + "\n"
	}
	inserted += mergeEnd + "\n"
	m.Rules = app[:at[1]] + inserted + app[at[1]:]
	return m, nil
}

// version2 finds the declaration of rules version 2.
var version2 = regexp.MustCompile(`(?m)^\s*rules_version\s*=\s*['"]2['"]`)

// withoutTallys is rules without tally's part of an earlier merge, the
// lines between its markers.
func withoutTallys(rules string) (string, error) {
	begin := strings.Index(rules, mergeBegin)
	if begin < 0 {
		return rules, nil
	}
	end := strings.Index(rules[begin:], mergeEnd)
	if end < 0 {
		return "", fmt.Errorf("deploy: the app's rules hold tally's part of an earlier merge (from the line %q on), with no end marker: "+
			"remove that part, tally's functions and matches, and merge again", strings.TrimSpace(mergeBegin))
	}
	end += begin + len(mergeEnd)
	if end < len(rules) && rules[end] == '\n' {
		end++
	}
	start := strings.LastIndex(rules[:begin], "\n") // the blank line before the part
	if start < 0 || strings.TrimSpace(rules[start:begin]) != "" {
		start = begin
	}
	return rules[:start] + rules[end:], nil
}

// documentsBody is what the block of documents of rules holds.
func documentsBody(rules string) (string, error) {
	start, end, err := documentsBlock(rules)
	if err != nil {
		return "", err
	}
	return rules[start:end], nil
}

// documentsBlock is where the body of the block of documents of tally's
// rules starts, after its opening brace, and the index of its closing
// brace.
func documentsBlock(rules string) (start, end int, err error) {
	at := documentsMatch.FindStringIndex(rules)
	if at == nil {
		return 0, 0, fmt.Errorf("deploy: tally's rules have no block of documents")
	}
	end = closing(rules, at[1]-1)
	if end < 0 {
		return 0, 0, fmt.Errorf("deploy: tally's block of documents is not closed")
	}
	return at[1], end, nil
}

// closing is the index of the brace that closes the one at open in s, -1
// if none does.
func closing(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// topMatch starts a top-level match of a block of documents.
var topMatch = regexp.MustCompile(`(?m)^    match /`)

// matchBlocks are the top-level match blocks of a block's body, each
// from its indentation to its closing brace.
func matchBlocks(body string) []string {
	var out []string
	for {
		loc := topMatch.FindStringIndex(body)
		if loc == nil {
			return out
		}
		// the block opens at the brace that ends its line: those of the
		// path's wildcards ({doc0}) close on it
		open := strings.Index(body[loc[0]:], "{\n")
		if open < 0 {
			return out
		}
		end := closing(body, loc[0]+open)
		if end < 0 {
			return out
		}
		out = append(out, body[loc[0]:end+1])
		body = body[end+1:]
	}
}

// matchOf is a pattern that finds, in an app's rules, a match of the same
// path as block's, whatever its wildcards are named.
func matchOf(block string) *regexp.Regexp {
	m := regexp.MustCompile(`match\s+(\S+)\s*\{`).FindStringSubmatch(block)
	if m == nil {
		return nil
	}
	var parts []string
	for _, seg := range strings.Split(m[1], "/") {
		if strings.HasPrefix(seg, "{") {
			parts = append(parts, `\{[^}/=]+\}`)
		} else {
			parts = append(parts, regexp.QuoteMeta(seg))
		}
	}
	return regexp.MustCompile(`match\s+` + strings.Join(parts, "/") + `\s*\{`)
}

// allowRule finds an allow statement: its methods, and its condition.
var allowRule = regexp.MustCompile(`(?s)allow ([a-z, ]+): if (.*?)(?:;|\n\s*allow|\n\s*\})`)

// appBlock is the app's own match that re finds in app, whole: its line
// and what its braces hold.
func appBlock(app string, re *regexp.Regexp) string {
	loc := re.FindStringIndex(app)
	if end := closing(app, loc[1]-1); end >= 0 {
		return app[loc[0] : end+1]
	}
	return app[loc[0]:loc[1]]
}

// note says what the app's own match of block's path (mine, whole) must
// add: the example's conditions on tally's fields, for each create and
// update mine allows, that it does not hold already; "" if none.
func note(block, mine string) string {
	path := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(mine, "\n", 2)[0], "match"), "{"))
	held := map[string]string{} // what mine's allows of each method hold
	for _, allow := range allowRule.FindAllStringSubmatch(mine, -1) {
		for _, method := range strings.Split(allow[1], ",") {
			switch method = strings.TrimSpace(method); method {
			case "write":
				held["create"] += allow[2] + "\n"
				held["update"] += allow[2] + "\n"
			default:
				held[method] += allow[2] + "\n"
			}
		}
	}
	var says []string
	for _, allow := range allowRule.FindAllStringSubmatch(block, -1) {
		if _, granted := held[allow[1]]; !granted {
			continue // mine allows no such write: nothing to keep it to
		}
		var conds []string
		for _, c := range regexp.MustCompile(`tally[A-Za-z]+\([^)]*\)`).FindAllString(allow[2], -1) {
			if !slices.Contains(conds, c) && !strings.Contains(held[allow[1]], c) {
				conds = append(conds, c)
			}
		}
		if len(conds) > 0 {
			says = append(says, fmt.Sprintf("its allow %s must also hold %s", allow[1], strings.Join(conds, " && ")))
		}
	}
	if len(says) == 0 {
		return ""
	}
	return fmt.Sprintf("your rules match %s already, so tally's example for it is left out: %s; or a client may write "+
		"the counts there (a rule that allows a write allows it whatever the others say)", path, strings.Join(says, ", and "))
}

// AppPart is merged rules without tally's part: the app's own.
func AppPart(rules string) string {
	app, err := withoutTallys(rules)
	if err != nil {
		return rules
	}
	return app
}

// HasMatch reports whether rules match any path in their block of
// documents.
func HasMatch(rules string) bool {
	body, err := documentsBody(rules)
	return err == nil && anyMatch.MatchString(body)
}

// anyMatch finds a match statement.
var anyMatch = regexp.MustCompile(`\bmatch\s+/`)
