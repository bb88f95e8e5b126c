package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"

	"github.com/labstack/echo/v4"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// subscriptionName is Event Grid's rule for event subscription names.
var subscriptionName = regexp.MustCompile(`^[A-Za-z0-9-]{3,64}$`)

// routesEventGrid adds the Event Grid routes (docs/policies.md#eventgrid,
// docs/policies.md#eventgrid-edge).
func (s *Server) routesEventGrid(e *echo.Echo) {
	e.GET(validatePath, s.validateByHand)
	g := e.Group("/eventgrid", s.requireAccount, checkTopicAccount)
	g.PUT("/subscriptions/:name", s.putEventGridSubscription)
	g.GET("/subscriptions/:name", s.getEventGridSubscription)
	g.DELETE("/subscriptions/:name", s.deleteEventGridSubscription)
	g.GET("/subscriptions", s.listEventGridSubscriptions)
	g.POST("/events", s.publishEventGrid)
}

// EventGridView is how an Event Grid subscription is shown: the vendor's
// shape, with provisioningState and hookrelay's own details.
type EventGridView struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Properties map[string]any `json:"properties"`
}

func (s *Server) putEventGridSubscription(c echo.Context) error {
	ctx, name := c.Request().Context(), c.Param("name")
	if !subscriptionName.MatchString(name) {
		return invalid("name", "name must be 3 to 64 letters, digits or hyphens")
	}
	existing, err := s.Store.GetSubscriptionByName(ctx, account(c), name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	prev := eventgrid.Of(existing.Options)
	mode, err := eventGridMode(c.QueryParam("mode"), prev)
	if err != nil {
		return err
	}
	var req eventgrid.Subscription
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if err := decodeVendor(body, &req); err != nil {
		return err
	}
	sp, err := req.Spec(mode, s.validateURL)
	if err != nil {
		return err
	}
	if b := sp.Settings.DeadLetterBlob; b != nil && !s.Storage.Has(b.Account) {
		return invalid(eventgrid.FieldDeadLetterDestination, "hookrelay has no credentials for storage account %q "+
			"(docs/eventgrid.md#dead-letters-in-azure-blob-storage)", b.Account)
	}
	startHandshake := sp.DecideValidation(prev, existing.URL, store.NewID("code"))
	sub := subscriptionOf(sp, account(c), name)
	if err := withEndpointRules(&sub); err != nil {
		return err
	}
	created, err := s.Store.PutSubscriptionByName(ctx, &sub)
	if err != nil {
		return err
	}
	s.afterPut(ctx, sub, prev, startHandshake)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, s.eventGridView(sub))
}

// eventGridMode is the ?mode= parameter: cloud (the default) or edge; absent
// on a replace, it keeps the subscription's mode.
func eventGridMode(q string, prev *eventgrid.Settings) (string, error) {
	switch q {
	case "":
		if prev != nil && prev.Mode != "" {
			return prev.Mode, nil
		}
		return eventgrid.ModeCloud, nil
	case eventgrid.ModeCloud, eventgrid.ModeEdge:
		return q, nil
	}
	return "", invalid("mode", `mode must be "cloud" or "edge", got %q`, q)
}

func subscriptionOf(sp eventgrid.Spec, account, name string) store.Subscription {
	overrides, _ := json.Marshal(sp.Overrides)
	return store.Subscription{
		AccountID: account, Name: &name, URL: sp.URL, EventTypes: sp.EventTypes,
		Policy: sp.Policy, RetryPolicy: overrides, Active: true, Options: eventgrid.Options(sp.Settings),
	}
}

// afterPut starts the handshake, or the deliveries a subscription that no
// longer waits for one had queued. Failures are logged: the subscription is
// stored, a new PUT tries again.
func (s *Server) afterPut(ctx context.Context, sub store.Subscription, prev *eventgrid.Settings, handshake bool) {
	eg := eventgrid.Of(sub.Options)
	if handshake {
		s.startValidation(ctx, sub.ID, eg.ValidationCode)
		return
	}
	if prev.Awaiting() && !eg.Awaiting() {
		s.startWaiting(ctx, sub.ID)
	}
}

