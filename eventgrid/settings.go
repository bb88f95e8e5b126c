// Package eventgrid is hookrelay's Azure Event Grid and Event Grid on IoT Edge
// mode (docs/policies.md#eventgrid, docs/policies.md#eventgrid-edge) in one
// place: the settings a subscription keeps, the vendor's subscription body and
// its validation, the parsing of Event Grid and CloudEvents publishes, and the
// request a receiver gets (body and aeg-* headers). The api, store and
// activities packages call it; its end-to-end tests live beside it.
package eventgrid

import (
	"encoding/json"
	"time"
)

// Event Grid modes of a subscription made through /eventgrid/subscriptions.
const (
	ModeCloud = "cloud"
	ModeEdge  = "edge"
)

// Event delivery schemas (docs/policies.md#eventgrid).
const (
	SchemaEventGrid   = "EventGridSchema"
	SchemaCloudEvents = "CloudEventSchemaV1_0"
)

// Validation states of an Event Grid subscription: a cloud WebHook waits for
// the validation handshake (pending) before its events are started.
const (
	ValidationPending      = "pending"
	ValidationSucceeded    = "succeeded"
	ValidationFailed       = "failed"
	ValidationPreValidated = "prevalidated"
	ValidationNone         = "none" // edge subscriptions: no handshake
)

// Settings is what an Event Grid subscription keeps in its options
// (under "eventgrid") for delivery time: the schema, the batching bounds, the
// validation state, where dead letters are written and the vendor JSON it was
// created with.
type Settings struct {
	Mode           string `json:"mode"`
	Schema         string `json:"schema"`
	Validation     string `json:"validation"`
	ValidationCode string `json:"validation_code,omitempty"`
	// ValidationSentAt is when the latest validation event carrying a
	// validationUrl was sent: the URL works for ValidationURLLifetime from it.
	ValidationSentAt *time.Time `json:"validation_sent_at,omitempty"`
	// ValidationError says why hookrelay refused to send the validation
	// event (a validationUrl on a loopback address in production).
	ValidationError      string           `json:"validation_error,omitempty"`
	MaxEventsPerBatch    int              `json:"max_events_per_batch,omitempty"`
	PreferredBatchSizeKB int              `json:"preferred_batch_size_kb,omitempty"`
	RaiseDeadLetterEvent bool             `json:"raise_dead_letter_event,omitempty"`
	DeadLetterBlob       *BlobDestination `json:"dead_letter_blob,omitempty"`
	Request              json.RawMessage  `json:"request,omitempty"`
}

// eventGridOptions is the options document of an Event Grid subscription.
type eventGridOptions struct {
	EventGrid *Settings `json:"eventgrid"`
}

// Of returns the Event Grid settings in a subscription's options, or
// nil when it is not an Event Grid subscription.
func Of(options []byte) *Settings {
	var o eventGridOptions
	if len(options) == 0 || json.Unmarshal(options, &o) != nil {
		return nil
	}
	return o.EventGrid
}

// Options encodes s as a subscription's options.
func Options(s Settings) []byte {
	b, _ := json.Marshal(eventGridOptions{EventGrid: &s})
	return b
}

// ValidationURLWorks reports whether a GET on the subscription's
// validationUrl validates it at now (docs/policies.md#eventgrid): only while
// its handshake is pending (not after it failed), and for
// ValidationURLLifetime from the send of the validation event that carried
// the URL.
func (s *Settings) ValidationURLWorks(now time.Time) bool {
	return s != nil && s.Validation == ValidationPending && s.ValidationSentAt != nil &&
		!now.After(s.ValidationSentAt.Add(ValidationURLLifetime))
}

// Awaiting reports whether the subscription still waits for its handshake.
func (s *Settings) Awaiting() bool {
	return s != nil && (s.Validation == ValidationPending || s.Validation == ValidationFailed)
}
