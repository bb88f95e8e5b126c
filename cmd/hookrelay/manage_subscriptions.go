package main

import (
	"encoding/json"
	"fmt"
	"time"

	hookrelay "github.com/hookrelay/hookrelay/client"
)

// subscriptionsCmd is `hookrelay subscriptions …`.
type subscriptionsCmd struct {
	List         subsListCmd   `cmd:"" help:"List the account's subscriptions."`
	Get          subsGetCmd    `cmd:"" help:"Read a subscription."`
	Create       subsCreateCmd `cmd:"" help:"Subscribe a URL to event types (prints the signing secret, shown only here)."`
	Update       subsUpdateCmd `cmd:"" help:"Change a subscription: only the flags given."`
	Delete       subsDeleteCmd `cmd:"" help:"Delete a subscription."`
	RotateSecret subsRotateCmd `cmd:"" help:"Make a new signing secret; the replaced one keeps signing for --overlap."`
	RevealSecret subsRevealCmd `cmd:"" help:"Show a subscription's signing secret (or Ed25519 public key)."`
}

type subsListCmd struct{ output }

// Run lists the subscriptions.
func (c *subsListCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.ListSubscriptionsResponse) {
		t.row("ID", "URL", "EVENT TYPES", "POLICY", "SCHEME", "ACTIVE", "ENDPOINT")
		for _, s := range r.JSON200.Subscriptions {
			t.row(s.ID, s.URL, s.EventTypes, s.Policy, s.SignatureScheme, s.Active, s.EndpointID)
		}
	})(api.ListSubscriptionsWithResponse(e.ctx))
}

// subscriptionRows writes a subscription, one field a line.
func subscriptionRows(t *table, s *hookrelay.Subscription) {
	t.row("id", s.ID)
	t.row("url", s.URL)
	t.row("event_types", s.EventTypes)
	t.row("policy", s.Policy)
	if rp, err := json.Marshal(s.RetryPolicy); err == nil && string(rp) != "{}" {
		t.row("retry_policy", string(rp))
	}
	t.row("active", s.Active)
	t.row("endpoint_id", s.EndpointID)
	t.row("signature_scheme", s.SignatureScheme)
	if s.SigningSecret != nil {
		t.row("signing_secret", s.SigningSecret)
	}
	if s.SigningPublicKey != nil {
		t.row("signing_public_key", s.SigningPublicKey)
	}
	if s.PreviousSecretExpiresAt != nil {
		t.row("previous_secret_expires_at", s.PreviousSecretExpiresAt)
	}
	t.row("created_at", s.CreatedAt)
	t.row("updated_at", s.UpdatedAt)
}

type subsGetCmd struct {
	output
	ID string `arg:"" help:"The subscription's id."`
}

// Run reads the subscription.
func (c *subsGetCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.GetSubscriptionResponse) {
		subscriptionRows(t, r.JSON200)
	})(api.GetSubscriptionWithResponse(e.ctx, c.ID))
}

// retryPolicy reads --retry-policy's JSON object.
func retryPolicy(text string) (*hookrelay.RetryPolicy, error) {
	if text == "" {
		return nil, nil
	}
	var rp hookrelay.RetryPolicy
	if err := json.Unmarshal([]byte(text), &rp); err != nil {
		return nil, fmt.Errorf("--retry-policy: %w", err)
	}
	return &rp, nil
}

type subsCreateCmd struct {
	output
	URL         string   `required:"" placeholder:"URL" help:"Where to deliver."`
	EventType   []string `required:"" name:"event-type" short:"t" placeholder:"TYPE" help:"An event type to deliver (repeat it, or comma-separate); * for all."`
	Policy      string   `placeholder:"NAME" help:"A delivery policy (hookrelay policies); default workfront."`
	Scheme      string   `placeholder:"SCHEME" help:"Signature scheme: hmac-sha256 (default) or ed25519."`
	RetryPolicy string   `placeholder:"JSON" help:"Overrides of the policy's values, as a JSON object such as {\"max_attempts\": 10}."`
}

