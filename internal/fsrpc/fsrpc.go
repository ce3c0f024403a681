// Package fsrpc holds the gRPC client interceptors that tally's Firestore
// clients are built with. One hands a caller the read time of an
// aggregation's result, which the Firestore package reads but does not
// return, so that a fold sums at one known instant in a single call; one
// hands it a transaction's commit time, so that Increment can say when a
// vote committed. One makes a commit depend on a document it does not
// write (verify.go), so that an increment of a deleted document writes
// nothing. The last keeps a commit of plain writes with server-side
// transforms (an increment) from being sent again blind after it failed
// unavailable: such a commit may have been applied, and an increment is
// not idempotent.
// Permanent tells the Firestore errors that no retry cures.
package fsrpc

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Methods the interceptors act on.
const (
	methodAggregate = "/google.firestore.v1.Firestore/RunAggregationQuery"
	methodCommit    = "/google.firestore.v1.Firestore/Commit"
)

// DialOptions are the interceptors of one client, for a connection
// dialled by hand; what they have to say goes to log (nil: slog's
// default).
func DialOptions(log *slog.Logger) []grpc.DialOption {
	if log == nil {
		log = slog.Default()
	}
	v := &verifier{log: log}
	return []grpc.DialOption{
		grpc.WithChainStreamInterceptor(readTimeInterceptor),
		grpc.WithChainUnaryInterceptor(v.intercept, noBlindRetry, commitTimeInterceptor),
	}
}

// clientOptions are the interceptors, for firestore.NewClient.
func clientOptions(log *slog.Logger) []option.ClientOption {
	var out []option.ClientOption
	for _, d := range DialOptions(log) {
		out = append(out, option.WithGRPCDialOption(d))
	}
	return out
}

// NewClient returns a Firestore client for database of project with the
// interceptors, wherever it runs. firestore.NewClient dials the emulator in
// FIRESTORE_EMULATOR_HOST itself and then ignores dial options, so for the
// emulator NewClient dials it as firestore does (plain text, as the owner,
// no message size limits) with the interceptors added, and hands that
// connection over; so tally's clients behave the same locally and in the
// cloud.
func NewClient(ctx context.Context, project, database string, log *slog.Logger, opts ...option.ClientOption) (*firestore.Client, error) {
	host := os.Getenv("FIRESTORE_EMULATOR_HOST")
	if host == "" {
		return firestore.NewClientWithDatabase(ctx, project, database, append(clientOptions(log), opts...)...)
	}
	return EmulatorClient(ctx, host, project, database, nil, log, opts...)
}

// EmulatorClient returns a client of the emulator at host, dialled as
// firestore dials it (plain text, as the owner, no message size limits),
// with dial's options, then the interceptors, which log to log.
func EmulatorClient(ctx context.Context, host, project, database string, dial []grpc.DialOption, log *slog.Logger, opts ...option.ClientOption) (*firestore.Client, error) {
	base := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(Owner{}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.MaxCallSendMsgSize(math.MaxInt32)),
	}
	conn, err := grpc.NewClient(host, slices.Concat(base, dial, DialOptions(log))...)
	if err != nil {
		return nil, fmt.Errorf("fsrpc: dial the emulator at %s: %w", host, err)
	}
	c, err := firestore.NewClientWithDatabase(ctx, project, database, append(opts, option.WithGRPCConn(conn))...)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// Owner is the emulator's admin credential: it bypasses security rules.
type Owner struct{}

// GetRequestMetadata sends the emulator's owner token.
func (Owner) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer owner"}, nil
}

// RequireTransportSecurity is false: the emulator speaks plain text.
func (Owner) RequireTransportSecurity() bool { return false }

type readTimeKey struct{}

// stamp is where an interceptor puts a time the server reported: an
// aggregation's read time, or a commit's time.
type stamp struct {
	mu sync.Mutex
	at time.Time
}

func (s *stamp) set(t time.Time) {
	s.mu.Lock()
	s.at = t
	s.mu.Unlock()
}

// with returns a context that carries a new stamp under key, and the
// stamp's getter.
func with(ctx context.Context, key any) (context.Context, func() time.Time) {
	s := &stamp{}
	return context.WithValue(ctx, key, s), func() time.Time {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.at
	}
}

// WithReadTime returns a context whose aggregation queries, on a client
// built with these options, report their result's read time to get. get
// returns the zero time if none was reported: the client lacks the options.
func WithReadTime(ctx context.Context) (_ context.Context, get func() time.Time) {
	return with(ctx, readTimeKey{})
}

func readTimeInterceptor(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	rt, _ := ctx.Value(readTimeKey{}).(*stamp)
	if err != nil || rt == nil || method != methodAggregate {
		return s, err
	}
	return &readTimeStream{ClientStream: s, rt: rt}, nil
}

type readTimeStream struct {
	grpc.ClientStream
	rt *stamp
}

func (s *readTimeStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if r, ok := m.(*firestorepb.RunAggregationQueryResponse); ok && err == nil && r.GetReadTime() != nil && r.GetResult() != nil {
		s.rt.set(r.GetReadTime().AsTime())
	}
	return err
}

type commitTimeKey struct{}

// WithCommitTime returns a context whose commits, on a client built with
// these options, report their commit time to get: a transaction's, which
// the Firestore package does not return. get returns the zero time if no
// commit succeeded or the client lacks the options.
func WithCommitTime(ctx context.Context) (_ context.Context, get func() time.Time) {
	return with(ctx, commitTimeKey{})
}

type requestTimeKey struct{}

// WithRequestTime returns a context whose commits, on a client built with
// these options, report to get the server time (firestore.ServerTimestamp)
// the commit's first write set: a commit's writes share one, at or a
// little before the commit time. get returns the zero time if no commit
// succeeded with one, or the client lacks the options.
func WithRequestTime(ctx context.Context) (_ context.Context, get func() time.Time) {
	return with(ctx, requestTimeKey{})
}

func commitTimeInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	r, ok := reply.(*firestorepb.CommitResponse)
	if !ok || err != nil || method != methodCommit {
		return err
	}
	if ct, _ := ctx.Value(commitTimeKey{}).(*stamp); ct != nil && r.GetCommitTime() != nil {
		ct.set(r.GetCommitTime().AsTime())
	}
	if rt, _ := ctx.Value(requestTimeKey{}).(*stamp); rt != nil && len(r.GetWriteResults()) > 0 {
		for _, v := range r.GetWriteResults()[0].GetTransformResults() {
			if ts := v.GetTimestampValue(); ts != nil {
				rt.set(ts.AsTime())
				break
			}
		}
	}
	return err
}

// noBlindRetry turns UNAVAILABLE from a commit of plain writes that holds a
// transform into UNKNOWN, which the Firestore client does not retry: the
// first attempt may have been applied, and sending it again could count an
// increment twice. Commits in a transaction are left alone: a transaction
// commits once at most.
func noBlindRetry(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err == nil || method != methodCommit || status.Code(err) != codes.Unavailable {
		return err
	}
	c, ok := req.(*firestorepb.CommitRequest)
	if !ok || len(c.GetTransaction()) > 0 || !transforms(c) {
		return err
	}
	return status.Errorf(codes.Unknown, "fsrpc: the commit's outcome is unknown: it failed unavailable, and may have been applied: %v", status.Convert(err).Message())
}

// transforms reports whether any write of c has a server-side transform.
func transforms(c *firestorepb.CommitRequest) bool {
	for _, w := range c.GetWrites() {
		if len(w.GetUpdateTransforms()) > 0 || w.GetTransform() != nil {
			return true
		}
	}
	return false
}
