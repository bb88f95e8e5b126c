package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hookrelay/hookrelay/policies"
)

// ReasonCancelled is the final reason of a delivery whose workflow was
// cancelled (the Web UI's Cancel, `temporal workflow cancel`): it ends
// dead-lettered, redrivable (docs/operations.md#acting-from-the-temporal-web-ui).
const ReasonCancelled = "cancelled in Temporal: its workflow was cancelled (Web UI Cancel or `temporal workflow cancel`)"

// cancelled ends a delivery whose workflow was cancelled, from
// versionCancel on: its row is finished dead-lettered with ReasonCancelled
// (closing any open attempt row as unknown), in a context the cancellation
// does not reach, and the workflow closes as Canceled.
func (d *delivery) cancelled(ctx workflow.Context) (DeliveryResult, error) {
	workflow.GetLogger(ctx).Warn("delivery_cancelled", "delivery_id", d.in.DeliveryID)
	d.ctx, _ = workflow.NewDisconnectedContext(ctx)
	d.last.Finished = false
	res, err := d.finish(policies.StatusDeadLettered, ReasonCancelled)
	if err != nil {
		return res, err
	}
	return res, temporal.NewCanceledError(res)
}

// endedBefore is the result of a delivery whose attempt found it ended
// already (DeliverResult.Ended): a reset or replayed workflow, or one an
// operator's action ended, sends nothing more and records nothing.
func (r *retries) endedBefore(res DeliverResult) DeliveryResult {
	workflow.GetLogger(r.ctx).Warn("delivery_ended_before_attempt", "status", res.Ended)
	return DeliveryResult{Status: res.Ended, Attempts: r.pr.Attempts, Reason: "ended before this attempt"}
}
