package tally

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/proc"
	"github.com/tallycounters/tally/setup"
)

// TestFunctionsDeclareTheirCounts: the deployed functions, at their first
// request, record the counts they run with in the database (setup's
// Declare), so that the tally command and Go clients given only the
// database read the same documents.
func TestFunctionsDeclareTheirCounts(t *testing.T) {
	emulatortest.Require(t)
	port, err := emulator.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	project := "demo-declared"
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TALLY_TEST_FUNCTIONS=1", "PORT="+strconv.Itoa(port), setup.EnvProject+"="+project,
		"TALLY_COUNTS=posts:views,views_today=views per day", "TALLY_TIME_ZONE=Asia/Tokyo")
	proc.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(emulatortest.Liveness); ; time.Sleep(50 * time.Millisecond) { // until it listens
		resp, err := http.Post("http://127.0.0.1:"+strconv.Itoa(port)+"/Increment", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("POST /Increment: %v", err)
		}
	}
	fs := emulatortest.ClientAt(t, os.Getenv("FIRESTORE_EMULATOR_HOST"), project)
	var d counter.Declaration
	emulatortest.Until(t, "the functions' settings recorded", func() (any, bool) {
		d, err = counter.Declared(context.Background(), fs)
		return err, err == nil
	})
	if d.Env["TALLY_COUNTS"] != "posts:views,views_today=views per day" || d.Env["TALLY_TIME_ZONE"] != "Asia/Tokyo" || d.By != "the deployed functions" {
		t.Errorf("recorded %+v; want the functions' counts and time zone, by the deployed functions", d)
	}
}
