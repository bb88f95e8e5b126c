package activities

import (
	"context"
	"sync"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// Later records the outcome of first-attempt successes in the background,
// after their workflow has been told, so that a delivery that succeeds at
// once lives in Temporal for its request only, as the floor's does
// (BENCHMARKS.md). Its attempts row was written before the request went
// out, as every attempt's is; only the outcome is written afterwards. A
// worker that stops before writing it leaves the row open: the sweeper
// settles it from the delivery workflow's result (starter.SettleOpen).
type Later struct {
	slots chan struct{}
	wg    sync.WaitGroup
}

// Defaults of a Later.
const (
	// LaterSlots bounds the outcomes being written at once; a success that
	// finds no free slot is recorded before its workflow is told, as any
	// other attempt.
	LaterSlots = 256
	// laterBudget bounds how long one outcome is tried before it is left
	// to the sweeper.
	laterBudget = 30 * time.Second
)

// NewLater returns a Later with LaterSlots slots.
func NewLater() *Later { return &Later{slots: make(chan struct{}, LaterSlots)} }

// Wait waits until the outcomes being written are written (or given up).
func (l *Later) Wait() { l.wg.Wait() }

// recordLater writes the outcome rec of the attempt in to t in the
// background, and reports whether it does: only a success that finishes its
// delivery (FinishDelivered), on an enabled endpoint, outside a probe, so
// that nothing the workflow or the endpoint's health needs waits on it, and
// only while a slot is free; otherwise it must be written now.
func (a *Activities) recordLater(ctx context.Context, t store.Target, in workflows.DeliverInput, rows []int64, rec store.Attempt, finish string) bool {
	if a.Later == nil || !rec.Success || finish == "" || in.Probe || t.EndpointState != policies.StateEnabled {
		return false
	}
	select {
	case a.Later.slots <- struct{}{}:
	default:
		return false
	}
	a.Later.wg.Add(1)
	go func() {
		defer func() {
			<-a.Later.slots
			a.Later.wg.Done()
		}()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), laterBudget)
		defer cancel()
		done, err := a.completeWithRetry(ctx, t.EndpointID, rows, rec, finish)
		if err != nil {
			a.Logger.WarnContext(ctx, "attempt_outcome_left_to_sweeper", "delivery_id", in.DeliveryID, "error", err)
			return
		}
		a.measure(t, in, rec)
		if done.Delivered != nil {
			a.finished(ctx, in.DeliveryID, policies.StatusDelivered, "", done.Delivered, "")
		}
	}()
	return true
}

// completeWithRetry is CompleteAttempts tried again, with growing pauses,
// until ctx ends: a database restarting does not leave the outcome to the
// sweeper.
func (a *Activities) completeWithRetry(ctx context.Context, endpointID string, rows []int64, rec store.Attempt, finish string) (store.Completed, error) {
	pause := 100 * time.Millisecond
	for {
		done, err := a.Store.CompleteAttempts(ctx, endpointID, rows, rec, finish)
		if err == nil {
			return done, nil
		}
		select {
		case <-ctx.Done():
			return done, err
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}
