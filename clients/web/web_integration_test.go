package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/npmci"
)

const nodeHelp = "the web client's tests need Node.js 20 or later and npm: docs/prerequisites.md says how, by system"

// TestNode runs the web client's own tests, of its pure logic (pending
// actions against snapshot times, the retry policy), with Node's test
// runner.
func TestNode(t *testing.T) {
	t.Parallel()
	emulatortest.Without(t, "Node.js")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(nodeHelp)
	}
	out, err := exec.Command(node, "--test", "test/").CombinedOutput()
	if err != nil {
		t.Fatalf("node --test test/: %v\n%s", err, out)
	}
}

// TestTypesAndSize installs the pinned build tools, checks the types with
// TypeScript, and bundles the client as an app would, minified, without the
// Firebase SDK: gzipped, it must stay under 5 KB.
func TestTypesAndSize(t *testing.T) {
	t.Parallel()
	emulatortest.Without(t, "npm")
	if _, err := npmci.Install(context.Background(), ".", filepath.Join(".bin", "esbuild"), "the web client's build tools", os.Stderr); err != nil {
		t.Fatalf("%v (%s)", err, nodeHelp)
	}
	if out, err := exec.Command(filepath.Join("node_modules", ".bin", "tsc"), "--noEmit", "-p", ".").CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	bundle := filepath.Join(t.TempDir(), "tally.min.js")
	out, err := exec.Command(filepath.Join("node_modules", ".bin", "esbuild"), "src/index.js", "--bundle", "--minify",
		"--format=esm", "--external:firebase", "--external:firebase/*", "--outfile="+bundle, "--log-level=warning").CombinedOutput()
	if err != nil {
		t.Fatalf("esbuild: %v\n%s", err, out)
	}
	min, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Write(min)
	w.Close()
	t.Logf("the client, minified: %d bytes; gzipped: %d bytes (beyond the Firebase SDK)", len(min), gz.Len())
	if gz.Len() > 5<<10 {
		t.Errorf("the client is %d bytes gzipped; the aim is under 5 KB", gz.Len())
	}
}

// TestDemoBundleUpToDate rebuilds the script tally serve's /demo embeds,
// the demo and the client bundled with the pinned Firebase SDK, and checks
// that the committed one is the same: after a change to the client or the
// demo, run npm run demo here.
func TestDemoBundleUpToDate(t *testing.T) {
	t.Parallel()
	emulatortest.Without(t, "npm")
	if _, err := npmci.Install(context.Background(), ".", filepath.Join(".bin", "esbuild"), "the web client's build tools", os.Stderr); err != nil {
		t.Fatalf("%v (%s)", err, nodeHelp)
	}
	// npm run demo's own command, writing elsewhere.
	var pkg struct{ Scripts map[string]string }
	if b, err := os.ReadFile("package.json"); err != nil || json.Unmarshal(b, &pkg) != nil {
		t.Fatalf("package.json: %v", err)
	}
	script := pkg.Scripts["demo"]
	const outfile = "--outfile=../../internal/tools/stack/demo/demo.js"
	if !strings.HasPrefix(script, "esbuild ") || !strings.Contains(script, outfile) {
		t.Fatalf("npm run demo runs %q; want esbuild, writing %s", script, outfile)
	}
	fresh := filepath.Join(t.TempDir(), "demo.js")
	sh := exec.Command("sh", "-c", strings.Replace(script, outfile, "--outfile='"+fresh+"'", 1))
	bin, err := filepath.Abs(filepath.Join("node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	sh.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, out)
	}
	want, _ := os.ReadFile(fresh)
	got, err := os.ReadFile(filepath.Join("..", "..", "internal", "tools", "stack", "demo", "demo.js"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("internal/tools/stack/demo/demo.js is not the demo as built from its sources (%v): run npm ci && npm run demo in clients/web", err)
	}
}
