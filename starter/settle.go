package starter

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// Settling open attempts.
const (
	// SettleAge is how long an attempt stays open before the sweeper looks
	// at its workflow: as long as a worker tries to write an outcome
	// (activities.Later; both writes count it once).
	SettleAge = 30 * time.Second
	// settleLimit bounds the open attempts one sweep looks at.
	settleLimit = 100
)

// SettleOpen records the outcome of the attempts a worker stopped before
// recording (activities.Later), from their delivery workflows: an attempt
// open for longer than age whose workflow completed as delivered is
// recorded as the success the workflow's result states, and its delivery
// as delivered. An attempt whose workflow still runs is left to it: its
// next attempt closes the row as unknown.
func (s *Starter) SettleOpen(ctx context.Context, age time.Duration) error {
	open, err := s.Store.OpenAttempts(ctx, age, settleLimit)
	errs := []error{err}
	for _, a := range open {
		res, ok, err := s.deliveredResult(ctx, a.WorkflowID)
		if err != nil || !ok {
			errs = append(errs, err)
			continue
		}
		rec := store.Attempt{StartedAt: a.StartedAt, DurationMs: res.DurationMs, StatusCode: res.StatusCode, Success: true}
		_, err = s.Store.CompleteSuccesses(ctx, a.EndpointID, []store.Success{{Row: a.Row, Attempt: rec}})
		if err == nil {
			s.Logger.WarnContext(ctx, "sweeper_settled_attempt", "delivery_id", a.DeliveryID, "status_code", res.StatusCode)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// deliveredResult is the result of the workflow id when it completed as
// delivered; ok is false when it has not (yet).
func (s *Starter) deliveredResult(ctx context.Context, id string) (res workflows.DeliveryResult, ok bool, err error) {
	desc, err := s.Temporal.DescribeWorkflowExecution(ctx, id, "")
	var gone *serviceerror.NotFound
	if errors.As(err, &gone) {
		return res, false, nil // never started, or past its retention
	}
	if err != nil {
		return res, false, fmt.Errorf("starter: settle %s: %w", id, err)
	}
	if desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		return res, false, nil
	}
	if err := s.Temporal.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		return res, false, fmt.Errorf("starter: settle %s: %w", id, err)
	}
	return res, res.Status == policies.StatusDelivered, nil
}
