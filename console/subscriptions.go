package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// routesSubscriptions adds the subscription pages and changes.
func (h *Console) routesSubscriptions(g *echo.Group, wrap wrapper) {
	g.GET("/subscriptions", wrap(h.subscriptionsPage))
	g.POST("/subscriptions", wrap(h.createSubscription))
	g.GET("/subscriptions/:id", wrap(h.subscriptionPage))
	g.POST("/subscriptions/:id", wrap(h.editSubscription))
	g.POST("/subscriptions/:id/pause", wrap(h.setActive(false)))
	g.POST("/subscriptions/:id/resume", wrap(h.setActive(true)))
	g.POST("/subscriptions/:id/delete", wrap(h.deleteSubscription))
	g.POST("/subscriptions/:id/rotate", wrap(h.secretOf("/secret/rotate", "New signing key")))
	g.POST("/subscriptions/:id/reveal", wrap(h.secretOf("/reveal-secret", "Signing key")))
}

// subscriptionForm is the create and edit form, as given.
type subscriptionForm struct {
	URL, EventTypes, Policy, Scheme string
	Active                          bool
}

// subscriptionsData is the subscriptions page.
type subscriptionsData struct {
	Subscriptions []store.Subscription
	Form          subscriptionForm
	Policies      []string
	Allowed       []string // the event types known, or the portal's
	Error         string
}

// subscriptionsPage lists the subscriptions in view, with the create form.
func (h *Console) subscriptionsPage(c echo.Context, v *view) error {
	return h.showSubscriptions(c, v, http.StatusOK, subscriptionForm{Active: true}, "")
}

func (h *Console) showSubscriptions(c echo.Context, v *view, status int, form subscriptionForm, problem string) error {
	ctx := c.Request().Context()
	subs, err := h.subscriptions(ctx, v)
	if err != nil {
		return err
	}
	allowed, err := h.allowedTypes(ctx, v)
	if err != nil {
		return err
	}
	return h.render(c, status, "subscriptions", v, subscriptionsData{Subscriptions: subs, Form: form,
		Policies: policies.Names(), Allowed: allowed, Error: problem})
}

// readForm reads the subscription form.
func readForm(c echo.Context) subscriptionForm {
	return subscriptionForm{URL: strings.TrimSpace(c.FormValue("url")), EventTypes: c.FormValue("event_types"),
		Policy: c.FormValue("policy"), Scheme: c.FormValue("signature_scheme"), Active: c.FormValue("active") == "true"}
}

// types splits the form's event types at commas and white space.
func (f subscriptionForm) types() []string {
	return strings.FieldsFunc(f.EventTypes, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' })
}

// body is the form as a /v1 subscription body: creation's, or a PATCH's.
func (f subscriptionForm) body(v *view, patch bool) map[string]any {
	b := map[string]any{"url": f.URL, "event_types": f.types()}
	if f.Policy != "" && !v.Portal {
		b["policy"] = f.Policy
	}
	if patch {
		b["active"] = f.Active
	} else if f.Scheme != "" {
		b["signature_scheme"] = f.Scheme
	}
	return b
}

// inScope checks a portal's form against its scope: the URL of one of its
// endpoints, when it lists endpoints, and only its event types. The API
// checks everything else.
func (h *Console) inScope(ctx context.Context, v *view, f subscriptionForm) (string, error) {
	if !v.Portal {
		return "", nil
	}
	for _, t := range f.types() {
		if !v.eventType(t) {
			return fmt.Sprintf("event_types: %q is not one of this portal's event types (%s)", t, strings.Join(v.Types, ", ")), nil
		}
	}
	if len(v.Endpoints) == 0 {
		return "", nil
	}
	eps, err := h.endpoints(ctx, v)
	if err != nil {
		return "", err
	}
	urls := make([]string, len(eps))
	for i, e := range eps {
		urls[i] = e.URL
	}
	if !slices.Contains(urls, f.URL) {
		return "url: this portal delivers to its endpoints' URLs only: " + strings.Join(urls, ", "), nil
	}
	return "", nil
}

// createdJSON is what a creation or a key's rotation or reveal shows once.
type createdJSON struct {
	ID               string `json:"id"`
	SignatureScheme  string `json:"signature_scheme"`
	SigningSecret    string `json:"signing_secret"`
	SigningPublicKey string `json:"signing_public_key"`
}

// createSubscription creates a subscription (POST /v1/subscriptions) and
// shows its signing secret, once; a refusal shows the form again.
func (h *Console) createSubscription(c echo.Context, v *view) error {
	ctx := c.Request().Context()
	form := readForm(c)
	problem, err := h.inScope(ctx, v, form)
	if err != nil {
		return err
	}
	if problem != "" {
		return h.showSubscriptions(c, v, http.StatusBadRequest, form, problem)
	}
	var out createdJSON
	err = h.call(c, v, http.MethodPost, "/v1/subscriptions", form.body(v, false), &out)
	var ae *apiError
	if errors.As(err, &ae) {
		return h.showSubscriptions(c, v, ae.Status, form, ae.Error())
	}
	if err != nil {
		return err
	}
	return h.showSecret(c, v, "Subscription created", out)
}

// secretData is the page that shows a secret once.
type secretData struct {
	Title string
	Items []item
	Back  string
	Note  string
}

// item is one labelled value.
type item struct{ Label, Value string }

// showSecret shows a subscription's new or revealed key, once.
func (h *Console) showSecret(c echo.Context, v *view, title string, k createdJSON) error {
	d := secretData{Title: title, Back: v.Base + "/subscriptions/" + url.PathEscape(k.ID),
		Items: []item{{"Subscription", k.ID}, {"Signature scheme", k.SignatureScheme}}}
	if k.SigningSecret != "" {
		d.Items = append(d.Items, item{"Signing secret", k.SigningSecret})
		d.Note = "Copy the signing secret now: the receiver verifies signatures with it. It is not shown again unless revealed."
	}
	if k.SigningPublicKey != "" {
		d.Items = append(d.Items, item{"Public key", k.SigningPublicKey})
	}
	return h.render(c, http.StatusOK, "secret", v, d)
}

// subscription is the account's subscription id if it is in v's scope.
func (h *Console) subscription(ctx context.Context, v *view, id string) (store.Subscription, error) {
	sub, err := h.opts.Store.GetSubscription(ctx, v.Account, id)
	if err != nil {
		return sub, err
	}
	if !v.subscriptionIn(sub) {
		return sub, store.ErrNotFound
	}
	return sub, nil
}
