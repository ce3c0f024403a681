package web_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/testio"
	"github.com/tallycounters/tally/internal/tools/npmci"
)

// rootReadme is the project's README.
func rootReadme(t *testing.T) string {
	t.Helper()
	return testio.Text(t, filepath.Join("..", "..", "README.md"))
}

// readmeExample is the README's like button, with what it leaves to the app.
func readmeExample(t *testing.T) string {
	t.Helper()
	_, rest, ok := strings.Cut(rootReadme(t), "<!-- README test: web client -->\n```js\n")
	code, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("the README has no web client example")
	}
	return "/** @type {import('firebase/app').FirebaseOptions} */\nconst firebaseConfig = { projectId: \"demo-tally\", apiKey: \"key\" };\n" +
		"const SITE_KEY = \"site-key\";\n" + code
}

// The README's install of the client, run in an app's directory with
// tally's repository beside it as ../tally.
var readmeInstall = []string{
	"npm pack ../tally/clients/web",
	"npm install firebase@12 ./tallycounters-web-0.1.0.tgz",
}

// TestPackedInstall installs the client in an app as the README says, with
// its two commands as written, and builds the README's example in it with
// esbuild and checks its types with TypeScript: the package holds what it
// needs, its types are what the example uses, and the example resolves one
// Firebase SDK, the app's.
func TestPackedInstall(t *testing.T) {
	t.Parallel()
	emulatortest.Without(t, "npm")
	if _, err := npmci.Install(context.Background(), ".", filepath.Join(".bin", "esbuild"), "the web client's build tools", os.Stderr); err != nil {
		t.Fatalf("%v (%s)", err, nodeHelp)
	}
	self, _ := filepath.Abs(".")
	root := t.TempDir()
	if err := os.Symlink(filepath.Dir(filepath.Dir(self)), filepath.Join(root, "tally")); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(root, "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
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
	readme := rootReadme(t)
	for _, line := range readmeInstall {
		if !strings.Contains(readme, "\n"+line+"\n") {
			t.Fatalf("the README does not say %q", line)
		}
		run(app, "bash", "-c", line)
	}
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
