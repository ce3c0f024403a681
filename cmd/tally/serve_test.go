package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/tools/emulator"
)

func TestServeWithoutEmulatorExplains(t *testing.T) {
	t.Parallel()
	for name, env := range map[string][]string{
		"no emulator": {"TALLY_FIRESTORE_EMULATOR=/nonexistent"},
		"no Java":     {"JAVA=/nonexistent/java"},
	} {
		t.Run(name, func(t *testing.T) {
			_, stderr, code := tallyOut(t, env, "serve", "--port", "0")
			if code == 0 {
				t.Errorf("serve exited 0 with %s", name)
			}
			for _, want := range []string{"cannot find", "gcloud components install cloud-firestore-emulator", "google-cloud-cli-firestore-emulator", "default-jre-headless"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("error does not mention %q: %s", want, stderr)
				}
			}
		})
	}
}

// TestServeRejectsBadConfig: serve checks the configuration before it
// starts anything, and exits 2 naming the variable.
func TestServeRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"TALLY_ROLLUP_WINDOW=5", "TALLY_MAX_STEP=abc", "TALLY_SHARD_FIELD=a.b", "TALLY_AUTO_CREATE=maybe"} {
		stdout, stderr, code := tallyOut(t, []string{bad}, "serve", "--port", "0")
		name, _, _ := strings.Cut(bad, "=")
		if code != 2 || !strings.Contains(stderr, name) || strings.Contains(stdout, "functions at") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 naming %s and no ready banner", bad, code, stdout, stderr, name)
		}
	}
}

// commitIncrement adds 1 to the document at path through the emulator's
// REST commit, as the owner, the way a client library would.
func commitIncrement(t *testing.T, host, path string) {
	t.Helper()
	body := fmt.Sprintf(`{"writes":[{"transform":{"document":"projects/demo-tally/databases/(default)/documents/%s",`+
		`"fieldTransforms":[{"fieldPath":"count","increment":{"integerValue":"1"}}]}}]}`, path)
	req, _ := http.NewRequest(http.MethodPost, "http://"+host+"/v1/projects/demo-tally/databases/(default)/documents:commit", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer owner")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("commit: %s %s", resp.Status, b)
	}
}

// TestServeStaleEmulatorHost: a FIRESTORE_EMULATOR_HOST left set by a serve
// that has stopped is named, with what answers there (nothing) and how to
// go on; and --data, which saves the data of the emulator serve starts, is
// refused beside an emulator serve did not start.
func TestServeStaleEmulatorHost(t *testing.T) {
	t.Parallel()
	port, err := emulator.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	stale := "FIRESTORE_EMULATOR_HOST=127.0.0.1:" + strconv.Itoa(port)
	_, stderr, code := tallyOut(t, []string{stale}, "serve", "--port", "0")
	for _, want := range []string{stale, "no Firestore emulator answers", "unset FIRESTORE_EMULATOR_HOST", "--bridge-port"} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
		}
	}
	_, stderr, code = tallyOut(t, []string{stale}, "serve", "--port", "0", "--data", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "--data") || !strings.Contains(stderr, "did not start") {
		t.Errorf("--data with an emulator serve did not start: exit %d, stderr %q; want exit 2, explained", code, stderr)
	}
}
