package web_test

import (
	"bytes"
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

// needNode is node's path, with the client's tools installed, or fails
// saying how to get them.
func needNode(t *testing.T) string {
	t.Helper()
	emulatortest.Without(t, "Node.js")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(nodeHelp)
	}
	if _, err := npmci.Install(context.Background(), ".", filepath.Join("firebase", "package.json"), "the web client's build tools", os.Stderr); err != nil {
		t.Fatalf("%v (%s)", err, nodeHelp)
	}
	return node
}

// runE2E runs e2e/script with node, with cfg as JSON in the environment
// variable env, and answers the last line it printed.
func runE2E(t *testing.T, node, script, env string, cfg any) []byte {
	t.Helper()
	b, _ := json.Marshal(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), emulatortest.Liveness) // a liveness bound
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("e2e", script))
	cmd.Env = append(os.Environ(), env+"="+string(b))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node e2e/%s: %v\n%s%s", script, err, out, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return []byte(lines[len(lines)-1])
}
