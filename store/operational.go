package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hookrelay/hookrelay/policies"
)

// Operational event types: hookrelay publishes them into the account they
// concern, like any event, so that any of its subscriptions can receive
// them (docs/operations.md#operational-events).
const (
	EventEndpointDisabled      = "hookrelay.endpoint.disabled"
	EventEndpointFrozen        = "hookrelay.endpoint.frozen"
	EventEndpointEnabled       = "hookrelay.endpoint.enabled"
	EventDeliveryDeadLettered  = "hookrelay.delivery.dead_lettered"
	EventDeliveryQueued        = "hookrelay.delivery.queued"
	operationalPrefix          = "hookrelay."
	operationalSubjectEndpoint = "/endpoints/"
	operationalSubjectDelivery = "/deliveries/"
)

// IsOperational tells whether an event type is one of hookrelay's own
// (hookrelay.*): the delivery of such an event raises no operational event
// about itself, so that none can loop.
func IsOperational(eventType string) bool { return strings.HasPrefix(eventType, operationalPrefix) }

// EndpointEvent is the data of the hookrelay.endpoint.* events.
type EndpointEvent struct {
	EndpointID          string     `json:"endpoint_id"`
	URL                 string     `json:"url"`
	From                string     `json:"from"`
	To                  string     `json:"to"`
	Reason              string     `json:"reason"`
	ChangedAt           time.Time  `json:"changed_at"`
	Attempts            int64      `json:"attempts"`
	Failures            int64      `json:"failures"`
	ConsecutiveFailures int64      `json:"consecutive_failures"`
	LastSuccessAt       *time.Time `json:"last_success_at,omitempty"`
	LastFailureAt       *time.Time `json:"last_failure_at,omitempty"`
}

// DeliveryEvent is the data of the hookrelay.delivery.* events.
type DeliveryEvent struct {
	DeliveryID     string `json:"delivery_id"`
	EventID        string `json:"event_id"`
	EventType      string `json:"event_type"`
	SubscriptionID string `json:"subscription_id"`
	EndpointID     string `json:"endpoint_id"`
	Policy         string `json:"policy"`
	Status         string `json:"status"`
	Reason         string `json:"reason"`
	Attempts       int    `json:"attempts"`
	LastStatusCode int    `json:"last_status_code,omitempty"`
	DeadLetterID   string `json:"dead_letter_id,omitempty"`
}

// Raised is an operational event published with the change that raised it.
type Raised struct {
	// Type is the event's type; empty when none was raised.
	Type string
	// Deliveries are its deliveries, stored unstarted.
	Deliveries []Delivery
}

// endpointEventTypes are the state changes that raise an event.
var endpointEventTypes = map[string]string{
	policies.StateDisabled: EventEndpointDisabled,
	policies.StateFrozen:   EventEndpointFrozen,
	policies.StateEnabled:  EventEndpointEnabled,
}

// raiseEndpointEvent publishes, in tx, the event of the endpoint's change c
// (made in the same transaction).
func raiseEndpointEvent(ctx context.Context, tx *sqlx.Tx, c ChangeState) (Raised, error) {
	typ, ok := endpointEventTypes[c.To]
	if !ok {
		return Raised{}, nil
	}
	var e Endpoint
	if err := tx.GetContext(ctx, &e, `SELECT `+endpointCols+` FROM endpoints WHERE id = $1`, c.EndpointID); err != nil {
		return Raised{}, notFound(err, "endpoint", c.EndpointID)
	}
	data := EndpointEvent{EndpointID: e.ID, URL: e.URL, From: c.From, To: c.To, Reason: c.Reason, ChangedAt: c.At,
		Attempts: e.Attempts, Failures: e.Failures, ConsecutiveFailures: e.ConsecutiveFailures,
		LastSuccessAt: e.LastSuccessAt, LastFailureAt: e.LastFailureAt}
	id := fmt.Sprintf("%s-%s-%d", e.ID, c.To, c.At.UnixNano())
	return raise(ctx, tx, e.AccountID, id, typ, operationalSubjectEndpoint+e.ID, data)
}

// raiseDeliveryEvent publishes, in tx, the event of a delivery that ended
// dead-lettered, or queued with its subscription deactivated; any other
// ending, and the ending of an operational event's delivery, raises none.
func raiseDeliveryEvent(ctx context.Context, tx *sqlx.Tx, d Delivery, f Finish, deadLetterID string) (Raised, error) {
	typ := ""
	switch {
	case IsOperational(d.EventType):
	case f.Status == policies.StatusDeadLettered:
		typ = EventDeliveryDeadLettered
	case f.Status == policies.StatusQueued && f.DeactivateSubscription:
		typ = EventDeliveryQueued
	}
	if typ == "" {
		return Raised{}, nil
	}
	var external string
	if err := tx.GetContext(ctx, &external, `SELECT external_id FROM events WHERE id = $1`, d.EventID); err != nil {
		return Raised{}, notFound(err, "event", d.EventID)
	}
	data := DeliveryEvent{DeliveryID: d.ID, EventID: external, EventType: d.EventType, SubscriptionID: d.SubscriptionID,
		EndpointID: d.EndpointID, Policy: d.Policy, Status: string(f.Status), Reason: f.Reason, Attempts: d.Attempts,
		LastStatusCode: f.LastStatus, DeadLetterID: deadLetterID}
	return raise(ctx, tx, d.AccountID, d.ID+"-"+string(f.Status), typ, operationalSubjectDelivery+d.ID, data)
}

// raise publishes one operational event in tx; its id makes a second
// publication of the same event a duplicate, which delivers nothing new.
func raise(ctx context.Context, tx *sqlx.Tx, account, externalID, typ, subject string, data any) (Raised, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return Raised{}, fmt.Errorf("store: encode %s: %w", typ, err)
	}
	res, err := publishTx(ctx, tx, Event{AccountID: account, ExternalID: "hookrelay-" + externalID,
		Type: typ, Subject: subject, Data: b})
	if err != nil || res.Duplicate {
		return Raised{}, err
	}
	return Raised{Type: typ, Deliveries: res.Deliveries}, nil
}
