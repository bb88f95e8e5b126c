package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// CloudEvents content types (structured mode).
const (
	ContentTypeCloudEvent      = "application/cloudevents+json"
	ContentTypeCloudEventBatch = "application/cloudevents-batch+json"
)

// EventGridEvent is one event in the Event Grid schema.
type EventGridEvent struct {
	ID              string          `json:"id"`
	Topic           string          `json:"topic"`
	Subject         string          `json:"subject"`
	EventType       string          `json:"eventType"`
	EventTime       string          `json:"eventTime"` // RFC 3339
	Data            json.RawMessage `json:"data"`
	DataVersion     string          `json:"dataVersion"`
	MetadataVersion string          `json:"metadataVersion"`
}

// inbound is one event to publish with its schema fields.
type inbound struct {
	ev     store.Event
	fields store.EventFields
}

// EventGridPublished is the answer to POST /eventgrid/events: per event, its
// id, whether it was published before and how many deliveries it got.
type EventGridPublished struct {
	ID         string `json:"id"`
	Duplicate  bool   `json:"duplicate"`
	Deliveries int    `json:"deliveries"`
}

// publishEventGrid stores every event of the body through store.Publish and
// then starts all their deliveries in one Starter.Start (one wake signal per
// batching subscription).
func (s *Server) publishEventGrid(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	mt, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	var in []inbound
	switch mt {
	case ContentTypeCloudEventBatch:
		in, err = parseCloudEvents(body, true)
	case ContentTypeCloudEvent:
		in, err = parseCloudEvents(body, false)
	case "", echo.MIMEApplicationJSON:
		in, err = parseEventGridEvents(body)
	default:
		return invalid(echo.HeaderContentType, "Content-Type must be %s, %s or %s, got %q",
			echo.MIMEApplicationJSON, ContentTypeCloudEvent, ContentTypeCloudEventBatch, mt)
	}
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	out := make([]EventGridPublished, 0, len(in))
	var ds []store.Delivery
	for _, e := range in {
		e.ev.AccountID, e.ev.Fields = account(c), e.fields
		res, err := s.Store.Publish(ctx, e.ev)
		if err != nil {
			s.startLogged(c, ds)
			return err
		}
		ds = append(ds, res.Deliveries...)
		out = append(out, EventGridPublished{ID: res.Event.ExternalID, Duplicate: res.Duplicate, Deliveries: len(res.Deliveries)})
	}
	s.startLogged(c, ds)
	return c.JSON(http.StatusOK, map[string]any{"events": out})
}

// startLogged starts ds, logging a failure: the sweeper starts what was not.
func (s *Server) startLogged(c echo.Context, ds []store.Delivery) {
	s.startDeliveries(c.Request().Context(), ds)
}

