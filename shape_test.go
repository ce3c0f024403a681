package tally

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fzipp/gocyclo"
)

// The limits a product function is held to: a maintainer reads it whole.
const (
	maxFuncLines      = 80
	maxFuncComplexity = 20 // cyclomatic, as gocyclo counts it
	maxPackageLines   = 3000
)

// largePackages are the product packages allowed past maxPackageLines,
// each with why: a package that drops under the limit must leave this
// list, and no other may join it.
var largePackages = map[string]string{}

// productFiles are the non-test Go files of the product, by package
// folder: every package but the tools and test kits under internal/tools
// and internal/testkit, and the examples.
func productFiles(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case "internal/tools", "internal/testkit", "examples", "node_modules":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "node_modules" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dir := filepath.Dir(path)
			out[dir] = append(out[dir], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFunctionsStaySmall holds every product function to maxFuncLines
// lines and a cyclomatic complexity of maxFuncComplexity.
func TestFunctionsStaySmall(t *testing.T) {
	fset := token.NewFileSet()
	var stats gocyclo.Stats
	for _, files := range productFiles(t) {
		for _, path := range files {
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			stats = gocyclo.AnalyzeASTFile(f, fset, stats)
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
					t.Errorf("%s: %s is %d lines: split it (at most %d)", fset.Position(fd.Pos()), fd.Name.Name, n, maxFuncLines)
				}
			}
		}
	}
	if len(stats) < 500 {
		t.Fatalf("only %d functions analysed: the walk of the tree missed most of it", len(stats))
	}
	for _, s := range stats {
		if s.Complexity > maxFuncComplexity {
			t.Errorf("%s: %s has a cyclomatic complexity of %d: split it (at most %d)", s.Pos, s.FuncName, s.Complexity, maxFuncComplexity)
		}
	}
}

// TestPackagesStaySmall holds every product package to maxPackageLines
// non-blank lines of non-test code, but those in largePackages.
func TestPackagesStaySmall(t *testing.T) {
	for dir, files := range productFiles(t) {
		n := 0
		for _, path := range files {
			n += nonBlankLines(t, path)
		}
		why, large := largePackages[dir]
		switch {
		case n > maxPackageLines && !large:
			t.Errorf("%s is %d lines of non-test code: give its concerns packages of their own (at most %d)", dir, n, maxPackageLines)
		case n <= maxPackageLines && large:
			t.Errorf("%s is %d lines now, within %d: take it off largePackages", dir, n, maxPackageLines)
		case large:
			t.Logf("%s: %d lines, past %d: %s", dir, n, maxPackageLines, why)
		}
	}
}

// nonBlankLines counts the lines of the file at path that hold anything.
func nonBlankLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}
