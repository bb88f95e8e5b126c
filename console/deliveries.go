package console

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// deliveriesData is the deliveries page.
type deliveriesData struct {
	Filters    filters
	Deliveries []store.Delivery
	Endpoints  []store.EndpointSummary
	// URLs are the endpoints' URLs by id.
	URLs     map[string]string
	Statuses []policies.Status
	Policies []string
	Next     string
}

// deliveriesPage lists deliveries newest first, filtered by status,
// policy, endpoint, event type and creation time.
func (h *Console) deliveriesPage(c echo.Context, v *view) error {
	ctx := c.Request().Context()
	d := deliveriesData{Filters: readFilters(c, "dlv"), Deliveries: []store.Delivery{},
		Statuses: append(append([]policies.Status{}, policies.InFlightStatuses...), policies.FinalStatuses...),
		Policies: policies.Names()}
	var err error
	if d.Endpoints, err = h.endpoints(ctx, v); err != nil {
		return err
	}
	d.URLs = endpointURLs(d.Endpoints)
	ok, err := h.scoped(ctx, v, &d.Filters.f)
	if err != nil {
		return err
	}
	if ok && d.Filters.Problem == "" {
		if d.Deliveries, err = h.opts.Store.ListDeliveries(ctx, v.Account, d.Filters.f); err != nil {
			return err
		}
	}
	if n := len(d.Deliveries); n > 0 {
		d.Next = d.Filters.next(n, d.Deliveries[n-1].ID)
	}
	return h.render(c, http.StatusOK, "deliveries", v, d)
}

// endpointURLs maps endpoint ids to their URLs.
func endpointURLs(eps []store.EndpointSummary) map[string]string {
	m := make(map[string]string, len(eps))
	for _, e := range eps {
		m[e.ID] = e.URL
	}
	return m
}

// deliveryData is a delivery's page.
type deliveryData struct {
	D        store.Delivery
	Attempts []store.Attempt
	Event    store.Event
	URL      string
	// Workflow links the delivery's workflow in the Temporal Web UI (the
	// operator's pages only, when its URL is configured).
	Workflow string
}

// deliveryPage shows a delivery, its event and every attempt made.
func (h *Console) deliveryPage(c echo.Context, v *view) error {
	ctx := c.Request().Context()
	d, err := h.delivery(c, v)
	if err != nil {
		return err
	}
	out := deliveryData{D: d, Workflow: h.workflowURL(v, d.WorkflowID)}
	if out.Attempts, err = h.opts.Store.Attempts(ctx, d.ID); err != nil {
		return err
	}
	if out.Event, err = h.opts.Store.EventOf(ctx, v.Account, d.EventID); err != nil {
		return err
	}
	ep, err := h.opts.Store.GetEndpoint(ctx, v.Account, d.EndpointID)
	if err != nil {
		return err
	}
	out.URL = ep.URL
	return h.render(c, http.StatusOK, "delivery", v, out)
}

// workflowURL links a workflow in the Temporal Web UI ("" in the portal or
// without a UI configured).
func (h *Console) workflowURL(v *view, workflowID string) string {
	if v.Portal || h.opts.TemporalUI == "" {
		return ""
	}
	ns := h.opts.Namespace
	if ns == "" {
		ns = "default"
	}
	return h.opts.TemporalUI + "/namespaces/" + url.PathEscape(ns) + "/workflows/" + url.PathEscape(workflowID)
}

// retryDelivery delivers a finished delivery's event again, as a new
// delivery (POST /v1/deliveries/{id}/retry), and shows it.
func (h *Console) retryDelivery(c echo.Context, v *view) error {
	d, err := h.delivery(c, v)
	if err != nil {
		return err
	}
	var fresh store.Delivery
	err = h.call(c, v, http.MethodPost, "/v1/deliveries/"+url.PathEscape(d.ID)+"/retry", nil, &fresh)
	back := v.Base + "/deliveries/" + url.PathEscape(d.ID)
	if err == nil {
		back = v.Base + "/deliveries/" + url.PathEscape(fresh.ID)
	}
	return done(c, back, err, "Delivering again as this new delivery.")
}

// delivery is the account's delivery of the path's id, if it is in v's
// scope (store.ErrNotFound otherwise).
func (h *Console) delivery(c echo.Context, v *view) (store.Delivery, error) {
	ctx := c.Request().Context()
	d, err := h.opts.Store.GetDelivery(ctx, v.Account, param(c, "id"))
	if err != nil {
		return d, err
	}
	if ok, err := h.deliveryIn(ctx, v, d); err != nil || !ok {
		return d, orNotFound(err)
	}
	return d, nil
}
