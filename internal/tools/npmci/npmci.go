// Package npmci installs the npm packages a directory of the repository
// pins (its package-lock.json) with "npm ci", once per machine, however
// many test processes or clones ask at the same time: the Firebase CLI in
// internal/tools/firebase, the web client's build and test tools in clients/web.
package npmci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/tallycounters/tally/internal/tools/proc"
)

// ErrNoNPM means npm is not on the PATH.
var ErrNoNPM = errors.New("npm is not on the PATH")

// progressEvery is how often a running install says how far it has got.
var progressEvery = 15 * time.Second

// Install makes dir/node_modules/want present, and says whether it
// installed anything. The packages dir pins are installed with "npm ci"
// (and flags, such as --omit=optional) once per machine, into the user's
// cache directory under a name made from dir's package.json and
// package-lock.json, and dir/node_modules is a link to them there: a
// second clone of the repository finds them installed. Without a cache
// directory, or beside a node_modules of dir's own, they are installed in
// dir. Callers in any number of processes install once: each takes an
// exclusive lock first, and finds want there once the one that installed
// it lets go; a caller that waits says who it waits for, and stops
// waiting when ctx ends. It tells log what it does, and how far it has
// got, as it takes minutes on a slow link.
func Install(ctx context.Context, dir, want, what string, log io.Writer, flags ...string) (installed bool, err error) {
	modules := filepath.Join(dir, "node_modules")
	have := func() bool { return exists(filepath.Join(modules, want)) }
	if have() {
		return false, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return false, ErrNoNPM
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	job := job{npm: npm, want: want, what: what + " pinned in " + dir, log: log, flags: flags}
	_, err = job.locked(ctx, dir, have, func() error {
		if fi, err := os.Lstat(modules); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			os.Remove(modules) // a link to packages no longer there: the cache was cleared
		}
		pins, err := pinned(os.DirFS(dir), filepath.Base(dir))
		root, rootErr := os.UserCacheDir()
		if _, statErr := os.Lstat(modules); err != nil || rootErr != nil || statErr == nil {
			installed = true
			return job.ci(ctx, dir) // in place, as before the cache
		}
		cache := filepath.Join(root, "tally", "npm", pins.name)
		job.what += ", once for this machine"
		installed, err = job.cached(ctx, cache, pins)
		if err != nil {
			return err
		}
		if err := os.Symlink(filepath.Join(cache, "node_modules"), modules); err != nil {
			return fmt.Errorf("link %s to the packages in %s: %w", dir, cache, err)
		}
		if !installed {
			fmt.Fprintf(log, "tally: %s: installed already, in %s\n", job.what, cache)
		}
		return nil
	})
	return installed && err == nil, err
}

// InstallPins is Install for packages pinned by the files of pins (a
// package.json, a package-lock.json and perhaps an .npmrc), such as those
// a binary carries: they are installed once per machine into the user's
// cache directory, in the same place as Install puts those of a directory
// named name with the same files. It returns their node_modules.
func InstallPins(ctx context.Context, pins fs.FS, name, want, what string, log io.Writer, flags ...string) (modules string, installed bool, err error) {
	p, err := pinned(pins, name)
	if err != nil {
		return "", false, err
	}
	root, err := os.UserCacheDir()
	if err != nil {
		return "", false, fmt.Errorf("no cache directory to install %s in: %w", what, err)
	}
	cache := filepath.Join(root, "tally", "npm", p.name)
	modules = filepath.Join(cache, "node_modules")
	if exists(filepath.Join(modules, want)) {
		return modules, false, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", false, ErrNoNPM
	}
	job := job{npm: npm, want: want, what: what + ", once for this machine", log: log, flags: flags}
	installed, err = job.cached(ctx, cache, p)
	return modules, installed, err
}

// job is one install: what it installs, how, and where it says so.
type job struct {
	npm, want, what string
	log             io.Writer
	flags           []string
}

// cached installs the packages pins pin into cache, unless there already.
func (j job) cached(ctx context.Context, cache string, pins pins) (bool, error) {
	return j.locked(ctx, cache, func() bool { return exists(filepath.Join(cache, "node_modules", j.want)) }, func() error {
		for name, b := range pins.files {
			if err := os.WriteFile(filepath.Join(cache, name), b, 0o644); err != nil {
				return err
			}
		}
		return j.ci(ctx, cache)
	})
}

