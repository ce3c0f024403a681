package rank

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Spacing is the least time between two writes of a summary, and the
// least age of a move a fold of the summary takes (and so deletes).
const Spacing = time.Second

// MaxMoves bounds the moves one fold of a summary takes, so that its
// commit stays within Firestore's 500 writes; the rest wait for the next.
const MaxMoves = 400

// Summary is a board's summary: how many documents each occupied cell
// holds, and the board's size, exact at AsOf.
type Summary struct {
	Cells   map[int64]int64
	Crowds  map[int64]Crowd // the cells of more than CrowdPart documents, cut into parts
	Of      int64
	AsOf    time.Time
	Written time.Time
	Updated time.Time // zero if there is none yet
	Read    time.Time // when it was read
}

// Above is how many documents are in cells above c.
func (s Summary) Above(c int64) int64 {
	var n int64
	for k, v := range s.Cells {
		if k > c {
			n += v
		}
	}
	return n
}

// ReadSummary reads b's summary: one read. One that does not exist is
// empty, as of the read.
func ReadSummary(ctx context.Context, c *firestore.Client, b Board) (Summary, error) {
	snap, err := b.Summary(c).Get(ctx)
	if err != nil && status.Code(err) != codes.NotFound {
		return Summary{}, fmt.Errorf("rank: read the summary of %s: %w", b, err)
	}
	s := Summary{Cells: map[int64]int64{}, Crowds: map[int64]Crowd{}, Read: snap.ReadTime}
	if !snap.Exists() {
		return s, nil
	}
	data := snap.Data()
	s.Updated = snap.UpdateTime
	s.AsOf, _ = data[fieldAsOf].(time.Time)
	s.Written, _ = data[fieldWritten].(time.Time)
	s.Of, _ = data[fieldOf].(int64)
	cells, _ := data[fieldCells].(map[string]any)
	for k, v := range cells {
		key, err := strconv.ParseInt(k, 10, 64)
		n, ok := v.(int64)
		if err != nil || !ok {
			return Summary{}, fmt.Errorf("rank: the summary of %s holds cell %q = %v: not a cell's count", b, k, v)
		}
		s.Cells[key] = n
	}
	if s.Crowds, err = readCrowds(data[fieldCrowds]); err != nil {
		return Summary{}, fmt.Errorf("%w, in the summary of %s", err, b)
	}
	return s, nil
}

// ErrTooSoon ends a fold of a summary written within the spacing: try
// again once it has passed.
var ErrTooSoon = errors.New("rank: within the spacing of the summary's last write")

// errStale ends a fold of a summary someone wrote since it was read.
var errStale = errors.New("rank: the summary changed since it was read")

// Fold folds the moves of b that exist at a read time a spacing before
// the server's now into its summary s, as read: it writes the summary as
// of that time and deletes those moves, in one commit that holds only if
// s is still the summary. It answers the summary after, which is s if
// there was nothing to fold.
func Fold(ctx context.Context, c *firestore.Client, b Board, s Summary) (Summary, error) {
	if !s.Updated.IsZero() && s.Read.Before(s.Written.Add(Spacing)) {
		return s, ErrTooSoon
	}
	at := s.Read.Add(-Spacing).Truncate(time.Microsecond)
	if !at.After(s.AsOf) {
		return s, nil
	}
	q := b.Moves(c).OrderBy(fieldAt, firestore.Asc).Limit(MaxMoves + 1)
	moves, err := q.WithReadOptions(firestore.ReadTime(at)).Documents(ctx).GetAll()
	if err != nil {
		return s, fmt.Errorf("rank: read the moves of %s: %w", b, err)
	}
	if len(moves) > MaxMoves {
		// fold up to just before the first left out: every move then is in
		at = moves[MaxMoves].CreateTime.Add(-time.Microsecond)
		moves = moves[:MaxMoves]
		for len(moves) > 0 && moves[len(moves)-1].CreateTime.After(at) {
			moves = moves[:len(moves)-1]
		}
	}
	next := s
	next.Cells, next.AsOf = maps.Clone(s.Cells), at
	for _, m := range moves {
		next.apply(m.Data())
	}
	if next.Crowds, err = crowds(ctx, c, b, s.Crowds, next.Cells, at); err != nil {
		return s, err
	}
	return next, commit(ctx, c, b, s, next, moves)
}

// apply adds one move's data to s.
func (s *Summary) apply(d map[string]any) {
	if from, ok := d[fieldFrom].(int64); ok {
		if s.Cells[from]--; s.Cells[from] == 0 {
			delete(s.Cells, from)
		}
		s.Of--
	}
	if to, ok := d[fieldTo].(int64); ok {
		s.Cells[to]++
		s.Of++
	}
}

// commit writes next over s and deletes the moves it took.
func commit(ctx context.Context, c *firestore.Client, b Board, s, next Summary, moves []*firestore.DocumentSnapshot) error {
	cells := make(map[string]any, len(next.Cells))
	for k, v := range next.Cells {
		cells[strconv.FormatInt(k, 10)] = v
	}
	data := map[string]any{fieldCells: cells, fieldCrowds: crowdsData(next.Crowds), fieldOf: next.Of, fieldAsOf: next.AsOf, fieldWritten: firestore.ServerTimestamp}
	ref := b.Summary(c)
	_, err := Commit(ctx, c, func(tx *firestore.Transaction) error {
		if s.Updated.IsZero() {
			if err := tx.Create(ref, data); err != nil {
				return err
			}
		} else if err := tx.Update(ref, updates(data), firestore.LastUpdateTime(s.Updated)); err != nil {
			return err
		}
		for _, m := range moves {
			if err := tx.Delete(m.Ref, firestore.Exists); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		switch status.Code(err) {
		case codes.FailedPrecondition, codes.AlreadyExists, codes.NotFound:
			return errStale
		}
		return fmt.Errorf("rank: write the summary of %s: %w", b, err)
	}
	return nil
}

// updates are data's fields as an update's, each replaced whole.
func updates(data map[string]any) []firestore.Update {
	out := make([]firestore.Update, 0, len(data))
	for k, v := range data {
		out = append(out, firestore.Update{Path: k, Value: v})
	}
	return out
}

// Seed writes b's summary as s, for a board whose documents were written
// with their cells recorded and no moves (an import's, or a benchmark's
// setup): s must hold each of them, as of a time after their writes. It
// cuts s's crowded cells into parts itself.
func Seed(ctx context.Context, c *firestore.Client, b Board, s Summary) error {
	var err error
	if s.Crowds, err = crowds(ctx, c, b, nil, s.Cells, s.AsOf); err != nil {
		return err
	}
	return commit(ctx, c, b, Summary{}, s, nil)
}
