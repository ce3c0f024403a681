package web_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/emulatortest"
	"github.com/tallycounters/tally/internal/npmci"
)

// readmeExample is the README's like button, with what it leaves to the app.
func readmeExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- README test: web client -->\n```js\n")
	code, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("the README has no web client example")
	}
	return "/** @type {import('firebase/app').FirebaseOptions} */\nconst firebaseConfig = { projectId: \"demo-tally\", apiKey: \"key\" };\n" +
		"const SITE_KEY = \"site-key\";\n" + code
}

// TestPackedInstall installs the client in an app as the README says, npm
// pack ./clients/web then npm install firebase@12 and the package, and builds
// the README's example in it with esbuild and checks its types with
// TypeScript: the package holds what it needs, its types are what the
// example uses, and the example resolves one Firebase SDK, the app's.
func TestPackedInstall(t *testing.T) {
	emulatortest.Without(t, "npm")
	if _, err := npmci.Install(".", filepath.Join(".bin", "esbuild"), "the web client's build tools", os.Stderr); err != nil {
		t.Fatalf("%v (%s)", err, nodeHelp)
	}
	self, _ := filepath.Abs(".")
	repo := filepath.Dir(filepath.Dir(self))
	app := t.TempDir()
	run := func(dir, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	tgz := strings.TrimSpace(run(app, "npm", "pack", filepath.Join(repo, "clients", "web"), "--silent"))
	if tgz != "tallycounters-web-0.1.0.tgz" {
		t.Fatalf("npm pack made %q; the README installs tallycounters-web-0.1.0.tgz", tgz)
	}
	run(app, "npm", "install", "firebase@12", "./"+tgz)
	if _, err := os.Stat(filepath.Join(app, "node_modules", "@tallycounters", "web", "node_modules")); err == nil {
		t.Error("the package brought a Firebase SDK of its own")
	}
	if err := os.WriteFile(filepath.Join(app, "app.js"), []byte(readmeExample(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := func(name string) string { return filepath.Join(self, "node_modules", ".bin", name) }
	run(app, bin("esbuild"), "app.js", "--bundle", "--format=esm", "--outfile=out.js", "--log-level=warning")
	tsconfig := `{"compilerOptions": {"allowJs": true, "checkJs": true, "noEmit": true, "target": "ES2022", "module": "ES2022",
  "moduleResolution": "bundler", "lib": ["ES2022", "DOM"], "types": [], "skipLibCheck": true}, "files": ["app.js"]}`
	if err := os.WriteFile(filepath.Join(app, "tsconfig.json"), []byte(tsconfig), 0o644); err != nil {
		t.Fatal(err)
	}
	run(app, bin("tsc"), "-p", ".")
}
