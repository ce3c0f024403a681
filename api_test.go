package tally

import (
	"bufio"
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// publicPackages are the packages an app imports: their exported API is
// what tally promises.
var publicPackages = []string{"counter", "setup", "increment", "rollup", "layout"}

// TestPublicAPIShowsNoInternalType: no exported name of a public package
// (a function's parameters and results, a type's exported fields and
// methods, a variable's or a constant's type) is or holds a type of an
// internal/ package, which an app could neither name nor build. It reads
// the packages as compiled, through their export data.
func TestPublicAPIShowsNoInternalType(t *testing.T) {
	imp := exportImporter(t, publicPackages...)
	var leaks []string
	for _, p := range publicPackages {
		pkg, err := imp.Import(module + p)
		if err != nil {
			t.Fatalf("import %s: %v", p, err)
		}
		leaks = append(leaks, internalIn(pkg)...)
	}
	sort.Strings(leaks)
	for _, l := range leaks {
		t.Error(l)
	}
}

// exportImporter imports packages from the export data the go command
// builds for the packages in dirs and everything they import.
func exportImporter(t *testing.T, dirs ...string) types.Importer {
	t.Helper()
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}
	for _, p := range dirs {
		args = append(args, "./"+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), " "); ok && file != "" {
			exports[path] = file
		}
	}
	return importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

// internalIn names each exported name of pkg whose type reaches an
// internal package's type.
func internalIn(pkg *types.Package) []string {
	var out []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		where := pkg.Name() + "." + name
		if tn, ok := obj.(*types.TypeName); ok {
			out = append(out, typeLeaks(where, tn.Type())...)
			continue
		}
		if found := reach(obj.Type(), map[types.Type]bool{}, false); found != "" {
			out = append(out, fmt.Sprintf("%s shows %s", where, found))
		}
	}
	return out
}

// typeLeaks checks a named type of the API: what it is made of (an
// alias, or exported fields), and its exported methods.
func typeLeaks(where string, typ types.Type) []string {
	var out []string
	if found := reach(typ, map[types.Type]bool{}, true); found != "" {
		out = append(out, fmt.Sprintf("%s is made of %s", where, found))
	}
	named, ok := types.Unalias(typ).(*types.Named)
	if !ok {
		return out
	}
	for m := range types.NewMethodSet(types.NewPointer(named)).Methods() {
		if !m.Obj().Exported() {
			continue
		}
		if found := reach(m.Type(), map[types.Type]bool{}, false); found != "" {
			out = append(out, fmt.Sprintf("%s.%s shows %s", where, m.Obj().Name(), found))
		}
	}
	return out
}

// reach is the first internal type typ shows an app, "" if none: through
// pointers, slices, maps, channels, signatures and exported fields. A
// public named type stops the walk (its own fields are checked as its
// own), unless top says typ is the type being checked.
func reach(typ types.Type, seen map[types.Type]bool, top bool) string {
	if seen[typ] {
		return ""
	}
	seen[typ] = true
	switch t := typ.(type) {
	case *types.Alias:
		return reach(types.Unalias(t), seen, top)
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil && strings.Contains(p.Path(), "/internal/") {
			return p.Path() + "." + t.Obj().Name()
		}
		if !top {
			return ""
		}
		return reach(t.Underlying(), seen, false)
	case *types.Pointer:
		return reach(t.Elem(), seen, false)
	case *types.Slice:
		return reach(t.Elem(), seen, false)
	case *types.Array:
		return reach(t.Elem(), seen, false)
	case *types.Map:
		return first(reach(t.Key(), seen, false), reach(t.Elem(), seen, false))
	case *types.Chan:
		return reach(t.Elem(), seen, false)
	case *types.Signature:
		return first(tuple(t.Params(), seen), tuple(t.Results(), seen))
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() {
				if found := reach(f.Type(), seen, false); found != "" {
					return "field " + f.Name() + ": " + found
				}
			}
		}
	case *types.Interface:
		for m := range t.Methods() {
			if found := reach(m.Type(), seen, false); found != "" {
				return "method " + m.Name() + ": " + found
			}
		}
	}
	return ""
}

func tuple(vars *types.Tuple, seen map[types.Type]bool) string {
	for v := range vars.Variables() {
		if found := reach(v.Type(), seen, false); found != "" {
			return found
		}
	}
	return ""
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
