package activities

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
)

// Event Grid delivery headers (POLICIES.md §eventgrid).
const (
	HeaderEventType        = "aeg-event-type"
	HeaderSubscriptionName = "aeg-subscription-name"
	HeaderDeliveryCount    = "aeg-delivery-count"
	HeaderDataVersion      = "aeg-data-version"
	HeaderMetadataVersion  = "aeg-metadata-version"
)

// defaultSource is the topic (Event Grid) or source (CloudEvents) of an
// event published without one.
const defaultSource = "/hookrelay"

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

// eventGridBody is the request body of an Event Grid subscription: a JSON
// array of the targets' events in the subscription's schema (one event
// unless the subscription batches).
func eventGridBody(ts []store.Target, eg *eventgrid.Settings) ([]byte, error) {
	out := make([]any, 0, len(ts))
	for _, t := range ts {
		ev, err := eventGridEvent(t, eg.Schema)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("activities: encode event grid batch: %w", err)
	}
	return b, nil
}

// eventGridEvent is t's event in the given schema.
func eventGridEvent(t store.Target, schema string) (any, error) {
	data := json.RawMessage(t.Data)
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	source := t.Source
	if source == "" {
		source = defaultSource
	}
	if schema != eventgrid.SchemaCloudEvents {
		return egEvent{
			ID: t.ExternalID, Topic: source, Subject: t.Subject, EventType: t.EventType,
			EventTime: t.OccurredAt.UTC(), Data: data, DataVersion: t.DataVersion, MetadataVersion: "1",
		}, nil
	}
	ce := map[string]any{}
	if len(t.Extensions) > 0 {
		if err := json.Unmarshal(t.Extensions, &ce); err != nil {
			return nil, fmt.Errorf("activities: extensions of event %s: %w", t.ExternalID, err)
		}
	}
	ce["specversion"], ce["id"], ce["source"], ce["type"] = "1.0", t.ExternalID, source, t.EventType
	ce["time"], ce["data"] = t.OccurredAt.UTC(), data
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

// setEventGridHeaders adds Event Grid's delivery headers: a Notification, the
// subscription's name and how many deliveries came before this one.
func setEventGridHeaders(req *http.Request, t store.Target, eg *eventgrid.Settings, attempt int) {
	if eg.Schema == eventgrid.SchemaCloudEvents {
		req.Header.Set("Content-Type", "application/cloudevents-batch+json; charset=utf-8")
	}
	req.Header.Set(HeaderEventType, "Notification")
	if t.SubscriptionName != nil {
		req.Header.Set(HeaderSubscriptionName, *t.SubscriptionName)
	}
	req.Header.Set(HeaderDeliveryCount, strconv.Itoa(attempt))
	req.Header.Set(HeaderMetadataVersion, "1")
	if t.DataVersion != "" {
		req.Header.Set(HeaderDataVersion, t.DataVersion)
	}
}
