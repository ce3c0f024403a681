package bench

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/trigger"
)

// registerTriggers registers, with direct delivery none, the emulator's
// triggers on the shards of the rolled-up modes.
func (e *env) registerTriggers(ctx context.Context) error {
	if e.o.Delivery != report.DeliveryEmulator || e.o.Aggregate {
		return nil // aggregates: each mode's own, once its children are made
	}
	naive := core.Default()
	naive.Collection = collNaive
	for key, l := range map[string]core.Layout{report.ModeTally: tallyLayout(e.o), report.ModeNaive: naive} {
		t := emulator.Trigger{EventType: "google.cloud.firestore.document.v1.written", Pattern: trigger.WrittenPatterns(l)[0]}
		if err := emulator.RegisterTrigger(ctx, e.emuHost, e.o.Project, key, t); err != nil {
			return err
		}
	}
	return nil
}

// freshEmulator gives each mode after the first an emulator of its own:
// the bench's emulator is stopped and started again, empty, on the same
// port, so that every client, listener and Rollup instance finds it where
// it was. Emptying it is not enough: the emulator keeps what was deleted,
// and its queries slow with all it ever held. Measured here, tally's
// increments/s over 10,000 counters fell from 362 to 56 after a raw mode of
// 128,000 writes had been deleted.
func (e *env) freshEmulator(ctx context.Context) error {
	if e.emu == nil {
		return nil // another's emulator: it is used as it is
	}
	if !e.emuUsed {
		e.emuUsed = true
		return nil
	}
	if err := e.emu.Stop(); err != nil {
		return fmt.Errorf("bench: stopping the emulator for the next mode: %w", err)
	}
	host, port, err := net.SplitHostPort(e.emu.Host())
	if err != nil {
		return err
	}
	o := e.emuOpts
	o.Host = host
	if o.Port, err = strconv.Atoi(port); err != nil {
		return err
	}
	if e.emu, err = emulator.Start(ctx, o); err != nil {
		return fmt.Errorf("bench: starting the emulator again for the next mode: %w", err)
	}
	return e.registerTriggers(ctx)
}