// Run creates the subscription.
func (c *subsCreateCmd) Run(e *session, api *hookrelay.Client) error {
	rp, err := retryPolicy(c.RetryPolicy)
	if err != nil {
		return err
	}
	req := hookrelay.SubscriptionRequest{URL: c.URL, EventTypes: c.EventType, Policy: some(c.Policy),
		RetryPolicy: rp, SignatureScheme: some(hookrelay.SignatureScheme(c.Scheme))}
	return reply(e, c.output, func(t *table, r *hookrelay.CreateSubscriptionResponse) {
		subscriptionRows(t, r.JSON201)
	})(api.CreateSubscriptionWithResponse(e.ctx, req))
}

type subsUpdateCmd struct {
	output
	ID          string   `arg:"" help:"The subscription's id."`
	URL         string   `placeholder:"URL" help:"A new URL."`
	EventType   []string `name:"event-type" short:"t" placeholder:"TYPE" help:"New event types (they replace the old ones)."`
	Policy      string   `placeholder:"NAME" help:"A new delivery policy."`
	RetryPolicy string   `placeholder:"JSON" help:"New overrides of the policy's values (replaced whole)."`
	Pause       bool     `xor:"active" help:"Pause the subscription: its new events are queued."`
	Resume      bool     `xor:"active" help:"Resume a paused subscription."`
}

// Run patches the subscription with the flags given.
func (c *subsUpdateCmd) Run(e *session, api *hookrelay.Client) error {
	rp, err := retryPolicy(c.RetryPolicy)
	if err != nil {
		return err
	}
	patch := hookrelay.SubscriptionPatch{URL: some(c.URL), Policy: some(c.Policy), RetryPolicy: rp}
	if len(c.EventType) > 0 {
		patch.EventTypes = &c.EventType
	}
	if c.Pause || c.Resume {
		patch.Active = &c.Resume
	}
	return reply(e, c.output, func(t *table, r *hookrelay.PatchSubscriptionResponse) {
		subscriptionRows(t, r.JSON200)
	})(api.PatchSubscriptionWithResponse(e.ctx, c.ID, patch))
}

type subsDeleteCmd struct {
	output
	ID string `arg:"" help:"The subscription's id."`
}

// Run deletes the subscription.
func (c *subsDeleteCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, _ *hookrelay.DeleteSubscriptionResponse) {
		t.row("deleted", c.ID)
	})(api.DeleteSubscriptionWithResponse(e.ctx, c.ID))
}

// keyRows writes a subscription's key.
func keyRows(t *table, k *hookrelay.SubscriptionKey) {
	t.row("id", k.ID)
	t.row("signature_scheme", k.SignatureScheme)
	if k.SigningSecret != nil {
		t.row("signing_secret", k.SigningSecret)
	}
	if k.SigningPublicKey != nil {
		t.row("signing_public_key", k.SigningPublicKey)
	}
	if k.PreviousSecretExpiresAt != nil {
		t.row("previous_secret_expires_at", k.PreviousSecretExpiresAt)
	}
}

type subsRotateCmd struct {
	output
	ID      string        `arg:"" help:"The subscription's id."`
	Overlap time.Duration `default:"24h" help:"How long the replaced secret keeps signing next to the new one (default ${default}, at most 168h)."`
	Scheme  string        `placeholder:"SCHEME" help:"The new key's scheme; default the subscription's."`
}

// Run rotates the subscription's secret.
func (c *subsRotateCmd) Run(e *session, api *hookrelay.Client) error {
	overlap := int(c.Overlap / time.Second)
	req := hookrelay.RotateRequest{OverlapSeconds: &overlap, SignatureScheme: some(hookrelay.SignatureScheme(c.Scheme))}
	return reply(e, c.output, func(t *table, r *hookrelay.RotateSecretResponse) {
		keyRows(t, r.JSON200)
	})(api.RotateSecretWithResponse(e.ctx, c.ID, req))
}

type subsRevealCmd struct {
	output
	ID string `arg:"" help:"The subscription's id."`
}

// Run shows the subscription's secret.
func (c *subsRevealCmd) Run(e *session, api *hookrelay.Client) error {
	return reply(e, c.output, func(t *table, r *hookrelay.RevealSecretResponse) {
		keyRows(t, r.JSON200)
	})(api.RevealSecretWithResponse(e.ctx, c.ID))
}
