// Package npmci installs the npm packages a directory of the repository
// pins (its package-lock.json) with "npm ci", once, however many test
// processes ask at the same time: the Firebase CLI in tools/firebase, the
// web client's build and test tools in clients/web.
package npmci

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/gofrs/flock"
)

// ErrNoNPM means npm is not on the PATH.
var ErrNoNPM = errors.New("npm is not on the PATH")

// Install runs "npm ci" in dir, to install what (for the log), unless
// dir/node_modules/want exists already, and says whether it did. Callers in any number of processes install once:
// each takes an exclusive lock on dir/.install.lock first, and finds want
// there once the one that installed it lets go. It tells log what it does,
// as it takes a minute or so.
func Install(dir, want, what string, log io.Writer) (installed bool, err error) {
	path := filepath.Join(dir, "node_modules", want)
	if exists(path) {
		return false, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return false, ErrNoNPM
	}
	lock := flock.New(filepath.Join(dir, ".install.lock"))
	if err := lock.Lock(); err != nil {
		return false, fmt.Errorf("npm ci in %s: lock %s: %w", dir, lock.Path(), err)
	}
	defer lock.Unlock()
	if exists(path) {
		return false, nil // installed while this caller waited
	}
	fmt.Fprintf(log, "tally: installing %s pinned in %s, once: npm ci --prefix %s\n", what, dir, dir)
	cmd := exec.Command(npm, "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("npm ci --prefix %s: %w", dir, err)
	}
	if !exists(path) {
		return false, fmt.Errorf("npm ci --prefix %s left no %s", dir, path)
	}
	return true, nil
}

// Dir is the repository's directory rel (such as tools/firebase), found
// from the working directory up to the module's root; "" outside the
// repository or if it holds no package-lock.json.
func Dir(rel string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for ; ; dir = filepath.Dir(dir) {
		d := filepath.Join(dir, rel)
		if exists(filepath.Join(d, "package-lock.json")) {
			return d
		}
		if exists(filepath.Join(dir, "go.mod")) || filepath.Dir(dir) == dir {
			return ""
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
