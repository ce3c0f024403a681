package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/tools/bench/report"
)

func (o SoakOptions) json() report.SoakOptions {
	return report.SoakOptions{Seconds: o.Duration.Seconds(), Workers: o.Workers, Rate: o.Rate, Counters: o.Counters, Shards: o.Shards,
		Instances: o.Instances, PauseSeconds: o.Pause.Seconds(), DownSeconds: o.Down.Seconds(), DuplicateRate: o.DuplicateRate,
		DelayRate: o.DelayRate, MaxDelayMS: ms(o.MaxDelay), SettleSeconds: o.Settle.Seconds()}
}

// soakSettle waits, from the end of the load and for at most o.Settle,
// until every total equals its acknowledged increments, then records each
// counter's total and shards' sum.
func soakSettle(ctx context.Context, o SoakOptions, e *env, ids []string, acked []int64, loadEnd time.Time, rep *report.Soak) error {
	c := counter.New(e.reader, counter.Options{Timeout: 10 * time.Second})
	events := e.bridges[report.ModeTally]
	sctx, cancel := context.WithDeadline(ctx, loadEnd.Add(o.Settle))
	defer cancel()
	for {
		exact := 0
		for i, id := range ids {
			if t, err := c.Get(sctx, id, ""); err == nil && t == acked[i] {
				exact++
			}
		}
		done := exact == len(ids)
		soakPhase(o, "soak settle", time.Since(loadEnd), o.Settle, fmt.Sprintf("%d of %d totals exact", exact, len(ids)), done || sctx.Err() != nil)
		if done {
			rep.ExactAfter = ptr(ms(time.Since(loadEnd)))
			break
		}
		select {
		case <-sctx.Done():
		case <-time.After(100 * time.Millisecond):
			continue
		}
		break
	}
	// One event a shard write, which may hold many increments.
	all, err := shardWrites(ctx, e.reader, collTally, ids)
	if err != nil {
		return err
	}
	for sctx.Err() == nil {
		if events.Stats().Received >= all && events.Idle() {
			rep.AnsweredAfter = ptr(ms(time.Since(loadEnd)))
			break
		}
		select {
		case <-sctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, id := range ids {
		var sc report.SoakCounter
		var err error
		sc.ID, sc.Acked = id, acked[i]
		if sc.Total, err = c.Get(ctx, id, ""); err != nil {
			return fmt.Errorf("soak: total of %s: %w", id, err)
		}
		if sc.Sum, err = c.Sum(ctx, id, ""); err != nil {
			return fmt.Errorf("soak: sum of %s: %w", id, err)
		}
		rep.Lost += max(0, sc.Acked-sc.Total)
		rep.Extra += max(0, sc.Total-sc.Acked)
		rep.Counters = append(rep.Counters, sc)
	}
	return nil
}
