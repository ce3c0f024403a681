// Package contention stands in for what Firestore does to a document
// written faster than it sustains, which the emulator does not: it takes
// every write at once, however hot the document. A Proxy sits between
// Firestore clients and the emulator, on loopback, and passes every call
// through unchanged, but for commits: a commit that writes a document
// past Options.Rate writes a second waits for its turn, as a contended
// write on Firestore slows, and one that would wait longer than
// Options.MaxWait is refused whole with ABORTED ("Too much contention on
// these documents"), as Firestore refuses it, and never reaches the
// emulator. Nothing else changes: reads, queries and listeners pass as
// they are.
//
// The bench measures hot spots with it (tally bench --contention), the
// tests run a viral counter through it, and tally serve can put it in
// front of its emulator (--contention; off by default).
package contention

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Defaults of Options.
const (
	DefaultRate    = 10                     // writes a second one document takes without waiting
	DefaultMaxWait = 500 * time.Millisecond // longest a write waits for its turn
)

// Message is what a refused commit says, as Firestore says it.
const Message = "Too much contention on these documents. Please try again."

// Options configures a Proxy.
type Options struct {
	Target  string        // the emulator, host:port
	Rate    float64       // writes a second one document takes; past them, writes wait; default DefaultRate
	Burst   int           // writes one document takes at once after a rest; default Rate
	MaxWait time.Duration // a write that would wait longer is refused; default DefaultMaxWait
}

// Stats counts what a Proxy did to commits.
type Stats struct {
	Commits int64 `json:"commits"` // commits that wrote documents
	Slowed  int64 `json:"slowed"`  // of those, commits that waited for their turn
	Aborted int64 `json:"aborted"` // commits refused with ABORTED, never sent on
}

// Proxy is a running stand-in. Point FIRESTORE_EMULATOR_HOST at Addr.
type Proxy struct {
	Addr string

	o      Options
	l      net.Listener
	srv    *grpc.Server
	conn   *grpc.ClientConn
	mu     sync.Mutex
	docs   map[string]*doc
	swept  time.Time
	closed atomic.Bool

	commits, slowed, aborted atomic.Int64
}

// doc is the write rate one document takes.
type doc struct {
	lim  *rate.Limiter
	used time.Time
}

// Start serves a proxy to o.Target on a free loopback port.
func Start(o Options) (*Proxy, error) {
	if o.Target == "" {
		return nil, errors.New("contention: no target: give the emulator's host:port")
	}
	if o.Rate <= 0 {
		o.Rate = DefaultRate
	}
	if o.Burst <= 0 {
		o.Burst = max(1, int(o.Rate))
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	conn, err := grpc.NewClient(o.Target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(frames{})))
	if err != nil {
		return nil, fmt.Errorf("contention: dial %s: %w", o.Target, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("contention: listen: %w", err)
	}
	p := &Proxy{Addr: l.Addr().String(), o: o, l: l, conn: conn, docs: map[string]*doc{}}
	p.srv = grpc.NewServer(grpc.ForceServerCodec(frames{}), grpc.UnknownServiceHandler(p.forward),
		grpc.MaxRecvMsgSize(1<<30), grpc.MaxSendMsgSize(1<<30))
	go p.srv.Serve(l)
	return p, nil
}

// Stats says what the proxy did to commits so far.
func (p *Proxy) Stats() Stats {
	return Stats{Commits: p.commits.Load(), Slowed: p.slowed.Load(), Aborted: p.aborted.Load()}
}

// Close stops the proxy and ends the calls in flight.
func (p *Proxy) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.srv.Stop()
	return p.conn.Close()
}

const methodCommit = "/google.firestore.v1.Firestore/Commit"