// parseEventGridEvents reads a JSON array of Event Grid events. Each event is
// decoded on its own, so an error names its index ("[1].eventTime").
func parseEventGridEvents(body []byte) ([]inbound, error) {
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] != '[' {
		return nil, invalid("", "send a JSON array of Event Grid events")
	}
	var raws []json.RawMessage
	if err := decodeVendor(body, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, invalid("", "send a JSON array of at least one event")
	}
	out := make([]inbound, 0, len(raws))
	for i, raw := range raws {
		e, err := parseEventGridEvent(raw, "["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// parseEventGridEvent decodes and checks the event at index idx.
func parseEventGridEvent(raw json.RawMessage, idx string) (inbound, error) {
	var e EventGridEvent
	if err := decodeVendor(raw, &e); err != nil {
		var apiErr *Error
		if !errors.As(err, &apiErr) {
			return inbound{}, err
		}
		field := idx
		if apiErr.Field != "" {
			field = idx + "." + apiErr.Field
		}
		return inbound{}, invalid(field, "%s: %s", idx, apiErr.Message)
	}
	p := idx + "."
	at, timeErr := time.Parse(time.RFC3339Nano, e.EventTime)
	switch {
	case e.ID == "" || len(e.ID) > 200:
		return inbound{}, invalid(p+"id", "id is required (at most 200 characters)")
	case e.EventType == "" || len(e.EventType) > 200:
		return inbound{}, invalid(p+"eventType", "eventType is required (at most 200 characters)")
	case e.Subject == "":
		return inbound{}, invalid(p+"subject", "subject is required")
	case e.EventTime == "":
		return inbound{}, invalid(p+"eventTime", "eventTime is required")
	case timeErr != nil:
		return inbound{}, invalid(p+"eventTime", "eventTime must be an RFC 3339 timestamp, got %q", e.EventTime)
	case e.MetadataVersion != "" && e.MetadataVersion != "1":
		return inbound{}, invalid(p+"metadataVersion", `metadataVersion must be "1"`)
	}
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return inbound{
		ev:     store.Event{ExternalID: e.ID, Type: e.EventType, Subject: e.Subject, Data: store.RawJSON(data), OccurredAt: at},
		fields: store.EventFields{DataVersion: e.DataVersion, Source: e.Topic},
	}, nil
}

// ceExtension is the CloudEvents rule for attribute names.
var ceExtension = regexp.MustCompile(`^[a-z0-9]{1,20}$`)

// parseCloudEvents reads one CloudEvents 1.0 event or a batch of them.
func parseCloudEvents(body []byte, batch bool) ([]inbound, error) {
	var raws []map[string]json.RawMessage
	if batch {
		if err := json.Unmarshal(body, &raws); err != nil {
			return nil, decodeError(err)
		}
	} else {
		var one map[string]json.RawMessage
		if err := json.Unmarshal(body, &one); err != nil {
			return nil, decodeError(err)
		}
		raws = append(raws, one)
	}
	if len(raws) == 0 {
		return nil, invalid("", "send at least one event")
	}
	out := make([]inbound, 0, len(raws))
	for i, r := range raws {
		p := ""
		if batch {
			p = "[" + strconv.Itoa(i) + "]."
		}
		e, err := parseCloudEvent(r, p)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// parseCloudEvent maps one CloudEvent; unknown attributes are extensions.
func parseCloudEvent(r map[string]json.RawMessage, p string) (inbound, error) {
	str := func(k string) (string, error) {
		var v string
		if raw, ok := r[k]; ok && json.Unmarshal(raw, &v) != nil {
			return "", invalid(p+k, "%s must be a string", k)
		}
		return v, nil
	}
	attrs := map[string]string{}
	for _, k := range []string{"specversion", "id", "source", "type", "subject", "time", "datacontenttype", "dataschema"} {
		v, err := str(k)
		if err != nil {
			return inbound{}, err
		}
		attrs[k] = v
	}
	if attrs["specversion"] != "1.0" {
		return inbound{}, invalid(p+"specversion", `specversion must be "1.0"`)
	}
	for _, k := range []string{"id", "source", "type"} {
		if attrs[k] == "" || len(attrs[k]) > 200 {
			return inbound{}, invalid(p+k, "%s is required (at most 200 characters)", k)
		}
	}
	if _, ok := r["data_base64"]; ok {
		return inbound{}, invalid(p+"data_base64", "binary data (data_base64) is not supported; send JSON data")
	}
	e := inbound{
		ev: store.Event{ExternalID: attrs["id"], Type: attrs["type"], Subject: attrs["subject"], Data: store.RawJSON("null")},
		fields: store.EventFields{Source: attrs["source"], DataContentType: attrs["datacontenttype"],
			DataVersion: attrs["dataschema"]},
	}
	if d, ok := r["data"]; ok {
		e.ev.Data = store.RawJSON(d)
	}
	if t := attrs["time"]; t != "" {
		at, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return inbound{}, invalid(p+"time", "time must be an RFC 3339 timestamp")
		}
		e.ev.OccurredAt = at
	}
	ext, err := extensions(r, p)
	e.fields.Extensions = ext
	return e, err
}

// extensions collects the extension attributes of a CloudEvent.
func extensions(r map[string]json.RawMessage, p string) (store.RawJSON, error) {
	known := "specversion id source type subject time datacontenttype dataschema data"
	ext := map[string]json.RawMessage{}
	for k, v := range r {
		if strings.Contains(" "+known+" ", " "+k+" ") {
			continue
		}
		if !ceExtension.MatchString(k) {
			return nil, invalid(p+k, "extension attribute names are 1 to 20 lowercase letters or digits")
		}
		ext[k] = v
	}
	b, _ := json.Marshal(ext)
	return b, nil
}
