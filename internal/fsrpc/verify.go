package fsrpc

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A commit can be made to depend on a document it does not write: a
// Write whose operation is verify (field 5 of google.firestore.v1.Write)
// names a document, and the commit applies only if that document meets
// the write's precondition, here that it exists. Nothing is written to
// the verified document: it takes no write, no update time and no event,
// so verifying a busy document puts no hot spot on it. The Firebase SDKs
// for the web and mobile send such writes in every transaction, and the
// emulator enforces them (NOT_FOUND: nothing of the commit is applied);
// the protos the Go packages are generated from leave the field out, so
// it is sent here as a field those protos do not know.
//
// Increment verifies the counted document in each shard write: a write
// for a document deleted since Increment last read it then fails whole,
// and is answered 404, never 200 for a count nobody holds.

// fieldVerify is Write.verify's field number.
const fieldVerify = 5

type verifyKey struct{}

// verified is what commits verify: that doc exists, or, with at set, that
// it was last updated at at.
type verified struct {
	doc string
	at  time.Time
}

// WithVerify returns a context whose commits, on a client built with
// these options, apply only if the document named doc (a full resource
// name, as DocumentRef.Path gives it) exists: else they fail NOT_FOUND
// and write nothing. A client without the options sends the commits as
// they are.
func WithVerify(ctx context.Context, doc string) context.Context {
	return context.WithValue(ctx, verifyKey{}, verified{doc: doc})
}

// WithVerifyAt is WithVerify, on the condition that doc is still as it
// was when last updated at at: else the commits fail, FAILED_PRECONDITION
// (NOT_FOUND if doc is gone), and write nothing.
func WithVerifyAt(ctx context.Context, doc string, at time.Time) context.Context {
	return context.WithValue(ctx, verifyKey{}, verified{doc: doc, at: at})
}

// Verified is the document that commits sent with ctx verify, if any.
func Verified(ctx context.Context) string {
	v, _ := ctx.Value(verifyKey{}).(verified)
	return v.doc
}

// MessageVerifyRefused is the log line, at ERROR, of a client that stops
// verifying: deploy.sh counts it as the metric tally_verify_refused.
const MessageVerifyRefused = "fsrpc: Firestore refused a commit's verify of a document: this client verifies none from now on"

// verifier adds WithVerify's document to the commits of one client, until
// Firestore is seen to refuse the verify field: then that client sends
// none, and says so once, in its logger.
type verifier struct {
	log     *slog.Logger
	refused atomic.Bool
}

// intercept adds the verify of WithVerify's document to a commit, to a
// copy of the request, so that a retry by the Firestore client carries
// one verify, not two. A commit of plain writes that Firestore refuses
// as an invalid argument is sent again without it; if that succeeds, the
// verify field was what Firestore refused, and this client sends no
// verify again (increments keep working, and a deleted document's window
// is open again, as it was before verifies), and says so. A transaction's
// commit, which cannot be sent again, is answered with its own error
// unless that error names the verify: then it fails ABORTED, which the
// Firestore client retries with a new transaction, without the verify. An
// invalid argument of a transaction's own (one expired, say) changes
// nothing.
func (v *verifier) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	c, ok := req.(*firestorepb.CommitRequest)
	what, _ := ctx.Value(verifyKey{}).(verified)
	if !ok || method != methodCommit || what.doc == "" || v.refused.Load() {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	with := proto.Clone(c).(*firestorepb.CommitRequest)
	with.Writes = append(with.Writes, verifyWrite(what))
	err := invoker(ctx, method, with, reply, cc, opts...)
	if status.Code(err) != codes.InvalidArgument {
		return err
	}
	if len(c.GetTransaction()) > 0 {
		if !strings.Contains(strings.ToLower(status.Convert(err).Message()), "verify") {
			return err
		}
		v.refuse(err)
		return status.Errorf(codes.Aborted, "fsrpc: sent again without a verify: %v", status.Convert(err).Message())
	}
	if again := invoker(ctx, method, req, reply, cc, opts...); again != nil {
		return again // refused for a reason of its own
	}
	v.refuse(err)
	return nil
}

// refuse stops v's verifies, and says so once.
func (v *verifier) refuse(err error) {
	if v.refused.CompareAndSwap(false, true) {
		v.log.Error(MessageVerifyRefused+", so an increment of a document deleted within the shard cache's age is answered 200 and counted nowhere",
			"error", err.Error())
	}
}

// verifyWrite is a Write that verifies v: that its document exists, or
// was last updated at its time.
func verifyWrite(v verified) *firestorepb.Write {
	w := &firestorepb.Write{CurrentDocument: &firestorepb.Precondition{
		ConditionType: &firestorepb.Precondition_Exists{Exists: true}}}
	if !v.at.IsZero() {
		w.CurrentDocument.ConditionType = &firestorepb.Precondition_UpdateTime{UpdateTime: timestamppb.New(v.at)}
	}
	var b []byte
	b = protowire.AppendTag(b, fieldVerify, protowire.BytesType)
	b = protowire.AppendString(b, v.doc)
	w.ProtoReflect().SetUnknown(b)
	return w
}
