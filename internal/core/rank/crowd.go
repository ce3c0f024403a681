package rank

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"cloud.google.com/go/firestore"
	"golang.org/x/sync/errgroup"
)

// CrowdPart is the most documents a part of a crowded cell holds, unless
// they share one value: what one count() read covers, so that a rank
// counts at most this many in its third read.
const CrowdPart = 1000

// A Crowd cuts a crowded cell (one of more than CrowdPart documents) into
// parts of at most CrowdPart documents each, or of one value, counted by
// their values at the summary's AsOf. Bounds, from the greatest down, are
// where each part below the cell's top one starts, and Above[i] is how
// many of the cell's documents hold Bounds[i] or more.
type Crowd struct {
	Bounds []float64
	Above  []int64
}

// part finds the part of the crowd v falls in: above is how many of the
// cell's documents are in parts above it, and top the part's upper end,
// exclusive; ok is false for the cell's top part.
func (c Crowd) part(v float64) (above int64, top float64, ok bool) {
	i := c.index(v)
	if i < 0 {
		return 0, 0, false
	}
	return c.Above[i], c.Bounds[i], true
}

// index is the part v falls in, as the index of the bound over it: -1
// for the top part.
func (c Crowd) index(v float64) int {
	i := -1
	for i+1 < len(c.Bounds) && c.Bounds[i+1] > v {
		i++
	}
	return i
}

// counts are how many of a cell of n documents are in parts above v's,
// and in v's part.
func (c Crowd) counts(v float64, n int64) (above, in int64) {
	i := c.index(v)
	if i >= 0 {
		above = c.Above[i]
	}
	below := n
	if i+1 < len(c.Above) {
		below = c.Above[i+1]
	}
	return above, max(below-above, 0)
}

// span is a range of values, and whether each end is in it.
type span struct {
	lo, hi     float64
	loIn, hiIn bool
}

// cellSpan is cell c's values on b.
func cellSpan(b Board, c int64) span {
	lo, hi, loIn, hiIn := b.Grid.Bounds(c)
	return span{lo, hi, loIn, hiIn}
}

// query is b's documents whose value is in sp.
func (sp span) query(c *firestore.Client, b Board) firestore.Query {
	lo, hi := ">", "<"
	if sp.loIn {
		lo = ">="
	}
	if sp.hiIn {
		hi = "<="
	}
	return c.Collection(b.Collection).Where(b.Field, lo, sp.lo).Where(b.Field, hi, sp.hi)
}

// counted is a part of a cell, and how many documents it holds.
type counted struct {
	span
	n int64
}

// crowding counts, at the summary's read time at, the parts of its
// crowded cells, several at once.
type crowding struct {
	c  *firestore.Client
	at time.Time
	b  Board
}

// count is how many documents sp holds, in a read-only transaction of its
// own (a count() takes no read time otherwise): one that held every count
// of a large board's fold could outlive what Firestore allows one.
func (w *crowding) count(ctx context.Context, sp span) (int64, error) {
	q := sp.query(w.c, w.b)
	var res firestore.AggregationResult
	err := w.c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) (err error) {
		res, err = q.NewAggregationQuery().WithCount("n").Transaction(tx).Get(ctx)
		return err
	}, firestore.ReadOnly, firestore.TransactionReadTime(w.at))
	if err != nil {
		return 0, fmt.Errorf("rank: count a part of a crowded cell of %s: %w", w.b, err)
	}
	return count(res["n"])
}

// edge is the least (or, desc, the greatest) value held in sp.
func (w *crowding) edge(ctx context.Context, sp span, desc bool) (float64, error) {
	dir := firestore.Asc
	if desc {
		dir = firestore.Desc
	}
	q := sp.query(w.c, w.b).OrderBy(w.b.Field, dir).Limit(1)
	docs, err := q.WithReadOptions(firestore.ReadTime(w.at)).Documents(ctx).GetAll()
	if err != nil {
		return 0, fmt.Errorf("rank: read the edge of a crowded part of %s: %w", w.b, err)
	}
	if len(docs) == 0 {
		return 0, fmt.Errorf("rank: a crowded part of %s holds no document", w.b)
	}
	v, _ := Value(docs[0].Data()[w.b.Field])
	return v, nil
}

// split counts p and cuts it, top first, into parts of at most CrowdPart
// documents or of one value, at values between those its documents hold.
func (w *crowding) split(ctx context.Context, p counted) ([]counted, error) {
	if p.n <= CrowdPart {
		return []counted{p}, nil
	}
	least, err := w.edge(ctx, p.span, false)
	if err != nil {
		return nil, err
	}
	most, err := w.edge(ctx, p.span, true)
	if err != nil || least == most {
		return []counted{p}, err
	}
	m := least + (most-least)/2
	if w.b.Integers {
		m = math.Floor(m) + 1
	}
	if m <= least || m > most {
		m = most
	}
	upper := counted{span: span{m, p.hi, true, p.hiIn}}
	if upper.n, err = w.count(ctx, upper.span); err != nil {
		return nil, err
	}
	lower := counted{span{p.lo, m, p.loIn, false}, p.n - upper.n}
	top, err := w.split(ctx, upper)
	if err != nil {
		return nil, err
	}
	bottom, err := w.split(ctx, lower)
	return append(top, bottom...), err
}

