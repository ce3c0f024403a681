package main

import (
	"fmt"
	"io"
	"os"

	"github.com/tallycounters/tally/internal/emulator"
)

// localProject is the project id of a local run: GOOGLE_CLOUD_PROJECT, or
// demo-tally, which never reaches a real project.
func localProject() string {
	if p := os.Getenv("GOOGLE_CLOUD_PROJECT"); p != "" {
		return p
	}
	return "demo-tally"
}

// locateEmulator finds Java and the emulator, or explains how to install
// them on stderr.
func locateEmulator(cmd string, stderr io.Writer) (emulator.Paths, bool) {
	paths, err := emulator.LocateEnv(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "tally %s: %v\n", cmd, err)
		return emulator.Paths{}, false
	}
	return paths, true
}
