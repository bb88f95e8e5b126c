package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	hookrelay "github.com/hookrelay/hookrelay/client"
)

// eventsCmd is `hookrelay events …`.
type eventsCmd struct {
	List   eventsListCmd   `cmd:"" help:"List the account's events (without their data), oldest first, a page at a time."`
	Get    eventsGetCmd    `cmd:"" help:"Read an event with its data and deliveries."`
	Replay eventsReplayCmd `cmd:"" help:"Deliver an event again to the subscriptions matching its type now."`
}

type eventsListCmd struct {
	output
	page
	Type  string `placeholder:"TYPE" help:"Only events of this type."`
	Since moment `placeholder:"TIME" help:"Created at or after this time (RFC 3339, or a duration before now: 2h)."`
	Until moment `placeholder:"TIME" help:"Created before this time."`
}

// Run lists a page of events.
func (c *eventsListCmd) Run(e *session, api *hookrelay.Client) error {
	params := &hookrelay.ListEventsParams{Type: some(c.Type), Since: c.Since.ptr(), Until: c.Until.ptr(),
		Limit: some(c.Limit), Cursor: some(c.Cursor)}
	return reply(e, c.output, func(t *table, r *hookrelay.ListEventsResponse) {
		t.row("ID", "TYPE", "SUBJECT", "TIME", "CREATED")
		for _, ev := range r.JSON200.Events {
			t.row(ev.ID, ev.Type, ev.Subject, ev.Time, ev.CreatedAt)
		}
		more(t, r.JSON200.NextCursor)
	})(api.ListEventsWithResponse(e.ctx, params))
}

type eventsGetCmd struct {
	output
	ID string `arg:"" help:"The event's id (the one it was published with)."`
}

// Run reads the event.
func (c *eventsGetCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.GetEventResponse) {
		ev := r.JSON200.Event
		data, _ := json.Marshal(ev.Data)
		t.row("id", ev.ID)
		t.row("type", ev.Type)
		t.row("subject", ev.Subject)
		t.row("time", ev.Time)
		t.row("created_at", ev.CreatedAt)
		t.row("data", string(data))
		t.gap()
		t.row("DELIVERY", "STATUS", "ATTEMPTS", "SUBSCRIPTION", "ENDPOINT", "FINISHED")
		for _, d := range r.JSON200.Deliveries {
			t.row(d.ID, d.Status, d.Attempts, d.SubscriptionID, d.EndpointID, d.FinishedAt)
		}
	})(api.GetEventWithResponse(e.ctx, c.ID))
}

type eventsReplayCmd struct {
	output
	ID string `arg:"" help:"The event's id."`
}

// Run replays the event.
func (c *eventsReplayCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.ReplayEventResponse) {
		deliveryTable(t, r.JSON202.Deliveries)
	})(api.ReplayEventWithResponse(e.ctx, c.ID))
}

// publishCmd is `hookrelay publish TYPE`.
type publishCmd struct {
	output
	Type    string `arg:"" help:"The event's type."`
	Data    string `placeholder:"JSON" help:"The payload: JSON, @FILE for a file's, or - for standard input's."`
	ID      string `placeholder:"KEY" help:"The event's id, its idempotency key (default: a new one): publishing it again delivers nothing new."`
	Subject string `placeholder:"SUBJECT" help:"The event's subject."`
	Time    moment `placeholder:"TIME" help:"When it happened (RFC 3339); default now."`
}

// Run publishes the event, retrying while the API answers 503 or 429.
func (c *publishCmd) Run(e *session, api *hookrelay.Client) error {
	data, err := c.payload()
	if err != nil {
		return err
	}
	ev := hookrelay.EventRequest{Type: c.Type, ID: some(c.ID), Subject: some(c.Subject), Time: c.Time.ptr(), Data: data}
	return reply(e, c.output, func(t *table, r *hookrelay.PublishEventResponse) {
		t.row("id", r.Result().ID)
		t.row("duplicate", r.Result().Duplicate)
		t.gap()
		deliveryTable(t, r.Result().Deliveries)
	})(api.Publish(e.ctx, ev))
}

// payload reads --data: nil (no payload), or JSON checked to be one value.
func (c *publishCmd) payload() (any, error) {
	text := c.Data
	if text == "-" || strings.HasPrefix(text, "@") {
		var b []byte
		var err error
		if text == "-" {
			b, err = io.ReadAll(os.Stdin)
		} else {
			b, err = os.ReadFile(text[1:])
		}
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if !json.Valid([]byte(text)) {
		return nil, fmt.Errorf("--data: not JSON: %.80q", text)
	}
	return json.RawMessage(text), nil
}

// backlogCmd is `hookrelay backlog`.
type backlogCmd struct{ output }

// Run shows the backlog.
func (c *backlogCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.GetBacklogResponse) {
		t.row("pending", r.JSON200.Pending)
		t.row("unstarted", r.JSON200.Unstarted)
		t.row("oldest_pending_at", r.JSON200.OldestPendingAt)
		t.row("lag_seconds", r.JSON200.LagSeconds)
	})(api.GetBacklogWithResponse(e.ctx))
}
