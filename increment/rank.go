package increment

import (
	"context"
	"errors"
	"math"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/httpjson"
)

// RankResponse is the answer to GET ?rank=posts/p1&field=likes: the
// document's place among its collection's by the field, exact at AsOf
// (RFC 3339), and the Firestore reads it cost.
type RankResponse struct {
	Rank  int64  `json:"rank"`
	Of    int64  `json:"of"`
	AsOf  string `json:"as_of"`
	Value Ranked `json:"value"` // an integer exactly, past 2^53 too; "NaN", "Infinity" or "-Infinity" where not finite
	Reads int    `json:"reads"`
}

// StandingResponse is the answer to GET
// ?rank=posts&field=likes&value=1234: where the value stands among the
// collection's documents by the field, from the board's summary alone
// (one read), exact at AsOf: a place from Rank to RankAtMost (the same
// where its range of values holds no other), and Top, the percentile of
// RankAtMost.
type StandingResponse struct {
	Rank       int64   `json:"rank"`
	RankAtMost int64   `json:"rank_at_most"`
	Of         int64   `json:"of"`
	Top        float64 `json:"top"`
	AsOf       string  `json:"as_of"`
	Value      Number  `json:"value"` // "Infinity" or "-Infinity" where not finite
	Reads      int     `json:"reads"`
}

// rankOf answers a GET of a document's rank, or a value's standing.
func (h *Handler) rankOf(w http.ResponseWriter, r *http.Request) {
	h.answerRead(w, r, func(ctx context.Context) (any, error) {
		if r.URL.Query().Has("value") {
			return h.standing(ctx, r)
		}
		p, err := h.place(ctx, r)
		return RankResponse{Rank: p.Rank, Of: p.Of, AsOf: p.AsOf.UTC().Format(time.RFC3339Nano), Value: Ranked{Float: p.Value, Int: p.Int}, Reads: p.Reads}, err
	})
}

// answerRead answers a GET of what boards hold (a rank, a standing, a
// page) with what read reads, for a web page, which cannot read
// Firestore at a past read time itself: App Check as for an increment, no
// user (a place is made of counts the app shows anyway).
func (h *Handler) answerRead(w http.ResponseWriter, r *http.Request, read func(context.Context) (any, error)) {
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	err := h.checkApp(r)
	var answer any
	if err == nil {
		answer, err = read(ctx)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, answer)
}

// standing checks the request and reads the standing it asks for.
func (h *Handler) standing(ctx context.Context, r *http.Request) (StandingResponse, error) {
	q := r.URL.Query()
	collection, field := q.Get("rank"), q.Get("field")
	v, err := strconv.ParseFloat(q.Get("value"), 64)
	if collection == "" || field == "" || err != nil || math.IsNaN(v) {
		return StandingResponse{}, httpjson.Refuse(http.StatusBadRequest, "give the collection, the field and a number (Infinity and -Infinity too, not NaN): ?rank=posts&field=likes&value=1234")
	}
	b, err := h.writer.layout.Board(collection, field)
	if err != nil {
		return StandingResponse{}, httpjson.Refuse(http.StatusNotFound, "%v", err)
	}
	s, err := rank.StandingAt(ctx, h.writer.client, b, v)
	return StandingResponse{Rank: s.Best, RankAtMost: s.Worst, Of: s.Of, Top: s.Top(), AsOf: s.AsOf.UTC().Format(time.RFC3339Nano), Value: Number(v), Reads: 1}, err
}

// place checks the request and reads the place it asks for.
func (h *Handler) place(ctx context.Context, r *http.Request) (rank.Place, error) {
	doc, field := r.URL.Query().Get("rank"), r.URL.Query().Get("field")
	if doc == "" || field == "" {
		return rank.Place{}, httpjson.Refuse(http.StatusBadRequest, "give the document and the field: ?rank=posts/p1&field=likes")
	}
	l := h.writer.layout
	if err := l.CheckName(doc); err != nil {
		return rank.Place{}, httpjson.Refuse(http.StatusBadRequest, "rank=%q: %v", doc, err)
	}
	b, err := l.Board(path.Dir(doc), field)
	if err != nil {
		return rank.Place{}, httpjson.Refuse(http.StatusNotFound, "%v", err)
	}
	p, err := rank.Read(ctx, h.writer.client, b, doc)
	if errors.Is(err, rank.ErrNotRanked) {
		return p, httpjson.Refuse(http.StatusNotFound, "%s is not ranked by %s yet: it is ranked from its first count", doc, field)
	}
	return p, err
}
