package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/testio"
)

// TestDocsCommandsResolve: every `go test` and `go run` command the README
// and docs/ print, in prose or in a block, names packages that are there
// (./pkg, ./pkg/...), run from the repository's root, and every test it
// picks by name with -run (Name, or A|B, anchored or not) is a test,
// benchmark, fuzz test or example of those packages.
func TestDocsCommandsResolve(t *testing.T) {
	t.Parallel()
	const root = "../.."
	inline := regexp.MustCompile("`((?:[A-Z_]+=\\S* )*go (?:test|run) [^`]*)`")
	block := regexp.MustCompile(`(?m)\bgo (?:test|run) [^\n#]*`)
	checked := 0
	for _, page := range docPages(t) {
		text := testio.Text(t, page)
		var cmds []string
		for _, m := range inline.FindAllStringSubmatch(text, -1) {
			cmds = append(cmds, m[1])
		}
		cmds = append(cmds, block.FindAllString(inline.ReplaceAllString(text, ""), -1)...)
		for _, cmd := range cmds {
			pkgs, names := goCommand(strings.Fields(cmd))
			for _, p := range pkgs {
				dir := filepath.Join(root, strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/"))
				if !hasGo(t, dir, p != strings.TrimSuffix(p, "...")) {
					t.Errorf("%s prints %q: %s is no package", page, strings.Join(strings.Fields(cmd), " "), p)
					continue
				}
				checked++
			}
			for _, n := range names {
				if !declares(t, root, pkgs, n) {
					t.Errorf("%s prints %q: no test %s in %s", page, strings.Join(strings.Fields(cmd), " "), n, strings.Join(pkgs, " "))
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d packages named by the docs' commands were checked; the commands were not found", checked)
	}
}

// goCommand is the packages (./…) a go test or go run command names, and
// the plain names its -run picks.
func goCommand(args []string) (pkgs, names []string) {
	for len(args) > 2 && args[0] != "go" {
		args = args[1:] // the environment it is run with
	}
	for i := 2; i < len(args); i++ {
		a := strings.Trim(args[i], `'"`)
		switch {
		case a == "-run" && i+1 < len(args):
			i++
			names = append(names, runNames(strings.Trim(args[i], `'"`))...)
		case strings.HasPrefix(a, "-run="):
			names = append(names, runNames(strings.Trim(strings.TrimPrefix(a, "-run="), `'"`))...)
		case strings.HasPrefix(a, "./") || a == ".":
			pkgs = append(pkgs, a)
			if args[1] == "run" {
				return pkgs, names // what follows is the program's own
			}
		}
	}
	return pkgs, names
}

// runNames is the test names a -run pattern names plainly: each of its
// alternatives that is an identifier once anchors and parentheses are
// taken off, up to a subtest's slash.
func runNames(pattern string) []string {
	var out []string
	for _, alt := range strings.Split(pattern, "|") {
		alt, _, _ = strings.Cut(alt, "/")
		alt = strings.Trim(alt, "^$()")
		if regexp.MustCompile(`^(Test|Benchmark|Fuzz|Example)\w*$`).MatchString(alt) {
			out = append(out, alt)
		}
	}
	return out
}

// hasGo reports whether dir holds a .go file (below it too, if tree).
func hasGo(t *testing.T, dir string, tree bool) bool {
	return anyFile(dir, tree, func(path string) bool { return strings.HasSuffix(path, ".go") })
}

// declares reports whether one of pkgs (with /..., their trees) declares
// the function name in a test file.
func declares(t *testing.T, root string, pkgs []string, name string) bool {
	decl := regexp.MustCompile(`(?m)^func ` + name + `\(`)
	return slices.ContainsFunc(pkgs, func(p string) bool {
		dir := filepath.Join(root, strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/"))
		return anyFile(dir, strings.HasSuffix(p, "..."), func(path string) bool {
			return strings.HasSuffix(path, "_test.go") && decl.MatchString(testio.Text(t, path))
		})
	})
}

// anyFile reports whether a file of dir (below it too, if tree; never in
// node_modules) meets ok.
func anyFile(dir string, tree bool, ok func(path string) bool) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil || found:
			return filepath.SkipAll
		case d.IsDir() && p != dir && (!tree || d.Name() == "node_modules"):
			return filepath.SkipDir
		case !d.IsDir() && ok(p):
			found = true
		}
		return nil
	})
	return found
}
