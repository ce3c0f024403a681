// Package npmci installs the npm packages a directory of the repository
// pins (its package-lock.json) with "npm ci", once per machine, however
// many test processes or clones ask at the same time: the Firebase CLI in
// tools/firebase, the web client's build and test tools in clients/web.
package npmci

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// ErrNoNPM means npm is not on the PATH.
var ErrNoNPM = errors.New("npm is not on the PATH")

// progressEvery is how often a running install says how far it has got.
var progressEvery = 15 * time.Second

// Install makes dir/node_modules/want present, and says whether it
// installed anything. The packages dir pins are installed with "npm ci"
// once per machine, into the user's cache directory under a name made
// from dir's package.json and package-lock.json, and dir/node_modules is
// a link to them there: a second clone of the repository finds them
// installed. Without a cache directory, or beside a node_modules of
// dir's own, they are installed in dir. Callers in any number of
// processes install once: each takes an exclusive lock first, and finds
// want there once the one that installed it lets go. It tells log what it
// does, and how far it has got, as it takes minutes on a slow link.
func Install(dir, want, what string, log io.Writer) (installed bool, err error) {
	modules := filepath.Join(dir, "node_modules")
	have := func() bool { return exists(filepath.Join(modules, want)) }
	if have() {
		return false, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return false, ErrNoNPM
	}
	_, err = locked(dir, have, func() error {
		if fi, err := os.Lstat(modules); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			os.Remove(modules) // a link to packages no longer there: the cache was cleared
		}
		pins, err := pinned(dir)
		root, rootErr := os.UserCacheDir()
		if _, statErr := os.Lstat(modules); err != nil || rootErr != nil || statErr == nil {
			installed = true
			return npmCI(npm, dir, want, what+" pinned in "+dir, log) // in place, as before the cache
		}
		cache := filepath.Join(root, "tally", "npm", pins.name)
		installed, err = locked(cache, func() bool { return exists(filepath.Join(cache, "node_modules", want)) }, func() error {
			for name, b := range pins.files {
				if err := os.WriteFile(filepath.Join(cache, name), b, 0o644); err != nil {
					return err
				}
			}
			return npmCI(npm, cache, want, what+" pinned in "+dir+", once for this machine", log)
		})
		if err != nil {
			return err
		}
		if err := os.Symlink(filepath.Join(cache, "node_modules"), modules); err != nil {
			return fmt.Errorf("link %s to the packages in %s: %w", dir, cache, err)
		}
		if !installed {
			fmt.Fprintf(log, "tally: %s pinned in %s: installed already, in %s\n", what, dir, cache)
		}
		return nil
	})
	return installed && err == nil, err
}

// locked runs install under an exclusive lock on dir/.install.lock (dir
// made if need be), unless done already, before or once the lock is
// taken: callers in any number of processes run it once. It reports
// whether it ran install.
func locked(dir string, done func() bool, install func() error) (bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	lock := flock.New(filepath.Join(dir, ".install.lock"))
	if err := lock.Lock(); err != nil {
		return false, fmt.Errorf("npm ci in %s: lock %s: %w", dir, lock.Path(), err)
	}
	defer lock.Unlock()
	if done() {
		return false, nil // installed while this caller waited
	}
	return true, install()
}

// pins are the files of a directory that pin its packages, and the name
// of the cache directory for them: dir's own, and a hash of the files.
type pins struct {
	name  string
	files map[string][]byte
}

func pinned(dir string) (pins, error) {
	p := pins{files: map[string][]byte{}}
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json", ".npmrc"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) && name == ".npmrc" {
			continue
		}
		if err != nil {
			return pins{}, err
		}
		p.files[name] = b
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	abs, _ := filepath.Abs(dir)
	p.name = filepath.Base(abs) + "-" + hex.EncodeToString(h.Sum(nil))[:16]
	return p, nil
}

// npmCI runs npm ci in dir, saying what it installs and, every
// progressEvery, how much it has written.
func npmCI(npm, dir, want, what string, w io.Writer) error {
	log := &lockedWriter{w: w} // npm's output and the progress lines interleave
	fmt.Fprintf(log, "tally: installing %s: npm ci --prefix %s\n", what, dir)
	cmd := exec.Command(npm, "ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("npm ci --prefix %s: %w", dir, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("npm ci --prefix %s: %w", dir, err)
			}
			if path := filepath.Join(dir, "node_modules", want); !exists(path) {
				return fmt.Errorf("npm ci --prefix %s left no %s", dir, path)
			}
			fmt.Fprintf(log, "tally: installed in %s: %d MB in %s\n", time.Since(start).Round(time.Second), size(filepath.Join(dir, "node_modules"))>>20, dir)
			return nil
		case <-tick.C:
			fmt.Fprintf(log, "tally: still installing, %s so far: %d MB written\n", time.Since(start).Round(time.Second), size(filepath.Join(dir, "node_modules"))>>20)
		}
	}
}

// lockedWriter writes to w from one goroutine at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// size is the bytes of the files under dir.
func size(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
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
