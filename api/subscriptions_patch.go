package api

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// SubscriptionPatch is the body of PATCH /v1/subscriptions/{id}: every field
// optional, an absent one kept. active false pauses the subscription (its
// new events are queued, as SAP's deactivated subscriptions are); true
// resumes pushing later events.
type SubscriptionPatch struct {
	URL         *string             `json:"url"`
	EventTypes  *[]string           `json:"event_types"`
	Policy      *string             `json:"policy"`
	RetryPolicy *policies.Overrides `json:"retry_policy"`
	Active      *bool               `json:"active"`
	// SignatureScheme may only repeat the subscription's scheme: a new one
	// needs a new key, which POST /v1/subscriptions/{id}/secret/rotate makes
	// and shows.
	SignatureScheme *string `json:"signature_scheme"`
	// Ordered switches ordered delivery on or off for the events published
	// after the change; those published before keep how they were made.
	Ordered *bool `json:"ordered"`
}

// apply merges p into sub and checks the result as a creation is checked.
func (p SubscriptionPatch) apply(sub *store.Subscription, checkURL func(field, raw string) error) error {
	req := SubscriptionRequest{URL: sub.URL, EventTypes: sub.EventTypes, Policy: sub.Policy,
		SignatureScheme: sub.SignatureScheme}
	if err := p.sameScheme(sub); err != nil {
		return err
	}
	if len(sub.RetryPolicy) > 0 && string(sub.RetryPolicy) != "{}" {
		var o policies.Overrides
		if err := json.Unmarshal(sub.RetryPolicy, &o); err == nil {
			req.RetryPolicy = &o
		}
	}
	if p.URL != nil {
		req.URL = *p.URL
	}
	if p.EventTypes != nil {
		req.EventTypes = *p.EventTypes
	}
	if p.Policy != nil {
		req.Policy = *p.Policy
	}
	if p.RetryPolicy != nil {
		req.RetryPolicy = p.RetryPolicy
	}
	if err := req.validate(checkURL); err != nil {
		return err
	}
	sub.URL, sub.EventTypes, sub.Policy = req.URL, req.EventTypes, req.Policy
	sub.RetryPolicy = store.RawJSON("{}")
	if req.RetryPolicy != nil {
		sub.RetryPolicy, _ = json.Marshal(req.RetryPolicy)
	}
	if p.Active != nil {
		sub.Active = *p.Active
	}
	if p.Ordered != nil {
		sub.Ordered = *p.Ordered
	}
	return nil
}

// sameScheme refuses a signature_scheme other than sub's: a new scheme needs
// a new key, which a rotation makes and shows.
func (p SubscriptionPatch) sameScheme(sub *store.Subscription) error {
	if p.SignatureScheme == nil || *p.SignatureScheme == sub.SignatureScheme {
		return nil
	}
	scheme := *p.SignatureScheme
	if err := checkScheme(&scheme); err != nil {
		return err
	}
	return invalid("signature_scheme", `signature_scheme changes with a new key: POST /v1/subscriptions/%s/secret/rotate with {"signature_scheme": %q}`, sub.ID, scheme)
}

// patchSubscription changes a /v1 subscription; Event Grid's are changed
// through their own PUT (their vendor shape holds more).
func (s *Server) patchSubscription(c echo.Context) error {
	ctx := c.Request().Context()
	var p SubscriptionPatch
	if err := decode(c, &p); err != nil {
		return err
	}
	sub, err := s.Store.GetSubscription(ctx, account(c), c.Param("id"))
	if err != nil {
		return err
	}
	if sub.Name != nil {
		return &Error{Status: http.StatusConflict, Code: "conflict",
			Message: "an Event Grid subscription changes through PUT /eventgrid/subscriptions/" + *sub.Name}
	}
	if err := p.apply(&sub, s.validateURL); err != nil {
		return err
	}
	if err := withEndpointRules(&sub); err != nil {
		return err
	}
	if err := s.Store.UpdateSubscription(ctx, &sub); err != nil {
		return err
	}
	view, err := s.subscriptionView(ctx, sub)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, view)
}

// deleteSubscription deletes a subscription: no new deliveries are made for
// it; those in flight finish under its policy.
func (s *Server) deleteSubscription(c echo.Context) error {
	if err := s.Store.DeleteSubscription(c.Request().Context(), account(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
