// Package health is endpoint health (docs/policies.md#workfront-circuit-breaker)
// as one service for the API and the activities: an endpoint's snapshot and
// effective thresholds, read from PostgreSQL, and the signals that start or
// reach its Endpoint workflow.
package health

import (
	"context"
	"encoding/json"
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
	base := s.PolicyHealth(ctx, endpointID)
	c, err := s.Store.EndpointHealth(ctx, endpointID, base.Window, now)
	if err != nil {
		return workflows.SnapshotResult{}, err
	}
	h, err := Effective(base, c.Health) // the endpoint's overrides came with its counters
	if err != nil {
		return workflows.SnapshotResult{}, err
	}
	if h.Window != base.Window {
		if c, err = s.Store.EndpointHealth(ctx, endpointID, h.Window, now); err != nil {
			return workflows.SnapshotResult{}, err
		}
	}
	return workflows.SnapshotResult{Health: h, Snapshot: policies.Snapshot{
		State: c.State, WindowAttempts: c.WindowAttempts, WindowFailures: c.WindowFailures,
		Consecutive: c.Consecutive, LastSuccessAt: c.LastSuccessAt, Now: now,
	}}, nil
}

// Rules are the endpoint's circuit-breaker rules
// (docs/policies.md#endpoint-health-rules-belong-to-the-endpoint): its first
// subscription's policy's, with that subscription's retry_policy.health, then
// the endpoint's own overrides (PUT /v1/endpoints/{id}/health). Which delivery
// reported last never matters.
func (s *Service) Rules(ctx context.Context, endpointID string) (policies.Health, error) {
	e, err := s.Store.EndpointByID(ctx, endpointID)
	if err != nil {
		return policies.Health{}, err
	}
	return Effective(s.PolicyHealth(ctx, endpointID), e.Health)
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

// PolicyHealth is the circuit breaker of the endpoint's first subscription's
// policy (with its retry_policy.health), or none when it has none.
func (s *Service) PolicyHealth(ctx context.Context, endpointID string) policies.Health {
	sub, err := s.Store.EndpointSubscription(ctx, endpointID)
	if err != nil {
		return policies.NoHealth
	}
	p, err := starter.PolicyOf(sub)
	if err != nil {
		return policies.NoHealth
	}
	return p.Health
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
