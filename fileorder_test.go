package tally

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// layeredPackages are the packages whose files build on one another one
// way: no file uses a name of a file that uses one of its own.
var layeredPackages = []string{"internal/core", "internal/fold"}

// TestFilesBuildOneWay: in each layered package, the files' uses of one
// another's names (type-checked, so a method is its own file's) go one
// way, with no circle, so that a file can be read knowing only those
// below it.
func TestFilesBuildOneWay(t *testing.T) {
	imp := exportImporter(t, layeredPackages...)
	for _, dir := range layeredPackages {
		uses := fileUses(t, dir, imp)
		if len(uses) < 5 {
			t.Fatalf("%s: %d files use another: is the test reading it?", dir, len(uses))
		}
		if circle := findCircle(uses); circle != nil {
			t.Errorf("%s: its files use one another in a circle: %s", dir, strings.Join(circle, " → "))
		}
	}
}

// fileUses is, for each non-test file of the package in dir, the files
// whose top-level names it uses.
func fileUses(t *testing.T, dir string, imp types.Importer) map[string]map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: imp}).Check(module+dir, fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	uses := map[string]map[string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !topLevel(obj, pkg) {
			continue
		}
		from, to := filepath.Base(fset.Position(id.Pos()).Filename), filepath.Base(fset.Position(obj.Pos()).Filename)
		if from != to {
			if uses[from] == nil {
				uses[from] = map[string]bool{}
			}
			uses[from][to] = true
		}
	}
	return uses
}

// topLevel reports whether obj is a name of the package's own: declared
// at its top level, a method, or a field.
func topLevel(obj types.Object, pkg *types.Package) bool {
	switch o := obj.(type) {
	case *types.Func:
		return true
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	}
	return obj.Parent() == pkg.Scope()
}

// findCircle is one circle of uses, nil if there is none.
func findCircle(uses map[string]map[string]bool) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var walk func(f string) []string
	walk = func(f string) []string {
		state[f] = onPath
		path = append(path, f)
		for to := range uses[f] {
			switch state[to] {
			case onPath:
				for i, p := range path {
					if p == to {
						return append(append([]string{}, path[i:]...), to)
					}
				}
			case unseen:
				if c := walk(to); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[f] = done
		return nil
	}
	for f := range uses {
		if state[f] == unseen {
			if c := walk(f); c != nil {
				return c
			}
		}
	}
	return nil
}
