// Package syncwatch listens to several Firestore targets (documents, and
// the documents of collections) on one listen stream, and raises a
// snapshot of all of them at each consistent point of the stream, as the
// Firebase SDKs raise their listeners' snapshots in sync: what a client
// that sums several documents (the firestore-counter extension's) shows.
// tally's bench measures such clients' views with it.
package syncwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/tallycounters/tally/internal/fsrpc"
)

// Snapshot is every target's documents at one read time, by name, and
// how many documents were added or changed since the last one (a
// listener is billed a read for each): a document sent again as it was
// (the emulator sends a target's documents again after each reset) is
// not one.
type Snapshot struct {
	ReadTime time.Time
	Docs     map[string]*firestorepb.Document
	Changes  int
}

// Targets are what a Watch follows: documents by full name, and the
// documents of collections, each a parent's full name and a collection
// id.
type Targets struct {
	Documents   []string
	Collections [][2]string
}

// Watch follows t on the emulator at host, in database (a full name,
// projects/P/databases/D), as its owner, and calls each with every
// consistent snapshot, in order, until ctx ends (nil) or the stream
// fails.
func Watch(ctx context.Context, host, database string, t Targets, each func(Snapshot)) error {
	conn, err := grpc.NewClient(host, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(fsrpc.Owner{}))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx = metadata.AppendToOutgoingContext(ctx, "google-cloud-resource-prefix", database)
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, listenMethod, grpc.ForceCodec(bytesCodec{}))
	if err != nil {
		return err
	}
	stream := listenStream{s}
	for i, req := range requests(database, t) {
		req.GetAddTarget().TargetId = int32(i + 1)
		if err := stream.Send(req); err != nil {
			return fmt.Errorf("syncwatch: add a target: %w", err)
		}
	}
	return follow(ctx, stream, len(requests(database, t)), each)
}

// listenMethod is Firestore's Listen.
const listenMethod = "/google.firestore.v1.Firestore/Listen"

// listenStream sends and receives the Listen method's messages. It
// decodes each one itself, from a copy of its bytes: decoded in place by
// gRPC's codec, one now and then failed to parse under a load of
// changes, though its bytes, copied out, parse.
type listenStream struct{ grpc.ClientStream }

func (s listenStream) Send(r *firestorepb.ListenRequest) error {
	b, err := proto.Marshal(r)
	if err != nil {
		return err
	}
	return s.SendMsg(&b)
}

func (s listenStream) Recv() (*firestorepb.ListenResponse, error) {
	var b []byte
	if err := s.RecvMsg(&b); err != nil {
		return nil, err
	}
	r := &firestorepb.ListenResponse{}
	err := proto.Unmarshal(b, r)
	if err != nil {
		fmt.Printf("BAD %x\n", b)
	}
	return r, err
}

// bytesCodec passes messages' bytes as they are, copied.
type bytesCodec struct{}

