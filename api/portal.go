package api

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/console"
	"github.com/hookrelay/hookrelay/store"
)

// Portal links (POST /v1/portal-sessions): how long one lasts by default
// and at most, and how many endpoints and event types its scope may list.
const (
	DefaultPortalTTL = time.Hour
	MaxPortalTTL     = 7 * 24 * time.Hour
	maxPortalScope   = 100
)

// registerConsole mounts the web console (console/) under /console, with
// the API's store and credentials, and adds POST /v1/portal-sessions, which
// signs links to its portal.
func (s *Server) registerConsole(e *echo.Echo, v1 *echo.Group) {
	s.console = console.New(console.Options{Store: s.Store, Logger: s.Logger, Open: s.Auth.Open,
		AdminKey: s.Auth.AdminKey, Settings: s.Console})
	s.console.Mount(e)
	v1.POST("/portal-sessions", s.createPortalSession)
}

// PortalSessionRequest is the body of POST /v1/portal-sessions: the
// portal's scope within the account (empty lists: the whole account) and
// how long its link lasts.
type PortalSessionRequest struct {
	EndpointIDs      []string `json:"endpoint_ids"`
	EventTypes       []string `json:"event_types"`
	ExpiresInSeconds *int     `json:"expires_in_seconds"`
}

// PortalSessionResponse is the answer: the link to hand to the end
// customer, and when it stops opening the portal.
type PortalSessionResponse struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// ttl checks the request's lifetime.
func (r PortalSessionRequest) ttl() (time.Duration, error) {
	if r.ExpiresInSeconds == nil {
		return DefaultPortalTTL, nil
	}
	if n := *r.ExpiresInSeconds; n < 60 || n > int(MaxPortalTTL/time.Second) {
		return 0, invalid("expires_in_seconds", "expires_in_seconds must be from 60 to %d (7 days), got %d",
			int(MaxPortalTTL/time.Second), n)
	}
	return time.Duration(*r.ExpiresInSeconds) * time.Second, nil
}

// checkTypes checks the scope's event types: named ones ("*" is what no
// list means), at most maxPortalScope.
func (r PortalSessionRequest) checkTypes() error {
	if len(r.EventTypes) > maxPortalScope {
		return invalid("event_types", "event_types lists at most %d event types", maxPortalScope)
	}
	for i, t := range r.EventTypes {
		if strings.TrimSpace(t) == "" || len(t) > 200 || t == "*" {
			return invalid("event_types", "event_types[%d] must be an event type of at most 200 characters (omit event_types for all)", i)
		}
	}
	return nil
}

// createPortalSession signs a link to the account's end-customer portal,
// scoped and expiring (console.PortalLink).
func (s *Server) createPortalSession(c echo.Context) error {
	var req PortalSessionRequest
	if c.Request().ContentLength != 0 {
		if err := decode(c, &req); err != nil {
			return err
		}
	}
	ttl, err := req.ttl()
	if err != nil {
		return err
	}
	if err := req.checkTypes(); err != nil {
		return err
	}
	if err := s.checkEndpoints(c, req.EndpointIDs); err != nil {
		return err
	}
	expires := time.Now().Add(ttl).UTC().Truncate(time.Second)
	scope := console.PortalScope{EndpointIDs: req.EndpointIDs, EventTypes: req.EventTypes}
	link, err := s.console.PortalLink(c.Request().Context(), c.Scheme()+"://"+c.Request().Host, account(c), scope, expires)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, PortalSessionResponse{URL: link, ExpiresAt: expires})
}

// checkEndpoints checks that ids are the account's endpoints, each once.
func (s *Server) checkEndpoints(c echo.Context, ids []string) error {
	if len(ids) > maxPortalScope {
		return invalid("endpoint_ids", "endpoint_ids lists at most %d endpoints", maxPortalScope)
	}
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			return invalid("endpoint_ids", "endpoint_ids[%d]: %q is listed twice", i, id)
		}
		notOurs := invalid("endpoint_ids", "endpoint_ids[%d]: %q is not an endpoint of this account", i, id)
		if !store.IsID("ep", id) {
			return notOurs
		}
		_, err := s.Store.GetEndpoint(c.Request().Context(), account(c), id)
		if errors.Is(err, store.ErrNotFound) {
			return notOurs
		}
		if err != nil {
			return err
		}
	}
	return nil
}
