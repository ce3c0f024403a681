package rollup

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/proto"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/trigger"
)

// Event types and content type of Firestore document events.
const (
	eventTypePrefix = "google.cloud.firestore.document.v1."
	protobufType    = "application/protobuf"
)

// Why an event is dropped. Such an event can never succeed, so it is logged
// and acknowledged rather than retried.
var (
	ErrMalformed = errors.New("malformed event")
	ErrForeign   = errors.New("event for another project, database or document")
	ErrFuture    = errors.New("event dated in the future")
)

// ErrUnchanged is an edit of a child that changes nothing its aggregates
// read: acknowledged, with no fold. Were it folded, a fold between it and
// a delete that follows it (the web client stamps a child before it
// deletes it) would count the child again.
var ErrUnchanged = errors.New("an edit of a child that changes nothing its aggregates read")

// DefaultMaxSkew is how far in the future an event may be dated: the clock
// skew allowed between Firestore and the instance.
const DefaultMaxSkew = 5 * time.Second

// errNothingToMove is the deletion of a shard or partial of the
// firestore-counter extension (a move's own), or a write of a client's
// shard that holds only zeros: acknowledged, with no move. A flood of
// writes that add nothing costs no move, no read and no lock of their
// document.
var errNothingToMove = errors.New("an extension's shard deleted, or holding nothing: nothing to move")

// decoder turns Firestore document events into hints.
type decoder struct {
	Layout    core.Layout
	Project   string             // events for another project are refused; "" accepts any
	Database  string             // events for another database are refused; "" means "(default)"
	MaxSkew   time.Duration      // 0 means DefaultMaxSkew
	Extension extension.Counters // the firestore-counter extension's counters whose shards' events it reads (package extension)
}

// Decode reads a binary-mode CloudEvent carrying a protobuf
// DocumentEventData for a write to a shard of a counter (counters/{id}/shards/{n},
// or posts/{p}/lives/{life}/shards/{n} for counts on documents), or to a
// child of an aggregated collection (posts/{p}/comments/{c}), of the
// decoder's project and database. received is when the event arrived. It
// talks to nothing.
func (d decoder) Decode(e event.Event, received time.Time) (eventHint, error) {
	after, before, err := documents(e)
	if err != nil {
		return eventHint{}, err
	}
	name := after.GetName()
	if after == nil {
		name = before.GetName()
	}
	path, err := d.relative(name)
	if err != nil {
		return eventHint{}, err
	}
	if path, err = matchSubject(path, e.Subject()); err != nil {
		return eventHint{}, err
	}
	if doc, _, ok := extension.Owner(path); ok && len(d.Extension) > 0 {
		if _, declared := d.Extension.Of(doc); !declared {
			return eventHint{}, fmt.Errorf("%w: %s is a shard of no document TALLY_EXTENSION_COUNTERS declares", ErrForeign, path)
		}
		return d.extensionShard(e, doc, after, before, received)
	}
	switch e.Type() {
	case trigger.Created:
		return d.created(e, path, after, received)
	case trigger.Deleted:
		return d.deleted(e, path, before, received)
	}
	id, life, shard, err := d.Layout.ParseShardPath(path)
	parent, child, isChild := d.Layout.ParentOf(path)
	if isChild && unchanged(d.Layout, path, before, after) {
		return eventHint{}, ErrUnchanged
	}
	if err != nil && !isChild {
		return eventHint{}, fmt.Errorf("%w: %v", ErrForeign, err)
	}
	at, err := changedAt(e, after, before, received)
	if err != nil {
		return eventHint{}, err
	}
	if err := d.notAhead(e, at, received); err != nil {
		return eventHint{}, err
	}
	if isChild {
		return eventHint{EventID: e.ID(), Counter: parent, Child: &child, At: at, LeftOut: leftOut(d.Layout, parent, child.Source, after)}, nil
	}
	h := eventHint{EventID: e.ID(), Counter: id, Life: life, Shard: shard, At: at}
	if shard == 0 && after != nil && !at.After(received) {
		// A write committed before its event came: one dated later is
		// only a hint, its counts not taken at their word.
		h.One = d.oneShard(id, after)
	}
	return h, nil
}

