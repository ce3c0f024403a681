package tally

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// declared is what the repository's Go files declare: every top-level
// name, and every method by its receiver's type, each by its package's
// name.
type declared struct {
	names   map[string]bool // Name, and pkg.Name
	methods map[string]bool // Method, Type.Method, and pkg.Type.Method
	bases   map[string]bool // the base name of every file
}

// declarations reads every Go file of the repository (tests included:
// the docs name test helpers too).
func declarations(t *testing.T) declared {
	t.Helper()
	d := declared{names: map[string]bool{}, methods: map[string]bool{}, bases: map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && path != "." && (e.Name() == "node_modules" || strings.HasPrefix(e.Name(), ".")) {
			return filepath.SkipDir
		}
		if e.IsDir() {
			return nil
		}
		d.bases[e.Name()] = true
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		d.add(f)
		if path == "function.go" {
			d.registered(f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// add records what f declares at its top level.
func (d declared) add(f *ast.File) {
	pkg := f.Name.Name
	name := func(n string) { d.names[n], d.names[pkg+"."+n] = true, true }
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil {
				name(decl.Name.Name)
				continue
			}
			typ := decl.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if index, ok := typ.(*ast.IndexExpr); ok {
				typ = index.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				m := id.Name + "." + decl.Name.Name
				d.methods[m], d.methods[pkg+"."+m], d.methods[decl.Name.Name] = true, true, true
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					name(spec.Name.Name)
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						name(n.Name)
					}
				}
			}
		}
	}
}

// registered records the names function.go registers the functions by
// (Increment, Rollup, Reconcile): the docs name them as the platform does.
func (d declared) registered(f *ast.File) {
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			d.names[strings.Trim(lit.Value, "`\"")] = true
		}
		return true
	})
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// goName is a Go name as the docs write one: Name, Type.Method or
	// pkg.Type.Method, with at least one capital or dot (a lower-case
	// word alone is prose: a plan step, a field).
	goName = regexp.MustCompile(`^[A-Za-z_]\w*(\.[A-Za-z_]\w*){0,2}$`)
	// envName is a setting's name, not Go's.
	envName = regexp.MustCompile(`^[A-Z0-9_]+$`)
	// file is a file the docs name: a path with a slash, or a base name.
	file = regexp.MustCompile(`^[\w./-]+\.(go|sh|rules|js|ts|json|md)$`)
)

// TestArchitectureIsTrue: every file and every Go name that
// docs/architecture.md names exists. A path must be there as written; a
// base name, in the package of its row of the table, or anywhere for the
// walks; a Go name (a function, a type, a method as Type.Method) must be
// declared. So the walks and the table cannot name what was moved or
// renamed.
func TestArchitectureIsTrue(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	d := declarations(t)
	checked := 0
	for i, line := range strings.Split(string(doc), "\n") {
		dir := rowDir(line)
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			span := strings.TrimSuffix(strings.TrimSuffix(m[1], "/"), "()")
			switch {
			case file.MatchString(span):
				checked++
				if !d.fileExists(span, dir) {
					t.Errorf("docs/architecture.md:%d names %s, which is not there", i+1, span)
				}
			case goName.MatchString(span) && !envName.MatchString(span) && (strings.Contains(span, ".") || span[0] >= 'A' && span[0] <= 'Z'):
				checked++
				if !d.names[span] && !d.methods[span] && !isDir(span) && !d.names[strings.Split(span, ".")[0]+"."+lastOf(span)] {
					t.Errorf("docs/architecture.md:%d names %s, which no Go file declares", i+1, span)
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked only %d names in docs/architecture.md: is the test reading it?", checked)
	}
}

// rowDir is the package directory a row of the packages' table is about
// ("" for any other line): its first cell's path.
func rowDir(line string) string {
	if !strings.HasPrefix(line, "| `") {
		return ""
	}
	m := codeSpan.FindStringSubmatch(line)
	dir := strings.TrimSuffix(m[1], "/")
	if !isDir(dir) {
		return ""
	}
	return dir
}

// fileExists reports whether name is a file: as a path from the root if
// it holds a slash (or is in dir), else by its base name anywhere.
func (d declared) fileExists(name, dir string) bool {
	if _, err := os.Stat(name); err == nil {
		return true
	}
	if _, err := os.Stat(filepath.Join(dir, name)); dir != "" && err == nil {
		return true
	}
	return !strings.Contains(name, "/") && d.bases[name]
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

func lastOf(span string) string {
	parts := strings.Split(span, ".")
	return parts[len(parts)-1]
}
