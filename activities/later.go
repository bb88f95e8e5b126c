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
// out, as every attempt's is; only the outcome is written afterwards, by
// one writer that records the outcomes gathered for the same endpoint with
// one statement (store.CompleteSuccesses): those that arrive within
// laterLinger, or while a statement runs, are written together. A worker that stops
// before writing one leaves its row open: the sweeper settles it from the
// delivery workflow's result (starter.SettleOpen).
type Later struct {
	mu      sync.Mutex
	pending []laterOutcome
	held    int  // outcomes pending or being written
	writing bool // a writer runs
	wg      sync.WaitGroup
}

// laterOutcome is one success waiting to be written.
type laterOutcome struct {
	t   store.Target
	in  workflows.DeliverInput
	row int64
	rec store.Attempt
}

// Defaults of a Later.
const (
	// LaterSlots bounds the outcomes waiting or being written; a success
	// that finds no free slot is recorded before its workflow is told, as
	// any other attempt.
	LaterSlots = 1024
	// laterBatch bounds the outcomes one writer takes at once.
	laterBatch = 256
	// laterLinger is how long the writer lets outcomes gather before each
	// statement: a delivery's end shows that much later in the API, and
	// under load one statement writes many outcomes rather than one or two.
	laterLinger = 20 * time.Millisecond
	// laterBudget bounds how long one batch is tried before its outcomes
	// are left to the sweeper.
	laterBudget = 30 * time.Second
)

// NewLater returns an empty Later.
func NewLater() *Later { return &Later{} }

// Wait waits until the outcomes waiting are written (or given up).
func (l *Later) Wait() { l.wg.Wait() }

// recordLater writes the outcome rec of the attempt in to t in the
// background, and reports whether it does: only a success that finishes its
// delivery (FinishDelivered) on one row, on an enabled endpoint, outside a
// probe and not asked to be recorded now (RecordNow), so that nothing the workflow or the endpoint's health needs waits
// on it, and only while a slot is free; otherwise it must be written now.
func (a *Activities) recordLater(t store.Target, in workflows.DeliverInput, rows []int64, rec store.Attempt, finish string) bool {
	if a.Later == nil || in.RecordNow || !rec.Success || finish == "" || len(rows) != 1 || in.Probe || t.EndpointState != policies.StateEnabled {
		return false
	}
	l := a.Later
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held >= LaterSlots {
		return false
	}
	l.held++
	l.wg.Add(1)
	l.pending = append(l.pending, laterOutcome{t: t, in: in, row: rows[0], rec: rec})
	if !l.writing {
		l.writing = true
		go a.writeLater()
	}
	return true
}

// writeLater writes the waiting outcomes, a batch at a time after
// laterLinger, until none waits.
func (a *Activities) writeLater() {
	for {
		time.Sleep(laterLinger)
		batch := a.Later.take()
		if len(batch) == 0 {
			return
		}
		for _, same := range byEndpoint(batch) {
			a.completeLater(same)
		}
		a.Later.done(len(batch))
	}
}

// take removes up to laterBatch waiting outcomes; when none waits, the
// writer stops.
func (l *Later) take() []laterOutcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := min(len(l.pending), laterBatch)
	if n == 0 {
		l.writing = false
		return nil
	}
	batch := l.pending[:n:n]
	l.pending = l.pending[n:]
	return batch
}

// done frees the slots of n outcomes written or given up.
func (l *Later) done(n int) {
	l.mu.Lock()
	l.held -= n
	l.mu.Unlock()
	l.wg.Add(-n)
}

// byEndpoint groups outcomes by their endpoint, in the order they came.
func byEndpoint(batch []laterOutcome) [][]laterOutcome {
	var out [][]laterOutcome
	at := map[string]int{}
	for _, o := range batch {
		i, ok := at[o.t.EndpointID]
		if !ok {
			i = len(out)
			at[o.t.EndpointID] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], o)
	}
	return out
}

// completeLater writes the outcomes of one endpoint, tried again with
// growing pauses for laterBudget (a database restarting does not leave
// them to the sweeper), then measures them and logs their deliveries'
// end.
func (a *Activities) completeLater(os []laterOutcome) {
	ctx, cancel := context.WithTimeout(context.Background(), laterBudget)
	defer cancel()
	ss := make([]store.Success, len(os))
	for i, o := range os {
		ss[i] = store.Success{Row: o.row, Attempt: o.rec}
	}
	delivered, err := retried(ctx, func() ([]store.Delivery, error) {
		return a.Store.CompleteSuccesses(ctx, os[0].t.EndpointID, ss)
	})
	if err != nil {
		for _, o := range os {
			a.Logger.WarnContext(ctx, "attempt_outcome_left_to_sweeper", "delivery_id", o.in.DeliveryID, "error", err)
		}
		return
	}
	for _, o := range os {
		a.measure(o.t, o.in, o.rec)
	}
	for i := range delivered {
		a.finished(ctx, delivered[i].ID, policies.StatusDelivered, "", &delivered[i], "")
	}
}

// retried is f tried again, with growing pauses, until it succeeds or ctx
// ends.
func retried[T any](ctx context.Context, f func() (T, error)) (T, error) {
	pause := 100 * time.Millisecond
	for {
		v, err := f()
		if err == nil {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}
