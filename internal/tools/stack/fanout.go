package stack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/pubsubemu"
	"github.com/tallycounters/tally/setup"
)

// The topic and push subscription of the jobs' parts, as deploy.sh names
// them.
const (
	PartsTopic        = "tally-parts"
	PartsSubscription = "tally-parts-push"
)

// partsAckDeadline is how long Pub/Sub waits for Reconcile?part to answer
// before it delivers the part again: a part's 1,000 documents take the
// emulator tens of seconds on a busy machine.
const partsAckDeadline = 600 * time.Second

// fanoutOf is how the stack's jobs run their parts: o.Fanout if set; else
// through Pub/Sub when windows are declared (the boundary job runs at
// each of their starts), in-process when not.
func fanoutOf(o Options) string {
	if o.Fanout != "" {
		return o.Fanout
	}
	if o.PubSubHost != "" || o.layout().SmallestUnit() != "" {
		return setup.FanoutPubSub
	}
	return setup.FanoutInProcess
}

// startPubSub starts the Pub/Sub emulator, unless PubSubHost names one or
// the parts run in-process, and has the functions publish to its topic.
func (s *Stack) startPubSub(ctx context.Context) error {
	s.Fanout = fanoutOf(s.o)
	switch s.Fanout {
	case setup.FanoutInProcess:
		return nil
	case setup.FanoutPubSub:
	default:
		return fmt.Errorf("stack: fan-out %q: want %s or %s", s.Fanout, setup.FanoutPubSub, setup.FanoutInProcess)
	}
	s.o.Config.PartsTopic = PartsTopic
	if s.PubSubHost = s.o.PubSubHost; s.PubSubHost != "" {
		return nil
	}
	paths := s.o.Emulator
	if paths.Java == "" {
		var err error
		if paths, err = emulator.LocateEnv(os.Getenv); err != nil {
			return err
		}
	}
	jar, err := pubsubemu.Locate(paths)
	if err != nil {
		return err
	}
	if s.PubSub, err = pubsubemu.Start(ctx, paths.Java, jar, s.o.Host, s.o.EmulatorOutput); err != nil {
		return err
	}
	s.PubSubHost = s.PubSub.Host
	return nil
}

// subscribe has the Pub/Sub emulator push each part to the stack's
// Reconcile?part, as the push subscription deploy.sh makes does.
func (s *Stack) subscribe(ctx context.Context) error {
	if s.Fanout != setup.FanoutPubSub {
		return nil
	}
	c, err := pubsubemu.Client(ctx, s.PubSubHost, s.o.Config.Project)
	if err != nil {
		return err
	}
	defer c.Close()
	return pubsubemu.Push(ctx, c, s.o.Config.Project, PartsTopic, PartsSubscription, s.FunctionsURL+"/Reconcile?part", partsAckDeadline)
}

// StartJob starts a job as the scheduler does: a POST to Reconcile with
// query ("?windows" for the boundary job, "" for Reconcile), whose
// status and answer it returns.
func (s *Stack) StartJob(ctx context.Context, query string) (int, []byte) {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/Reconcile"+query, nil)
	rec := httptest.NewRecorder()
	s.Functions.Reconcile.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}
