package activities

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// How often, at most, one process signals one endpoint's workflow about a
// threshold crossing, sums one endpoint's window, and re-reads its rules.
// Counting stays exact in PostgreSQL; these only bound the extra work, so that
// hundreds of attempts a second to one endpoint make a signal every few
// seconds at most (Temporal takes about 20 events/s per workflow).
const (
	signalEvery = 5 * time.Second
	windowEvery = time.Second
	rulesEvery  = 30 * time.Second
)

// healthGate is the in-process rate limiter of the Deliver activity's health
// work, per endpoint. Its zero value is ready.
type healthGate struct {
	mu        sync.Mutex
	signalled map[string]time.Time
	summed    map[string]time.Time
	rules     map[string]cachedHealth
}

type cachedHealth struct {
	rules policies.Health
	at    time.Time
}

// The gate's maps are pruned of entries older than gateMaxAge once they hold
// more than gateMaxEntries, so they do not grow with every endpoint ever seen.
const (
	gateMaxEntries = 1024
	gateMaxAge     = time.Minute
)

// allow reports whether key's last pass in m was at least every ago, and
// records now as its last pass if so.
func (g *healthGate) allow(m *map[string]time.Time, key string, now time.Time, every time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if last, ok := (*m)[key]; ok && now.Sub(last) < every {
		return false
	}
	g.record(m, key, now)
	return true
}

// due reports whether key's last pass in m was at least every ago, without
// recording anything.
func (g *healthGate) due(m *map[string]time.Time, key string, now time.Time, every time.Duration) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	last, ok := (*m)[key]
	return !ok || now.Sub(last) >= every
}

// mark records now as key's last pass in m.
func (g *healthGate) mark(m *map[string]time.Time, key string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.record(m, key, now)
}

// record sets (*m)[key] = now, pruning m when it is large; g.mu is held.
func (g *healthGate) record(m *map[string]time.Time, key string, now time.Time) {
	if *m == nil {
		*m = map[string]time.Time{}
	}
	if len(*m) >= gateMaxEntries {
		for k, at := range *m {
			if now.Sub(at) > gateMaxAge {
				delete(*m, k)
			}
		}
	}
	(*m)[key] = now
}

// cacheHealth keeps an endpoint's rules read at c.at, pruning the cache
// when it is large.
func (g *healthGate) cacheHealth(endpointID string, c cachedHealth) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.rules == nil {
		g.rules = map[string]cachedHealth{}
	}
	if len(g.rules) >= gateMaxEntries {
		for k, o := range g.rules {
			if c.at.Sub(o.at) > gateMaxAge {
				delete(g.rules, k)
			}
		}
	}
	g.rules[endpointID] = c
}

// watchHealth tells the endpoint's workflow what this attempt means for the
// endpoint's health, when it means something: the result of a probe (or a
// success while disabled), a 410 Gone, or a threshold crossed while the
// endpoint is enabled. It never fails the attempt.
func (a *Activities) watchHealth(ctx context.Context, in workflows.DeliverInput, rec store.Attempt, c store.Counters) {
	signaler := a.signaler()
	if signaler == nil {
		return
	}
	name, arg := a.healthSignal(ctx, in, rec, c)
	if name == "" {
		return
	}
	// Only threshold crossings are rate-limited: a probe's result and a 410
	// are each signalled, and a slot is taken only by a signal that went.
	limited := name == workflows.SignalEvaluate
	if limited && !a.health.due(&a.health.signalled, c.EndpointID, time.Now(), signalEvery) {
		return
	}
	if err := signaler.Signal(ctx, c.EndpointID, name, arg, in.Health); err != nil {
		a.Logger.ErrorContext(ctx, "endpoint_signal_failed", "endpoint_id", c.EndpointID, "signal", name, "error", err)
		return
	}
	if limited {
		a.health.mark(&a.health.signalled, c.EndpointID, time.Now())
	}
	a.Logger.InfoContext(ctx, "endpoint_signalled", "endpoint_id", c.EndpointID, "signal", name,
		"delivery_id", in.DeliveryID, "consecutive_failures", c.ConsecutiveFailures)
}

