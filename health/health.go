// Package health is endpoint health (docs/policies.md#workfront-circuit-breaker)
// as one service for the API and the activities: an endpoint's snapshot and
// effective thresholds, read from PostgreSQL, and the signals that start or
// reach its Endpoint workflow.
package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// Service reads endpoint health and signals endpoint workflows.
type Service struct {
	Store *store.Store
	// Temporal signals the endpoint workflows; nil turns signalling off.
	Temporal client.Client
	// Queues are the task queues endpoint workflows start on; zero means
	// workflows.DefaultQueues.
	Queues workflows.Queues
}

// Snapshot reads the endpoint's state and counters, with the sums of its
// sliding window, and the rules in force for it (Rules).
func (s *Service) Snapshot(ctx context.Context, endpointID string) (workflows.SnapshotResult, error) {
	now := time.Now()
	h, err := s.Rules(ctx, endpointID)
	if err != nil {
		return workflows.SnapshotResult{}, err
	}
	c, err := s.Store.EndpointHealth(ctx, endpointID, h.Window, now)
	if err != nil {
		return workflows.SnapshotResult{}, err
	}
	return workflows.SnapshotResult{Health: h, Snapshot: policies.Snapshot{
		State: c.State, WindowAttempts: c.WindowAttempts, WindowFailures: c.WindowFailures,
		Consecutive: c.Consecutive, LastSuccessAt: c.LastSuccessAt, Now: now,
	}}, nil
}

// Rules are the endpoint's circuit-breaker rules
// (docs/policies.md#endpoint-health-rules-belong-to-the-endpoint): those it
// took when it was made, from the subscription that made it (RulesOf), with
// the endpoint's own overrides (PUT /v1/endpoints/{id}/health) applied. Nothing
// else changes them: not a later subscription, nor a change or the deletion
// of the first one, nor which delivery reported last. An error reading them
// is returned, never taken for "no breaker".
func (s *Service) Rules(ctx context.Context, endpointID string) (policies.Health, error) {
	e, err := s.Store.EndpointByID(ctx, endpointID)
	if err != nil {
		return policies.Health{}, err
	}
	raw := e.Rules
	if len(raw) == 0 || string(raw) == "null" {
		if raw, err = s.takeRules(ctx, endpointID); err != nil {
			return policies.Health{}, err
		}
	}
	var d policies.HealthDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return policies.Health{}, fmt.Errorf("health: endpoint %s: rules: %w", endpointID, err)
	}
	return Effective(d.Health(), e.Health)
}

// RulesOf are the rules an endpoint made by sub (a subscription to a URL
// without one) takes, as stored with it: sub's policy's circuit breaker with
// sub's retry_policy.health.
func RulesOf(sub store.Subscription) (store.RawJSON, error) {
	p, err := starter.PolicyOf(sub)
	if err != nil {
		return nil, err
	}
	return json.Marshal(p.Health.Doc())
}

// takeRules gives an endpoint made before its rules were stored with it its
// rules, once: its oldest subscription's, deleted or not (no breaker when it
// has none, or when that one's policy no longer resolves).
func (s *Service) takeRules(ctx context.Context, endpointID string) (store.RawJSON, error) {
	rules, _ := json.Marshal(policies.NoHealth.Doc())
	sub, err := s.Store.EndpointSubscription(ctx, endpointID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if err == nil {
		if r, err := RulesOf(sub); err == nil {
			rules = r
		}
	}
	return s.Store.TakeEndpointRules(ctx, endpointID, rules)
}

// Effective applies an endpoint's stored overrides to h.
func Effective(h policies.Health, raw store.RawJSON) (policies.Health, error) {
	if len(raw) == 0 || string(raw) == "{}" || string(raw) == "null" {
		return h, nil
	}
	var o policies.HealthOverrides
	if err := json.Unmarshal(raw, &o); err != nil {
		return h, fmt.Errorf("health: endpoint overrides: %w", err)
	}
	return o.Apply(h, "health.")
}

// Signal sends the endpoint's workflow a signal, starting it (with
// thresholds h) if it is not running.
func (s *Service) Signal(ctx context.Context, endpointID, name string, arg any, h policies.Health) error {
	if s.Temporal == nil {
		return fmt.Errorf("health: signal %s to endpoint %s: no Temporal client", name, endpointID)
	}
	start := workflows.EndpointInput{EndpointID: endpointID, Health: h}
	_, err := s.Temporal.SignalWithStartWorkflow(ctx, workflows.EndpointWorkflowID(endpointID), name, arg,
		workflows.EndpointOptions(s.Queues.OrDefault(), endpointID), workflows.EndpointWorkflowType, start)
	if err != nil {
		return fmt.Errorf("health: signal %s to endpoint %s: %w", name, endpointID, err)
	}
	return nil
}
