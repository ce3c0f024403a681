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
// what the stream follows only after Open returns meets the race seldom
// (docs/testing.md gives the measurements). Seldom is not never: the
// emulator sends a target's state again after a reset of its own, which
// races as a first state does. A message that does not parse, or a
// stream reset, is answered as the server's reset is: a new stream of the
// same target, whose documents are taken anew up to its consistent point
// (at most maxReopens times a Stream).
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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

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
	ctx       context.Context
	conn      *grpc.ClientConn
	database  string
	documents []string
	listen    firestorepb.Firestore_ListenClient
	state     state
	reopens   int
}

// maxReopens bounds the streams a Stream opens again after the emulator's
// race garbled one.
const maxReopens = 10

// target is the id of a Stream's one target.
const target = 1

// Open starts following the documents named (full names) on the emulator
// at host, in database (a full name, projects/P/databases/D), as its
// owner, until ctx ends. It returns once the first consistent snapshot
// has arrived, with that snapshot: only writes after that are safe from
// the emulator's race (see the package's guide).
func Open(ctx context.Context, host, database string, documents []string) (*Stream, Snapshot, error) {
	return openWith(ctx, host, database, documents)
}

// openWith is Open, with options of the connection's own.
func openWith(ctx context.Context, host, database string, documents []string, opts ...grpc.DialOption) (*Stream, Snapshot, error) {
	opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(fsrpc.Owner{}))
	conn, err := grpc.NewClient(host, opts...)
	if err != nil {
		return nil, Snapshot{}, err
	}
	s := &Stream{ctx: metadata.AppendToOutgoingContext(ctx, "google-cloud-resource-prefix", database), conn: conn,
		database: database, documents: documents, state: newState()}
	if err := s.start(); err != nil {
		conn.Close()
		return nil, Snapshot{}, err
	}
	first, err := s.next()
	if err != nil {
		conn.Close()
		return nil, Snapshot{}, err
	}
	return s, first, nil
}

// start opens a listen stream of the Stream's one target.
func (s *Stream) start() error {
	listen, err := firestorepb.NewFirestoreClient(s.conn).Listen(s.ctx)
	if err == nil {
		err = listen.Send(&firestorepb.ListenRequest{Database: s.database, TargetChange: &firestorepb.ListenRequest_AddTarget{AddTarget: &firestorepb.Target{
			TargetId:   target,
			TargetType: &firestorepb.Target_Documents{Documents: &firestorepb.Target_DocumentsTarget{Documents: s.documents}},
		}}})
	}
	if err != nil {
		return fmt.Errorf("syncwatch: listen: %w", err)
	}
	s.listen = listen
	return nil
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
		if garbled(err) && s.ctx.Err() == nil && s.reopens < maxReopens {
			s.reopens++
			s.state.reset() // as the server's reset: its documents are sent again, then CURRENT
			if err = s.start(); err == nil {
				continue
			}
		}
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
			s.reset()
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

// reset forgets the target's documents, which are sent again, then
// CURRENT; what was sent of each stays, so that one sent again as it was
// is no change.
func (s *state) reset() {
	clear(s.docs)
	s.current = false
}

// garbled reports whether err is what the emulator's race makes of a
// stream: a message that does not parse (Internal), one of gigabytes
// (ResourceExhausted), or a reset stream (Internal, Unavailable).
func garbled(err error) bool {
	switch status.Code(err) {
	case codes.Internal, codes.ResourceExhausted, codes.Unavailable:
		return true
	}
	return false
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
