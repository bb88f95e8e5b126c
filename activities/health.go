package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/hookrelay/hookrelay/health"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// EndpointSnapshot reads the endpoint's state and counters, with the sums of
// its sliding window, and the rules in force for it (health.Service.Rules;
// in.Health, sent by workflows started before the rules belonged to the
// endpoint, is not used).
func (a *Activities) EndpointSnapshot(ctx context.Context, in workflows.SnapshotInput) (workflows.SnapshotResult, error) {
	return a.endpoints().Snapshot(ctx, in.EndpointID)
}

// endpoints is the endpoint health service over the activities' store and
// Temporal client.
func (a *Activities) endpoints() *health.Service {
	return &health.Service{Store: a.Store, Temporal: a.Temporal, Queues: a.Queues}
}

// RecordStateChange sets the endpoint's state and records why, in one
// transaction; re-enabling restarts its counters.
func (a *Activities) RecordStateChange(ctx context.Context, in workflows.StateChangeInput) (workflows.StateChangeResult, error) {
	sc, err := a.Store.ChangeEndpointState(ctx, store.ChangeState{
		EndpointID: in.EndpointID, From: in.From, To: in.To, Reason: in.Reason, At: in.At, Restart: in.Restart,
	})
	if err != nil {
		return workflows.StateChangeResult{}, permanentIfInvalid(err)
	}
	a.startRaised(ctx, sc.Raised)
	a.Logger.InfoContext(ctx, "endpoint_state_changed", "endpoint_id", in.EndpointID,
		"from", in.From, "to", in.To, "reason", in.Reason, "changed", sc.Changed)
	return workflows.StateChangeResult{Changed: sc.Changed}, nil
}

// PickProbe returns the workflow ids of the endpoint's oldest waiting
// deliveries, the candidates for the next probe.
func (a *Activities) PickProbe(ctx context.Context, in workflows.PickProbeInput) (workflows.PickProbeResult, error) {
	ws, err := a.Store.WaitingDeliveries(ctx, in.EndpointID, store.Waiting{}, max(in.Limit, 1))
	if err != nil {
		return workflows.PickProbeResult{}, err
	}
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.WorkflowID
	}
	return workflows.PickProbeResult{WorkflowIDs: ids}, nil
}

// ReleaseWaiting signals "release" to the workflow of every waiting delivery
// of the endpoint, page by page, heartbeating its progress.
func (a *Activities) ReleaseWaiting(ctx context.Context, in workflows.ReleaseInput) (workflows.ReleaseResult, error) {
	if a.Temporal == nil {
		return workflows.ReleaseResult{}, errors.New("activities: ReleaseWaiting needs a Temporal client")
	}
	var after store.Waiting
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &after)
	}
	n := 0
	for {
		ws, err := a.Store.WaitingDeliveries(ctx, in.EndpointID, after, 500)
		if err != nil || len(ws) == 0 {
			return workflows.ReleaseResult{Released: n}, err
		}
		for _, w := range ws {
			err := a.Temporal.SignalWorkflow(ctx, w.WorkflowID, "", workflows.SignalRelease, nil)
			var nf *serviceerror.NotFound
			if err != nil && !errors.As(err, &nf) {
				return workflows.ReleaseResult{Released: n}, fmt.Errorf("activities: release %s: %w", w.WorkflowID, err)
			}
			if err == nil {
				n++
			}
		}
		after = ws[len(ws)-1]
		activity.RecordHeartbeat(ctx, after)
	}
}

// permanentIfInvalid makes an error of data PostgreSQL will never accept
// non-retryable, so that the endpoint workflow goes on (without that change)
// instead of retrying it forever; any other error stays retryable.
func permanentIfInvalid(err error) error {
	if store.IsInvalidData(err) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidData, err)
	}
	return err
}

// ErrTypeInvalidData is the type of the non-retryable error of a bookkeeping
// activity whose data PostgreSQL refuses.
const ErrTypeInvalidData = "InvalidData"
