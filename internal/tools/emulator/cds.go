package emulator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Class-data sharing: the JVM maps the emulator's classes from an archive
// instead of loading and verifying them at every start. Measured here (2
// cores): ready in 0.35 s instead of 1.04 s, on 0.77 CPU-seconds instead of
// 1.56. The first emulator of a JVM and jar writes the archive as it exits
// on Stop; the archive is checked with that JVM before it is kept, and an
// emulator that dies on one before it is ready has it removed, so a broken
// archive is never used twice. It lives in the user's cache directory
// (tally/), about 30 MB per JVM and jar.

// archive is one emulator start's use of the class-data archive.
type archive struct {
	java, jar string
	path      string // the archive for this JVM, jar and flags
	writing   string // where this start writes it, when there is none yet
}

// newArchive returns the archive for p and flags in cacheDir (the user's
// cache directory when empty); nil if there is no cache directory or the
// programs cannot be stat'ed.
func newArchive(p Paths, flags []string, cacheDir string) *archive {
	if cacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		cacheDir = filepath.Join(dir, "tally")
	}
	h := sha256.New()
	for _, f := range []string{p.Java, p.Jar} {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			return nil
		}
		st, err := os.Stat(real)
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", real, st.Size(), st.ModTime().UnixNano())
	}
	fmt.Fprintf(h, "%s", strings.Join(flags, "\x00"))
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil
	}
	return &archive{java: p.Java, jar: p.Jar, path: filepath.Join(cacheDir, "emulator-"+hex.EncodeToString(h.Sum(nil))[:16]+".jsa")}
}

// flags are the JVM's flags for this start: use the archive if there is
// one, else write one at exit. Older JVMs ignore them.
func (a *archive) flags() []string {
	if a == nil {
		return nil
	}
	quiet := []string{"-XX:+IgnoreUnrecognizedVMOptions", "-Xlog:cds=off", "-Xlog:cds+dynamic=off", errorFile()}
	if _, err := os.Stat(a.path); err == nil {
		return append(quiet, "-XX:SharedArchiveFile="+a.path)
	}
	a.writing = fmt.Sprintf("%s.%d-%d.tmp", a.path, os.Getpid(), rand.Uint32())
	return append(quiet, "-XX:ArchiveClassesAtExit="+a.writing)
}

// used says whether this start maps the archive.
func (a *archive) used() bool { return a != nil && a.writing == "" }

// exited keeps the archive this start wrote, once its JVM has exited, if
// that JVM can start from it; otherwise it removes it.
func (a *archive) exited() {
	if a == nil || a.writing == "" {
		return
	}
	defer os.Remove(a.writing)
	if st, err := os.Stat(a.writing); err != nil || st.Size() == 0 {
		return
	}
	check := exec.Command(a.java, errorFile(), "-Xshare:on", "-XX:SharedArchiveFile="+a.writing, "-cp", a.jar, "-version")
	if check.Run() != nil {
		return
	}
	if os.Rename(a.writing, a.path) == nil {
		a.removeStale()
	}
}

// errorFile puts the report of a JVM that dies (on an archive cut short,
// say) in the temporary directory, not in the directory tally runs in.
func errorFile() string {
	return "-XX:ErrorFile=" + filepath.Join(os.TempDir(), "tally-emulator-hs_err_pid%p.log")
}

// broken removes the archive after an emulator died on it before it was
// ready.
func (a *archive) broken() {
	if a.used() {
		os.Remove(a.path)
	}
}

// removeStale removes the archives of other JVMs or jars, and unfinished
// ones, not written for a week.
func (a *archive) removeStale() {
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(a.path), "emulator-*.jsa*"))
	for _, f := range old {
		if st, err := os.Stat(f); err == nil && f != a.path && time.Since(st.ModTime()) > 7*24*time.Hour {
			os.Remove(f)
		}
	}
}
