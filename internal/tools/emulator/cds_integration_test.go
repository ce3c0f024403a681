package emulator_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/emulator"
)

// TestClassDataArchive: the first emulator writes its class-data archive
// as it stops, the next starts from it, and one that cannot start from a
// broken archive removes it and starts without it.
func TestClassDataArchive(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // where the JVM that dies on the broken archive reports
	o := emulator.Options{Paths: paths, CacheDir: dir}
	run := func() string {
		t.Helper()
		e, err := emulator.Start(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		var cmdline []byte
		if runtime.GOOS == "linux" {
			cmdline, _ = os.ReadFile(filepath.Join("/proc", strconv.Itoa(e.PID()), "cmdline"))
		}
		if err := e.Stop(); err != nil {
			t.Fatal(err)
		}
		return string(cmdline)
	}
	archives := func() []string {
		t.Helper()
		got, _ := filepath.Glob(filepath.Join(dir, "emulator-*"))
		return got
	}

	run()
	kept := archives()
	if len(kept) != 1 || !strings.HasSuffix(kept[0], ".jsa") {
		t.Fatalf("after the first emulator stopped, the cache holds %v; want one archive", kept)
	}
	if cmdline := run(); runtime.GOOS == "linux" && !strings.Contains(cmdline, "-XX:SharedArchiveFile="+kept[0]) {
		t.Errorf("the second emulator did not start from the archive: %q", cmdline)
	}

	// An archive cut short (a disk filled up, say) crashes the JVM.
	good, err := os.ReadFile(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(kept[0]) // the JVM writes it read-only
	if err := os.WriteFile(kept[0], good[:1<<20], 0o644); err != nil {
		t.Fatal(err)
	}
	run() // starts without the broken archive, and writes a good one as it stops
	if got := archives(); len(got) != 1 || got[0] != kept[0] {
		t.Fatalf("after a start on a broken archive, the cache holds %v", got)
	}
	if st, err := os.Stat(kept[0]); err != nil || st.Size() < 1<<20 {
		t.Errorf("the archive written again: %v, %v; want a good one", st, err)
	}
}