// forward passes one call through to the emulator, message by message,
// both ways, holding back or refusing a commit first.
func (p *Proxy) forward(_ any, ss grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(codes.Internal, "contention: no method")
	}
	md, _ := metadata.FromIncomingContext(ss.Context())
	out := metadata.MD{}
	for k, v := range md {
		if !strings.HasPrefix(k, ":") && k != "content-type" && k != "user-agent" {
			out[k] = v
		}
	}
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ss.Context(), out))
	defer cancel()
	var first *[]byte
	if method == methodCommit {
		m := new([]byte)
		if err := ss.RecvMsg(m); err != nil {
			return err
		}
		if err := p.admit(ctx, *m); err != nil {
			return err
		}
		first = m
	}
	cs, err := p.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		return err
	}
	go pumpUp(ss, cs, first) // ends with the call, which ends when this returns
	err = pumpDown(cs, ss)
	ss.SetTrailer(cs.Trailer())
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err // the emulator's status, as it gave it
}

// pumpUp sends the client's messages on, first the one already read, and
// closes the sending side when the client does.
func pumpUp(ss grpc.ServerStream, cs grpc.ClientStream, first *[]byte) {
	if first != nil && cs.SendMsg(first) != nil {
		return
	}
	for {
		m := new([]byte)
		if err := ss.RecvMsg(m); err != nil {
			if errors.Is(err, io.EOF) {
				cs.CloseSend()
			}
			return
		}
		if cs.SendMsg(m) != nil {
			return
		}
	}
}

// pumpDown sends the emulator's headers and messages back; it returns the
// call's end: io.EOF, or the emulator's error.
func pumpDown(cs grpc.ClientStream, ss grpc.ServerStream) error {
	if h, err := cs.Header(); err == nil && len(h) > 0 {
		if err := ss.SendHeader(h); err != nil {
			return err
		}
	}
	for {
		m := new([]byte)
		if err := cs.RecvMsg(m); err != nil {
			return err
		}
		if err := ss.SendMsg(m); err != nil {
			return err
		}
	}
}

// admit lets a commit go on once every document it writes has its turn,
// or refuses it with ABORTED if one would wait past MaxWait.
func (p *Proxy) admit(ctx context.Context, msg []byte) error {
	var req firestorepb.CommitRequest
	if proto.Unmarshal(msg, &req) != nil {
		return nil // the emulator answers what it cannot read
	}
	names := written(&req)
	if len(names) == 0 {
		return nil
	}
	p.commits.Add(1)
	now := time.Now()
	var wait time.Duration
	res := make([]*rate.Reservation, 0, len(names))
	p.mu.Lock()
	for _, n := range names {
		r := p.limiter(n, now).ReserveN(now, 1)
		res = append(res, r)
		wait = max(wait, r.DelayFrom(now))
	}
	p.mu.Unlock()
	if wait > p.o.MaxWait {
		for _, r := range res {
			r.CancelAt(now)
		}
		p.aborted.Add(1)
		return status.Error(codes.Aborted, Message)
	}
	if wait <= 0 {
		return nil
	}
	p.slowed.Add(1)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		for _, r := range res {
			r.Cancel()
		}
		return status.FromContextError(ctx.Err()).Err()
	}
}

// limiter is document name's rate, made on first use; documents idle for
// a minute are forgotten, at most once a second. p.mu is held.
func (p *Proxy) limiter(name string, now time.Time) *rate.Limiter {
	if now.Sub(p.swept) > time.Second {
		p.swept = now
		for n, d := range p.docs {
			if now.Sub(d.used) > time.Minute {
				delete(p.docs, n)
			}
		}
	}
	d := p.docs[name]
	if d == nil {
		d = &doc{lim: rate.NewLimiter(rate.Limit(p.o.Rate), p.o.Burst)}
		p.docs[name] = d
	}
	d.used = now
	return d.lim
}

// written lists the documents a commit writes, each once.
func written(req *firestorepb.CommitRequest) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range req.GetWrites() {
		n := w.GetUpdate().GetName()
		if n == "" {
			n = w.GetDelete()
		}
		if n == "" {
			n = w.GetTransform().GetDocument()
		}
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// frames passes messages through as the bytes they are.
type frames struct{}

func (frames) Marshal(v any) ([]byte, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, fmt.Errorf("contention: cannot send a %T", v)
	}
	return *b, nil
}

func (frames) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("contention: cannot receive into a %T", v)
	}
	*b = append((*b)[:0], data...)
	return nil
}

func (frames) Name() string { return "proto" }
