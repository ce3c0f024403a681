package emulatortest

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Retaining returns a client of the emulator in FIRESTORE_EMULATOR_HOST
// that refuses every request reading at a time older than keep, as
// Firestore refuses a read time past its retention (an hour without
// point-in-time recovery), which the emulator serves; closed when the
// test ends.
func Retaining(t testing.TB, keep time.Duration) *firestore.Client {
	t.Helper()
	Require(t)
	old := func(m any) error {
		if at, ok := readTime(m); ok && time.Since(at) > keep {
			return status.Errorf(codes.FailedPrecondition, "emulatortest: read time %s is older than the %v Firestore keeps", at.Format(time.RFC3339Nano), keep)
		}
		return nil
	}
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if err := old(req); err != nil {
			return err
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			return nil, err
		}
		return &retainingStream{ClientStream: s, old: old}, nil
	}
	return intercepted(t, grpc.WithChainUnaryInterceptor(unary), grpc.WithChainStreamInterceptor(stream))
}

// retainingStream answers a request that reads too far back with old's
// error, in place of the emulator's answer.
type retainingStream struct {
	grpc.ClientStream
	old func(any) error
	err error
}

func (s *retainingStream) SendMsg(m any) error {
	if err := s.old(m); err != nil {
		s.err = err
	}
	return s.ClientStream.SendMsg(m)
}

func (s *retainingStream) RecvMsg(m any) error {
	if s.err != nil {
		return s.err
	}
	return s.ClientStream.RecvMsg(m)
}

// readTime is the read time a request reads at, wherever it says it: on
// itself, or in the options of the transaction it begins.
func readTime(m any) (time.Time, bool) {
	msg, ok := m.(proto.Message)
	if !ok {
		return time.Time{}, false
	}
	var at time.Time
	var walk func(protoreflect.Message)
	walk = func(r protoreflect.Message) {
		r.Range(func(f protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if f.Kind() != protoreflect.MessageKind || f.IsList() || f.IsMap() {
				return true
			}
			if f.Name() == "read_time" {
				if ts, ok := v.Message().Interface().(*timestamppb.Timestamp); ok {
					at = ts.AsTime()
				}
				return true
			}
			walk(v.Message())
			return true
		})
	}
	walk(msg.ProtoReflect())
	return at, !at.IsZero()
}
