// Package fanout carries the parts of tally's jobs (counter.Part) through
// Pub/Sub: the boundary job and Reconcile publish one message a part to a
// topic, and a push subscription delivers each to Reconcile?part, in as
// many invocations as there are parts, retrying a part that failed, alone.
// It publishes with the Pub/Sub client, which honours
// PUBSUB_EMULATOR_HOST, and reads what a push subscription (or an Eventarc
// Pub/Sub trigger, whose event data is the same JSON) delivers.
package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2"

	"github.com/tallycounters/tally/counter"
)

// Topic publishes parts to one Pub/Sub topic.
type Topic struct {
	client *pubsub.Client
	pub    *pubsub.Publisher
	name   string
}

// NewTopic publishes to topic (an id, or projects/{p}/topics/{id}) of
// project. The topic is not checked: deploy.sh, or tally serve, makes it.
func NewTopic(ctx context.Context, project, topic string) (*Topic, error) {
	c, err := pubsub.NewClient(ctx, project)
	if err != nil {
		return nil, fmt.Errorf("fanout: Pub/Sub client for project %q: %w", project, err)
	}
	name := topic
	if !strings.HasPrefix(name, "projects/") {
		name = "projects/" + project + "/topics/" + topic
	}
	return &Topic{client: c, pub: c.Publisher(name), name: name}, nil
}

// Name is the topic's full name.
func (t *Topic) Name() string { return t.name }

// Publish publishes p as one message, and returns once Pub/Sub has it.
func (t *Topic) Publish(ctx context.Context, p counter.Part) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	res := t.pub.Publish(ctx, &pubsub.Message{Data: data, Attributes: map[string]string{
		"job": p.Job, "at": p.At.UTC().Format(time.RFC3339Nano), "seq": strconv.Itoa(p.Seq),
	}})
	if _, err := res.Get(ctx); err != nil {
		return fmt.Errorf("fanout: publish part %d of %s to %s: %w", p.Seq, p.ID(), t.name, err)
	}
	return nil
}

// Close stops the publisher and closes the client.
func (t *Topic) Close() error {
	t.pub.Stop()
	return t.client.Close()
}

// MaxMessage bounds what Decode reads: a part of 1,000 names is some
// 100 KB; Pub/Sub's own limit is 10 MB.
const MaxMessage = 10 << 20

// push is what a push subscription posts, and an Eventarc Pub/Sub trigger's
// event data (google.events.cloud.pubsub.v1.MessagePublishedData).
type push struct {
	Message *struct {
		Data      []byte `json:"data"`
		MessageID string `json:"messageId"`
	} `json:"message"`
	Subscription string `json:"subscription"`
}

// ErrNotAPart is the error of Decode for a body that is no part's message.
var ErrNotAPart = errors.New("fanout: not a message of a part")

// Decode reads the part a push subscription delivered in body, and the
// message's id.
func Decode(body io.Reader) (counter.Part, string, error) {
	var m push
	if err := json.NewDecoder(io.LimitReader(body, MaxMessage)).Decode(&m); err != nil {
		return counter.Part{}, "", fmt.Errorf("%w: %v", ErrNotAPart, err)
	}
	if m.Message == nil || len(m.Message.Data) == 0 {
		return counter.Part{}, "", fmt.Errorf("%w: no message data", ErrNotAPart)
	}
	var p counter.Part
	dec := json.NewDecoder(bytes.NewReader(m.Message.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return counter.Part{}, m.Message.MessageID, fmt.Errorf("%w: %v", ErrNotAPart, err)
	}
	if err := p.Validate(); err != nil {
		return counter.Part{}, m.Message.MessageID, fmt.Errorf("%w: %v", ErrNotAPart, err)
	}
	return p, m.Message.MessageID, nil
}