// locked runs install under an exclusive lock on dir/.install.lock (dir
// made if need be), unless done already, before or once the lock is
// taken: callers in any number of processes run it once. A caller that
// must wait says so, with the process that holds the lock, and how long
// it has waited every progressEvery; it stops waiting when ctx ends. It
// reports whether it ran install.
func (j job) locked(ctx context.Context, dir string, done func() bool, install func() error) (bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	lock := flock.New(filepath.Join(dir, ".install.lock"))
	holder := filepath.Join(dir, ".install.holder")
	ok, err := lock.TryLock()
	for start, first := time.Now(), true; !ok && err == nil; first = false {
		if first {
			b, _ := os.ReadFile(holder)
			fmt.Fprintf(j.log, "tally: waiting for another process to install %s (%s holds %s); Ctrl-C stops waiting\n",
				j.what, orDefault(strings.TrimSpace(string(b)), "a process that says nothing of itself"), lock.Path())
		} else {
			fmt.Fprintf(j.log, "tally: still waiting for %s, %s so far\n", lock.Path(), time.Since(start).Round(time.Second))
		}
		wctx, cancel := context.WithTimeout(ctx, progressEvery)
		ok, err = lock.TryLockContext(wctx, 200*time.Millisecond)
		cancel()
		if !ok && ctx.Err() != nil {
			return false, fmt.Errorf("stopped waiting for %s: %w", lock.Path(), context.Cause(ctx))
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = nil
		}
	}
	if err != nil {
		return false, fmt.Errorf("npm ci in %s: lock %s: %w", dir, lock.Path(), err)
	}
	defer lock.Unlock()
	host, _ := os.Hostname()
	os.WriteFile(holder, fmt.Appendf(nil, "process %d on %s, since %s", os.Getpid(), host, time.Now().Format(time.TimeOnly)), 0o644)
	defer os.Remove(holder)
	if done() {
		return false, nil // installed while this caller waited
	}
	return true, install()
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// pins are the files of a directory that pin its packages, and the name
// of the cache directory for them: dir's own, and a hash of the files.
type pins struct {
	name  string
	files map[string][]byte
}

func pinned(dir fs.FS, base string) (pins, error) {
	p := pins{files: map[string][]byte{}}
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json", ".npmrc"} {
		b, err := fs.ReadFile(dir, name)
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
	p.name = base + "-" + hex.EncodeToString(h.Sum(nil))[:16]
	return p, nil
}

// ci runs npm ci in dir, saying what it installs and, every
// progressEvery, how much it has written, and what npm is doing if it is
// building a native module from source; it stops npm when ctx ends.
func (j job) ci(ctx context.Context, dir string) error {
	log := &lockedWriter{w: j.log} // npm's output and the progress lines interleave
	args := append([]string{"ci", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, j.flags...)
	fmt.Fprintf(log, "tally: installing %s: npm %s\n", j.what, strings.Join(args, " "))
	cmd := exec.Command(j.npm, args...)
	cmd.Stdout, cmd.Stderr = log, log
	group, err := proc.Start(cmd) // npm and the scripts it runs, stopped together
	if err != nil {
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
			if path := filepath.Join(dir, "node_modules", j.want); !exists(path) {
				return fmt.Errorf("npm ci --prefix %s left no %s", dir, path)
			}
			fmt.Fprintf(log, "tally: installed in %s: %d MB in %s\n", time.Since(start).Round(time.Second), size(filepath.Join(dir, "node_modules"))>>20, dir)
			return nil
		case <-ctx.Done():
			group.Kill()
			<-done
			return fmt.Errorf("npm ci --prefix %s: stopped: %w", dir, context.Cause(ctx))
		case <-tick.C:
			doing := ""
			if c := compiling(dir); c != "" {
				doing = "; compiling " + c + " from source (no prebuilt binary for this machine), which takes minutes"
			}
			fmt.Fprintf(log, "tally: still installing, %s so far: %d MB written%s\n", time.Since(start).Round(time.Second), size(filepath.Join(dir, "node_modules"))>>20, doing)
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

// Dir is the repository's directory rel (such as internal/tools/firebase), found
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
