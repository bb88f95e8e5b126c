package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/hookrelay/hookrelay/egress"
	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// Event Grid's validation handshake and hookrelay's dead-letter event
// (docs/policies.md#eventgrid).
const (
	DeadLetteredEventType = "hookrelay.deadlettered"
	validationTimeout     = 30 * time.Second
)

// ValidateEventGrid sends a new WebHook subscription the validation event
// (aeg-event-type: SubscriptionValidation). When the endpoint answers
// {"validationResponse": code} the subscription becomes active and its
// waiting deliveries are started. Any other answer is an error, retried.
func (a *Activities) ValidateEventGrid(ctx context.Context, in workflows.ValidationInput) (workflows.ValidationResult, error) {
	sub, err := a.Store.SubscriptionByID(ctx, in.SubscriptionID)
	if err != nil {
		return workflows.ValidationResult{}, err
	}
	eg := eventgrid.Of(sub.Options)
	if !eg.Awaiting() || eg.ValidationCode != in.Code || sub.Name == nil {
		return workflows.ValidationResult{}, nil
	}
	shake := a.handshake
	if eg.Schema == eventgrid.SchemaCloudEvents {
		shake = a.abuseProtection
	}
	if err := shake(ctx, sub, in.Code); err != nil {
		return workflows.ValidationResult{}, err
	}
	ok, err := a.Store.SetEventGridValidation(ctx, sub.ID, in.Code, eventgrid.ValidationSucceeded)
	if err != nil || !ok {
		return workflows.ValidationResult{}, err
	}
	a.Logger.InfoContext(ctx, "subscription_validated", "subscription_id", sub.ID)
	return workflows.ValidationResult{Validated: true}, a.startWaiting(ctx, sub.ID)
}

