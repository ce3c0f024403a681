package emulatortest

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// IntegrationFile ends the name of every test file whose tests and
// benchmarks -short leaves out: those that need the emulators, a browser,
// npm, gcloud or deploy.sh, or take long. A test's tier shows in its
// file's name, and Require, Long and Without hold every test to it.
const IntegrationFile = "_integration_test.go"

// Require skips the test with -short, which leaves out every test that
// needs the emulator (Java) and says so by name, and otherwise does nothing.
func Require(t testing.TB) {
	t.Helper()
	Without(t, "the Firestore emulator (Java)")
}

// Long skips the test with -short, saying why it is long.
func Long(t testing.TB, why string) {
	t.Helper()
	inIntegrationFile(t)
	if testing.Short() {
		t.Skipf("%s: left out by -short", why)
	}
}

// Without skips the test with -short, saying it needs what.
func Without(t testing.TB, what string) {
	t.Helper()
	inIntegrationFile(t)
	if testing.Short() {
		t.Skipf("needs %s: left out by -short", what)
	}
}

// inIntegrationFile fails the test, with or without -short, unless the
// test function that called (the outermost frame in a _test.go file) is in
// a file named for its tier.
func inIntegrationFile(t testing.TB) {
	t.Helper()
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	file := ""
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.File, "_test.go") {
			file = f.File
		}
		if !more {
			break
		}
	}
	if file != "" && !strings.HasSuffix(file, IntegrationFile) {
		t.Fatalf("%s is left out by -short: move it to a file whose name ends in %s (it is in %s)", t.Name(), IntegrationFile, filepath.Base(file))
	}
}