// parts are cell c's parts as the crowd before cut it (one part, the
// whole cell, for a cell newly crowded), top first, not counted yet.
func (w *crowding) parts(c int64, before Crowd) []counted {
	whole := cellSpan(w.b, c)
	edges := append(append([]float64{whole.hi}, before.Bounds...), whole.lo)
	out := make([]counted, len(edges)-1)
	for i := range out {
		out[i].span = span{edges[i+1], edges[i], true, false}
		out[i].hiIn = i == 0 && whole.hiIn
		out[i].loIn = i+1 < len(out) || whole.loIn
	}
	return out
}

// join makes a crowd of a cell's parts, top first, joining neighbours that
// together hold at most half of CrowdPart.
func join(cuts [][]counted) Crowd {
	var parts []counted
	for _, cut := range cuts {
		for _, q := range cut {
			if last := len(parts) - 1; last >= 0 && parts[last].n+q.n <= CrowdPart/2 {
				parts[last].n += q.n
				parts[last].lo, parts[last].loIn = q.lo, q.loIn
				continue
			}
			parts = append(parts, q)
		}
	}
	var out Crowd
	var above int64
	for _, p := range parts[:max(len(parts)-1, 0)] {
		above += p.n
		out.Bounds, out.Above = append(out.Bounds, p.lo), append(out.Above, above)
	}
	return out
}

// crowdReaders is how many of a fold's counts of parts run at once.
const crowdReaders = 8

// crowds cuts every cell of cells holding more than CrowdPart documents
// into parts, at read time at: it counts each part as the crowd before
// cut it (one count() read each), cuts one that grew past CrowdPart
// (a few reads more) and joins neighbours.
func crowds(ctx context.Context, c *firestore.Client, b Board, before map[int64]Crowd, cells map[int64]int64, at time.Time) (map[int64]Crowd, error) {
	out := map[int64]Crowd{}
	if !crowded(cells) {
		return out, nil
	}
	at = at.Truncate(time.Microsecond) // what Firestore's read times hold
	w := &crowding{c: c, at: at, b: b}
	cuts := map[int64][][]counted{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(crowdReaders)
	for cell, n := range cells {
		if n <= CrowdPart || b.Grid.Single(cell, b.Integers) {
			continue
		}
		parts := w.parts(cell, before[cell])
		cut := make([][]counted, len(parts))
		cuts[cell] = cut
		for i, p := range parts {
			g.Go(func() (err error) {
				if p.n, err = w.count(gctx, p.span); err == nil {
					cut[i], err = w.split(gctx, p)
				}
				return err
			})
		}
	}
	err := g.Wait()
	for cell, cut := range cuts {
		out[cell] = join(cut)
	}
	return out, err
}

// crowded reports whether any cell holds more than CrowdPart documents.
func crowded(cells map[int64]int64) bool {
	for _, n := range cells {
		if n > CrowdPart {
			return true
		}
	}
	return false
}

// crowdsData is crowds as the summary stores them.
func crowdsData(crowds map[int64]Crowd) map[string]any {
	out := make(map[string]any, len(crowds))
	for c, cr := range crowds {
		out[strconv.FormatInt(c, 10)] = map[string]any{"bounds": cr.Bounds, "above": cr.Above}
	}
	return out
}

// readCrowds reads crowds as the summary stores them.
func readCrowds(data any) (map[int64]Crowd, error) {
	out := map[int64]Crowd{}
	m, _ := data.(map[string]any)
	for k, v := range m {
		c, err := strconv.ParseInt(k, 10, 64)
		d, _ := v.(map[string]any)
		bounds, _ := d["bounds"].([]any)
		above, _ := d["above"].([]any)
		if err != nil || len(bounds) != len(above) {
			return nil, fmt.Errorf("rank: the summary holds crowd %q = %v: not a crowded cell's parts", k, v)
		}
		var cr Crowd
		for i := range bounds {
			b, okB := Value(bounds[i])
			a, okA := above[i].(int64)
			if !okB || !okA {
				return nil, fmt.Errorf("rank: the summary holds crowd %q = %v: not a crowded cell's parts", k, v)
			}
			cr.Bounds, cr.Above = append(cr.Bounds, b), append(cr.Above, a)
		}
		out[c] = cr
	}
	return out, nil
}
