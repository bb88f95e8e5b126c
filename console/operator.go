package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// routesOperator adds the operator's pages: those the portal has too, and
// the events, dead letters, SAP queue, endpoint rules and recovery.
func (h *Console) routesOperator(g *echo.Group) {
	op := func(fn handler) echo.HandlerFunc { return h.operator(needAccount, fn) }
	h.routesShared(g, op)
	g.POST("/endpoints/:id/health", op(h.setHealth))
	g.POST("/endpoints/:id/recover", op(h.recoverEndpoint))
	g.GET("/events", op(h.eventsPage))
	g.GET("/events/:id", op(h.eventPage))
	g.POST("/events/:id/replay", op(h.replayEvent))
	g.GET("/dead-letters", op(h.deadLettersPage))
	g.POST("/dead-letters/:id/redrive", op(h.redrive))
	g.POST("/dead-letters/recover", op(h.recoverWindow))
	g.GET("/queue", op(h.queuePage))
	g.POST("/queue/mode", op(h.setMode))
	g.POST("/queue/redeliver", op(h.redeliver))
	g.POST("/portal-links", op(h.createPortalLink))
}

// eventsData is the events page.
type eventsData struct {
	Filters filters
	Events  []store.EventSummary
	Next    string
}

// eventsPage finds an event by its id, or lists events newest first by
// type and creation time.
func (h *Console) eventsPage(c echo.Context, v *view) error {
	ctx := c.Request().Context()
	d := eventsData{Filters: readFilters(c, "evt"), Events: []store.EventSummary{}}
	if id := d.Filters.ID; id != "" && d.Filters.Problem == "" {
		_, err := h.opts.Store.GetEvent(ctx, v.Account, id)
		if err == nil {
			return c.Redirect(http.StatusSeeOther, Base+"/events/"+url.PathEscape(id))
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		d.Filters.Problem = fmt.Sprintf("id: no event %q", id)
	}
	f := d.Filters.f
	f.Type, f.EventTypes = d.Filters.EventType, nil
	if d.Filters.Problem == "" {
		var err error
		if d.Events, err = h.opts.Store.ListEvents(ctx, v.Account, f); err != nil {
			return err
		}
	}
	if n := len(d.Events); n > 0 {
		d.Next = d.Filters.next(n, d.Events[n-1].ID)
	}
	return h.render(c, http.StatusOK, "events", v, d)
}

// eventPage shows an event, its data, and its deliveries with attempts.
func (h *Console) eventPage(c echo.Context, v *view) error {
	ev, err := h.opts.Store.GetEvent(c.Request().Context(), v.Account, param(c, "id"))
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "event", v, ev)
}

// replayEvent delivers an event again to the subscriptions matching it now
// (POST /v1/events/{id}/replay).
func (h *Console) replayEvent(c echo.Context, v *view) error {
	id := param(c, "id")
	var out struct {
		Deliveries []store.Delivery `json:"deliveries"`
	}
	err := h.call(c, v, http.MethodPost, "/v1/events/"+url.PathEscape(id)+"/replay", nil, &out)
	return done(c, Base+"/events/"+url.PathEscape(id), err,
		fmt.Sprintf("Replayed: %d new deliveries.", len(out.Deliveries)))
}

// healthFields are the health overrides an endpoint may set
// (policies.HealthOverrides), in the form's order.
var healthFields = []string{"window_seconds", "disable_min_attempts", "disable_failure_rate", "disable_consecutive",
	"freeze_consecutive", "freeze_no_success_for_seconds", "freeze_always_after", "probe_interval_seconds",
	"disable_on_gone"}

// setHealth sets the endpoint's own rules (PUT /v1/endpoints/{id}/health):
// the fields given; an empty one keeps the policy's. The API checks them.
func (h *Console) setHealth(c echo.Context, v *view) error {
	body := map[string]any{}
	for _, name := range healthFields {
		val := strings.TrimSpace(c.FormValue(name))
		switch {
		case val == "":
		case name == "disable_on_gone" && (val == "true" || val == "false"):
			body[name] = val == "true"
		case isNumber(val):
			body[name] = json.RawMessage(val)
		default:
			body[name] = val // not a number: the API says which field
		}
	}
	id := param(c, "id")
	err := h.call(c, v, http.MethodPut, "/v1/endpoints/"+url.PathEscape(id)+"/health", body, nil)
	return done(c, Base+"/endpoints/"+url.PathEscape(id), err, "Rules saved: the endpoint's workflow applies them now.")
}

// isNumber tells whether s is a JSON number.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && json.Valid([]byte(s))
}

// recoverEndpoint redrives the endpoint's deliveries that failed in a
// window (POST /v1/endpoints/{id}/recover).
func (h *Console) recoverEndpoint(c echo.Context, v *view) error {
	id := param(c, "id")
	return h.recover(c, v, id, Base+"/endpoints/"+url.PathEscape(id))
}

// recover redrives endpoint's failed deliveries of the form's window.
func (h *Console) recover(c echo.Context, v *view, endpoint, back string) error {
	since, err := rfc3339(c.FormValue("since"))
	if err != nil {
		return done(c, back, &apiError{Status: http.StatusBadRequest, Message: err.Error(), Field: "since"}, "")
	}
	until, err := rfc3339(c.FormValue("until"))
	if err != nil {
		return done(c, back, &apiError{Status: http.StatusBadRequest, Message: err.Error(), Field: "until"}, "")
	}
	var out struct {
		Redriven int  `json:"redriven"`
		More     bool `json:"more"`
	}
	err = h.call(c, v, http.MethodPost, "/v1/endpoints/"+url.PathEscape(endpoint)+"/recover",
		map[string]string{"since": since, "until": until}, &out)
	msg := fmt.Sprintf("Recovered %d deliveries.", out.Redriven)
	if out.More {
		msg += " More are left: recover again."
	}
	return done(c, back, err, msg)
}

// createPortalLink makes a portal link (POST /v1/portal-sessions) for the
// endpoints and event types chosen, and shows it.
func (h *Console) createPortalLink(c echo.Context, v *view) error {
	form, _ := c.FormParams()
	body := map[string]any{"endpoint_ids": nonEmpty(form["endpoint_ids"]),
		"event_types": subscriptionForm{EventTypes: c.FormValue("event_types")}.types()}
	if m := strings.TrimSpace(c.FormValue("expires_in_minutes")); m != "" {
		n, err := strconv.Atoi(m)
		if err != nil {
			return done(c, Base+"/endpoints", &apiError{Status: http.StatusBadRequest,
				Message: "expires in: a whole number of minutes", Field: "expires_in_minutes"}, "")
		}
		body["expires_in_seconds"] = n * 60
	}
	var out struct {
		URL       string `json:"url"`
		ExpiresAt string `json:"expires_at"`
	}
	if err := h.call(c, v, http.MethodPost, "/v1/portal-sessions", body, &out); err != nil {
		return done(c, Base+"/endpoints", err, "")
	}
	return h.render(c, http.StatusOK, "secret", v, secretData{Title: "Portal link",
		Items: []item{{"Link", out.URL}, {"Expires at", out.ExpiresAt}}, Back: Base + "/endpoints",
		Note: "Hand this link to your customer: it opens their portal until it expires. Anyone holding it can."})
}

// nonEmpty drops the empty strings of vs.
func nonEmpty(vs []string) []string {
	out := []string{}
	for _, s := range vs {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
