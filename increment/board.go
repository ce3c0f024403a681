package increment

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/httpjson"
)

// DefaultPage is how many documents a page of a board holds, unless
// limit says.
const DefaultPage = 20

// BoardResponse is the answer to GET
// ?board=posts&field=likes&offset=40&limit=20: the documents at places
// offset+1 to offset+limit of the collection by the field, exact at AsOf
// (RFC 3339), of Of documents, and the Firestore reads it cost. A page
// past the end is an empty list.
type BoardResponse struct {
	Documents []BoardEntry `json:"documents"`
	Of        int64        `json:"of"`
	AsOf      string       `json:"as_of"`
	Reads     int          `json:"reads"`
}

// BoardEntry is one document of a page: its path, its value, and its
// place (ties share one).
type BoardEntry struct {
	Document string `json:"document"`
	Value    Ranked `json:"value"`
	Rank     int64  `json:"rank"`
}

// RankedOf is a value as Firestore stores it (an int64 or a float64) as
// Ranked.
func RankedOf(v any) Ranked {
	switch x := v.(type) {
	case int64:
		return Ranked{Float: float64(x), Int: &x}
	case float64:
		return Ranked{Float: x}
	}
	return Ranked{}
}

// boardPage answers a GET of a page of a board (answerRead).
func (h *Handler) boardPage(w http.ResponseWriter, r *http.Request) {
	h.answerRead(w, r, func(ctx context.Context) (any, error) { return h.page(ctx, r) })
}

// page checks the request and reads the page it asks for.
func (h *Handler) page(ctx context.Context, r *http.Request) (BoardResponse, error) {
	q := r.URL.Query()
	collection, field := q.Get("board"), q.Get("field")
	offset, err := atoiOr(q.Get("offset"), 0)
	limit, err2 := atoiOr(q.Get("limit"), DefaultPage)
	if collection == "" || field == "" || err != nil || err2 != nil || offset < 0 || limit < 1 || limit > rank.MaxPage {
		return BoardResponse{}, httpjson.Refuse(http.StatusBadRequest,
			"give the collection and the field, and if you like an offset of 0 or more and a limit of 1 to %d: ?board=posts&field=likes&offset=40&limit=20", rank.MaxPage)
	}
	b, err := h.writer.layout.Board(collection, field)
	if err != nil {
		return BoardResponse{}, httpjson.Refuse(http.StatusNotFound, "%v", err)
	}
	p, err := rank.ReadPage(ctx, h.writer.client, b, offset, limit)
	out := BoardResponse{Documents: make([]BoardEntry, len(p.Entries)), Of: p.Of, AsOf: p.AsOf.UTC().Format(time.RFC3339Nano), Reads: p.Reads}
	for i, e := range p.Entries {
		out.Documents[i] = BoardEntry{Document: e.Doc, Value: RankedOf(e.Value), Rank: e.Rank}
	}
	return out, err
}

// atoiOr is s as an int, or def where s is empty.
func atoiOr(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	return strconv.Atoi(s)
}
