package main

import (
	"bytes"
	"fmt"

	hookrelay "github.com/hookrelay/hookrelay/client"
)

// endpointsCmd is `hookrelay endpoints …`.
type endpointsCmd struct {
	List     endpointsListCmd    `cmd:"" help:"The health of every endpoint the account's subscriptions deliver to."`
	Get      endpointsGetCmd     `cmd:"" help:"An endpoint's state, counters, rules and last state changes."`
	Unfreeze endpointUnfreezeCmd `cmd:"" help:"Unfreeze a frozen endpoint."`
	Enable   endpointEnableCmd   `cmd:"" help:"Enable an endpoint by hand."`
	Disable  endpointDisableCmd  `cmd:"" help:"Disable an endpoint by hand."`
}

// endpointsListCmd lists endpoints. The API has no list of endpoints: this
// reads the subscriptions' endpoints one by one.
type endpointsListCmd struct{ output }

// Run lists the endpoints; --json prints {"endpoints": [each one's answer]}.
func (c *endpointsListCmd) Run(e *session, api *hookrelay.Client) error {
	subs, err := hookrelay.Check(api.ListSubscriptionsWithResponse(e.ctx))
	if err != nil {
		return err
	}
	var list []*hookrelay.GetEndpointResponse
	seen := map[string]bool{}
	for _, s := range subs.JSON200.Subscriptions {
		if seen[s.EndpointID] {
			continue
		}
		seen[s.EndpointID] = true
		resp, err := hookrelay.Check(api.GetEndpointWithResponse(e.ctx, s.EndpointID))
		if err != nil {
			return fmt.Errorf("endpoint %s: %w", s.EndpointID, err)
		}
		list = append(list, resp)
	}
	return c.show(e, endpointList(list), func(t *table) {
		t.row("ID", "STATE", "URL", "ATTEMPTS", "FAILURES", "CONSECUTIVE FAILURES", "LAST SUCCESS")
		for _, r := range list {
			p := r.JSON200
			t.row(p.ID, p.State, p.URL, p.Attempts, p.Failures, p.ConsecutiveFailures, p.LastSuccessAt)
		}
	})
}

// endpointList is the endpoints' answers as one: {"endpoints": [...]}.
type endpointList []*hookrelay.GetEndpointResponse

// StatusCode is 200: every answer was.
func (endpointList) StatusCode() int { return 200 }

// GetBody joins the answers' bodies.
func (l endpointList) GetBody() []byte {
	bodies := make([][]byte, len(l))
	for i, r := range l {
		bodies[i] = bytes.TrimSpace(r.Body)
	}
	return append(append([]byte(`{"endpoints":[`), bytes.Join(bodies, []byte(","))...), "]}\n"...)
}

type endpointsGetCmd struct {
	output
	ID string `arg:"" help:"The endpoint's id (a subscription's endpoint_id)."`
}

// Run reads the endpoint.
func (c *endpointsGetCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.GetEndpointResponse) {
		p := r.JSON200
		t.row("id", p.ID)
		t.row("url", p.URL)
		t.row("state", p.State)
		t.row("attempts", p.Attempts)
		t.row("failures", p.Failures)
		t.row("consecutive_failures", p.ConsecutiveFailures)
		t.row("last_success_at", p.LastSuccessAt)
		t.row("last_failure_at", p.LastFailureAt)
		t.row("window", fmt.Sprintf("%d attempts, %d failures in %gs", p.Window.Attempts, p.Window.Failures, p.Window.Seconds))
		t.row("max_concurrency", p.Limits.MaxConcurrency)
		t.row("rate_limit", rateLimit(p.Limits))
		t.gap()
		t.row("CHANGED AT", "FROM", "TO", "REASON")
		for _, ch := range p.Changes {
			t.row(ch.ChangedAt, ch.From, ch.To, ch.Reason)
		}
	})(api.GetEndpointWithResponse(e.ctx, c.ID))
}

func rateLimit(l hookrelay.Limits) string {
	if l.RateLimit == nil {
		return "-"
	}
	return fmt.Sprintf("%d per %ds", *l.RateLimit, l.RateLimitPeriodSeconds)
}

// endpointSignal is `hookrelay endpoints unfreeze|enable|disable ID`.
type endpointSignal struct {
	output
	ID     string `arg:"" help:"The endpoint's id."`
	Reason string `help:"Why (kept in the endpoint's state changes)."`
}

// signalRows writes the signal sent.
func signalRows(t *table, sent *hookrelay.EndpointSignal) {
	t.row("endpoint_id", sent.EndpointID)
	t.row("signal", sent.Signal)
	t.row("state_before", sent.State)
}

type endpointUnfreezeCmd struct{ endpointSignal }

// Run unfreezes the endpoint.
func (c *endpointUnfreezeCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.UnfreezeEndpointResponse) {
		signalRows(t, r.JSON202)
	})(api.UnfreezeEndpointWithResponse(e.ctx, c.ID, hookrelay.UnfreezeEndpointJSONRequestBody{Reason: some(c.Reason)}))
}

type endpointEnableCmd struct{ endpointSignal }

// Run enables the endpoint.
func (c *endpointEnableCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.EnableEndpointResponse) {
		signalRows(t, r.JSON202)
	})(api.EnableEndpointWithResponse(e.ctx, c.ID, hookrelay.EnableEndpointJSONRequestBody{Reason: some(c.Reason)}))
}

type endpointDisableCmd struct{ endpointSignal }

// Run disables the endpoint.
func (c *endpointDisableCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.DisableEndpointResponse) {
		signalRows(t, r.JSON202)
	})(api.DisableEndpointWithResponse(e.ctx, c.ID, hookrelay.DisableEndpointJSONRequestBody{Reason: some(c.Reason)}))
}
