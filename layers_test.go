package tally

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tallycounters/tally/"

// layerOf is the layer of the package in dir (docs/architecture.md): 0 the
// product, 1 the tools, 2 the test helpers.
func layerOf(dir string) int {
	switch {
	case strings.HasPrefix(dir, "internal/testkit/"):
		return 2
	case strings.HasPrefix(dir, "internal/tools/"), strings.HasPrefix(dir, "cmd/"):
		return 1
	}
	return 0
}

var layerNames = []string{"the product", "the tools", "the test helpers"}

// TestLayers: no package imports one of a layer above its own, in its
// non-test files, so that the deployed functions carry nothing of the
// tools or the test helpers. Test files may import anything.
func TestLayers(t *testing.T) {
	fset := token.NewFileSet()
	var up []string
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		from := filepath.ToSlash(filepath.Dir(path)) + "/"
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			to, ok := strings.CutPrefix(p, module)
			if ok && layerOf(to+"/") > layerOf(from) {
				up = append(up, path+" ("+layerNames[layerOf(from)]+") imports "+to+" ("+layerNames[layerOf(to+"/")]+")")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files; the walk missed the tree", files)
	}
	for _, u := range up {
		t.Error(u)
	}
}

// TestBelowTheModel: the packages under internal/core (aggregate, bytime,
// calendar, rank) are below the document model: each imports nothing of
// tally but another of them and internal/fsrpc, so that the tree shows
// which way its arrows go. What builds on the model (adder, fold, lives,
// trigger) sits beside it in internal/.
func TestBelowTheModel(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("internal/core/*/*.go")
	if err != nil || len(files) < 20 {
		t.Fatalf("found %d files under internal/core (%v)", len(files), err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			to, ok := strings.CutPrefix(p, module)
			if ok && !strings.HasPrefix(to, "internal/core/") && to != "internal/fsrpc" {
				t.Errorf("%s imports %s: a package below the model imports only its siblings and internal/fsrpc", path, to)
			}
		}
	}
}

// TestLayoutAtTheBottom: package layout, what the public packages and
// the core share, imports nothing of tally, and the functions' packages
// (increment, rollup) hold the Layout from it, not from the Go client:
// nothing they build on is package counter.
func TestLayoutAtTheBottom(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./layout", "./increment", "./rollup").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"layout") || !slices.Contains(deps, module+"internal/core") {
		t.Fatalf("go list -deps listed %d packages, not layout and internal/core among them", len(deps))
	}
	if slices.Contains(deps, module+"counter") {
		t.Error("increment or rollup builds on package counter, the Go client; they take the Layout from package layout")
	}
	out, err = exec.Command("go", "list", "-deps", "./layout").Output()
	if err != nil {
		t.Fatalf("go list -deps ./layout: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, module) && p != module+"layout" {
			t.Errorf("package layout imports %s: it is at the bottom, and imports nothing of tally", p)
		}
	}
}