// documents are the document after and before the write e tells of,
// either nil but not both, of one name: a Firestore document event's
// protobuf DocumentEventData.
func documents(e event.Event) (after, before *firestoredata.Document, err error) {
	if !strings.HasPrefix(e.Type(), eventTypePrefix) {
		return nil, nil, fmt.Errorf("%w: type %q is not a Firestore document event", ErrMalformed, e.Type())
	}
	if ct := e.DataContentType(); ct != "" && !strings.HasPrefix(ct, protobufType) {
		return nil, nil, fmt.Errorf("%w: data content type %q, want %s", ErrMalformed, ct, protobufType)
	}
	var data firestoredata.DocumentEventData
	if err := proto.Unmarshal(e.Data(), &data); err != nil {
		return nil, nil, fmt.Errorf("%w: data is not a DocumentEventData: %v", ErrMalformed, err)
	}
	after, before = data.GetValue(), data.GetOldValue()
	switch {
	case after == nil && before == nil:
		return nil, nil, fmt.Errorf("%w: neither value nor old value is set", ErrMalformed)
	case after != nil && before != nil && after.GetName() != before.GetName():
		return nil, nil, fmt.Errorf("%w: old value %q and value %q differ", ErrMalformed, before.GetName(), after.GetName())
	}
	return after, before, nil
}

// created reads the creation of a counted document: a hint that the
// document, in the life its creation began, has no counts yet.
func (d decoder) created(e event.Event, path string, after *firestoredata.Document, received time.Time) (eventHint, error) {
	if !d.Layout.OnDocs() || !d.Layout.Matches(path) {
		return eventHint{}, fmt.Errorf("%w: %s is no counted document", ErrForeign, path)
	}
	if after == nil || after.GetCreateTime() == nil {
		return eventHint{}, fmt.Errorf("%w: the creation of %s carries no document with a create time", ErrMalformed, path)
	}
	at, err := changedAt(e, after, nil, received)
	if err != nil {
		return eventHint{}, err
	}
	if err := d.notAhead(e, at, received); err != nil {
		return eventHint{}, err
	}
	return eventHint{EventID: e.ID(), Counter: path, Life: d.lifeOf(after), Created: true, At: at}, nil
}

// deleted reads the deletion of a ranked document: the cells its last
// state recorded, to take it off its boards.
func (d decoder) deleted(e event.Event, path string, before *firestoredata.Document, received time.Time) (eventHint, error) {
	if !d.Layout.OnDocs() || len(d.Layout.Boards(path)) == 0 {
		return eventHint{}, fmt.Errorf("%w: %s is no ranked document", ErrForeign, path)
	}
	if before == nil || before.GetCreateTime() == nil {
		return eventHint{}, fmt.Errorf("%w: the deletion of %s carries no old document with a create time", ErrMalformed, path)
	}
	return eventHint{EventID: e.ID(), Counter: path, Life: d.lifeOf(before),
		Gone: before, At: received}, nil
}

// extensionShard reads a write of a shard or partial of the extension's:
// a hint that the document doc has counts to move, as of the write.
func (d decoder) extensionShard(e event.Event, doc string, after, before *firestoredata.Document, received time.Time) (eventHint, error) {
	if after == nil || zeros(after.GetFields()) && !strings.Contains(after.GetName(), "/"+extension.Collection+"/\t") {
		return eventHint{}, errNothingToMove
	}
	at, err := changedAt(e, after, before, received)
	if err != nil {
		return eventHint{}, err
	}
	if err := d.notAhead(e, at, received); err != nil {
		return eventHint{}, err
	}
	return eventHint{EventID: e.ID(), Counter: doc, Extension: true, ExtShard: after.GetName()[strings.LastIndex(after.GetName(), "/")+1:], At: at}, nil
}

// lifeOf is the life of a counted document as an event carries it: the
// life its bookkeeping records, or its create time's.
func (d decoder) lifeOf(doc *firestoredata.Document) string {
	data := map[string]any{}
	if v, ok := doc.GetFields()[core.FieldBookkeeping].GetMapValue().GetFields()[core.FieldLife].GetValueType().(*firestoredata.Value_StringValue); ok {
		data[core.FieldBookkeeping] = map[string]any{core.FieldLife: v.StringValue}
	}
	return d.Layout.LifeIn(data, doc.GetCreateTime().AsTime())
}

// notAhead refuses an event dated further ahead of its arrival than the
// skew allowed.
func (d decoder) notAhead(e event.Event, at, received time.Time) error {
	skew := d.MaxSkew
	if skew <= 0 {
		skew = DefaultMaxSkew
	}
	if latest := received.Add(skew); at.After(latest) || e.Time().After(latest) {
		return fmt.Errorf("%w: dated %s, received %s", ErrFuture,
			maxTime(at, e.Time()).Format(time.RFC3339Nano), received.Format(time.RFC3339Nano))
	}
	return nil
}

