package activities

import (
	"context"

	"github.com/hookrelay/hookrelay/policies"
)

// EndpointRules is endpointRules, for the external tests.
func (a *Activities) EndpointRules(ctx context.Context, endpointID string, fallback policies.Health) policies.Health {
	return a.endpointRules(ctx, endpointID, fallback)
}

// AgeRules makes the endpoint's cached rules due for a new read.
func (a *Activities) AgeRules(endpointID string) {
	a.health.mu.Lock()
	defer a.health.mu.Unlock()
	c := a.health.rules[endpointID]
	c.at = c.at.Add(-rulesEvery)
	a.health.rules[endpointID] = c
}
