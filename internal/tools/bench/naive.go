package bench

import (
	"context"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/proto"

	"github.com/tallycounters/tally/internal/core"
)

// naiveRollup is the rollup of the public distributed-counter guides: each
// event adds after - before to the parent's total. Nothing is deduplicated,
// and every event is one more write to the parent. Each parent write is
// reported to record.
func naiveRollup(client *firestore.Client, l core.Layout, record func(path string, at time.Time, delta int64)) func(context.Context, event.Event) error {
	return func(ctx context.Context, e event.Event) error {
		data, rel, ok := written(e)
		if !ok {
			return nil
		}
		id, _, _, err := l.ParseShardPath(rel)
		if err != nil {
			return nil
		}
		count := func(d *firestoredata.Document) int64 { return d.GetFields()[l.ShardField].GetIntegerValue() }
		delta := count(data.GetValue()) - count(data.GetOldValue())
		wr, err := l.Counter(client, id).Set(ctx, map[string]any{core.FieldTotal: firestore.Increment(delta)}, firestore.MergeAll)
		if err != nil {
			return err
		}
		record(l.Collection+"/"+id, wr.UpdateTime, delta)
		return nil
	}
}

// written is a Firestore write event's data and the written document's
// path from the database's root; ok is false for an event that is not one.
// The bench's stand-ins for apps' triggers read events with it.
func written(e event.Event) (data *firestoredata.DocumentEventData, rel string, ok bool) {
	data = &firestoredata.DocumentEventData{}
	if proto.Unmarshal(e.Data(), data) != nil {
		return nil, "", false
	}
	name := data.GetValue().GetName()
	if name == "" {
		name = data.GetOldValue().GetName()
	}
	_, rel, ok = strings.Cut(name, "/documents/")
	return data, rel, ok
}
