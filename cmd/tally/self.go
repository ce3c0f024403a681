package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// selfCommand is how to run this tally from the working directory, for
// the commands serve prints: this binary's path if it was built, or
// "tally" if that is it on the PATH; if it was built by go run (or go
// test), go run of the repository's cmd/tally, relative to the working
// directory (from examples/like-button, where npm start runs serve,
// "go run ../../cmd/tally").
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "tally"
	}
	if !strings.Contains(filepath.ToSlash(exe), "/go-build") {
		if p, err := exec.LookPath("tally"); err == nil && sameFile(p, exe) {
			return "tally"
		}
		return shellQuote(exe)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "go run ./cmd/tally"
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "cmd", "tally", "main.go")); err == nil {
			rel, err := filepath.Rel(wd, filepath.Join(dir, "cmd", "tally"))
			if err != nil {
				break
			}
			if rel = filepath.ToSlash(rel); !strings.HasPrefix(rel, "..") {
				rel = "./" + rel
			}
			return "go run " + shellQuote(rel)
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return "go run ./cmd/tally"
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// shellQuote quotes s for a POSIX shell if it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
