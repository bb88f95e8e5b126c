package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
)

// Target is everything the HTTP activity needs to make one attempt.
type Target struct {
	DeliveryID       string          `db:"delivery_id"`
	Status           policies.Status `db:"status"`
	EventID          string          `db:"event_id"`
	ExternalID       string          `db:"external_id"`
	EventType        string          `db:"type"`
	Subject          string          `db:"subject"`
	Data             RawJSON         `db:"data"`
	OccurredAt       time.Time       `db:"occurred_at"`
	SubscriptionID   string          `db:"subscription_id"`
	AccountID        string          `db:"account_id"`
	SubscriptionName *string         `db:"name"`
	Options          RawJSON         `db:"options"`
	URL              string          `db:"url"`
	EndpointID       string          `db:"endpoint_id"`
	EndpointState    string          `db:"state"`
	// SigningSecret signs the attempt, opened from sealedSecrets by the
	// store; PreviousSigningSecret is the secret a rotation replaced while
	// its overlap lasts (by the database's clock, which set its end), else "".
	SigningSecret         string `db:"-"`
	PreviousSigningSecret string `db:"-"`
	sealedSecrets
	// Event Grid and CloudEvents fields (migration 00004).
	DataVersion     string  `db:"data_version"`
	Source          string  `db:"source"`
	DataContentType string  `db:"data_content_type"`
	Extensions      RawJSON `db:"extensions"`
	// CreatedAt is when the delivery was stored: its publication, redrive
	// or redelivery.
	CreatedAt time.Time `db:"delivery_created_at"`
	// Limits are the endpoint's concurrency cap and rate limit.
	Limits
}

// Outgoing is what Event Grid's request needs of the target's event, whose
// account's topic is topic (eventgrid.Topic).
func (t Target) Outgoing(topic string) eventgrid.Outgoing {
	return eventgrid.Outgoing{
		ID: t.ExternalID, Type: t.EventType, Subject: t.Subject, Source: t.Source, Topic: topic,
		DataVersion: t.DataVersion, DataContentType: t.DataContentType, Time: t.OccurredAt,
		Data: json.RawMessage(t.Data), Extensions: json.RawMessage(t.Extensions),
	}
}

// Target loads what delivery id needs for an attempt. The endpoint is the
// subscription's current one (s.endpoint_id), the one whose URL the attempt
// posts to, so a subscription whose URL changed gates and counts its
// in-flight deliveries against the new endpoint, not the one they were made
// for.
func (s *Store) Target(ctx context.Context, deliveryID string) (Target, error) {
	var t Target
	err := sqlx.GetContext(ctx, s.prep, &t, `SELECT `+targetCols+` `+targetFrom+` WHERE d.id = $1`, deliveryID)
	if err != nil {
		return Target{}, notFound(err, "delivery", deliveryID)
	}
	if err := s.openTarget(&t); err != nil {
		return Target{}, err
	}
	return t, nil
}

// openTarget opens t's signing secrets.
func (s *Store) openTarget(t *Target) (err error) {
	t.SigningSecret, t.PreviousSigningSecret, err = openSecrets(s.keys, t.SubscriptionID, t.sealedSecrets)
	return err
}

// previousInForceSQL says whether the previous signing secret of the
// subscription s still signs: while its overlap lasts (by the database's
// clock, which set its end).
const previousInForceSQL = `COALESCE(s.previous_secret_expires_at > now(), false)`

// targetCols and targetFrom are the columns and joins of a Target.
const (
	targetCols = `d.id AS delivery_id, d.status, e.id AS event_id,
			e.external_id, e.type, e.subject, e.data, e.occurred_at, s.id AS subscription_id,
			s.account_id, s.name, s.options, s.url, s.signing_secret, s.signing_secret_key, p.id AS endpoint_id, p.state,
			CASE WHEN ` + previousInForceSQL + ` THEN s.previous_signing_secret ELSE '' END AS previous_signing_secret,
			CASE WHEN ` + previousInForceSQL + ` THEN s.previous_signing_secret_key ELSE '' END AS previous_signing_secret_key,
			e.data_version, e.source, e.data_content_type, e.extensions, d.created_at AS delivery_created_at,
			` + limitCols
	targetFrom = `FROM deliveries d
		JOIN events e ON e.id = d.event_id
		JOIN subscriptions s ON s.id = d.subscription_id
		JOIN endpoints p ON p.id = s.endpoint_id`
)

// Attempt is one HTTP request made for a delivery.
type Attempt struct {
	DeliveryID string `db:"delivery_id" json:"-"`
	Attempt    int    `db:"attempt" json:"attempt"`
	// Try numbers the executions of one attempt: more than one when a crash
	// cut an execution off (its row ends "unknown") and it ran again.
	Try             int       `db:"try" json:"try,omitempty"`
	ScheduledAt     time.Time `db:"scheduled_at" json:"scheduled_at"`
	StartedAt       time.Time `db:"started_at" json:"started_at"`
	DurationMs      float64   `db:"duration_ms" json:"duration_ms"`
	StatusCode      int       `db:"status_code" json:"status_code"`
	ErrorKind       string    `db:"error_kind" json:"error_kind,omitempty"`
	ErrorMessage    string    `db:"error_message" json:"error,omitempty"`
	ResponseBody    string    `db:"response_body" json:"response_body,omitempty"`
	ResponseHeaders RawJSON   `db:"response_headers" json:"response_headers,omitempty"`
	Success         bool      `db:"success" json:"success"`
	// RetryAfter is when the answer asked to be tried again (Retry-After
	// on a 429 or 503), else zero; not stored: its header is.
	RetryAfter time.Time `db:"-" json:"-"`
}

// Counters are an endpoint's health counters after an attempt was counted.
type Counters struct {
	EndpointID          string     `db:"id" json:"endpoint_id"`
	State               string     `db:"state" json:"state"`
	Attempts            int64      `db:"attempts" json:"attempts"`
	Failures            int64      `db:"failures" json:"failures"`
	ConsecutiveFailures int64      `db:"consecutive_failures" json:"consecutive_failures"`
	LastSuccessAt       *time.Time `db:"last_success_at" json:"last_success_at,omitempty"`
	// CreatedAt is when the endpoint was created: an endpoint that never
	// succeeded counts its time without success from then.
	CreatedAt time.Time `db:"created_at" json:"-"`
}

// Attempts lists a delivery's attempts in order.
func (s *Store) Attempts(ctx context.Context, deliveryID string) ([]Attempt, error) {
	as := []Attempt{}
	err := s.db.SelectContext(ctx, &as, `SELECT delivery_id, attempt, try, scheduled_at, started_at,
		duration_ms, status_code, error_kind, error_message, response_body, response_headers, success
		FROM attempts WHERE delivery_id = $1 ORDER BY attempt, try`, deliveryID)
	if err != nil {
		return nil, fmt.Errorf("store: attempts: %w", err)
	}
	return as, nil
}
