package activities

import (
	"context"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/workflows"
)

// NextInSequence finds the next delivery a Sequencer starts: the one still
// under way with the lowest number after in.After in its sequence, and
// whether any workflow took it up yet (NextResult.Fresh).
func (a *Activities) NextInSequence(ctx context.Context, in workflows.NextInput) (workflows.NextResult, error) {
	d, ok, err := a.Store.NextInSequence(ctx, in.SubscriptionID, in.OrderingKey, in.After)
	if err != nil || !ok {
		return workflows.NextResult{}, err
	}
	return workflows.NextResult{Found: true, DeliveryID: d.ID, WorkflowID: d.WorkflowID,
		EndpointID: d.EndpointID, EventType: d.EventType, Seq: *d.Seq,
		Fresh: d.Status == policies.StatusPending && d.Attempts == 0}, nil
}
