package bench

import (
	"context"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/tools/bridge"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// direct returns a commit hook that posts, through b, the event Eventarc
// would send for each shard increment the commit made: the document after
// the write (its count from the increment's result, its update_time the
// commit's) and before it. So events leave as fast as the load commits,
// concurrently, where the emulator delivers one at a time and falls behind
// past about 900 a second on 2 cores.
func direct(project string, b *bridge.Bridge) func(*firestorepb.CommitRequest, *firestorepb.CommitResponse) {
	var mu sync.Mutex
	last := map[string]time.Time{} // each shard's latest update_time seen
	return func(req *firestorepb.CommitRequest, resp *firestorepb.CommitResponse) {
		for i, w := range req.GetWrites() {
			name := w.GetUpdate().GetName()
			_, rel, _ := strings.Cut(name, "/documents/")
			parts := strings.Split(rel, "/")
			if k := len(parts); k < 4 || parts[k-2] != core.ShardsCollection || len(w.GetUpdateTransforms()) != 1 || // {doc}/shards/{n}, {doc}/lives/{life}/shards/{n}
				i >= len(resp.GetWriteResults()) || len(resp.GetWriteResults()[i].GetTransformResults()) != 1 {
				continue
			}
			res := resp.GetWriteResults()[i]
			field := w.GetUpdateTransforms()[0].GetFieldPath()
			after := res.GetTransformResults()[0].GetIntegerValue()
			by := w.GetUpdateTransforms()[0].GetIncrement().GetIntegerValue()
			at := res.GetUpdateTime().AsTime()
			mu.Lock()
			prev, seen := last[rel]
			if !seen || at.After(prev) {
				last[rel] = at
			}
			mu.Unlock()
			var before *eventarc.Doc
			if seen && prev.Before(at) {
				before = eventarc.IntDoc(rel, field, after-by, prev)
			} else if after != by {
				before = eventarc.IntDoc(rel, field, after-by, at.Add(-time.Microsecond))
			}
			e := eventarc.Written(project, "(default)", before, eventarc.IntDoc(rel, field, after, at))
			req, err := eventarc.Request(context.Background(), "http://direct", e)
			if err != nil {
				continue
			}
			b.Send(req.Header, e.Data())
		}
	}
}
