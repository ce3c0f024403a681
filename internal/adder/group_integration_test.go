package adder

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestGroupWriteFailsForAllItHolds: increments that wait together for a
// counter's write in flight are answered together with their write's
// error when it fails: here, the write of the batch is made past its first
// increment's deadline, as the write before it was held, so it is never
// sent. Every increment the batch holds is answered with that error (its
// outcome unknown, as for any write cut off by its deadline), and the
// shards hold nothing of them; the increment whose write was held is
// answered as its write went.
func TestGroupWriteFailsForAllItHolds(t *testing.T) {
	emulatortest.Require(t)
	p := emulatortest.NewProxy(t)
	l := core.Default()
	a := New(emulatortest.ClientAt(t, p.Addr, emulatortest.Project), Config{Layout: l, AutoCreate: true})
	id := emulatortest.ID(t)
	count := core.Count{Field: core.FieldTotal, Shard: l.ShardField}
	ctx := context.Background()
	if _, _, err := a.Add(ctx, id, count, 1); err != nil {
		t.Fatal(err)
	}
	a.groups.mu.Lock()
	a.groups.typical = time.Hour // writes usually slow: the batch waits for the held write, not beside it
	a.groups.mu.Unlock()
	p.Hold()
	held := make(chan error, 1)
	go func() { _, _, err := a.Add(ctx, id, count, 1); held <- err }()
	a.waitGroup(t, id, nil, func(g *group) bool { return g.flying > 0 })
	// Time enough to join on a busy machine; its end, the write's deadline,
	// is awaited below whatever the machine's speed.
	short, cancel := context.WithTimeout(ctx, MinCommitTime+5*time.Second)
	defer cancel()
	const n = 5
	errs := make(chan error, n)
	add := func(ctx context.Context) { _, _, err := a.Add(ctx, id, count, 10); errs <- err }
	go add(short) // the batch's first: its write will be made within its deadline, or not at all
	a.waitGroup(t, id, errs, func(g *group) bool { return g.next != nil && g.next.n == 1 })
	for range n - 1 {
		go add(ctx)
	}
	a.waitGroup(t, id, errs, func(g *group) bool { return g.next != nil && g.next.n == n })
	<-short.Done()
	p.Release()
	if err := <-held; err != nil {
		t.Errorf("the held write: %v", err)
	}
	for range n {
		if err := <-errs; !errors.Is(err, core.ErrOutcomeUnknown) {
			t.Errorf("an increment of the failed batch was answered %v; want its write's error", err)
		}
	}
	snap, err := l.Shards(emulatortest.Client(t), id, "").Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range snap {
		v, _ := s.DataAt(l.ShardField)
		n, _ := v.(int64)
		sum += n
	}
	if sum != 2 {
		t.Errorf("the shards hold %d; want 2, the two increments whose writes went", sum)
	}
}

// waitGroup waits until counter id's group meets ok, and fails the test
// if an increment is answered first (refused, not joined).
func (a *Adder) waitGroup(t *testing.T, id string, answered <-chan error, ok func(*group) bool) {
	t.Helper()
	for {
		select {
		case err := <-answered:
			t.Fatalf("an increment was answered before it joined the batch: %v", err)
		default:
		}
		a.groups.mu.Lock()
		g := a.groups.m[id]
		done := g != nil && ok(g)
		a.groups.mu.Unlock()
		if done {
			return
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}