// healthSignal picks the signal (and its payload) this attempt calls for, or "".
func (a *Activities) healthSignal(ctx context.Context, in workflows.DeliverInput, rec store.Attempt, c store.Counters) (string, any) {
	switch {
	case in.Probe || (rec.Success && c.State == policies.StateDisabled):
		return workflows.SignalProbeResult, workflows.ProbeResult{DeliveryID: in.DeliveryID, Success: rec.Success, StatusCode: rec.StatusCode, Health: in.Health}
	case c.State != policies.StateEnabled || rec.Success:
		return "", nil
	}
	h := a.endpointRules(ctx, c.EndpointID, in.Health)
	sig := workflows.HealthSignal{Health: in.Health, DeliveryID: in.DeliveryID, StatusCode: rec.StatusCode}
	if rec.StatusCode == http.StatusGone && h.DisableOnGone {
		return workflows.SignalGone, sig
	}
	if a.crossed(ctx, h, c) {
		return workflows.SignalEvaluate, sig
	}
	return "", nil
}

// crossed reports whether the endpoint's counters call for a change of its
// state: first on the counters the attempt returned, then, when they could,
// on the window's sums (read at most every windowEvery per endpoint).
func (a *Activities) crossed(ctx context.Context, h policies.Health, c store.Counters) bool {
	now := time.Now()
	// As the endpoint workflow decides: never succeeded counts from creation.
	s := policies.Snapshot{State: c.State, Consecutive: c.ConsecutiveFailures, Now: now, LastSuccessAt: c.CreatedAt}
	if c.LastSuccessAt != nil {
		s.LastSuccessAt = *c.LastSuccessAt
	}
	if st, _ := h.Decide(s); st != c.State {
		return true
	}
	if !h.RateRuleApplies(c.Attempts) ||
		!a.health.allow(&a.health.summed, c.EndpointID, now, windowEvery) {
		return false
	}
	res, err := a.endpoints().Snapshot(ctx, c.EndpointID)
	if err != nil {
		a.Logger.ErrorContext(ctx, "endpoint_window_failed", "endpoint_id", c.EndpointID, "error", err)
		return false
	}
	st, _ := res.Health.Decide(res.Snapshot)
	return st != res.Snapshot.State
}

// endpointRules are the endpoint's rules (health.Service.Rules), re-read at
// most every rulesEvery. When they cannot be read (logged) the last ones read
// stay in force, and fallback (the delivery's policy's) before any was read:
// a failed read never turns the breaker off.
func (a *Activities) endpointRules(ctx context.Context, endpointID string, fallback policies.Health) policies.Health {
	now := time.Now()
	a.health.mu.Lock()
	cached, ok := a.health.rules[endpointID]
	a.health.mu.Unlock()
	if !ok || now.Sub(cached.at) >= rulesEvery {
		h, err := a.endpoints().Rules(ctx, endpointID)
		if err != nil {
			a.Logger.ErrorContext(ctx, "endpoint_rules_read_failed", "endpoint_id", endpointID,
				"last_known", ok, "error", err)
			if ok {
				return cached.rules
			}
			return fallback
		}
		cached = cachedHealth{rules: h, at: now}
		a.health.cacheHealth(endpointID, cached)
	}
	return cached.rules
}

// EndpointSignaler sends a signal to an endpoint's workflow, starting it with
// thresholds h if needed: health.Service in production, a function field in
// fast unit tests (mock.EndpointSignaler).
type EndpointSignaler interface {
	Signal(ctx context.Context, endpointID, name string, arg any, h policies.Health) error
}

// signaler is a.Signaler, or the health service when Temporal is set.
func (a *Activities) signaler() EndpointSignaler {
	if a.Signaler != nil {
		return a.Signaler
	}
	if a.Temporal == nil {
		return nil
	}
	return a.endpoints()
}
