// Package eventarc builds Firestore document events the way Eventarc
// delivers them to a Cloud Function: a binary-mode CloudEvent whose data is a
// protobuf DocumentEventData. Tests, the local bridge and the benchmark use it.
package eventarc

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/uuid"
	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/tallycounters/tally/internal/core"
)

// WrittenType is the event type of the Rollup trigger.
const WrittenType = "google.cloud.firestore.document.v1.written"

// Doc describes one side of a document write.
type Doc struct {
	Path    string // relative to the database root, e.g. counters/c1/shards/3
	Fields  map[string]*firestoredata.Value
	Created time.Time
	Updated time.Time
}

// IntDoc is a document with one integer field.
func IntDoc(path, field string, n int64, updated time.Time) *Doc {
	return &Doc{
		Path:    path,
		Fields:  map[string]*firestoredata.Value{field: {ValueType: &firestoredata.Value_IntegerValue{IntegerValue: n}}},
		Created: updated,
		Updated: updated,
	}
}

// Written is the event for a write that turned before into after; nil is an
// absent document. project and database name where the document lives.
func Written(project, database string, before, after *Doc) event.Event {
	data := &firestoredata.DocumentEventData{
		OldValue: before.proto(project, database),
		Value:    after.proto(project, database),
	}
	raw, err := proto.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("eventarc: marshal DocumentEventData: %v", err)) // cannot happen
	}
	path := after.path()
	if path == "" {
		path = before.path()
	}
	e := event.New()
	e.SetID(uuid.NewString())
	e.SetType(WrittenType)
	e.SetSource(fmt.Sprintf("//firestore.googleapis.com/projects/%s/databases/%s", project, database))
	e.SetSubject("documents/" + path)
	e.SetTime(time.Now())
	e.SetExtension("project", project)
	e.SetExtension("database", database)
	e.SetExtension("namespace", "(default)")
	e.SetExtension("document", path)
	e.SetExtension("location", "us-central1")
	if err := e.SetData("application/protobuf", raw); err != nil {
		panic(fmt.Sprintf("eventarc: set data: %v", err)) // []byte is set as is
	}
	return e
}

func (d *Doc) path() string {
	if d == nil {
		return ""
	}
	return d.Path
}

func (d *Doc) proto(project, database string) *firestoredata.Document {
	if d == nil {
		return nil
	}
	return &firestoredata.Document{
		Name:       fmt.Sprintf("projects/%s/databases/%s/documents/%s", project, database, d.Path),
		Fields:     d.Fields,
		CreateTime: timestamppb.New(d.Created),
		UpdateTime: timestamppb.New(d.Updated),
	}
}

// Request is the HTTP request Eventarc makes to deliver e to url: binary
// mode, the attributes as ce-* headers, the raw protobuf as the body.
func Request(ctx context.Context, url string, e event.Event) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(e.Data()))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Content-Type", e.DataContentType())
	h.Set("ce-specversion", e.SpecVersion())
	h.Set("ce-id", e.ID())
	h.Set("ce-type", e.Type())
	h.Set("ce-source", e.Source())
	if s := e.Subject(); s != "" {
		h.Set("ce-subject", s)
	}
	if !e.Time().IsZero() {
		h.Set("ce-time", e.Time().UTC().Format(time.RFC3339Nano))
	}
	for k, v := range e.Extensions() {
		h.Set("ce-"+k, fmt.Sprint(v))
	}
	return req, nil
}

// Snapshot is the document as snap read it, as an event carries it: its
// fields, and its create and update times. A document snap found missing
// is nil.
func Snapshot(snap *firestore.DocumentSnapshot) *Doc {
	if snap == nil || !snap.Exists() {
		return nil
	}
	path := core.Relative(snap.Ref)
	fields := map[string]*firestoredata.Value{}
	for k, v := range snap.Data() {
		fields[k] = value(v)
	}
	return &Doc{Path: path, Fields: fields, Created: snap.CreateTime, Updated: snap.UpdateTime}
}

// value is v, as the firestore package reads a field, as an event's value.
func value(v any) *firestoredata.Value {
	switch x := v.(type) {
	case nil:
		return &firestoredata.Value{ValueType: &firestoredata.Value_NullValue{}}
	case bool:
		return &firestoredata.Value{ValueType: &firestoredata.Value_BooleanValue{BooleanValue: x}}
	case int64:
		return &firestoredata.Value{ValueType: &firestoredata.Value_IntegerValue{IntegerValue: x}}
	case float64:
		return &firestoredata.Value{ValueType: &firestoredata.Value_DoubleValue{DoubleValue: x}}
	case string:
		return &firestoredata.Value{ValueType: &firestoredata.Value_StringValue{StringValue: x}}
	case time.Time:
		return &firestoredata.Value{ValueType: &firestoredata.Value_TimestampValue{TimestampValue: timestamppb.New(x)}}
	case []byte:
		return &firestoredata.Value{ValueType: &firestoredata.Value_BytesValue{BytesValue: x}}
	case map[string]any:
		m := &firestoredata.MapValue{Fields: map[string]*firestoredata.Value{}}
		for k, e := range x {
			m.Fields[k] = value(e)
		}
		return &firestoredata.Value{ValueType: &firestoredata.Value_MapValue{MapValue: m}}
	case []any:
		a := &firestoredata.ArrayValue{}
		for _, e := range x {
			a.Values = append(a.Values, value(e))
		}
		return &firestoredata.Value{ValueType: &firestoredata.Value_ArrayValue{ArrayValue: a}}
	}
	return &firestoredata.Value{ValueType: &firestoredata.Value_StringValue{StringValue: fmt.Sprint(v)}}
}
