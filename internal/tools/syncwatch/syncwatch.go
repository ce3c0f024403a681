// Package syncwatch listens to several Firestore documents on one listen
// stream, and raises a snapshot of all of them at each consistent point
// of the stream, as the Firebase SDKs raise their listeners' snapshots in
// sync: what a client that sums several documents (the firestore-counter
// extension's) shows. tally's bench measures such clients' views with it.
//
// # The emulator's listen stream
//
// The emulator frames two responses of one listen stream at once now and
// then, so that one's bytes land inside the other's: a client then reads
// a message that does not parse, a length of gigabytes, or a reset
// stream. A client of plain HTTP/2 that checks the framing of each DATA
// frame itself sees it too, so it is the emulator's, not gRPC's. It
// happens in two cases only: a commit that changes a target while the
// emulator still sends that target's first state, and a stream that holds
// a query target beside a target of documents (their changes race at any
// time). A Stream is therefore one target of documents, and Open returns
// only once its first consistent snapshot is in: a caller that writes
// what the stream follows only after Open returns never meets the race
// (docs/testing.md gives the measurements).
package syncwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/tallycounters/tally/internal/fsrpc"
)

// Snapshot is the documents followed at one read time, by name, and how
// many documents were added or changed since the last one (a listener is
// billed a read for each): a document sent again as it was (the emulator
// sends a target's documents again after each reset) is not one.
type Snapshot struct {
	ReadTime time.Time
	Docs     map[string]*firestorepb.Document
	Changes  int
}

// A Stream follows documents on one listen stream of the emulator.
type Stream struct {
	ctx    context.Context
	conn   *grpc.ClientConn
	listen firestorepb.Firestore_ListenClient
	state  state
}

// target is the id of a Stream's one target.
const target = 1

// Open starts following the documents named (full names) on the emulator
// at host, in database (a full name, projects/P/databases/D), as its
// owner, until ctx ends. It returns once the first consistent snapshot
// has arrived, with that snapshot: only writes after that are safe from
// the emulator's race (see the package's guide).
func Open(ctx context.Context, host, database string, documents []string) (*Stream, Snapshot, error) {
	conn, err := grpc.NewClient(host, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(fsrpc.Owner{}))
	if err != nil {
		return nil, Snapshot{}, err
	}
	ctx = metadata.AppendToOutgoingContext(ctx, "google-cloud-resource-prefix", database)
	listen, err := firestorepb.NewFirestoreClient(conn).Listen(ctx)
	if err == nil {
		err = listen.Send(&firestorepb.ListenRequest{Database: database, TargetChange: &firestorepb.ListenRequest_AddTarget{AddTarget: &firestorepb.Target{
			TargetId:   target,
			TargetType: &firestorepb.Target_Documents{Documents: &firestorepb.Target_DocumentsTarget{Documents: documents}},
		}}})
	}
	if err != nil {
		conn.Close()
		return nil, Snapshot{}, fmt.Errorf("syncwatch: listen: %w", err)
	}
	s := &Stream{ctx: ctx, conn: conn, listen: listen, state: newState()}
	first, err := s.next()
	if err != nil {
		conn.Close()
		return nil, Snapshot{}, err
	}
	return s, first, nil
}

// Follow calls each with every consistent snapshot after the first, in
// order, until the stream's context ends (nil) or the stream fails. It
// closes the stream when it returns.
func (s *Stream) Follow(each func(Snapshot)) error {
	defer s.conn.Close()
	for {
		snap, err := s.next()
		if err != nil {
			if s.ctx.Err() != nil {
				return nil
			}
			return err
		}
		each(snap)
	}
}

// next applies the stream's changes up to its next consistent point.
func (s *Stream) next() (Snapshot, error) {
	for {
		r, err := s.listen.Recv()
		if errors.Is(err, io.EOF) {
			return Snapshot{}, errors.New("syncwatch: the stream ended")
		}
		if err != nil {
			return Snapshot{}, fmt.Errorf("syncwatch: %w", err)
		}
		if snap, ok := s.state.apply(r); ok {
			return snap, nil
		}
	}
}

// state is what a stream's responses have said so far.
type state struct {
	docs     map[string]*firestorepb.Document
	versions map[string]time.Time // of each document, as last sent, through resets
	current  bool
	changes  int
}

func newState() state {
	return state{docs: map[string]*firestorepb.Document{}, versions: map[string]time.Time{}}
}

// apply takes one response in, and says the snapshot it completes, if
// any: a global consistent point once the target is current.
func (s *state) apply(r *firestorepb.ListenResponse) (Snapshot, bool) {
	switch x := r.GetResponseType().(type) {
	case *firestorepb.ListenResponse_DocumentChange:
		doc := x.DocumentChange.GetDocument()
		name, updated := doc.GetName(), doc.GetUpdateTime().AsTime()
		if !s.versions[name].Equal(updated) {
			s.versions[name] = updated
			s.changes++
		}
		s.docs[name] = doc
		if slices.Contains(x.DocumentChange.GetRemovedTargetIds(), target) {
			delete(s.docs, name)
		}
	case *firestorepb.ListenResponse_DocumentDelete:
		delete(s.docs, x.DocumentDelete.GetDocument())
	case *firestorepb.ListenResponse_DocumentRemove:
		delete(s.docs, x.DocumentRemove.GetDocument())
	case *firestorepb.ListenResponse_TargetChange:
		tc := x.TargetChange
		switch tc.GetTargetChangeType() {
		case firestorepb.TargetChange_CURRENT:
			s.current = true
		case firestorepb.TargetChange_RESET:
			clear(s.docs) // the target's documents are sent again, then CURRENT
			s.current = false
		case firestorepb.TargetChange_NO_CHANGE:
			if len(tc.GetTargetIds()) == 0 && tc.GetReadTime() != nil && s.current {
				snap := Snapshot{ReadTime: tc.GetReadTime().AsTime(), Docs: maps.Clone(s.docs), Changes: s.changes}
				s.changes = 0
				return snap, true
			}
		}
	}
	return Snapshot{}, false
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
