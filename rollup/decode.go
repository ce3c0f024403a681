package rollup

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/proto"

	"github.com/tallycounters/tally/layout"
)

// Event types and content type of Firestore document events.
const (
	eventTypePrefix = "google.cloud.firestore.document.v1."
	protobufType    = "application/protobuf"
)

// ErrMalformed is wrapped by every decoding error. Such an event can never
// succeed, so it is logged and acknowledged rather than retried.
var ErrMalformed = errors.New("malformed event")

// Decoder turns Firestore document events into shard changes.
type Decoder struct {
	Layout layout.Layout
}

// Decode reads a binary-mode CloudEvent carrying a protobuf DocumentEventData
// for a write to counters/{id}/shards/{n}. It talks to nothing.
func (d Decoder) Decode(e event.Event) (Change, error) {
	if !strings.HasPrefix(e.Type(), eventTypePrefix) {
		return Change{}, fmt.Errorf("%w: type %q is not a Firestore document event", ErrMalformed, e.Type())
	}
	if ct := e.DataContentType(); ct != "" && !strings.HasPrefix(ct, protobufType) {
		return Change{}, fmt.Errorf("%w: data content type %q, want %s", ErrMalformed, ct, protobufType)
	}
	var data firestoredata.DocumentEventData
	if err := proto.Unmarshal(e.Data(), &data); err != nil {
		return Change{}, fmt.Errorf("%w: data is not a DocumentEventData: %v", ErrMalformed, err)
	}
	before, beforeName, err := d.snapshot(data.GetOldValue())
	if err != nil {
		return Change{}, fmt.Errorf("%w: old value: %v", ErrMalformed, err)
	}
	after, afterName, err := d.snapshot(data.GetValue())
	if err != nil {
		return Change{}, fmt.Errorf("%w: value: %v", ErrMalformed, err)
	}
	name := afterName
	switch {
	case !before.Exists && !after.Exists:
		return Change{}, fmt.Errorf("%w: neither value nor old value is set", ErrMalformed)
	case !after.Exists:
		name = beforeName
	case before.Exists && beforeName != afterName:
		return Change{}, fmt.Errorf("%w: old value %q and value %q differ", ErrMalformed, beforeName, afterName)
	}
	id, shard, err := d.Layout.ParseShardPath(relativePath(name))
	if err != nil {
		return Change{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return Change{EventID: e.ID(), Counter: id, Shard: shard, Before: before, After: after}, nil
}

// snapshot reads one side of the event. A nil document is an absent shard.
func (d Decoder) snapshot(doc *firestoredata.Document) (Snapshot, string, error) {
	if doc == nil {
		return Snapshot{}, "", nil
	}
	if doc.GetName() == "" {
		return Snapshot{}, "", errors.New("document has no name")
	}
	if doc.GetUpdateTime() == nil {
		return Snapshot{}, "", fmt.Errorf("document %s has no update time", doc.GetName())
	}
	s := Snapshot{Exists: true, Version: precise(doc.GetUpdateTime().AsTime())}
	if v, ok := doc.GetFields()[d.Layout.ShardField]; ok {
		iv, ok := v.GetValueType().(*firestoredata.Value_IntegerValue)
		if !ok {
			return Snapshot{}, "", fmt.Errorf("field %q of %s is not an integer", d.Layout.ShardField, doc.GetName())
		}
		s.Count = iv.IntegerValue
	}
	return s, doc.GetName(), nil
}

// relativePath strips "projects/{p}/databases/{db}/documents/" from a
// document's full resource name.
func relativePath(name string) string {
	const marker = "/documents/"
	if i := strings.Index(name, marker); i >= 0 && strings.HasPrefix(name, "projects/") {
		return name[i+len(marker):]
	}
	return name
}

// precise cuts t to the microseconds Firestore keeps, so that a version read
// back from the parent compares equal to the one an event carried.
func precise(t time.Time) time.Time { return t.Truncate(time.Microsecond) }
