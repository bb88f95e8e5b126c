package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/where"
)

// deadLettersData is the dead letters page.
type deadLettersData struct {
	Filters     filters
	DeadLetters []store.DeadLetter
	Endpoints   []store.EndpointSummary
	URLs        map[string]string
	Next        string
}

// deadLettersPage lists dead letters newest first, by endpoint,
// subscription and time, with the recovery of a window.
func (h *Console) deadLettersPage(c echo.Context, v *view) error {
	ctx := c.Request().Context()
	d := deadLettersData{Filters: readFilters(c, "dl"), DeadLetters: []store.DeadLetter{}}
	var err error
	if d.Endpoints, err = h.endpoints(ctx, v); err != nil {
		return err
	}
	d.URLs = endpointURLs(d.Endpoints)
	if d.Filters.Problem == "" {
		if d.DeadLetters, err = h.opts.Store.ListDeadLetters(ctx, v.Account, d.Filters.f); err != nil {
			return err
		}
	}
	if n := len(d.DeadLetters); n > 0 {
		d.Next = d.Filters.next(n, d.DeadLetters[n-1].ID)
	}
	return h.render(c, http.StatusOK, "deadletters", v, d)
}

// redrive delivers a dead letter's event again as a new delivery (POST
// /v1/dead-letters/{id}/redrive), and shows it.
func (h *Console) redrive(c echo.Context, v *view) error {
	var fresh store.Delivery
	err := h.call(c, v, http.MethodPost,
		"/v1/dead-letters/"+url.PathEscape(param(c, "id"))+"/redrive", nil, &fresh)
	if err != nil {
		return done(c, Base+"/dead-letters", err, "")
	}
	return done(c, Base+"/deliveries/"+url.PathEscape(fresh.ID), nil, "Dead letter redriven as this new delivery.")
}

// recoverWindow redrives an endpoint's deliveries that failed in the
// form's window.
func (h *Console) recoverWindow(c echo.Context, v *view) error {
	ep := c.FormValue("endpoint")
	if ep == "" {
		return done(c, Base+"/dead-letters", &apiError{Status: http.StatusBadRequest,
			Message: "choose the endpoint to recover", Field: "endpoint"}, "")
	}
	return h.recover(c, v, ep, Base+"/dead-letters")
}

// queueData is the SAP queue page: the account's mode and its queued
// deliveries.
type queueData struct {
	Account store.Account
	Queued  []store.QueuedDelivery
}

// queued is the where clause of the queue: every queued delivery.
const queued = "status='queued'"

// queuePage shows the account's SAP mode and the first page of its queue.
func (h *Console) queuePage(c echo.Context, v *view) error {
	ctx := c.Request().Context()
	a, err := h.opts.Store.GetAccount(ctx, v.Account)
	if err != nil {
		return err
	}
	w, err := where.Parse(queued)
	if err != nil {
		return err
	}
	qs, err := h.opts.Store.ListQueue(ctx, v.Account, w, store.QueueCursor{}, 100)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "queue", v, queueData{Account: a, Queued: qs})
}

// setMode sets the account's SAP failure policy, retry or queue (PATCH
// /accounts/{id}/settings).
func (h *Console) setMode(c echo.Context, v *view) error {
	mode := c.FormValue("mode")
	err := h.call(c, v, http.MethodPatch, "/accounts/"+url.PathEscape(v.Account)+"/settings",
		map[string]string{"mode": mode}, nil)
	return done(c, Base+"/queue", err, "The account's mode is now "+mode+".")
}

// redeliver delivers one queued delivery, or all of them, again (PUT
// /v1/notifications/subscriptions/deliveries?where=…), reactivating their
// subscriptions.
func (h *Console) redeliver(c echo.Context, v *view) error {
	cond := queued
	if id := c.FormValue("id"); id != "" {
		if !store.IsID("dlv", id) {
			return done(c, Base+"/queue", &apiError{Status: http.StatusBadRequest, Message: "not a delivery id", Field: "id"}, "")
		}
		cond = "id='" + strings.ReplaceAll(id, "'", "") + "'"
	}
	var out struct {
		Redelivered int `json:"redelivered"`
	}
	err := h.call(c, v, http.MethodPut,
		"/v1/notifications/subscriptions/deliveries?where="+url.QueryEscape(cond), nil, &out)
	return done(c, Base+"/queue", err, fmt.Sprintf("Redelivered %d queued deliveries.", out.Redelivered))
}
