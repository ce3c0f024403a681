package setup

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestBuildReportsBadConfig: a bad setting is an error, never functions
// with a nil client.
func TestBuildReportsBadConfig(t *testing.T) {
	emulatortest.Require(t)
	env := map[string]string{EnvProject: "demo-x", EnvMaxStep: "lots"}
	build := func() (*Set, error) {
		cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
		if err != nil {
			return nil, err
		}
		return New(context.Background(), cfg, io.Discard)
	}
	f, err := build()
	if err == nil || f != nil || !strings.Contains(err.Error(), EnvMaxStep) {
		t.Errorf("build = %v, %v; want an error naming %s", f, err, EnvMaxStep)
	}
	delete(env, EnvMaxStep)
	f, err = build()
	if err != nil || f == nil || f.Increment == nil || f.Rollup == nil || f.Reconcile == nil {
		t.Errorf("build with a good configuration = %+v, %v", f, err)
	}
}
