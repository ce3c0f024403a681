package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/testio"
)

// glossaryTerms are the words of docs/glossary.md that mean only tally's
// sense wherever the pages use them, by the heading they are under there.
// (Life and parts are in it too, but the pages use them in their plain
// senses as well, half-life and a part of a flag: their first uses are
// linked by hand. A stray is named only in code.)
var glossaryTerms = map[string]*regexp.Regexp{
	"fold":         regexp.MustCompile(`(?i)\b(re)?fold(s|ed|ing)?\b`),
	"group-commit": regexp.MustCompile(`(?i)\bgroup commit\b`),
	"boundary-job": regexp.MustCompile(`(?i)\bboundary jobs?\b`),
	"hint":         regexp.MustCompile(`(?i)\bhints?\b`),
	"board":        regexp.MustCompile(`(?i)\bboards?\b`),
	"cell":         regexp.MustCompile(`(?i)\bcells?\b`),
	"crowded-cell": regexp.MustCompile(`(?i)\bcrowded cells?\b`),
}

// TestGlossaryFirstUses: in the README and each page of docs/, the first
// use of each of glossaryTerms, in prose (not in code), links to its
// entry in docs/glossary.md, or is where the page explains it in bold.
func TestGlossaryFirstUses(t *testing.T) {
	t.Parallel()
	for _, page := range docPages(t) {
		if filepath.Base(page) == "glossary.md" || strings.Contains(page, "clients/web") {
			continue // the glossary itself; the web client's package pages, published apart
		}
		text := testio.Text(t, page)
		prose := withoutCode(text)
		for anchor, term := range glossaryTerms {
			at := term.FindStringIndex(prose)
			if at == nil {
				continue
			}
			before, after := text[:at[0]], text[at[1]:]
			linked := strings.HasSuffix(before, "[") && strings.HasPrefix(after, "](") &&
				strings.HasPrefix(strings.TrimPrefix(after, "]("), glossaryPath(page)+"#"+anchor+")") ||
				strings.HasSuffix(before, "**") && strings.HasPrefix(after, "**")
			if !linked {
				line := strings.Count(before, "\n") + 1
				t.Errorf("%s:%d: the first use of %q is not a link to %s#%s", page, line, text[at[0]:at[1]], glossaryPath(page), anchor)
			}
		}
	}
}

// glossaryPath is the glossary's path from page.
func glossaryPath(page string) string {
	if strings.HasSuffix(page, "README.md") && !strings.Contains(page, "docs/") {
		return "docs/glossary.md"
	}
	return "glossary.md"
}

// withoutCode is text with its code blocks, inline code and link targets
// blanked, every other character where it was.
func withoutCode(text string) string {
	for _, re := range []*regexp.Regexp{regexp.MustCompile("(?s)```.*?```"), regexp.MustCompile("`[^`\n]*`"), regexp.MustCompile(`\]\([^)\s]*\)`)} {
		text = re.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat(" ", len(s)) })
	}
	return text
}
