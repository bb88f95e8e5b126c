package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// subscriptionData is a subscription's page.
type subscriptionData struct {
	S        store.Subscription
	Form     subscriptionForm
	Policies []string
	// EventGrid is an Event Grid subscription's settings (its validation
	// state), nil for others.
	EventGrid *eventgrid.Settings
	Error     string
}

// subscriptionPage shows a subscription with its edit form and actions.
func (h *Console) subscriptionPage(c echo.Context, v *view) error {
	sub, err := h.subscription(c.Request().Context(), v, param(c, "id"))
	if err != nil {
		return err
	}
	form := subscriptionForm{URL: sub.URL, EventTypes: strings.Join(sub.EventTypes, ", "), Policy: sub.Policy,
		Active: sub.Active}
	return h.showSubscription(c, v, http.StatusOK, sub, form, "")
}

func (h *Console) showSubscription(c echo.Context, v *view, status int, sub store.Subscription,
	form subscriptionForm, problem string) error {
	return h.render(c, status, "subscription", v, subscriptionData{S: sub, Form: form, Policies: policies.Names(),
		EventGrid: eventgrid.Of(sub.Options), Error: problem})
}

// editSubscription changes a subscription (PATCH /v1/subscriptions/{id});
// a refusal shows the form again with what was given.
func (h *Console) editSubscription(c echo.Context, v *view) error {
	ctx := c.Request().Context()
	sub, err := h.subscription(ctx, v, param(c, "id"))
	if err != nil {
		return err
	}
	form := readForm(c)
	problem, err := h.inScope(ctx, v, form)
	if err != nil {
		return err
	}
	if problem == "" {
		err = h.call(c, v, http.MethodPatch, "/v1/subscriptions/"+url.PathEscape(sub.ID), form.body(v, true), nil)
		var ae *apiError
		if errors.As(err, &ae) {
			return h.showSubscription(c, v, ae.Status, sub, form, ae.Error())
		}
		if err != nil {
			return err
		}
		return done(c, v.Base+"/subscriptions/"+url.PathEscape(sub.ID), nil, "Subscription saved.")
	}
	return h.showSubscription(c, v, http.StatusBadRequest, sub, form, problem)
}

// setActive pauses or resumes a subscription: paused, its new events are
// queued instead of pushed.
func (h *Console) setActive(active bool) handler {
	return func(c echo.Context, v *view) error {
		ctx := c.Request().Context()
		sub, err := h.subscription(ctx, v, param(c, "id"))
		if err != nil {
			return err
		}
		err = h.call(c, v, http.MethodPatch, "/v1/subscriptions/"+url.PathEscape(sub.ID),
			map[string]bool{"active": active}, nil)
		msg := "Subscription paused: its new events are queued."
		if active {
			msg = "Subscription resumed: its new events are pushed."
		}
		return done(c, v.Base+"/subscriptions/"+url.PathEscape(sub.ID), err, msg)
	}
}

// deleteSubscription deletes a subscription; deliveries in flight finish.
func (h *Console) deleteSubscription(c echo.Context, v *view) error {
	ctx := c.Request().Context()
	sub, err := h.subscription(ctx, v, param(c, "id"))
	if err != nil {
		return err
	}
	err = h.call(c, v, http.MethodDelete, "/v1/subscriptions/"+url.PathEscape(sub.ID), nil, nil)
	if err != nil {
		return done(c, v.Base+"/subscriptions/"+url.PathEscape(sub.ID), err, "")
	}
	return done(c, v.Base+"/subscriptions", nil, "Subscription "+sub.ID+" deleted.")
}

// secretOf shows a subscription's key through POST
// /v1/subscriptions/{id}<action>: a rotation's new key, or a reveal.
func (h *Console) secretOf(action, title string) handler {
	return func(c echo.Context, v *view) error {
		ctx := c.Request().Context()
		sub, err := h.subscription(ctx, v, param(c, "id"))
		if err != nil {
			return err
		}
		var k createdJSON
		err = h.call(c, v, http.MethodPost, "/v1/subscriptions/"+url.PathEscape(sub.ID)+action, nil, &k)
		if err != nil {
			return done(c, v.Base+"/subscriptions/"+url.PathEscape(sub.ID), err, "")
		}
		return h.showSecret(c, v, title, k)
	}
}
