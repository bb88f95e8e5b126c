package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// MaxRecoverPerCall bounds the deliveries one recovery call redrives; the
// answer's more says to call again for the rest.
const MaxRecoverPerCall = 1000

// registerRecovery adds the event list, the replay of an event and the
// recovery of an endpoint's or a subscription's failed deliveries.
func (s *Server) registerRecovery(g *echo.Group) {
	g.GET("/events", s.listEvents)
	g.POST("/events/:id/replay", s.replayEvent)
	g.POST("/endpoints/:id/recover", s.recoverEndpoint)
	g.POST("/subscriptions/:id/recover", s.recoverSubscription)
}

// listEvents lists the account's events, oldest first, without their data,
// filtered by type and creation time, a page at a time.
func (s *Server) listEvents(c echo.Context) error {
	f, err := listFilter(c, "evt")
	if err != nil {
		return err
	}
	if f.Type = c.QueryParam("type"); len(f.Type) > 200 {
		return invalid("type", "type is longer than 200 characters")
	}
	evs, err := s.Store.ListEvents(c.Request().Context(), account(c), f)
	if err != nil {
		return err
	}
	next := nextCursor(len(evs), f.Limit, func() string { return evs[len(evs)-1].ID })
	return c.JSON(http.StatusOK, map[string]any{"events": evs, "next_cursor": next})
}

// ReplayResponse is the answer to POST /v1/events/{id}/replay.
type ReplayResponse struct {
	ID         string           `json:"id"`
	Deliveries []store.Delivery `json:"deliveries"`
}

// replayEvent delivers a stored event again to the subscriptions matching
// its type now, as new deliveries started as a publish starts its own.
func (s *Server) replayEvent(c echo.Context) error {
	ctx := c.Request().Context()
	ds, err := s.Store.Replay(ctx, account(c), c.Param("id"))
	if err != nil {
		return err
	}
	s.startDeliveries(ctx, ds)
	return c.JSON(http.StatusAccepted, ReplayResponse{ID: c.Param("id"), Deliveries: ds})
}

// RecoverRequest is the body of a recovery: the window (RFC 3339) in which
// the deliveries to redrive ended, until open when absent, and at most how
// many to redrive in this call (1-1000, default 1000).
type RecoverRequest struct {
	Since string `json:"since"`
	Until string `json:"until"`
	Limit *int   `json:"limit"`
}

// RecoverResponse is the answer to a recovery: how many deliveries it
// redrove, the fresh deliveries' ids, and whether more are left (call again).
type RecoverResponse struct {
	Redriven    int      `json:"redriven"`
	DeliveryIDs []string `json:"delivery_ids"`
	More        bool     `json:"more"`
}

// filter is r as a store filter, or a 400 naming the bad field.
func (r RecoverRequest) filter() (store.ListFilter, error) {
	f := store.ListFilter{Limit: MaxRecoverPerCall}
	var err error
	if r.Since == "" {
		return f, invalid("since", "since is required: the start of the window (RFC 3339)")
	}
	if f.Since, err = time.Parse(time.RFC3339, r.Since); err != nil {
		return f, invalid("since", "since must be an RFC 3339 time, got %q", r.Since)
	}
	if r.Until != "" {
		if f.Until, err = time.Parse(time.RFC3339, r.Until); err != nil {
			return f, invalid("until", "until must be an RFC 3339 time, got %q", r.Until)
		}
		if !f.Until.After(f.Since) {
			return f, invalid("until", "until must be after since")
		}
	}
	if r.Limit != nil {
		if *r.Limit < 1 || *r.Limit > MaxRecoverPerCall {
			return f, invalid("limit", "limit must be from 1 to %d, got %d", MaxRecoverPerCall, *r.Limit)
		}
		f.Limit = *r.Limit
	}
	return f, nil
}

func (s *Server) recoverEndpoint(c echo.Context) error {
	ep, err := s.Store.GetEndpoint(c.Request().Context(), account(c), c.Param("id"))
	if err != nil {
		return err
	}
	return s.recoverDeliveries(c, store.ListFilter{EndpointID: ep.ID})
}

func (s *Server) recoverSubscription(c echo.Context) error {
	sub, err := s.Store.GetSubscription(c.Request().Context(), account(c), c.Param("id"))
	if err != nil {
		return err
	}
	return s.recoverDeliveries(c, store.ListFilter{SubscriptionID: sub.ID})
}

// recoverDeliveries redrives the dead-lettered and dropped deliveries of
// scope (an endpoint or a subscription) that ended in the body's window and
// were never followed up, and starts them. What was made before a failure is
// started too (the sweeper would start it anyway).
func (s *Server) recoverDeliveries(c echo.Context, scope store.ListFilter) error {
	var req RecoverRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	f, err := req.filter()
	if err != nil {
		return err
	}
	f.EndpointID, f.SubscriptionID = scope.EndpointID, scope.SubscriptionID
	ctx := c.Request().Context()
	rec, err := s.Store.Recover(ctx, account(c), f)
	s.startDeliveries(ctx, rec.Redriven)
	if err != nil {
		return err
	}
	ids := make([]string, len(rec.Redriven))
	for i, d := range rec.Redriven {
		ids[i] = d.ID
	}
	return c.JSON(http.StatusOK, RecoverResponse{Redriven: len(ids), DeliveryIDs: ids, More: rec.More})
}
