package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// wrapper makes a page of a handler: h.portal, or an operator's page.
type wrapper func(handler) echo.HandlerFunc

// routesShared adds the pages the operator and the portal both have, each
// through wrap: endpoints, deliveries and subscriptions.
func (h *Console) routesShared(g *echo.Group, wrap wrapper) {
	g.GET("/endpoints", wrap(h.endpointsPage))
	g.GET("/endpoints/:id", wrap(h.endpointPage))
	for _, name := range []string{workflows.SignalUnfreeze, workflows.SignalDisable, workflows.SignalEnable} {
		g.POST("/endpoints/:id/"+name, wrap(h.endpointSignal(name)))
	}
	g.GET("/deliveries", wrap(h.deliveriesPage))
	g.GET("/deliveries/:id", wrap(h.deliveryPage))
	g.POST("/deliveries/:id/retry", wrap(h.retryDelivery))
	h.routesSubscriptions(g, wrap)
}

// endpointsPage lists the endpoints in view.
func (h *Console) endpointsPage(c echo.Context, v *view) error {
	eps, err := h.endpoints(c.Request().Context(), v)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "endpoints", v, eps)
}

// endpointJSON is GET /v1/endpoints/{id}: the endpoint with its rules in
// force, its window's counts and its last state changes.
type endpointJSON struct {
	store.Endpoint
	Rules  policies.HealthDoc `json:"rules"`
	Window struct {
		Seconds  float64 `json:"seconds"`
		Attempts int64   `json:"attempts"`
		Failures int64   `json:"failures"`
	} `json:"window"`
	Changes []store.StateChange `json:"changes"`
}

// endpointData is the endpoint page.
type endpointData struct {
	E             endpointJSON
	Summary       store.EndpointSummary
	Waiting       []store.Waiting
	Subscriptions []store.Subscription
	Rules         []ruleRow
}

// ruleRow is one circuit-breaker rule: in force, and the endpoint's own
// override ("" when none).
type ruleRow struct{ Name, InForce, Override string }

// ruleRows lists the rules of healthFields with their values.
func ruleRows(inForce policies.HealthDoc, overrides store.RawJSON) []ruleRow {
	doc, own := map[string]any{}, map[string]any{}
	b, _ := json.Marshal(inForce)
	_ = json.Unmarshal(b, &doc)
	_ = json.Unmarshal(overrides, &own)
	rows := make([]ruleRow, len(healthFields))
	for i, name := range healthFields {
		rows[i] = ruleRow{Name: name, InForce: plain(doc[name])}
		if v, ok := own[name]; ok {
			rows[i].Override = plain(v)
		}
	}
	return rows
}

// plain shows a JSON value: a number without an exponent.
func plain(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// endpointPage shows an endpoint: its state and why, its counters and
// window, its rules, the deliveries waiting for it and its subscriptions.
func (h *Console) endpointPage(c echo.Context, v *view) error {
	ctx := c.Request().Context()
	id := param(c, "id")
	if ok, err := h.endpointIn(ctx, v, id); err != nil || !ok {
		return orNotFound(err)
	}
	var d endpointData
	if err := h.call(c, v, http.MethodGet, "/v1/endpoints/"+url.PathEscape(id), nil, &d.E); err != nil {
		return err
	}
	sums, err := h.opts.Store.ListEndpoints(ctx, v.Account, []string{id})
	if err != nil || len(sums) == 0 {
		return orNotFound(err)
	}
	d.Summary, d.Rules = sums[0], ruleRows(d.E.Rules, d.E.Health)
	if d.Waiting, err = h.opts.Store.WaitingDeliveries(ctx, id, store.Waiting{}, 20); err != nil {
		return err
	}
	subs, err := h.subscriptions(ctx, v)
	for _, s := range subs {
		if s.EndpointID == id {
			d.Subscriptions = append(d.Subscriptions, s)
		}
	}
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "endpoint", v, d)
}

// endpointSignal sends the operator's unfreeze, disable or enable, with
// the form's reason, through POST /v1/endpoints/{id}/{signal}.
func (h *Console) endpointSignal(name string) handler {
	return func(c echo.Context, v *view) error {
		ctx := c.Request().Context()
		id := param(c, "id")
		if ok, err := h.endpointIn(ctx, v, id); err != nil || !ok {
			return orNotFound(err)
		}
		body := workflows.OperatorSignal{Reason: c.FormValue("reason")}
		err := h.call(c, v, http.MethodPost, "/v1/endpoints/"+url.PathEscape(id)+"/"+name, body, nil)
		return done(c, v.Base+"/endpoints/"+url.PathEscape(id), err,
			"Sent "+name+": the endpoint's workflow changes its state now.")
	}
}

// orNotFound is err, or store.ErrNotFound when there is none: what is
// outside the view does not exist.
func orNotFound(err error) error {
	if err != nil {
		return err
	}
	return store.ErrNotFound
}
