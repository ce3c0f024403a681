// Package pubsubemu runs the Pub/Sub emulator of the Google Cloud CLI
// (platform/pubsub-emulator, beside the Firestore emulator) in its own
// process group, for the local stack and the tests of the jobs' fan-out,
// and makes on it the topic and push subscription deploy.sh makes in the
// cloud.
package pubsubemu

import (
	"context"
	"errors"

	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/proc"
)

// EnvHost is where the Pub/Sub client finds the emulator.
const EnvHost = "PUBSUB_EMULATOR_HOST"

// InstallHelp says how to get the emulator.
const InstallHelp = `tally fans its jobs' parts out through the Pub/Sub emulator of the Google Cloud CLI ` +
	`(which needs Java, as the Firestore emulator does): "gcloud components install pubsub-emulator", or, ` +
	`where the CLI came from Google's apt repository, "apt-get install google-cloud-cli-pubsub-emulator". ` +
	`If it lives elsewhere, set TALLY_PUBSUB_EMULATOR to its folder.`

// Locate finds the emulator's jar: in TALLY_PUBSUB_EMULATOR (its folder),
// or beside the Firestore emulator fs found.
func Locate(fs emulator.Paths) (string, error) {
	var dirs []string
	if d := os.Getenv("TALLY_PUBSUB_EMULATOR"); d != "" {
		dirs = append(dirs, d, filepath.Join(d, "lib"))
	}
	if fs.Jar != "" {
		// .../platform/cloud-firestore-emulator/cloud-firestore-emulator.jar
		dirs = append(dirs, filepath.Join(filepath.Dir(filepath.Dir(fs.Jar)), "pubsub-emulator", "lib"))
	}
	dirs = append(dirs, "/usr/lib/google-cloud-sdk/platform/pubsub-emulator/lib", "/usr/share/google-cloud-sdk/platform/pubsub-emulator/lib")
	for _, d := range dirs {
		if m, _ := filepath.Glob(filepath.Join(d, "cloud-pubsub-emulator-*-all.jar")); len(m) > 0 {
			return m[len(m)-1], nil
		}
	}
	return "", fmt.Errorf("pubsubemu: no Pub/Sub emulator in %s.\n%s", strings.Join(dirs, ", "), InstallHelp)
}

// Emulator is a running Pub/Sub emulator.
type Emulator struct {
	Host  string // host:port, the value of PUBSUB_EMULATOR_HOST
	cmd   *exec.Cmd
	group *proc.Group
	done  chan struct{}
	err   error
	once  sync.Once
}

// mainClass is the emulator's entry point in its jar.
const mainClass = "com.google.cloud.pubsub.testing.v1.Main"

// readyLine is what the emulator prints once it listens.
const readyLine = "Server started, listening on"

// errPortTaken ends a start whose port another process bound first.
var errPortTaken = errors.New("pubsubemu: the emulator's port was taken before it bound it")

// Start starts the emulator with java on host, on a free port, and waits
// until it answers. A port found free may be taken by another process
// before the emulator binds it, which then neither listens nor exits:
// Start tries again on another.
func Start(ctx context.Context, java, jar, host string, out io.Writer) (*Emulator, error) {
	for attempt := 1; ; attempt++ {
		e, err := start(ctx, java, jar, host, out)
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			return e, err
		}
	}
}

// start makes one attempt of Start.
func start(ctx context.Context, java, jar, host string, out io.Writer) (*Emulator, error) {
	port, err := emulator.FreePort(host)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(java, "-cp", jar, mainClass, "--host="+host, "--port="+strconv.Itoa(port))
	tail := &emulator.Tail{Marker: readyLine}
	taken := &emulator.Tail{Marker: "Address already in use"} // its port bound by another process first
	w := io.MultiWriter(tail, taken)
	if out != nil {
		w = io.MultiWriter(out, tail, taken)
	}
	cmd.Stdout, cmd.Stderr = w, w
	group, err := proc.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("pubsubemu: start %s: %w", java, err)
	}
	e := &Emulator{Host: net.JoinHostPort(host, strconv.Itoa(port)), cmd: cmd, group: group, done: make(chan struct{})}
	go func() {
		e.err = cmd.Wait()
		close(e.done)
	}()
	ctx, cancel := context.WithTimeout(ctx, emulator.DefaultStartTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !tail.Marked() || !e.answers() {
		select {
		case <-e.done:
			return nil, fmt.Errorf("pubsubemu: the emulator exited (%v); its last output:\n%s", e.err, tail)
		case <-ctx.Done():
			e.Stop()
			return nil, fmt.Errorf("pubsubemu: the emulator was not ready at %s: %w", e.Host, ctx.Err())
		case <-tick.C:
			if taken.Marked() {
				e.Stop()
				return nil, errPortTaken
			}
		}
	}
	return e, nil
}

// answers reports whether the emulator's root says "Ok".
func (e *Emulator) answers() bool {
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + e.Host + "/")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16))
	return resp.StatusCode == http.StatusOK && strings.TrimSpace(string(b)) == "Ok"
}

// PID is the JVM's process id.
func (e *Emulator) PID() int { return e.cmd.Process.Pid }

// Stop stops the emulator's process group: SIGTERM, then, after
// emulator.StopGrace, SIGKILL. It holds nothing to save.
func (e *Emulator) Stop() {
	e.once.Do(func() {
		select {
		case <-e.done:
			return
		default:
		}
		_ = e.group.Terminate()
		select {
		case <-e.done:
		case <-time.After(emulator.StopGrace):
			_ = e.group.Kill()
			<-e.done
		}
	})
}

// Client is a Pub/Sub client of the emulator at host, whatever
// PUBSUB_EMULATOR_HOST says.
func Client(ctx context.Context, host, project string) (*pubsub.Client, error) {
	c, err := pubsub.NewClient(ctx, project, option.WithEndpoint(host), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())), option.WithTelemetryDisabled())
	if err != nil {
		return nil, fmt.Errorf("pubsubemu: client of %s: %w", host, err)
	}
	return c, nil
}

// Push makes topic, and a subscription of it that pushes each message to
// endpoint, on the Pub/Sub that client reaches (the emulator, when
// PUBSUB_EMULATOR_HOST names it): as deploy.sh does in the cloud. What
// exists already is kept.
func Push(ctx context.Context, client *pubsub.Client, project, topic, subscription, endpoint string, ackDeadline time.Duration) error {
	tname := "projects/" + project + "/topics/" + topic
	_, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: tname})
	if err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("pubsubemu: topic %s: %w", tname, err)
	}
	sname := "projects/" + project + "/subscriptions/" + subscription
	_, err = client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: sname, Topic: tname, PushConfig: &pubsubpb.PushConfig{PushEndpoint: endpoint},
		AckDeadlineSeconds: int32(ackDeadline / time.Second),
		RetryPolicy:        &pubsubpb.RetryPolicy{MinimumBackoff: durationpb.New(time.Second), MaximumBackoff: durationpb.New(time.Minute)},
	})
	if err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("pubsubemu: subscription %s: %w", sname, err)
	}
	return nil
}
