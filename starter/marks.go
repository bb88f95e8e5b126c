package starter

import (
	"context"
	"sync"
	"time"
)

// Defaults of the queue's marks.
const (
	// markAfter is how long after their start the queue's deliveries are
	// recorded as started: by then the first attempt of most has recorded
	// it (store.BeginTarget, or the success that delivered it), so the
	// statement writes few rows, and it no
	// longer takes a row an attempt is about to update, which then waited
	// for its commit (BENCHMARKS.md).
	markAfter = time.Second
	// markTimeout bounds one MarkStarted; what it fails to record, the
	// sweeper finds started when it tries again (docs/operations.md).
	markTimeout = 30 * time.Second
)

// marks gathers the ids of started deliveries and records them as started
// markAfter later, with one statement for all those then due, from one
// goroutine run while any wait.
type marks struct {
	mu      sync.Mutex
	pending []mark // in the order handed over, so in due order
	running bool
	wg      sync.WaitGroup
}

// mark is a delivery to record as started, and from when.
type mark struct {
	id  string
	due time.Time
}

// add hands ids over to be recorded markAfter from now.
func (m *marks) add(ctx context.Context, s *Starter, ids []string) {
	if len(ids) == 0 {
		return
	}
	due := time.Now().Add(markAfter)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		m.pending = append(m.pending, mark{id: id, due: due})
	}
	if m.running {
		return
	}
	m.running = true
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.run(context.WithoutCancel(ctx), s)
	}()
}

// run records what is due, as it falls due, until nothing waits.
func (m *marks) run(ctx context.Context, s *Starter) {
	for {
		m.mu.Lock()
		if len(m.pending) == 0 {
			m.running = false
			m.mu.Unlock()
			return
		}
		next := m.pending[0].due
		m.mu.Unlock()
		time.Sleep(time.Until(next))
		record(ctx, s, m.takeDue(time.Now()))
	}
}

// takeDue takes the ids due by now.
func (m *marks) takeDue(now time.Time) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for n < len(m.pending) && !m.pending[n].due.After(now) {
		n++
	}
	ids := make([]string, n)
	for i, p := range m.pending[:n] {
		ids[i] = p.id
	}
	m.pending = m.pending[n:]
	return ids
}

// record records ids as started; a failure is logged, and the sweeper
// records them when it finds their workflows.
func record(ctx context.Context, s *Starter, ids []string) {
	ctx, cancel := context.WithTimeout(ctx, markTimeout)
	defer cancel()
	if err := s.Store.MarkStarted(ctx, ids); err != nil {
		s.Logger.ErrorContext(ctx, "mark_started_failed", "count", len(ids), "error", err)
	}
}

// wait waits until everything handed over is recorded (or given up).
func (m *marks) wait() { m.wg.Wait() }
