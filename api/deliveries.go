package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

func (s *Server) getDelivery(c echo.Context) error {
	ctx := c.Request().Context()
	d, err := s.Store.GetDelivery(ctx, account(c), c.Param("id"))
	if err != nil {
		return err
	}
	as, err := s.Store.Attempts(ctx, d.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, store.DeliveryDetail{Delivery: d, AttemptList: as})
}

// retryDelivery starts a fresh delivery of a finished delivery's event now.
// A queued delivery is refused: it stays pullable as queued, so pushing it
// too would deliver it twice; the SAP redeliver hands it on instead.
func (s *Server) retryDelivery(c echo.Context) error {
	d, err := s.Store.GetDelivery(c.Request().Context(), account(c), c.Param("id"))
	if err != nil {
		return err
	}
	if d.Status == policies.StatusQueued {
		return &Error{Status: http.StatusConflict, Code: "conflict", Message: "delivery " + d.ID +
			" is queued (still pullable); redeliver it with PUT /notifications/subscriptions/deliveries?where=id='" + d.ID + "'"}
	}
	return s.followUp(c, d, false)
}

func (s *Server) followUp(c echo.Context, prev store.Delivery, redrive bool) error {
	ctx := c.Request().Context()
	d, err := s.Store.FollowUp(ctx, prev, redrive)
	if err != nil {
		return err
	}
	s.startNow(ctx, []store.Delivery{d})
	return c.JSON(http.StatusAccepted, d)
}

func (s *Server) listDeadLetters(c echo.Context) error {
	f, err := listFilter(c, "dl")
	if err != nil {
		return err
	}
	ls, err := s.Store.ListDeadLetters(c.Request().Context(), account(c), f)
	if err != nil {
		return err
	}
	next := nextCursor(len(ls), f.Limit, func() string { return ls[len(ls)-1].ID })
	return c.JSON(http.StatusOK, map[string]any{"dead_letters": ls, "next_cursor": next})
}

// listDeliveries lists the account's deliveries, oldest first, filtered by
// status, subscription, endpoint and creation time, a page at a time.
func (s *Server) listDeliveries(c echo.Context) error {
	f, err := listFilter(c, "dlv")
	if err != nil {
		return err
	}
	if f.Status = c.QueryParam("status"); f.Status != "" && !policies.IsStatus(f.Status) {
		return invalid("status", "status %q is not a delivery status", f.Status)
	}
	ds, err := s.Store.ListDeliveries(c.Request().Context(), account(c), f)
	if err != nil {
		return err
	}
	next := nextCursor(len(ds), f.Limit, func() string { return ds[len(ds)-1].ID })
	return c.JSON(http.StatusOK, map[string]any{"deliveries": ds, "next_cursor": next})
}

// nextCursor is the cursor of the page after one of n rows: the last row's
// id when the page is full, else "" (no more).
func nextCursor(n, limit int, lastID func() string) string {
	if n == 0 || n < limit {
		return ""
	}
	return lastID()
}

// listFilter reads a list's query: subscription_id, endpoint_id, since,
// until (RFC 3339), cursor (the id of a row with prefix, listCursor) and
// limit (1-1000, default 100).
func listFilter(c echo.Context, prefix string) (store.ListFilter, error) {
	f := store.ListFilter{
		SubscriptionID: c.QueryParam("subscription_id"),
		EndpointID:     c.QueryParam("endpoint_id"),
	}
	var err error
	if f.After, err = listCursor(c, prefix); err != nil {
		return f, err
	}
	if f.Since, err = queryTime(c, "since"); err != nil {
		return f, err
	}
	if f.Until, err = queryTime(c, "until"); err != nil {
		return f, err
	}
	f.Limit, err = limitParam(c)
	return f, err
}

func queryTime(c echo.Context, name string) (time.Time, error) {
	v := c.QueryParam(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, invalid(name, "%s must be an RFC 3339 time, got %q", name, v)
	}
	return t, nil
}

func (s *Server) getDeadLetter(c echo.Context) error {
	l, err := s.Store.GetDeadLetter(c.Request().Context(), account(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, l)
}

// redrive delivers a dead letter's event again, as a fresh delivery linked to
// the dead one. A dead letter is redriven at most once: again is a 409.
func (s *Server) redrive(c echo.Context) error {
	ctx := c.Request().Context()
	l, err := s.Store.GetDeadLetter(ctx, account(c), c.Param("id"))
	if err != nil {
		return err
	}
	d, err := s.Store.GetDelivery(ctx, account(c), l.DeliveryID)
	if err != nil {
		return err
	}
	return s.followUp(c, d, true)
}

func (s *Server) listPolicies(c echo.Context) error {
	docs := []policies.PolicyDoc{}
	for _, name := range policies.Names() {
		p, _ := policies.Lookup(name)
		docs = append(docs, p.Doc())
	}
	return c.JSON(http.StatusOK, map[string]any{"policies": docs})
}

func (s *Server) getPolicy(c echo.Context) error {
	p, err := policies.Lookup(c.Param("name"))
	if err != nil {
		return &Error{Status: http.StatusNotFound, Code: "not_found", Field: "name", Message: err.Error()}
	}
	return c.JSON(http.StatusOK, p.Doc())
}
