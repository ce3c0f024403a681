package main

import (
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestReadmeRunsLive runs the commands of the README and the docs that
// need the emulator, gcloud or a bench run (readmeRuns' live), as they are
// written, with only their durations shortened: each must end, and
// succeed. TestReadmeRuns holds the table to the docs.
func TestReadmeRunsLive(t *testing.T) {
	emulatortest.Long(t, "runs the docs' serve, bench and gcloud commands")
	t.Parallel()
	for _, line := range readmeCommands(t) {
		if r := readmeRuns[line]; r.live != nil {
			t.Run(line, func(t *testing.T) {
				t.Parallel()
				r.live(t, line)
			})
		}
	}
}
