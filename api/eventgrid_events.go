package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
)

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
	case eventgrid.ContentTypeCloudEventBatch:
		in, err = parseCloudEvents(body, true)
	case eventgrid.ContentTypeCloudEvent:
		in, err = parseCloudEvents(body, false)
	case "", echo.MIMEApplicationJSON:
		in, err = parseEventGridEvents(body)
	default:
		return invalid(echo.HeaderContentType, "Content-Type must be %s, %s or %s, got %q",
			echo.MIMEApplicationJSON, eventgrid.ContentTypeCloudEvent, eventgrid.ContentTypeCloudEventBatch, mt)
	}
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	out := make([]EventGridPublished, 0, len(in))
	var ds []store.Delivery
	for _, e := range in {
		e.ev.AccountID, e.ev.Fields = account(c), e.fields
		res, err := s.storeEvent(ctx, e.ev)
		if err != nil {
			s.startDeliveries(c.Request().Context(), ds)
			return err
		}
		if !res.Duplicate {
			s.Metrics.Published(1)
		}
		ds = append(ds, res.Deliveries...)
		out = append(out, EventGridPublished{ID: res.Event.ExternalID, Duplicate: res.Duplicate, Deliveries: len(res.Deliveries)})
	}
	s.startDeliveries(c.Request().Context(), ds)
	return c.JSON(http.StatusOK, map[string]any{"events": out})
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
	var e eventgrid.Event
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
	in, err := eventgrid.CheckEvent(e, idx)
	return inboundOf(in), err
}

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
		e, err := eventgrid.ParseCloudEvent(r, p)
		if err != nil {
			return nil, err
		}
		out = append(out, inboundOf(e))
	}
	return out, nil
}

// inboundOf is an Event Grid event as store.Publish takes it.
func inboundOf(e eventgrid.Inbound) inbound {
	return inbound{
		ev: store.Event{ExternalID: e.ID, Type: e.Type, Subject: e.Subject, Data: store.RawJSON(e.Data), OccurredAt: e.Time},
		fields: store.EventFields{Source: e.Source, DataVersion: e.DataVersion, DataContentType: e.DataContentType,
			Extensions: store.RawJSON(e.Extensions)},
	}
}
