package stack

import (
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/calendar"
)

//go:embed demo.html
var demoSource string

// demoScript is the page's script: clients/web/demo/demo.js and the web
// client, bundled with the Firebase SDK (npm run demo, in clients/web).
//
//go:embed demo/demo.js
var demoScript []byte

var demoPage = template.Must(template.New("demo").Parse(demoSource))

// demoConfig is what the demo page needs to know of the stack.
type demoConfig struct {
	AuthHost      string    `json:"authHost"` // "" without sign-in
	FirestoreHost string    `json:"firestoreHost"`
	Project       string    `json:"project"`
	Database      string    `json:"database"`
	Collection    string    `json:"collection"`
	Voters        string    `json:"voters"`
	Feed          *demoFeed `json:"feed"` // nil without counts on documents
}

// demoFeed is the collection the page lists, and the counts it shows.
type demoFeed struct {
	Collection string `json:"collection"`
	Like       string `json:"like"`
	View       string `json:"view,omitempty"`
	// Comments is a count of the posts' children (comments=count(comments)),
	// and Children their collection: signed-in users add to it.
	Comments string `json:"comments,omitempty"`
	Children string `json:"children,omitempty"`
	// Today is a per-day window of the likes or, else, of the views
	// (likes_today=likes per day, views_today=views per day), whose series
	// the page draws; TodayOf is the count it windows. Hot is a trend the
	// page shows and offers to sort by.
	Today   string `json:"today,omitempty"`
	TodayOf string `json:"todayOf,omitempty"`
	Hot     string `json:"hot,omitempty"`
	// HotOf says what the trend weighs, as the page shows it: beside its
	// score, and when the pointer rests on it.
	HotOf *demoTrend `json:"hotOf,omitempty"`
	// Rank is the like count where the posts are ranked by it
	// (rank(likes)): the page shows each post's place.
	Rank string `json:"rank,omitempty"`
}

// demoTrend is a trend's unit, and what it weighs, for a person.
type demoTrend struct {
	Unit  string `json:"unit"`  // recent likes + views/10
	Title string `json:"title"` // likes + views/10, each weighing half as much every 6h
}

// demoPosts are the posts the demo adds to an empty feed.
var demoPosts = []struct{ id, title string }{
	{"hello", "Hello, tally"},
	{"counts", "Counts as fields of your documents"},
	{"offline", "A like pressed offline is kept, and counted once"},
}

// feed is the first counted collection of top-level documents, if any.
func (s *Stack) feed() *demoFeed {
	for _, d := range s.o.layout().Docs {
		if strings.Contains(d.Collection, "/") || d.One() || len(d.Fields) == 0 {
			continue
		}
		f := &demoFeed{Collection: d.Collection, Like: d.Fields[0]}
		if len(d.Fields) > 1 {
			f.View = d.Fields[1]
		}
		for _, a := range d.Aggregates {
			if a.Op == aggregate.OpCount && !a.Root && len(a.Where) == 0 {
				f.Comments, f.Children = a.Field, a.Child
				break
			}
		}
		if slices.Contains(d.Ranks, f.Like) {
			f.Rank = f.Like
		}
		for _, count := range []string{f.Like, f.View} {
			for _, w := range d.Windows {
				if w.Kind == bytime.KindPer && w.Unit == calendar.Day && w.Count == count && count != "" && f.Today == "" {
					f.Today, f.TodayOf = w.Field, count
				}
			}
		}
		for _, w := range d.Windows {
			if w.Kind == bytime.KindTrend && f.Hot == "" {
				f.Hot = w.Field
				f.HotOf = &demoTrend{Unit: "recent " + w.Weighs(),
					Title: fmt.Sprintf("The last hours' %s, each weighing half as much every %s", w.Weighs(), w.HalvesEvery())}
			}
		}
		return f
	}
	return nil
}

// seed adds the demo's posts to the feed's collection when it is empty, as
// the app would create them: looked at once per stack, not per page view.
func (s *Stack) seed(ctx context.Context, f *demoFeed) (err error) {
	if s.seeded.Load() {
		return nil
	}
	defer func() { s.seeded.Store(err == nil) }()
	col := s.Functions.Client.Collection(f.Collection)
	some, err := col.Limit(1).Documents(ctx).GetAll()
	if err != nil || len(some) > 0 {
		return err
	}
	for _, p := range demoPosts {
		data := map[string]any{"title": p.title, f.Like: 0, "created": firestore.ServerTimestamp}
		if f.View != "" {
			data[f.View] = 0
		}
		if f.Comments != "" {
			data[f.Comments] = 0 // no comments yet, as a reconcile would find
		}
		if _, err := col.Doc(p.id).Create(ctx, data); err != nil && !isExists(err) {
			return err
		}
	}
	return nil
}

func isExists(err error) bool { return status.Code(err) == codes.AlreadyExists }

// demo serves the demo page: a feed of posts with likes and views counted
// on the posts, with counts on documents; otherwise, and at
// /demo?counter=NAME, a like button for one counter. Its script is the web
// client's.
func (s *Stack) demo(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	cfg := s.pageConfig()
	if cfg.Feed != nil && !r.URL.Query().Has("counter") {
		if err := s.seed(r.Context(), cfg.Feed); err != nil {
			http.Error(w, "the demo's posts: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	nonce := rand.Text()
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", demoPolicy(nonce, cfg))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	demoPage.Execute(w, demoPageData{Nonce: nonce, Config: cfg})
}

// demoJS serves the demo page's script.
func demoJS(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Method == http.MethodHead {
		return
	}
	w.Write(demoScript)
}

// pageConfig is what a page of the stack needs to reach it.
func (s *Stack) pageConfig() demoConfig {
	cfg := demoConfig{
		AuthHost: s.AuthHost, FirestoreHost: s.EmulatorHost, Project: s.o.Config.Project,
		Database: s.o.Config.Database, Collection: s.o.layout().Collection, Feed: s.feed(),
	}
	_, cfg.Voters, _ = s.o.layout().Subcollections()
	return cfg
}

// demoPageData is what the page's template is given.
type demoPageData struct {
	Nonce  string // of its one script and one style
	Config demoConfig
}

// demoPolicy is the page's Content-Security-Policy: its own script and
// style only (by nonce), requests to this server and the two emulators
// only, and no framing, forms, plugins or base.
func demoPolicy(nonce string, cfg demoConfig) string {
	connect := "'self' http://" + cfg.FirestoreHost
	if cfg.AuthHost != "" {
		connect += " http://" + cfg.AuthHost
	}
	return fmt.Sprintf("default-src 'none'; script-src 'nonce-%s'; style-src 'nonce-%s'; connect-src %s; "+
		"frame-ancestors 'none'; form-action 'none'; base-uri 'none'; object-src 'none'", nonce, nonce, connect)
}