// oneShard reads what a write to shard 0 tells of the counts, should the
// counter be on one shard (see core.OneShard).
func (d decoder) oneShard(id string, after *firestoredata.Document) *core.OneShard {
	return d.Layout.ReadOneShard(id, func(path ...string) (any, bool) {
		fields := after.GetFields()
		for _, name := range path[:len(path)-1] {
			fields = fields[name].GetMapValue().GetFields()
		}
		v, ok := fields[path[len(path)-1]]
		if !ok {
			return nil, false
		}
		switch x := v.GetValueType().(type) {
		case *firestoredata.Value_IntegerValue:
			return x.IntegerValue, true
		case *firestoredata.Value_TimestampValue:
			return x.TimestampValue.AsTime(), true
		case *firestoredata.Value_MapValue:
			return cells(v), true
		}
		return v, true
	})
}

// relative checks that name is a document of the decoder's project and
// database and returns its path below the database root.
func (d decoder) relative(name string) (string, error) {
	rest, ok := strings.CutPrefix(name, "projects/")
	project, rest, ok2 := strings.Cut(rest, "/databases/")
	database, path, ok3 := strings.Cut(rest, "/documents/")
	if !ok || !ok2 || !ok3 || project == "" || database == "" || path == "" {
		return "", fmt.Errorf("%w: document name %q is not projects/{p}/databases/{d}/documents/{path}", ErrMalformed, name)
	}
	want := d.Database
	if want == "" {
		want = "(default)"
	}
	if d.Project != "" && project != d.Project || database != want {
		return "", fmt.Errorf("%w: %s is in project %q, database %q; this rollup serves project %q, database %q",
			ErrForeign, path, project, database, d.Project, want)
	}
	return path, nil
}

// matchSubject checks that the event's subject, if it has one, names the
// document at path, the path of the event's document name, and returns
// the path with each id as Firestore has it. Either may spell the path
// percent-encoded (alice%40example.com) and the other not: a path whose
// ids decode to the other's is the same path, in the spelling that is
// not encoded. With no subject, the name is taken as it is.
func matchSubject(path, subject string) (string, error) {
	if subject == "" || subject == "documents/"+path {
		return path, nil
	}
	named, _ := strings.CutPrefix(subject, "documents/")
	if p, ok := unescapePath(named); ok && p == path {
		return path, nil // the subject is encoded
	}
	if p, ok := unescapePath(path); ok && p == named {
		return named, nil // the name is encoded
	}
	return "", fmt.Errorf("%w: subject %q does not name %s", ErrMalformed, subject, path)
}

// unescapePath decodes each id of a percent-encoded path.
func unescapePath(path string) (string, bool) {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil || strings.Contains(u, "/") {
			return "", false
		}
		segs[i] = u
	}
	return strings.Join(segs, "/"), true
}

// changedAt is when the write happened: the update_time of the value it
// wrote. A delete has none; its time is then the event's time, which
// Eventarc sets to the commit time, and which the emulator cuts to whole
// seconds (so a time without a fraction of a second counts as that second's
// end), or, without one, the event's arrival.
func changedAt(e event.Event, after, before *firestoredata.Document, received time.Time) (time.Time, error) {
	if after != nil {
		if after.GetUpdateTime() == nil {
			return time.Time{}, fmt.Errorf("%w: document %s has no update time", ErrMalformed, after.GetName())
		}
		return core.Precise(after.GetUpdateTime().AsTime()), nil
	}
	if before.GetUpdateTime() == nil {
		return time.Time{}, fmt.Errorf("%w: deleted document %s has no update time", ErrMalformed, before.GetName())
	}
	at := e.Time()
	switch {
	case at.IsZero():
		at = received
	case at.Equal(at.Truncate(time.Second)):
		at = at.Add(time.Second - time.Microsecond)
	}
	return core.Precise(maxTime(at, before.GetUpdateTime().AsTime().Add(time.Microsecond))), nil
}

func maxTime(ts ...time.Time) time.Time {
	var m time.Time
	for _, t := range ts {
		if t.After(m) {
			m = t
		}
	}
	return m
}

// unchanged reports whether the child at path exists before and after and
// has the same value, or none, in every field its aggregates read.
func unchanged(l core.Layout, path string, before, after *firestoredata.Document) bool {
	if before == nil || after == nil {
		return false
	}
	fields, ok := l.ChildReads(path)
	if !ok {
		return false
	}
	for _, f := range fields {
		b, inBefore := before.GetFields()[f]
		a, inAfter := after.GetFields()[f]
		if inBefore != inAfter || !proto.Equal(b, a) {
			return false
		}
	}
	return true
}

// zeros reports whether fields hold integer zeros only, at any depth of
// maps: a client's shard that adds nothing.
func zeros(fields map[string]*firestoredata.Value) bool {
	for _, v := range fields {
		switch x := v.GetValueType().(type) {
		case *firestoredata.Value_IntegerValue:
			if x.IntegerValue != 0 {
				return false
			}
		case *firestoredata.Value_MapValue:
			if !zeros(x.MapValue.GetFields()) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
