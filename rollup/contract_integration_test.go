package rollup

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

func TestStoreContractFolder(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	client := emulatortest.Client(t)
	layout := core.Default()
	runContract(t, func(t *testing.T, window time.Duration) contractStore {
		id := emulatortest.ID(t)
		return contractStore{s: core.NewFolder(client, layout, window), id: id,
			add: func(by int64) {
				_, err := layout.Shard(client, id, "", 0).Set(context.Background(),
					map[string]any{layout.ShardField: firestore.Increment(by)}, firestore.MergeAll)
				if err != nil {
					t.Fatal(fmt.Errorf("add to %s: %w", id, err))
				}
			},
			// Time only moves on: sleeping past the window passes it
			// however loaded the machine is. The cases that must stay
			// within it have an hour's window.
			pass: func() {
				if window < time.Second {
					time.Sleep(2 * window)
				}
			}}
	})
}
