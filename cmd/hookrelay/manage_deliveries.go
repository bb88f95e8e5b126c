package main

import (
	"fmt"

	hookrelay "github.com/hookrelay/hookrelay/client"
)

// deliveriesCmd is `hookrelay deliveries …`.
type deliveriesCmd struct {
	List  deliveriesListCmd  `cmd:"" help:"List the account's deliveries, oldest first, a page at a time."`
	Get   deliveriesGetCmd   `cmd:"" help:"Read a delivery with its attempts."`
	Retry deliveriesRetryCmd `cmd:"" help:"Deliver a finished delivery's event again now (a fresh delivery)."`
}

// filters are the list commands' filters by subscription, endpoint and
// time.
type filters struct {
	Subscription string `placeholder:"ID" help:"Only this subscription's."`
	Endpoint     string `placeholder:"ID" help:"Only this endpoint's."`
	Since        moment `placeholder:"TIME" help:"Created at or after this time (RFC 3339, or a duration before now: 2h)."`
	Until        moment `placeholder:"TIME" help:"Created before this time."`
}

type deliveriesListCmd struct {
	output
	filters
	page
	Status string `placeholder:"STATUS" help:"Only deliveries in this status: pending, retrying, waiting, delivered, dead_lettered, dropped, queued or redelivered."`
}

// Run lists a page of deliveries.
func (c *deliveriesListCmd) Run(e *session, api *hookrelay.Client) error {
	params := &hookrelay.ListDeliveriesParams{Status: some(hookrelay.DeliveryStatus(c.Status)),
		SubscriptionID: some(c.Subscription), EndpointID: some(c.Endpoint), Since: c.Since.ptr(), Until: c.Until.ptr(),
		Limit: some(c.Limit), Cursor: some(c.Cursor)}
	return reply(e, c.output, func(t *table, r *hookrelay.ListDeliveriesResponse) {
		deliveryTable(t, r.JSON200.Deliveries)
		more(t, r.JSON200.NextCursor)
	})(api.ListDeliveriesWithResponse(e.ctx, params))
}

// deliveryTable writes deliveries, one a line.
func deliveryTable(t *table, list []hookrelay.Delivery) {
	t.row("ID", "STATUS", "ATTEMPTS", "EVENT TYPE", "SUBSCRIPTION", "CREATED", "FINISHED", "REASON")
	for _, d := range list {
		t.row(d.ID, d.Status, d.Attempts, d.EventType, d.SubscriptionID, d.CreatedAt, d.FinishedAt, d.FinalReason)
	}
}

type deliveriesGetCmd struct {
	output
	ID string `arg:"" help:"The delivery's id."`
}

// Run reads the delivery and its attempts.
func (c *deliveriesGetCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.GetDeliveryResponse) {
		deliveryDetail(t, r.JSON200)
	})(api.GetDeliveryWithResponse(e.ctx, c.ID))
}

// deliveryDetail writes a delivery, one field a line, then its attempts.
func deliveryDetail(t *table, d *hookrelay.DeliveryDetail) {
	t.row("id", d.ID)
	t.row("status", d.Status)
	t.row("event_type", d.EventType)
	t.row("subscription_id", d.SubscriptionID)
	t.row("endpoint_id", d.EndpointID)
	t.row("policy", d.Policy)
	t.row("attempts", d.Attempts)
	t.row("next_attempt_at", d.NextAttemptAt)
	t.row("final_reason", d.FinalReason)
	t.row("previous_id", d.PreviousID)
	t.row("workflow_id", d.WorkflowID)
	t.row("created_at", d.CreatedAt)
	t.row("finished_at", d.FinishedAt)
	t.gap()
	t.row("ATTEMPT", "STARTED", "DURATION", "STATUS CODE", "SUCCESS", "ERROR")
	for _, a := range d.AttemptList {
		t.row(a.Attempt, a.StartedAt, fmt.Sprintf("%.1fms", a.DurationMs), a.StatusCode, a.Success, a.Error)
	}
}

type deliveriesRetryCmd struct {
	output
	ID string `arg:"" help:"The finished delivery's id."`
}

// Run retries the delivery.
func (c *deliveriesRetryCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.RetryDeliveryResponse) {
		deliveryTable(t, []hookrelay.Delivery{*r.JSON202})
	})(api.RetryDeliveryWithResponse(e.ctx, c.ID))
}

