package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/rollup"
)

type action = func(ctx context.Context, a *admin, c *counter.Client, id string) error

var (
	runCreate = adminCommand("create", false, func(fs *flag.FlagSet) action {
		shards := fs.Int("shards", 10, "number of shards")
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if err := c.Create(ctx, id, *shards); err != nil {
				return err
			}
			a.print(map[string]any{"counter": id, "shards": *shards}, "created %s with %d shards", id, *shards)
			return nil
		}
	})
	runIncr = adminCommand("incr", false, func(fs *flag.FlagSet) action {
		by := fs.Int64("by", 1, "amount to add (may be negative)")
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if err := c.Increment(ctx, id, *by); err != nil {
				return err
			}
			a.print(map[string]any{"counter": id, "by": *by}, "%s %+d", id, *by)
			return nil
		}
	})
	runGet = adminCommand("get", false, func(fs *flag.FlagSet) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			total, err := c.Total(ctx, id)
			if err != nil {
				return err
			}
			a.print(map[string]any{"counter": id, "total": total}, "%s %d", id, total)
			return nil
		}
	})
	runSum = adminCommand("sum", false, func(fs *flag.FlagSet) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			sum, err := c.Sum(ctx, id)
			if err != nil {
				return err
			}
			a.print(map[string]any{"counter": id, "sum": sum}, "%s %d (sum of the shards)", id, sum)
			return nil
		}
	})
	runWatch = adminCommand("watch", false, func(fs *flag.FlagSet) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			for total, err := range c.Watch(ctx, id) {
				if err != nil {
					return err
				}
				a.print(map[string]any{"counter": id, "total": total}, "%s %d", id, total)
			}
			return nil
		}
	})
	runReshard = adminCommand("reshard", false, func(fs *flag.FlagSet) action {
		shards := fs.Int("shards", 0, "new number of shards (required)")
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if *shards < 1 {
				return fmt.Errorf("--shards is required and must be at least 1")
			}
			old, err := c.Reshard(ctx, id, *shards, func(d time.Duration, why string) {
				fmt.Fprintf(a.stderr, "%s: waiting %v %s\n", id, d, why)
			})
			if err != nil {
				return err
			}
			a.print(map[string]any{"counter": id, "from": old, "to": *shards}, "%s: %d -> %d shards", id, old, *shards)
			return nil
		}
	})
	runReset = adminCommand("reset", false, func(fs *flag.FlagSet) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if err := c.Reset(ctx, id); err != nil {
				return err
			}
			a.print(map[string]any{"counter": id, "reset": true}, "%s: shards set to 0; the total follows through the rollup", id)
			return nil
		}
	})
	runReconcile = adminCommand("reconcile", true, func(fs *flag.FlagSet) action {
		all := fs.Bool("all", false, "reconcile every counter")
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			report := func(d rollup.Drift, err error) {
				if err != nil {
					a.print(map[string]any{"counter": d.Counter, "error": err.Error()}, "%v", err)
					return
				}
				repaired := ""
				if d.Drift != 0 {
					repaired = ", repaired"
				}
				a.print(d, "%s: total %d, shards %d, drift %+d%s", d.Counter, d.Total, d.Sum, d.Drift, repaired)
			}
			switch {
			case *all && id != "":
				return fmt.Errorf("give a counter id or --all, not both")
			case *all:
				return c.ReconcileAll(ctx, report)
			case id == "":
				return fmt.Errorf("give a counter id, or --all")
			}
			d, err := c.Reconcile(ctx, id)
			if err != nil {
				return err
			}
			report(d, nil)
			return nil
		}
	})
	runDelete = adminCommand("delete", false, func(fs *flag.FlagSet) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if err := c.Delete(ctx, id); err != nil {
				return err
			}
			a.print(map[string]any{"counter": id, "deleted": true}, "deleted %s", id)
			return nil
		}
	})
)
