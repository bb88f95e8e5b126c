package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/health"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// DefaultPolicy is the policy of a subscription that names none.
const DefaultPolicy = policies.NameWorkfront

// SubscriptionRequest is the body of POST /v1/subscriptions.
type SubscriptionRequest struct {
	URL         string              `json:"url"`
	EventTypes  []string            `json:"event_types"`
	Policy      string              `json:"policy"`
	RetryPolicy *policies.Overrides `json:"retry_policy"`
	// SignatureScheme is store.SchemeHMAC (the default) or
	// store.SchemeEd25519.
	SignatureScheme string `json:"signature_scheme"`
	// Ordered delivers the subscription's events one at a time per
	// ordering key, in publication order (docs/ordering.md).
	Ordered bool `json:"ordered"`
}

// validate checks the request (its URL through checkURL) and resolves its
// policy.
func (r *SubscriptionRequest) validate(checkURL func(field, raw string) error) error {
	if err := checkURL("url", r.URL); err != nil {
		return err
	}
	if len(r.EventTypes) == 0 {
		return invalid("event_types", `event_types must list at least one event type ("*" for all)`)
	}
	for i, t := range r.EventTypes {
		if strings.TrimSpace(t) == "" || len(t) > 200 {
			return invalid("event_types", "event_types[%d] must be a non-empty string of at most 200 characters", i)
		}
	}
	if r.Policy == "" {
		r.Policy = DefaultPolicy
	}
	if err := checkScheme(&r.SignatureScheme); err != nil {
		return err
	}
	var o policies.Overrides
	if r.RetryPolicy != nil {
		o = *r.RetryPolicy
	}
	_, err := policies.Resolve(r.Policy, o)
	return err
}

// validateURL accepts absolute http and https URLs with a host that is not
// an address the egress guard denies (a name is checked at each attempt).
func (s *Server) validateURL(field, raw string) error {
	if raw == "" {
		return invalid(field, "%s is required", field)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid(field, "%s must be an absolute http or https URL, got %q", field, raw)
	}
	if len(raw) > 2048 {
		return invalid(field, "%s is longer than 2048 characters", field)
	}
	if err := s.Egress.CheckURL(raw); err != nil {
		return invalid(field, "%s: hookrelay does not deliver into this network (%v); see docs/security.md#where-deliveries-may-go to allow it", field, err)
	}
	return nil
}

func (s *Server) createSubscription(c echo.Context) error {
	var req SubscriptionRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if err := req.validate(s.validateURL); err != nil {
		return err
	}
	overrides := []byte("{}")
	if req.RetryPolicy != nil {
		overrides, _ = json.Marshal(req.RetryPolicy)
	}
	sub := store.Subscription{
		AccountID: account(c), URL: req.URL, EventTypes: req.EventTypes,
		Policy: req.Policy, RetryPolicy: overrides, Active: true, SignatureScheme: req.SignatureScheme,
		Ordered: req.Ordered,
	}
	ctx := c.Request().Context()
	if err := withEndpointRules(&sub); err != nil {
		return err
	}
	if err := s.Store.CreateSubscription(ctx, &sub); err != nil {
		return err
	}
	view, err := s.subscriptionView(ctx, sub)
	if err != nil {
		return err
	}
	view.SigningSecret = shownSecret(sub) // shown once, at creation
	return c.JSON(http.StatusCreated, view)
}

// withEndpointRules sets the rules an endpoint sub makes takes
// (docs/endpoints.md#endpoint-health-circuit-breaker): a subscription to a URL
// that has no endpoint yet gives the new endpoint its rules, once.
func withEndpointRules(sub *store.Subscription) error {
	rules, err := health.RulesOf(*sub)
	if err != nil {
		return err
	}
	sub.EndpointRules = rules
	return nil
}

// subscriptionView is a subscription with its endpoint's rules in force:
// an endpoint's rules are its first subscription's (docs/policies.md#common-rules),
// so a later subscription to the same URL shows the rules it actually gets.
func (s *Server) subscriptionView(ctx context.Context, sub store.Subscription) (listedSubscription, error) {
	rules, err := s.endpoints().Rules(ctx, sub.EndpointID)
	if err != nil {
		return listedSubscription{}, err
	}
	doc := rules.Doc()
	view := listed(sub)
	view.EndpointRules = &doc
	return view, nil
}

// listedSubscription is a subscription as reads show it: without its
// signing secret, which only its creation, a rotation and an explicit reveal
// (POST /v1/subscriptions/{id}/reveal-secret) show (an Ed25519 private key
// not even they: its public key is in every read).
// The empty outer field shadows the embedded one and is omitted.
type listedSubscription struct {
	store.Subscription
	SigningSecret string `json:"signing_secret,omitempty"`
	// EndpointRules are the circuit-breaker rules of the subscription's
	// endpoint (single reads only).
	EndpointRules *policies.HealthDoc `json:"endpoint_rules,omitempty"`
}

// listed is sub as reads show it: without its signing secret, nor an Event
// Grid validation code (see withoutValidationCode).
func listed(sub store.Subscription) listedSubscription {
	sub.Options = withoutValidationCode(sub.Options)
	return listedSubscription{Subscription: sub}
}

func (s *Server) listSubscriptions(c echo.Context) error {
	subs, err := s.Store.ListSubscriptions(c.Request().Context(), account(c))
	if err != nil {
		return err
	}
	out := make([]listedSubscription, len(subs))
	for i, sub := range subs {
		out[i] = listed(sub)
	}
	return c.JSON(http.StatusOK, map[string]any{"subscriptions": out})
}

func (s *Server) getSubscription(c echo.Context) error {
	sub, err := s.Store.GetSubscription(c.Request().Context(), account(c), c.Param("id"))
	if err != nil {
		return err
	}
	view, err := s.subscriptionView(c.Request().Context(), sub)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, view)
}

// revealSecret shows a subscription's signing secret, on an explicit call of
// its own (a POST, so that no cache or log of GETs keeps it); for an Ed25519
// subscription, its public key.
func (s *Server) revealSecret(c echo.Context) error {
	sub, err := s.Store.RevealSubscription(c.Request().Context(), account(c), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, keyView(sub))
}
