package rollup

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

func TestStoreContractFolder(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	client := emulatortest.Client(t)
	layout := core.Default()
	runContract(t, storeContract, func(t *testing.T, window time.Duration) contractStore {
		id := emulatortest.ID(t)
		return contractStore{s: newFolderStore(client, fold.NewFolder(client, layout, window)), id: id,
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

func TestStoreContractFolderOnDocuments(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	client := emulatortest.Client(t)
	docs, err := core.ParseCounts(docsCounts)
	if err != nil {
		t.Fatal(err)
	}
	layout := core.Layout{Docs: docs, Zone: time.UTC}
	runContract(t, docsContract, func(t *testing.T, window time.Duration) contractStore {
		ctx := context.Background()
		id := "posts/" + emulatortest.ID(t)
		res, err := client.Doc(id).Create(ctx, map[string]any{"title": "a post"})
		if err != nil {
			t.Fatal(err)
		}
		life := layout.LifeOf(res.UpdateTime)
		n := 0
		return contractStore{s: newFolderStore(client, fold.NewFolder(client, layout, window)), id: id,
			add: func(by int64) {
				_, err := layout.Shard(client, id, life, 0).Set(ctx,
					map[string]any{"likes": firestore.Increment(by)}, firestore.MergeAll)
				if err != nil {
					t.Fatal(fmt.Errorf("add to %s: %w", id, err))
				}
			},
			pass: func() {
				if window < time.Second {
					time.Sleep(2 * window)
				}
			},
			comment: func() {
				n++
				if _, err := client.Doc(fmt.Sprintf("%s/%s/c%d", id, comments, n)).Create(ctx, map[string]any{"text": "hi"}); err != nil {
					t.Fatal(err)
				}
			},
			now:   time.Now,
			until: func(at time.Time) { time.Sleep(time.Until(at) + 10*time.Millisecond) }}
	})
}