// deadLettersCmd is `hookrelay dead-letters …`.
type deadLettersCmd struct {
	List    deadLettersListCmd `cmd:"" help:"List the account's dead letters, oldest first, a page at a time."`
	Get     deadLetterCmd      `cmd:"" help:"Read a dead letter."`
	Redrive deadLetterRedrive  `cmd:"" help:"Deliver a dead letter's event again (once)."`
}

type deadLettersListCmd struct {
	output
	filters
	page
}

// Run lists a page of dead letters.
func (c *deadLettersListCmd) Run(e *session, api *hookrelay.Client) error {
	params := &hookrelay.ListDeadLettersParams{SubscriptionID: some(c.Subscription), EndpointID: some(c.Endpoint),
		Since: c.Since.ptr(), Until: c.Until.ptr(), Limit: some(c.Limit), Cursor: some(c.Cursor)}
	return reply(e, c.output, func(t *table, r *hookrelay.ListDeadLettersResponse) {
		deadLetterTable(t, r.JSON200.DeadLetters)
		more(t, r.JSON200.NextCursor)
	})(api.ListDeadLettersWithResponse(e.ctx, params))
}

// deadLetterTable writes dead letters, one a line.
func deadLetterTable(t *table, list []hookrelay.DeadLetter) {
	t.row("ID", "DELIVERY", "EVENT", "EVENT TYPE", "ENDPOINT", "REASON", "LAST STATUS", "ATTEMPTS", "CREATED", "REDRIVEN")
	for _, d := range list {
		t.row(d.ID, d.DeliveryID, d.EventID, d.EventType, d.EndpointID, d.Reason, d.LastStatusCode, d.Attempts, d.CreatedAt, d.RedrivenAt)
	}
}

type deadLetterCmd struct {
	output
	ID string `arg:"" help:"The dead letter's id."`
}

// Run reads the dead letter.
func (c *deadLetterCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.GetDeadLetterResponse) {
		deadLetterTable(t, []hookrelay.DeadLetter{*r.JSON200})
	})(api.GetDeadLetterWithResponse(e.ctx, c.ID))
}

type deadLetterRedrive struct {
	output
	ID string `arg:"" help:"The dead letter's id."`
}

// Run redrives the dead letter.
func (c *deadLetterRedrive) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.RedriveDeadLetterResponse) {
		deliveryTable(t, []hookrelay.Delivery{*r.JSON202})
	})(api.RedriveDeadLetterWithResponse(e.ctx, c.ID))
}

// recoverCmd is `hookrelay recover endpoint|subscription ID --since …`.
type recoverCmd struct {
	Endpoint     recoverEndpointCmd     `cmd:"" help:"Redrive an endpoint's dead-lettered and dropped deliveries that ended in the window."`
	Subscription recoverSubscriptionCmd `cmd:"" help:"Redrive a subscription's dead-lettered and dropped deliveries that ended in the window."`
}

// window is what recover redrives: deliveries that ended in [since, until).
type window struct {
	output
	ID    string `arg:"" help:"The endpoint's or subscription's id."`
	Since moment `required:"" placeholder:"TIME" help:"Deliveries that ended at or after this time (RFC 3339, or a duration before now: 2h)."`
	Until moment `placeholder:"TIME" help:"Deliveries that ended before this time; default now."`
	Limit int    `placeholder:"N" help:"At most this many in this call (1-1000, default 1000); more says to call again."`
}

func (w *window) body() hookrelay.Recover {
	return hookrelay.Recover{Since: w.Since.Time, Until: w.Until.ptr(), Limit: some(w.Limit)}
}

// recoveredRows writes what a recovery redrove.
func recoveredRows(t *table, r *hookrelay.Recovered) {
	t.row("redriven", r.Redriven)
	t.row("more", r.More)
	t.row("delivery_ids", r.DeliveryIds)
}

type recoverEndpointCmd struct{ window }

// Run recovers the endpoint's window.
func (c *recoverEndpointCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.RecoverEndpointResponse) {
		recoveredRows(t, r.JSON200)
	})(api.RecoverEndpointWithResponse(e.ctx, c.ID, hookrelay.RecoverEndpointJSONRequestBody(c.body())))
}

type recoverSubscriptionCmd struct{ window }

// Run recovers the subscription's window.
func (c *recoverSubscriptionCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.RecoverSubscriptionResponse) {
		recoveredRows(t, r.JSON200)
	})(api.RecoverSubscriptionWithResponse(e.ctx, c.ID, hookrelay.RecoverSubscriptionJSONRequestBody(c.body())))
}
