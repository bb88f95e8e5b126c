package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// EventRequest is the body of POST /v1/events. ID is optional; when given it
// is the idempotency key: publishing it again delivers nothing new.
type EventRequest struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Subject string          `json:"subject"`
	Time    *time.Time      `json:"time"`
	Data    json.RawMessage `json:"data"`
	// OrderingKey groups the event with the others of the same key for the
	// subscriptions that deliver in order (docs/ordering.md).
	OrderingKey string `json:"ordering_key"`
}

// MaxOrderingKey bounds an ordering key, in bytes.
const MaxOrderingKey = 200

// PublishResponse is the answer to POST /v1/events.
type PublishResponse struct {
	ID         string           `json:"id"`
	Duplicate  bool             `json:"duplicate"`
	Deliveries []store.Delivery `json:"deliveries"`
}

func (r *EventRequest) validate() error {
	if strings.TrimSpace(r.Type) == "" {
		return invalid("type", "type is required")
	}
	if len(r.Type) > 200 {
		return invalid("type", "type is longer than 200 characters")
	}
	if len(r.ID) > 200 || strings.IndexFunc(r.ID, unicode.IsControl) >= 0 {
		return invalid("id", "id must be at most 200 printable characters")
	}
	if len(r.OrderingKey) > MaxOrderingKey || strings.IndexFunc(r.OrderingKey, unicode.IsControl) >= 0 {
		return invalid("ordering_key", "ordering_key must be at most %d bytes of printable characters", MaxOrderingKey)
	}
	if len(r.Data) == 0 {
		r.Data = json.RawMessage("null")
	}
	return nil
}

// HeaderIdempotencyKey is an alternative to the body's id: a client that
// retries a publish (after a timeout, a 503) with the same key publishes the
// event once.
const HeaderIdempotencyKey = "Idempotency-Key"

// idempotencyKey takes the header's key as the event's id; given with an id
// in the body, the two must agree.
func (r *EventRequest) idempotencyKey(key string) error {
	switch {
	case key == "":
		return nil
	case !utf8.ValidString(key) || len(key) > 200 || strings.IndexFunc(key, unicode.IsControl) >= 0:
		return invalid(HeaderIdempotencyKey, "%s must be at most 200 printable characters", HeaderIdempotencyKey)
	case r.ID != "" && r.ID != key:
		return invalid(HeaderIdempotencyKey, "%s and the body's id differ; give one", HeaderIdempotencyKey)
	}
	r.ID = key
	return nil
}

func (s *Server) publish(c echo.Context) error {
	var req EventRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if err := req.idempotencyKey(c.Request().Header.Get(HeaderIdempotencyKey)); err != nil {
		return err
	}
	if err := req.validate(); err != nil {
		return err
	}
	ev := store.Event{
		AccountID: account(c), ExternalID: req.ID, Type: req.Type,
		Subject: req.Subject, Data: store.RawJSON(req.Data), OrderingKey: req.OrderingKey,
	}
	if req.Time != nil {
		ev.OccurredAt = *req.Time
	}
	return s.publishEvent(c, ev)
}

// publishEvent stores ev, hands its deliveries to be started (startDeliveries)
// and answers with them.
func (s *Server) publishEvent(c echo.Context, ev store.Event) error {
	ctx := c.Request().Context()
	res, err := s.storeEvent(ctx, ev)
	if err != nil {
		return err
	}
	if !res.Duplicate {
		s.Metrics.Published(1)
	}
	s.startDeliveries(ctx, res.Deliveries)
	status := http.StatusAccepted
	if res.Duplicate {
		status = http.StatusOK
	}
	return c.JSON(status, PublishResponse{ID: res.Event.ExternalID, Duplicate: res.Duplicate, Deliveries: res.Deliveries})
}

func (s *Server) getEvent(c echo.Context) error {
	ev, err := s.Store.GetEvent(c.Request().Context(), account(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ev)
}