// handshake posts the validation event and checks the echoed code.
func (a *Activities) handshake(ctx context.Context, sub store.Subscription, code string) error {
	ctx, cancel := context.WithTimeout(ctx, validationTimeout)
	defer cancel()
	validationURL, now := "", time.Now()
	if a.PublicURL != "" {
		validationURL = eventgrid.ValidationURL(a.PublicURL, sub.ID, code)
		if !a.LoopbackValidationURL && egress.LoopbackURL(validationURL) {
			return a.refuseValidation(ctx, sub, code)
		}
		// The URL's life counts from this send (ValidationURLWorks).
		if _, err := a.Store.MarkValidationSent(ctx, sub.ID, code, now); err != nil {
			return err
		}
	}
	body := eventgrid.ValidationBody(store.NewID("val"), eventgrid.Topic(a.EventGridTopic, sub.AccountID), code, validationURL, now)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("activities: validation request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(eventgrid.HeaderEventType, "SubscriptionValidation")
	req.Header.Set(eventgrid.HeaderSubscriptionName, *sub.Name)
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("activities: validation of %s: %w", sub.ID, err)
	}
	defer resp.Body.Close()
	var echo struct {
		ValidationResponse string `json:"validationResponse"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 || json.Unmarshal(raw, &echo) != nil || echo.ValidationResponse != code {
		return fmt.Errorf("activities: validation of %s: endpoint answered %d without the validation code", sub.ID, resp.StatusCode)
	}
	return nil
}

// ErrTypeValidationRefused is the type of the non-retryable error of a
// handshake hookrelay refused to make.
const ErrTypeValidationRefused = "ValidationRefused"

// refuseValidation refuses to send a validation event whose validationUrl is
// on a loopback address (outside `hookrelay dev`): the receiver could never
// reach it. It says why in the log and in the subscription's validation
// state, and fails the handshake at once (no retries).
func (a *Activities) refuseValidation(ctx context.Context, sub store.Subscription, code string) error {
	reason := "validationUrl on a loopback address (" + a.PublicURL + "), which the receiver cannot reach: " +
		"set HOOKRELAY_PUBLIC_URL to the address the API is reached at"
	a.Logger.ErrorContext(ctx, "validation_refused", "subscription_id", sub.ID, "public_url", a.PublicURL, "reason", reason)
	if err := a.Store.SetValidationError(ctx, sub.ID, code, reason); err != nil {
		return err
	}
	return temporal.NewNonRetryableApplicationError(reason, ErrTypeValidationRefused, nil)
}

// abuseProtection is the CloudEvents webhook validation handshake
// (docs/policies.md#eventgrid): an OPTIONS request carrying WebHook-Request-Origin,
// which the endpoint allows by answering 2xx with WebHook-Allowed-Origin set
// to that origin or "*".
func (a *Activities) abuseProtection(ctx context.Context, sub store.Subscription, _ string) error {
	ctx, cancel := context.WithTimeout(ctx, validationTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, sub.URL, nil)
	if err != nil {
		return fmt.Errorf("activities: validation request: %w", err)
	}
	req.Header.Set(eventgrid.HeaderRequestOrigin, eventgrid.RequestOrigin)
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("activities: validation of %s: %w", sub.ID, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	allowed := resp.Header.Get(eventgrid.HeaderAllowedOrigin)
	if resp.StatusCode/100 != 2 || (allowed != eventgrid.RequestOrigin && allowed != "*") {
		return fmt.Errorf("activities: validation of %s: endpoint answered %d with %s %q",
			sub.ID, resp.StatusCode, eventgrid.HeaderAllowedOrigin, allowed)
	}
	return nil
}

// FailEventGridValidation records that the handshake never succeeded and, in
// the same transaction, drops the subscription's unstarted deliveries
// ("subscription validation failed"). Events published later wait again
// once a new PUT restarts the handshake; until then the sweeper drops them.
func (a *Activities) FailEventGridValidation(ctx context.Context, in workflows.ValidationInput) (workflows.StatusResult, error) {
	_, err := a.Store.SetEventGridValidation(ctx, in.SubscriptionID, in.Code, eventgrid.ValidationFailed)
	return workflows.StatusResult{}, err
}

// startWaiting starts the deliveries a subscription queued while it waited
// for its handshake (the sweeper starts them when no starter is wired in).
func (a *Activities) startWaiting(ctx context.Context, subID string) error {
	if a.StartDeliveries == nil {
		return nil
	}
	for {
		ds, err := a.Store.UnstartedOf(ctx, subID, 500)
		if err != nil || len(ds) == 0 {
			return err
		}
		if err := a.StartDeliveries(ctx, ds); err != nil {
			return err
		}
		if len(ds) < 500 {
			return nil
		}
	}
}

// deadLetteredData is the data of a hookrelay.deadlettered event.
type deadLetteredData struct {
	DeadLetterID     string `json:"dead_letter_id"`
	DeliveryID       string `json:"delivery_id"`
	EventID          string `json:"event_id"`
	EventType        string `json:"event_type"`
	SubscriptionID   string `json:"subscription_id"`
	SubscriptionName string `json:"subscription_name,omitempty"`
	Reason           string `json:"reason"`
	LastStatusCode   int    `json:"last_status_code"`
	Attempts         int    `json:"attempts"`
}

// afterDeadLetter raises the hookrelay.deadlettered event of a delivery's
// dead letter and starts the writing of its blob, as its subscription asks.
func (a *Activities) afterDeadLetter(ctx context.Context, deliveryID string) error {
	l, err := a.Store.DeadLetterOf(ctx, deliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // finished before with another status
	}
	if err != nil {
		return err
	}
	sub, err := a.Store.SubscriptionByID(ctx, l.SubscriptionID)
	if err != nil {
		return err
	}
	eg := eventgrid.Of(sub.Options)
	if eg == nil {
		return nil
	}
	if err := a.raiseDeadLettered(ctx, l, sub, eg); err != nil {
		return err
	}
	return a.startDeadLetterBlob(ctx, l, eg)
}

// raiseDeadLettered publishes a hookrelay.deadlettered event for a delivery's
// dead letter when its subscription asks for it (deadLetterDestination's
// raiseEvent). Its id derives from the dead letter's, so a retried Finish
// publishes it once. Dead letters of such events raise none (no loops).
func (a *Activities) raiseDeadLettered(ctx context.Context, l store.DeadLetter, sub store.Subscription, eg *eventgrid.Settings) error {
	if !eg.RaiseDeadLetterEvent || store.IsOperational(l.EventType) {
		return nil
	}
	d := deadLetteredData{DeadLetterID: l.ID, DeliveryID: l.DeliveryID, EventID: l.ExternalEventID,
		EventType: l.EventType, SubscriptionID: sub.ID, Reason: l.Reason, LastStatusCode: l.LastStatusCode, Attempts: l.Attempts}
	if sub.Name != nil {
		d.SubscriptionName = *sub.Name
	}
	data, _ := json.Marshal(d)
	return a.publishOwn(ctx, store.Event{AccountID: l.AccountID, ExternalID: "deadletter-" + l.ID,
		Type: DeadLetteredEventType, Subject: "/deadletters/" + l.ID, Data: data,
		Fields: store.EventFields{Source: eventgrid.DefaultSource + "/deadletters", DataVersion: "1"}},
		func() { a.Metrics.Operational(DeadLetteredEventType) })
}

// publishOwn publishes an event hookrelay raises itself, runs counted (if
// set) when it was not published before (its id is derived: once), and
// starts its deliveries (those it cannot start, the sweeper does).
func (a *Activities) publishOwn(ctx context.Context, ev store.Event, counted func()) error {
	res, err := a.Store.Publish(ctx, ev)
	if err != nil {
		return err
	}
	if !res.Duplicate && counted != nil {
		counted()
	}
	if a.StartDeliveries == nil {
		return nil
	}
	return a.StartDeliveries(ctx, res.Deliveries)
}
