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
// out, as every attempt's is; only the outcome is written afterwards, by one
// writer, in batches: the outcomes waiting when it is free go in one
// statement per endpoint (store.CompleteSuccesses), so that under load the
// endpoint's counters are updated once for many requests. A worker that
// stops before writing one leaves the row open: the sweeper settles it from
// the delivery workflow's result (starter.SettleOpen).
type Later struct {
	mu      sync.Mutex
	waiting []later
	writing bool
	wg      sync.WaitGroup
}

// later is one outcome waiting to be written.
type later struct {
	t   store.Target
	in  workflows.DeliverInput
	row int64
	rec store.Attempt
}

// Limits of a Later.
const (
	// LaterSlots bounds the outcomes waiting to be written; a success
	// that finds no free slot is recorded before its workflow is told, as
	// any other attempt.
	LaterSlots = 4096
	// laterBatch bounds the outcomes one statement writes.
	laterBatch = 256
	// laterGather is how long the writer lets outcomes gather before a
	// batch (none when laterBatch already wait): under load a statement
	// then records several, and a receiver sees no difference.
	laterGather = 25 * time.Millisecond
	// laterBudget bounds how long one batch is tried before its outcomes
	// are left to the sweeper.
	laterBudget = 30 * time.Second
)

// NewLater returns an empty Later.
func NewLater() *Later { return &Later{} }

// Wait waits until the outcomes waiting are written (or given up).
func (l *Later) Wait() { l.wg.Wait() }

// add queues o and reports whether it fit; start is true when no writer
// runs, and the caller must start one.
func (l *Later) add(o later) (ok, start bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiting) >= LaterSlots {
		return false, false
	}
	l.waiting = append(l.waiting, o)
	l.wg.Add(1)
	start, l.writing = !l.writing, true
	return true, start
}

// len is how many outcomes wait.
func (l *Later) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiting)
}

// next takes the next batch, or ends the writer when none waits.
func (l *Later) next() []later {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := min(len(l.waiting), laterBatch)
	if n == 0 {
		l.writing = false
		return nil
	}
	batch := l.waiting[:n:n]
	l.waiting = append([]later(nil), l.waiting[n:]...)
	return batch
}

// recordLater queues the outcome rec of the attempt in to t for the
// background writer, and reports whether it did: only a success that
// finishes its delivery (FinishDelivered), on one open row, to an enabled
// endpoint, outside a probe, so that nothing the workflow or the endpoint's
// health needs waits on it, and only while a slot is free; otherwise it must
// be written now.
func (a *Activities) recordLater(ctx context.Context, t store.Target, in workflows.DeliverInput, rows []int64, rec store.Attempt, finish string) bool {
	if a.Later == nil || !rec.Success || finish == "" || len(rows) != 1 || in.Probe || t.EndpointState != policies.StateEnabled {
		return false
	}
	ok, start := a.Later.add(later{t: t, in: in, row: rows[0], rec: rec})
	if start {
		go a.writeLater(context.WithoutCancel(ctx))
	}
	return ok
}

// writeLater writes the waiting outcomes, batch after batch, until none
// waits.
func (a *Activities) writeLater(ctx context.Context) {
	for {
		if a.Later.len() < laterBatch {
			time.Sleep(laterGather)
		}
		batch := a.Later.next()
		if batch == nil {
			return
		}
		byEndpoint := map[string][]later{}
		for _, o := range batch {
			byEndpoint[o.t.EndpointID] = append(byEndpoint[o.t.EndpointID], o)
		}
		for endpoint, os := range byEndpoint {
			a.writeOutcomes(ctx, endpoint, os)
		}
		a.Later.wg.Add(-len(batch))
	}
}

// writeOutcomes writes the outcomes os to one endpoint, trying again with
// growing pauses for up to laterBudget (a database restarting does not
// leave them to the sweeper), then counts them in the metrics.
func (a *Activities) writeOutcomes(ctx context.Context, endpoint string, os []later) {
	ctx, cancel := context.WithTimeout(ctx, laterBudget)
	defer cancel()
	ss := make([]store.Success, len(os))
	for i, o := range os {
		ss[i] = store.Success{Row: o.row, DeliveryID: o.in.DeliveryID, StartedAt: o.rec.StartedAt,
			DurationMs: o.rec.DurationMs, StatusCode: o.rec.StatusCode, ResponseBody: o.rec.ResponseBody,
			ResponseHeaders: o.rec.ResponseHeaders}
	}
	pause := 100 * time.Millisecond
	ds, err := a.Store.CompleteSuccesses(ctx, endpoint, ss)
	for err != nil && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(pause):
			ds, err = a.Store.CompleteSuccesses(ctx, endpoint, ss)
		}
		pause = min(2*pause, 5*time.Second)
	}
	if err != nil {
		a.Logger.WarnContext(ctx, "attempt_outcomes_left_to_sweeper", "endpoint_id", endpoint, "count", len(os), "error", err)
		return
	}
	for _, o := range os {
		a.measure(o.t, o.in, o.rec)
	}
	for i := range ds {
		a.finished(ctx, ds[i].ID, policies.StatusDelivered, "", &ds[i], "")
	}
}
