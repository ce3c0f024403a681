// Package opcount counts the Firestore operations a client is billed for,
// on the gRPC connection itself, for tally's bench and its tests of what an
// increment costs.
package opcount

import (
	"context"
	"sync/atomic"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"

	"github.com/tallycounters/tally/internal/fsrpc"
)

// Ops counts the Firestore operations clients were billed for: documents
// read (gets, queries, listings; an aggregation query is one read per
// 1,000 index entries it scans, at least one) and documents written (each write in a
// commit), and of those, the deletes. It also counts the writes of commits
// that failed (a compare-and-set whose precondition failed, among others),
// which Firestore's pricing pages do not say whether it bills. OnCommit, if
// set, sees each successful commit; Verifies counts the commits that
// verified a document they do not write (fsrpc.WithVerify), each also a
// read, as Firestore bills it ("Writes that only verify the existence or
// non-existence of a document contribute to billed read operations", its
// billing report's documentation); OnRead, if set, sees the name of each
// document a batch get asks for, and of each collection a query (an
// aggregation among them) reads, as {parent}/{collection id}.
type Ops struct {
	reads, writes, deletes, failed, transactions, verifies atomic.Int64
	OnCommit                                               func(*firestorepb.CommitRequest, *firestorepb.CommitResponse)
	OnRead                                                 func(name string)
}

// Reads, Writes (deletes included) and Deletes are the counts so far;
// Failed counts the writes of failed commits; Transactions counts the
// transactions begun, read-only ones included (they are not billed).
func (o *Ops) Reads() int64        { return o.reads.Load() }
func (o *Ops) Writes() int64       { return o.writes.Load() }
func (o *Ops) Deletes() int64      { return o.deletes.Load() }
func (o *Ops) Failed() int64       { return o.failed.Load() }
func (o *Ops) Transactions() int64 { return o.transactions.Load() }
func (o *Ops) Verifies() int64     { return o.verifies.Load() }

// Reset zeroes the counts.
func (o *Ops) Reset() {
	for _, n := range []*atomic.Int64{&o.reads, &o.writes, &o.deletes, &o.failed, &o.transactions, &o.verifies} {
		n.Store(0)
	}
}

// Client connects to the emulator at host, as its owner, with every RPC
// counted in ops, and with fsrpc's interceptors, as tally's clients are.
func Client(ctx context.Context, host, project string, ops *Ops) (*firestore.Client, error) {
	return fsrpc.EmulatorClient(ctx, host, project, firestore.DefaultDatabaseID, []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(ops.unary),
		grpc.WithChainStreamInterceptor(ops.stream),
	}, nil)
}

func (o *Ops) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if _, ok := req.(*firestorepb.BeginTransactionRequest); ok && err == nil {
		o.transactions.Add(1)
	}
	if r, ok := reply.(*firestorepb.ListDocumentsResponse); ok && err == nil {
		o.reads.Add(int64(len(r.GetDocuments()))) // a listing reads each document it names
	}
	if c, ok := req.(*firestorepb.CommitRequest); ok {
		if fsrpc.Verified(ctx) != "" {
			o.verifies.Add(1) // added below this interceptor, to the request fsrpc sends
			o.reads.Add(1)
		}
		if err != nil {
			o.failed.Add(int64(len(c.GetWrites())))
			return err
		}
		o.writes.Add(int64(len(c.GetWrites())))
		for _, w := range c.GetWrites() {
			if w.GetDelete() != "" {
				o.deletes.Add(1)
			}
		}
		if o.OnCommit != nil {
			o.OnCommit(c, reply.(*firestorepb.CommitResponse))
		}
	}
	return err
}

// stream counts reads as the documents requested by a batch get, the
// documents a query returns, and the changes a listener gets.
func (o *Ops) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return &countingStream{ClientStream: s, ops: o}, nil
}

type countingStream struct {
	grpc.ClientStream
	ops    *Ops
	counts []string // the aliases of an aggregation query's count()s
}

func (s *countingStream) SendMsg(m any) error {
	var read []string
	switch r := m.(type) {
	case *firestorepb.BatchGetDocumentsRequest:
		s.ops.reads.Add(int64(len(r.GetDocuments())))
		read = r.GetDocuments()
	case *firestorepb.RunQueryRequest:
		read = queried(r.GetParent(), r.GetStructuredQuery())
	case *firestorepb.RunAggregationQueryRequest:
		q := r.GetStructuredAggregationQuery()
		read = queried(r.GetParent(), q.GetStructuredQuery())
		for _, a := range q.GetAggregations() {
			// the Firestore package sends a count with no options set:
			// its operator, not GetCount, says it is one
			if _, ok := a.GetOperator().(*firestorepb.StructuredAggregationQuery_Aggregation_Count_); ok {
				s.counts = append(s.counts, a.GetAlias())
			}
		}
	}
	if s.ops.OnRead != nil {
		for _, name := range read {
			s.ops.OnRead(name)
		}
	}
	return s.ClientStream.SendMsg(m)
}

// queried is the collections a query reads, as {parent}/{collection id}.
func queried(parent string, q *firestorepb.StructuredQuery) []string {
	var out []string
	for _, from := range q.GetFrom() {
		out = append(out, parent+"/"+from.GetCollectionId())
	}
	return out
}

func (s *countingStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		return err
	}
	switch r := m.(type) {
	case *firestorepb.RunQueryResponse:
		if r.GetDocument() != nil {
			s.ops.reads.Add(1)
		}
	case *firestorepb.ListenResponse:
		// A listener is billed a read for each document change it gets.
		if r.GetDocumentChange() != nil {
			s.ops.reads.Add(1)
		}
	case *firestorepb.RunAggregationQueryResponse:
		if res := r.GetResult(); res != nil {
			// 1 read per 1,000 index entries a count() scans
			var entries int64
			for _, alias := range s.counts {
				entries = max(entries, res.GetAggregateFields()[alias].GetIntegerValue())
			}
			s.ops.reads.Add(max(1, (entries+999)/1000))
		}
	}
	return nil
}
