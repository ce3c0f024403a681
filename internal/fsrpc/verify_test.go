package fsrpc

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// verifiedOf is the document a write verifies, read from its unknown
// field 5, or "".
func verifiedOf(w *firestorepb.Write) string {
	b := w.ProtoReflect().GetUnknown()
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != fieldVerify || typ != protowire.BytesType {
		return ""
	}
	s, m := protowire.ConsumeString(b[n:])
	if m < 0 {
		return ""
	}
	return s
}

// TestVerifyInterceptor: a commit sent with WithVerify carries one verify
// of the document, on a copy of the request (a retry adds none); one
// without, or another method, goes as it is. A refused verify is dropped,
// for that client only, after a plain commit went through without it, or
// when a transaction's commit is refused naming the verify (answered
// ABORTED for its retry); a transaction refused for a reason of its own
// (an invalid argument that names no verify: one expired) is answered as
// it was, and changes nothing. The client that stops says so once, in its
// own logger.
func TestVerifyInterceptor(t *testing.T) {
	const doc = "projects/p/databases/(default)/documents/posts/p1"
	shard := &firestorepb.Write{Operation: &firestorepb.Write_Update{Update: &firestorepb.Document{Name: doc + "/shards/0"}}}
	plain := func() *firestorepb.CommitRequest {
		return &firestorepb.CommitRequest{Writes: []*firestorepb.Write{shard}}
	}
	var sent []*firestorepb.CommitRequest
	answer := func(verified, plain error) grpc.UnaryInvoker {
		return func(_ context.Context, _ string, req, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
			c := req.(*firestorepb.CommitRequest)
			sent = append(sent, c)
			if len(c.Writes) > 1 {
				return verified
			}
			return plain
		}
	}
	var logs bytes.Buffer
	client := func() *verifier { return &verifier{log: slog.New(slog.NewJSONHandler(&logs, nil))} }
	v := client()
	run := func(ctx context.Context, req *firestorepb.CommitRequest, invoke grpc.UnaryInvoker) error {
		sent = nil
		return v.intercept(ctx, methodCommit, req, &firestorepb.CommitResponse{}, nil, invoke)
	}

	req := plain()
	if err := run(WithVerify(context.Background(), doc), req, answer(nil, nil)); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || len(sent[0].Writes) != 2 || verifiedOf(sent[0].Writes[1]) != doc ||
		!sent[0].Writes[1].GetCurrentDocument().GetExists() {
		t.Errorf("sent %v; want the shard's write and a verify that %s exists", sent, doc)
	}
	if len(req.Writes) != 1 {
		t.Errorf("the caller's request holds %d writes; want its 1: a retry would verify twice", len(req.Writes))
	}
	if err := run(context.Background(), plain(), answer(nil, nil)); err != nil || len(sent[0].Writes) != 1 {
		t.Errorf("without WithVerify: %v, sent %v; want the request as it is", err, sent)
	}
	gone := status.Error(codes.NotFound, "no entity to update")
	if err := run(WithVerify(context.Background(), doc), plain(), answer(gone, nil)); status.Code(err) != codes.NotFound || len(sent) != 1 {
		t.Errorf("a verify that fails: %v after %d sends; want NOT_FOUND, sent once", err, len(sent))
	}

	tx := plain()
	tx.Transaction = []byte("t1")
	expired := status.Error(codes.InvalidArgument, "transaction has expired")
	if err := run(WithVerify(context.Background(), doc), tx, answer(expired, nil)); status.Code(err) != codes.InvalidArgument || v.refused.Load() {
		t.Errorf("a transaction refused for its own reason: %v, verifies dropped %t; want its refusal, verifies kept", err, v.refused.Load())
	}
	bad := status.Error(codes.InvalidArgument, "unknown field verify in Write")
	if err := run(WithVerify(context.Background(), doc), tx, answer(bad, nil)); status.Code(err) != codes.Aborted || len(sent) != 1 {
		t.Errorf("a transaction's refused verify: %v after %d sends; want ABORTED, sent once", err, len(sent))
	}
	if !v.refused.Load() {
		t.Error("a refused verify is still sent")
	}
	if n := strings.Count(logs.String(), MessageVerifyRefused); n != 1 {
		t.Errorf("the client's logger says it stops %d times; want once:\n%s", n, logs.String())
	}

	v = client()
	if err := run(WithVerify(context.Background(), doc), plain(), answer(bad, nil)); err != nil || len(sent) != 2 || len(sent[1].Writes) != 1 {
		t.Errorf("a plain commit's refused verify: %v, sent %v; want it sent again without, and taken", err, sent)
	}
	if err := run(WithVerify(context.Background(), doc), plain(), answer(bad, nil)); err != nil || len(sent) != 1 || len(sent[0].Writes) != 1 {
		t.Errorf("once refused: %v, sent %v; want no verify", err, sent)
	}
	other := client()
	sent = nil
	if err := other.intercept(WithVerify(context.Background(), doc), methodCommit, plain(), &firestorepb.CommitResponse{}, nil, answer(nil, nil)); err != nil || len(sent[0].Writes) != 2 {
		t.Errorf("another client: %v, sent %v; want it still verifying", err, sent)
	}
	v = client()
	if err := run(WithVerify(context.Background(), doc), plain(), answer(bad, bad)); status.Code(err) != codes.InvalidArgument || v.refused.Load() {
		t.Errorf("a commit refused with and without a verify: %v, verifies dropped %t; want its refusal, verifies kept", err, v.refused.Load())
	}
}
