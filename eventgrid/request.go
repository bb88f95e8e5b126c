package eventgrid

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Event Grid delivery headers (docs/policies.md#eventgrid).
const (
	HeaderEventType        = "aeg-event-type"
	HeaderSubscriptionName = "aeg-subscription-name"
	HeaderDeliveryCount    = "aeg-delivery-count"
	HeaderDataVersion      = "aeg-data-version"
	HeaderMetadataVersion  = "aeg-metadata-version"
)

// DefaultSource is the source of hookrelay's own CloudEvents (dead-letter
// events: DefaultSource + "/deadletters"), and the topic of an event whose
// account's topic is not known.
const DefaultSource = "/hookrelay"

// ValidationEventType is the event type of the validation handshake.
const ValidationEventType = "Microsoft.EventGrid.SubscriptionValidationEvent"

// Outgoing is one event as a receiver gets it: what Body and SetHeaders need
// of a stored event.
type Outgoing struct {
	ID, Type, Subject, Source string
	// Topic is the account's topic (Topic): the Event Grid event's topic,
	// and its CloudEvents source when it was published without one.
	Topic            string
	DataVersion      string
	DataContentType  string
	Time             time.Time
	Data, Extensions json.RawMessage
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
// batches), except for a CloudEvents subscription of Azure Event Grid, which
// gets its one event alone, as an object (structured mode, docs/policies.md#eventgrid;
// on IoT Edge "the payload is always an array",
// docs/policies.md#eventgrid-edge).
func Body(evs []Outgoing, eg *Settings) ([]byte, error) {
	if eg.structuredCloudEvent() && len(evs) == 1 {
		ev, err := event(evs[0], eg.Schema)
		if err != nil {
			return nil, err
		}
		return json.Marshal(ev)
	}
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

// Size is how many bytes t takes in a request of a subscription in schema:
// the whole serialized event, its CloudEvents attributes and extensions
// included (docs/policies.md#iot-edge-output-batching). In a batch's JSON
// array each event after the first adds a comma too.
func Size(t Outgoing, schema string) (int, error) {
	ev, err := event(t, schema)
	if err != nil {
		return 0, err
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return 0, fmt.Errorf("eventgrid: encode event %s: %w", t.ID, err)
	}
	return len(b), nil
}

// structuredCloudEvent tells whether the subscription gets each event alone
// as application/cloudevents+json: CloudEvents on Azure Event Grid, which
// does not batch.
func (s *Settings) structuredCloudEvent() bool {
	return s.Schema == SchemaCloudEvents && s.Mode != ModeEdge && !s.Batching()
}

// event is t in the given schema.
func event(t Outgoing, schema string) (any, error) {
	data := json.RawMessage(t.Data)
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	topic := t.Topic
	if topic == "" {
		topic = DefaultSource
	}
	source := t.Source
	if source == "" {
		source = topic
	}
	if schema != SchemaCloudEvents {
		return egEvent{
			ID: t.ID, Topic: topic, Subject: t.Subject, EventType: t.Type,
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
	switch {
	case eg.structuredCloudEvent():
		h.Set("Content-Type", ContentTypeCloudEvent+"; charset=utf-8")
	case eg.Schema == SchemaCloudEvents:
		h.Set("Content-Type", ContentTypeCloudEventBatch+"; charset=utf-8")
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

// The CloudEvents webhook abuse-protection handshake (docs/policies.md#eventgrid):
// hookrelay's origin, sent in HeaderRequestOrigin of an OPTIONS
// request; the endpoint allows it in HeaderAllowedOrigin.
const (
	HeaderRequestOrigin = "WebHook-Request-Origin"
	HeaderAllowedOrigin = "WebHook-Allowed-Origin"
	RequestOrigin       = "hookrelay.eventgrid"
)

// ValidationURLLifetime is how long a validation event's validationUrl
// validates the subscription by hand (a GET on it), from the send of that
// event (docs/policies.md#eventgrid).
const ValidationURLLifetime = 10 * time.Minute

// ValidationURL is the validationUrl of a subscription's handshake, on the
// API at base: GET validates the subscription, for endpoints that cannot
// echo the code.
func ValidationURL(base, subscriptionID, code string) string {
	return strings.TrimSuffix(base, "/") + "/eventgrid/validate/" + url.PathEscape(subscriptionID) +
		"?code=" + url.QueryEscape(code)
}

// ValidationBody is the request body of the validation handshake: one
// SubscriptionValidationEvent (id) of the account's topic carrying the code
// to echo and the validationUrl to GET instead.
func ValidationBody(id, topic, code, validationURL string, at time.Time) []byte {
	data, _ := json.Marshal(map[string]string{"validationCode": code, "validationUrl": validationURL})
	body, _ := json.Marshal([]egEvent{{
		ID: id, Topic: topic, EventType: ValidationEventType,
		EventTime: at.UTC(), DataVersion: "1", MetadataVersion: "1", Data: data,
	}})
	return body
}