func (bytesCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (bytesCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}
func (bytesCodec) Name() string { return "proto" }

// requests add t's targets to a listen stream.
func requests(database string, t Targets) []*firestorepb.ListenRequest {
	var out []*firestorepb.ListenRequest
	add := func(target *firestorepb.Target) {
		out = append(out, &firestorepb.ListenRequest{Database: database, TargetChange: &firestorepb.ListenRequest_AddTarget{AddTarget: target}})
	}
	if len(t.Documents) > 0 {
		add(&firestorepb.Target{TargetType: &firestorepb.Target_Documents{Documents: &firestorepb.Target_DocumentsTarget{Documents: t.Documents}}})
	}
	for _, col := range t.Collections {
		add(&firestorepb.Target{TargetType: &firestorepb.Target_Query{Query: &firestorepb.Target_QueryTarget{
			Parent: col[0],
			QueryType: &firestorepb.Target_QueryTarget_StructuredQuery{StructuredQuery: &firestorepb.StructuredQuery{
				From: []*firestorepb.StructuredQuery_CollectionSelector{{CollectionId: col[1]}},
			}},
		}}})
	}
	return out
}

// follow applies the stream's changes, and raises a snapshot at each
// global consistent point once every one of n targets is current.
func follow(ctx context.Context, stream listenStream, n int, each func(Snapshot)) error {
	v := view{docs: map[string]*firestorepb.Document{}, in: map[string]map[int32]bool{}}
	current := map[int32]bool{}
	versions := map[string]time.Time{} // of each document, as last sent, through resets
	changes := 0
	for {
		r, err := stream.Recv()
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, io.EOF):
			return errors.New("syncwatch: the stream ended")
		case err != nil:
			return err
		}
		switch x := r.GetResponseType().(type) {
		case *firestorepb.ListenResponse_DocumentChange:
			c := x.DocumentChange
			name, updated := c.GetDocument().GetName(), c.GetDocument().GetUpdateTime().AsTime()
			if !versions[name].Equal(updated) {
				versions[name] = updated
				changes++
			}
			v.change(c.GetDocument(), c.GetTargetIds(), c.GetRemovedTargetIds())
		case *firestorepb.ListenResponse_DocumentDelete:
			v.drop(x.DocumentDelete.GetDocument(), nil)
		case *firestorepb.ListenResponse_DocumentRemove:
			v.drop(x.DocumentRemove.GetDocument(), x.DocumentRemove.GetRemovedTargetIds())
		case *firestorepb.ListenResponse_TargetChange:
			tc := x.TargetChange
			switch tc.GetTargetChangeType() {
			case firestorepb.TargetChange_CURRENT:
				for _, id := range tc.GetTargetIds() {
					current[id] = true
				}
			case firestorepb.TargetChange_RESET:
				for _, id := range tc.GetTargetIds() {
					v.reset(id) // the target's documents are sent again
				}
			case firestorepb.TargetChange_NO_CHANGE:
				if len(tc.GetTargetIds()) == 0 && tc.GetReadTime() != nil && len(current) == n {
					each(Snapshot{ReadTime: tc.GetReadTime().AsTime(), Docs: maps.Clone(v.docs), Changes: changes})
					changes = 0
				}
			}
		}
	}
}

// view is the documents of a stream's targets, and which targets each
// is in.
type view struct {
	docs map[string]*firestorepb.Document
	in   map[string]map[int32]bool
}

func (v *view) change(doc *firestorepb.Document, added, removed []int32) {
	name := doc.GetName()
	if v.in[name] == nil {
		v.in[name] = map[int32]bool{}
	}
	for _, id := range added {
		v.in[name][id] = true
	}
	v.docs[name] = doc
	if len(removed) > 0 {
		v.drop(name, removed)
	}
}

// drop takes the document name out of the targets removed; out of all of
// them if none is named.
func (v *view) drop(name string, removed []int32) {
	if len(removed) == 0 {
		delete(v.in, name)
	}
	for _, id := range removed {
		delete(v.in[name], id)
	}
	if len(v.in[name]) == 0 {
		delete(v.in, name)
		delete(v.docs, name)
	}
}

// reset takes every document out of target id.
func (v *view) reset(id int32) {
	for name := range v.in {
		v.drop(name, []int32{id})
	}
}

// Int is the integer at path in doc's fields (a map's fields below the
// first), 0 if there is none there.
func Int(doc *firestorepb.Document, path ...string) int64 {
	fields := doc.GetFields()
	for _, p := range path[:len(path)-1] {
		fields = fields[p].GetMapValue().GetFields()
	}
	return fields[path[len(path)-1]].GetIntegerValue()
}

// Time is the timestamp at path in doc's fields, zero if none.
func Time(doc *firestorepb.Document, path ...string) time.Time {
	fields := doc.GetFields()
	for _, p := range path[:len(path)-1] {
		fields = fields[p].GetMapValue().GetFields()
	}
	ts := fields[path[len(path)-1]].GetTimestampValue()
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}
