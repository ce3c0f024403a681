package increment

import (
	"context"
	"errors"
	"net/http"
	"path"
	"time"

	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/httpjson"
)

// RankResponse is the answer to GET ?rank=posts/p1&field=likes: the
// document's place among its collection's by the field, exact at AsOf
// (RFC 3339), and the Firestore reads it cost.
type RankResponse struct {
	Rank  int64   `json:"rank"`
	Of    int64   `json:"of"`
	AsOf  string  `json:"as_of"`
	Value float64 `json:"value"`
	Reads int     `json:"reads"`
}

// rankOf answers a GET of a document's rank, for a web page, which cannot
// read Firestore at a past read time itself: App Check as for an
// increment, no user (a place is made of counts the app shows anyway).
func (h *Handler) rankOf(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	p, err := h.place(ctx, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, RankResponse{Rank: p.Rank, Of: p.Of, AsOf: p.AsOf.UTC().Format(time.RFC3339Nano), Value: p.Value, Reads: p.Reads})
}

// place checks the request and reads the place it asks for.
func (h *Handler) place(ctx context.Context, r *http.Request) (rank.Place, error) {
	if err := h.checkApp(r); err != nil {
		return rank.Place{}, err
	}
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
