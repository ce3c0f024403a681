package emulatortest

import (
	"context"
	"testing"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"

	"github.com/tallycounters/tally/internal/fsrpc"
)

// Refusing returns a client of the emulator in FIRESTORE_EMULATOR_HOST
// whose aggregation queries are answered with refuse's error where it
// gives one, as Firestore refuses a query it cannot run (one that needs an
// index it lacks: FAILED_PRECONDITION), closed when the test ends.
// Everything else reaches the emulator as it is.
func Refusing(t testing.TB, refuse func(*firestorepb.StructuredQuery) error) *firestore.Client {
	t.Helper()
	return refusing(t, refuse, false)
}

// RefusingQueries is Refusing for queries of documents (RunQuery, alone
// or in a transaction) where Refusing is for aggregation queries.
func RefusingQueries(t testing.TB, refuse func(*firestorepb.StructuredQuery) error) *firestore.Client {
	t.Helper()
	return refusing(t, refuse, true)
}

func refusing(t testing.TB, refuse func(*firestorepb.StructuredQuery) error, documents bool) *firestore.Client {
	t.Helper()
	Require(t)
	intercept := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			return nil, err
		}
		return &refusingStream{ClientStream: s, refuse: refuse, documents: documents}, nil
	}
	return intercepted(t, grpc.WithChainStreamInterceptor(intercept))
}

// intercepted returns a client of the emulator in FIRESTORE_EMULATOR_HOST
// dialled with opts (its interceptors), closed when the test ends.
func intercepted(t testing.TB, opts ...grpc.DialOption) *firestore.Client {
	t.Helper()
	c, err := fsrpc.EmulatorClient(context.Background(), Host(), Project, firestore.DefaultDatabaseID, opts, nil)
	if err != nil {
		t.Fatalf("emulatortest: client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// refusingStream answers a query that refuse refuses with its error, in
// place of the emulator's answer.
type refusingStream struct {
	grpc.ClientStream
	refuse    func(*firestorepb.StructuredQuery) error
	documents bool // it refuses queries of documents, not aggregations
	err       error
}

func (s *refusingStream) SendMsg(m any) error {
	switch r := m.(type) {
	case *firestorepb.RunAggregationQueryRequest:
		if !s.documents {
			s.err = s.refuse(r.GetStructuredAggregationQuery().GetStructuredQuery())
		}
	case *firestorepb.RunQueryRequest:
		if s.documents {
			s.err = s.refuse(r.GetStructuredQuery())
		}
	}
	return s.ClientStream.SendMsg(m)
}

func (s *refusingStream) RecvMsg(m any) error {
	if s.err != nil {
		return s.err
	}
	return s.ClientStream.RecvMsg(m)
}
