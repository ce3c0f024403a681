package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestDeclarationsThatCannotBeKept: serve, and config --check as deploy.sh
// runs it, refuse a half-life past ten years and windows whose series
// could outgrow a document, with the reason and the budget, exit 2, and
// start nothing (the emulator is never looked for).
func TestDeclarationsThatCannotBeKept(t *testing.T) {
	t.Parallel()
	var many []string
	for i := range 150 {
		many = append(many, fmt.Sprintf("w%d=views per minute keep 400", i))
	}
	for _, c := range []struct {
		counts string
		want   []string
	}{
		{"posts:likes,hot=trend(likes, 213504d)", []string{"TALLY_COUNTS", "213504d", "a minute to ten years"}},
		{"posts:views," + strings.Join(many, ","), []string{"TALLY_COUNTS", "1751930 bytes", "262144 bytes"}},
	} {
		for _, args := range [][]string{{"serve", "--port", "0"}, {"config", "--check"}} {
			out, code := cliWith(t, []string{"TALLY_COUNTS=" + c.counts, "TALLY_FIRESTORE_EMULATOR=/nonexistent"}, args...)
			if code != 2 {
				t.Errorf("tally %s with %.40s...: exit %d, want 2\n%s", strings.Join(args, " "), c.counts, code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("tally %s with %.40s...: no %q in\n%s", strings.Join(args, " "), c.counts, w, out)
				}
			}
		}
	}
}
