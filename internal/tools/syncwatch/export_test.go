package syncwatch

import (
	"context"

	"google.golang.org/grpc"
)

// OpenWith is Open with options of the connection's own, for a test to
// garble a stream's messages as the emulator's race does.
func OpenWith(ctx context.Context, host, database string, documents []string, opts ...grpc.DialOption) (*Stream, Snapshot, error) {
	return openWith(ctx, host, database, documents, opts...)
}
