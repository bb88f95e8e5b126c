package eventgrid

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Event Grid delivery headers (POLICIES.md §eventgrid).
const (
	HeaderEventType        = "aeg-event-type"
	HeaderSubscriptionName = "aeg-subscription-name"
	HeaderDeliveryCount    = "aeg-delivery-count"
	HeaderDataVersion      = "aeg-data-version"
	HeaderMetadataVersion  = "aeg-metadata-version"
)

// DefaultSource is the topic (Event Grid) or source (CloudEvents) of an
// event published without one.
const DefaultSource = "/hookrelay"

// ValidationEventType is the event type of the validation handshake.
const ValidationEventType = "Microsoft.EventGrid.SubscriptionValidationEvent"

// Outgoing is one event as a receiver gets it: what Body and SetHeaders need
// of a stored event.
type Outgoing struct {
	ID, Type, Subject, Source string
	DataVersion               string
	DataContentType           string
	Time                      time.Time
	Data, Extensions          json.RawMessage
}

// egEvent is one event in the Event Grid schema.
type egEvent struct {
	ID              string          `json:"id"`
	Topic           string          `json:"topic"`
	Subject         string          `json:"subject"`
	EventType       string          `json:"eventType"`
	EventTime       time.Time       `json:"eventTime"`
	Data            json.RawMessage `json:"data"`
	DataVersion     string          `json:"dataVersion"`
	MetadataVersion string          `json:"metadataVersion"`
}

// Body is the request body of an Event Grid subscription: a JSON array of the
// events in the subscription's schema (one event unless the subscription
// batches).
func Body(evs []Outgoing, eg *Settings) ([]byte, error) {
	out := make([]any, 0, len(evs))
	for _, t := range evs {
		ev, err := event(t, eg.Schema)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("eventgrid: encode batch: %w", err)
	}
	return b, nil
}

// event is t in the given schema.
func event(t Outgoing, schema string) (any, error) {
	data := json.RawMessage(t.Data)
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	source := t.Source
	if source == "" {
		source = DefaultSource
	}
	if schema != SchemaCloudEvents {
		return egEvent{
			ID: t.ID, Topic: source, Subject: t.Subject, EventType: t.Type,
			EventTime: t.Time.UTC(), Data: data, DataVersion: t.DataVersion, MetadataVersion: "1",
		}, nil
	}
	ce := map[string]any{}
	if len(t.Extensions) > 0 {
		if err := json.Unmarshal(t.Extensions, &ce); err != nil {
			return nil, fmt.Errorf("eventgrid: extensions of event %s: %w", t.ID, err)
		}
	}
	ce["specversion"], ce["id"], ce["source"], ce["type"] = "1.0", t.ID, source, t.Type
	ce["time"], ce["data"] = t.Time.UTC(), data
	ce["datacontenttype"] = "application/json"
	if t.DataContentType != "" {
		ce["datacontenttype"] = t.DataContentType
	}
	if t.Subject != "" {
		ce["subject"] = t.Subject
	}
	if t.DataVersion != "" {
		ce["dataschema"] = t.DataVersion
	}
	return ce, nil
}

// SetHeaders adds Event Grid's delivery headers for t: a Notification, the
// subscription's name ("" for none) and how many deliveries came before this
// one.
func SetHeaders(h http.Header, eg *Settings, t Outgoing, subscriptionName string, attempt int) {
	if eg.Schema == SchemaCloudEvents {
		h.Set("Content-Type", "application/cloudevents-batch+json; charset=utf-8")
	}
	h.Set(HeaderEventType, "Notification")
	if subscriptionName != "" {
		h.Set(HeaderSubscriptionName, subscriptionName)
	}
	h.Set(HeaderDeliveryCount, strconv.Itoa(attempt))
	h.Set(HeaderMetadataVersion, "1")
	if t.DataVersion != "" {
		h.Set(HeaderDataVersion, t.DataVersion)
	}
}

// ValidationBody is the request body of the validation handshake: one
// SubscriptionValidationEvent (id) carrying the code to echo.
func ValidationBody(id, code string, at time.Time) []byte {
	data, _ := json.Marshal(map[string]string{"validationCode": code, "validationUrl": ""})
	body, _ := json.Marshal([]egEvent{{
		ID: id, Topic: DefaultSource, EventType: ValidationEventType,
		EventTime: at.UTC(), DataVersion: "1", MetadataVersion: "1", Data: data,
	}})
	return body
}
