package increment

import (
	"context"
	"encoding/json"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/adder"
)

// ownable says whether op may be written into its counted document
// itself (adder.Adder.AddOwn) with its key's record: a plain step with an
// Idempotency-Key, and no vote, once or limits, whose records need the
// shard path's transaction.
func ownable(op commitOp) bool {
	return op.Key != "" && op.Vote == nil && op.Once == "" && !op.Limits.on()
}

// commitOwn is Commit of op into its counted document itself, the key's
// record created in the same commit, answering respond's body for that
// (shard adder.InItself), if the document may take it. ok is false with
// nothing written otherwise (the document is busy or was written since,
// or the key's record is there: a retry), and op is for a shard.
func (w *shardWriter) commitOwn(ctx context.Context, op commitOp, respond func(shard int, changed bool) []byte) (body []byte, committed time.Time, ok bool, err error) {
	body = respond(adder.InItself, true)
	committed, ok, err = w.shards.AddOwn(ctx, op.Counter, op.Count, op.By, func(tx *firestore.Transaction, life string) error {
		return w.putKey(tx, op, life, body, time.Time{})
	})
	if err != nil {
		return nil, time.Time{}, false, commitError(opKey, err)
	}
	return body, committed, ok, nil
}

// inDocument says whether body, an answer a key's record keeps, is of an
// increment written into the document itself.
func inDocument(body []byte) bool {
	var r struct {
		InDocument bool `json:"in_document"`
	}
	return json.Unmarshal(body, &r) == nil && r.InDocument
}
