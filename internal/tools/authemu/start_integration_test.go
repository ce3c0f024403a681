package authemu

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestStartsBesideOthers starts several emulators for one project at once,
// as parallel test packages do, and each comes up and signs a user up. The
// CLIs once shared a temporary file per project and could read it
// half-written and exit, and a port picked free could be taken before the
// CLI bound it.
func TestStartsBesideOthers(t *testing.T) {
	emulatortest.Without(t, "npm")
	const n = 4
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e, err := Start(context.Background(), emulatortest.Project, io.Discard)
			if err != nil {
				t.Error(err)
				return
			}
			defer e.Stop()
			if _, err := SignUp(e.Host, fmt.Sprintf("u%d@example.com", i), "secret-password"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
