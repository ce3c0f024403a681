package fsrpc

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Permanent reports whether err, from Firestore, is one that no retry of
// the same request can cure: a query it refuses (one that needs an index
// it lacks, or that it cannot run), a value it cannot take, a document too
// big. A fold that meets one reports it and goes on with the rest.
func Permanent(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange, codes.Unimplemented, codes.PermissionDenied:
		return true
	}
	return false
}