// startWaiting starts the deliveries a subscription stored while it waited
// for its handshake, now that it no longer waits. A failure to read them is
// logged: the sweeper starts them later.
func (s *Server) startWaiting(ctx context.Context, subID string) {
	ds, err := s.Store.UnstartedOf(ctx, subID, 10000)
	if err != nil {
		s.Logger.ErrorContext(ctx, "unstarted_read_failed", "subscription_id", subID, "error", err)
		return
	}
	s.startNow(ctx, ds)
}

// startValidation starts the handshake workflow of (subscription, code). One
// already running is fine; one that ended without settling the state (it was
// terminated, say) is run again: the handshake does nothing once settled.
func (s *Server) startValidation(ctx context.Context, subID, code string) {
	in := workflows.ValidationInput{SubscriptionID: subID, Code: code}
	opts := workflows.ValidationStartOptions(s.queues(), in)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	_, err := s.Temporal.ExecuteWorkflow(ctx, opts, workflows.EventGridValidation, in)
	var running *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &running) {
		s.Logger.ErrorContext(ctx, "start_validation_failed", "subscription_id", subID, "error", err)
	}
}

func (s *Server) getEventGridSubscription(c echo.Context) error {
	sub, err := s.Store.GetSubscriptionByName(c.Request().Context(), account(c), c.Param("name"))
	if err != nil {
		return err
	}
	if eventgrid.Of(sub.Options) == nil {
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "not an Event Grid subscription"}
	}
	return c.JSON(http.StatusOK, s.eventGridView(sub))
}

func (s *Server) deleteEventGridSubscription(c echo.Context) error {
	ctx := c.Request().Context()
	sub, err := s.Store.GetSubscriptionByName(ctx, account(c), c.Param("name"))
	if err != nil {
		return err
	}
	if eventgrid.Of(sub.Options) == nil {
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "not an Event Grid subscription"}
	}
	if err := s.Store.DeleteSubscriptionByName(ctx, account(c), c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusOK)
}

func (s *Server) listEventGridSubscriptions(c echo.Context) error {
	subs, err := s.Store.ListSubscriptions(c.Request().Context(), account(c))
	if err != nil {
		return err
	}
	out := []EventGridView{}
	for _, sub := range subs {
		if eventgrid.Of(sub.Options) != nil {
			out = append(out, s.eventGridView(sub))
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"value": out})
}

// eventGridView shows sub as Event Grid does, plus "hookrelay": the id,
// mode, policy and the effective limits (with the IoT Edge defaults).
func (s *Server) eventGridView(sub store.Subscription) EventGridView {
	eg := eventgrid.Of(sub.Options)
	props := map[string]any{}
	_ = json.Unmarshal(eg.Request, &props)
	props["provisioningState"] = provisioningState(eg.Validation)
	hr := map[string]any{"id": sub.ID, "mode": eg.Mode, "policy": sub.Policy, "validation": eg.Validation}
	if eg.ValidationError != "" {
		hr["validationError"] = eg.ValidationError
	}
	var defaults = s.Starter.Defaults
	if p, err := starter.PolicyWith(sub, defaults); err == nil {
		hr["maxDeliveryAttempts"], hr["eventTimeToLiveInSeconds"] = p.MaxAttempts, int(p.TTL.Seconds())
		hr["deadLettering"] = p.DeadLettering
	}
	props["hookrelay"] = hr
	name := ""
	if sub.Name != nil {
		name = *sub.Name
	}
	return EventGridView{ID: sub.ID, Name: name, Type: "Microsoft.EventGrid/eventSubscriptions", Properties: props}
}

func provisioningState(validation string) string {
	switch validation {
	case eventgrid.ValidationPending:
		return "AwaitingManualAction"
	case eventgrid.ValidationFailed:
		return "Failed"
	}
	return "Succeeded"
}
