package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/google/uuid"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// TakeoverFigures are what tally extension takeover took over Documents
// documents the extension left shards and partials under.
type TakeoverFigures struct {
	Documents, Shards, Partials int
	Seconds                     float64
	Reads, Writes, Deletes      int64 // of which deletes
	Moved                       int64 // likes moved
}

// RunTakeover seeds documents (s.Workers of them moved at once), each with two clients' shards and a
// partial, and the extension's workers' state, as an uninstalled
// extension leaves them, then times extension.Takeover over them and
// counts what it read and wrote.
func RunTakeover(ctx context.Context, s Setup, documents int, progress io.Writer) (TakeoverFigures, error) {
	emu, err := emulator.Start(ctx, emulator.Options{Paths: s.Emulator})
	if err != nil {
		return TakeoverFigures{}, err
	}
	defer emu.Stop()
	seed, err := opcount.Client(ctx, emu.Host(), s.Project, &opcount.Ops{})
	if err != nil {
		return TakeoverFigures{}, err
	}
	defer seed.Close()
	if err := seedTakeover(ctx, seed, documents, progress); err != nil {
		return TakeoverFigures{}, err
	}
	ops := &opcount.Ops{}
	c, err := opcount.Client(ctx, emu.Host(), s.Project, ops)
	if err != nil {
		return TakeoverFigures{}, err
	}
	defer c.Close()
	began := time.Now()
	r, err := extension.Takeover(ctx, c, core.Default(), extension.TakeoverOptions{Parallel: s.Workers,
		Progress: func(line string) { fmt.Fprintln(progress, "takeover: "+line) }})
	if err != nil {
		return TakeoverFigures{}, err
	}
	f := TakeoverFigures{Documents: r.Documents, Shards: r.Shards, Partials: r.Partials, Seconds: time.Since(began).Seconds(),
		Reads: ops.Reads(), Writes: ops.Writes(), Deletes: ops.Deletes()}
	f.Moved, _ = r.Totals.Of(firestore.FieldPath{"likes"}).(int64)
	return f, nil
}

// seedTakeover writes documents documents, each with two client shards
// of 1 and 2 likes and a partial of 3, and the workers' state.
func seedTakeover(ctx context.Context, c *firestore.Client, documents int, progress io.Writer) error {
	bw := c.BulkWriter(ctx)
	for i := range documents {
		doc := c.Collection("bench_takeover").Doc(fmt.Sprintf("d%06d", i))
		bw.Create(doc, map[string]any{"title": "a post", "likes": int64(10)})
		shards := doc.Collection(extension.Collection)
		a, b := uuid.NewString(), uuid.NewString()
		bw.Create(shards.Doc(a), map[string]any{"likes": int64(1)})
		bw.Create(shards.Doc(b), map[string]any{"likes": int64(2)})
		bw.Create(shards.Doc("\t"+a[:4]), map[string]any{"_updates_": []any{map[string]any{"_id_": uuid.NewString(), "_data_": map[string]any{"likes": int64(3)}}}})
		if (i+1)%2000 == 0 {
			fmt.Fprintf(progress, "takeover: seeded %d of %d documents\n", i+1, documents)
		}
	}
	bw.End()
	state := c.Doc(extension.DefaultStatePath)
	if _, err := state.Set(ctx, map[string]any{"workers": []any{}, "timestamp": firestore.ServerTimestamp}); err != nil {
		return err
	}
	_, err := state.Collection("workers").Doc("0000").Set(ctx, map[string]any{"timestamp": firestore.ServerTimestamp})
	return err
}
