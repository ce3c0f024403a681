package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/tallycounters/tally/internal/testkit/testio"
)

// TestDocsLinks: the README is an entry point of at most 250 lines, and
// every link of it and of docs/ to a file of the repository, or to a
// heading, leads somewhere.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	if n := strings.Count(testio.Text(t, "../../README.md"), "\n"); n > 250 {
		t.Errorf("the README is %d lines; keep it to 250, and the rest in docs/", n)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range docPages(t) {
		for _, m := range link.FindAllStringSubmatch(testio.Text(t, page), -1) {
			target := m[1]
			if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which is not there", page, target)
					continue
				}
			}
			if anchor != "" && !slices.Contains(anchors(testio.Text(t, path)), anchor) {
				t.Errorf("%s links to %s, and %s has no such heading", page, target, path)
			}
		}
	}
}

// anchors are the ids a page's headings get (outside code blocks): lower
// case, punctuation but - dropped, spaces made -.
func anchors(text string) []string {
	var out []string
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if h := strings.TrimLeft(line, "#"); !fence && h != line && strings.HasPrefix(h, " ") {
			id := strings.Map(func(r rune) rune {
				switch {
				case r == ' ':
					return '-'
				case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
					return unicode.ToLower(r)
				}
				return -1
			}, strings.TrimSpace(h))
			out = append(out, id)
		}
	}
	return out
}
