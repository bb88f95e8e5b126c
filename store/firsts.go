package store

import (
	"slices"
	"sync"
	"time"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
)

// Bounds of a FirstAttempts.
const (
	// firstAttemptsBytes bounds the event bodies FirstAttempts holds; a
	// publish that finds no room hands nothing over.
	firstAttemptsBytes = 64 << 20
	// firstAttemptTTL is how long a target handed over waits to be taken
	// before it is dropped.
	firstAttemptTTL = 10 * time.Minute
	// firstAttemptOverhead is what an entry costs beside its event's body.
	firstAttemptOverhead = 1024
)

// FirstAttempts hands the targets of first attempts from publishing to the
// worker of the same process that makes them. A publish (Publish) of a
// delivery whose first attempt may go at once keeps what that attempt needs
// (its Target, as PostgreSQL would give it) here; the attempt, made by the
// worker that eager start gives the workflow task, takes it (BeginTarget)
// and opens its attempts row, before its request as always, with a
// statement that neither reads the target nor rewrites the delivery's row.
//
// A target not taken in time (the workflow's first task went to another
// process, or waited longer than firstAttemptTTL) is dropped: the attempt,
// wherever it runs, begins as any other. One FirstAttempts is shared by the
// stores of a process's API and worker (Store.ShareFirstAttempts); the zero
// value is not usable (NewFirstAttempts).
type FirstAttempts struct {
	mu    sync.Mutex
	byID  map[string]firstAttempt
	order []string // delivery ids in the order they were put, for expiry
	bytes int      // reserved and held
	max   int
	ttl   time.Duration
	now   func() time.Time
}

// firstAttempt is one target handed over.
type firstAttempt struct {
	t     Target
	at    time.Time
	bytes int
}

// NewFirstAttempts is an empty FirstAttempts.
func NewFirstAttempts() *FirstAttempts {
	return &FirstAttempts{byID: map[string]firstAttempt{}, max: firstAttemptsBytes, ttl: firstAttemptTTL, now: time.Now}
}

// reserve makes room for n bytes, false when there is none.
func (f *FirstAttempts) reserve(n int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expire()
	if f.bytes+n > f.max {
		return false
	}
	f.bytes += n
	return true
}

// release gives back n reserved bytes that were not put.
func (f *FirstAttempts) release(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bytes -= n
}

// put holds t, whose n bytes were reserved.
func (f *FirstAttempts) put(t Target, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byID[t.DeliveryID] = firstAttempt{t: t, at: f.now(), bytes: n}
	f.order = append(f.order, t.DeliveryID)
}

// take removes and returns the target handed over for delivery id.
func (f *FirstAttempts) take(id string) (Target, bool) {
	if f == nil {
		return Target{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fa, ok := f.byID[id]
	if ok {
		delete(f.byID, id)
		f.bytes -= fa.bytes
	}
	f.expire()
	return fa.t, ok
}

// expire drops the entries put longer than ttl ago, and forgets the ids at
// the front of the order that were taken.
func (f *FirstAttempts) expire() {
	cutoff := f.now().Add(-f.ttl)
	for len(f.order) > 0 {
		fa, ok := f.byID[f.order[0]]
		if ok && fa.at.After(cutoff) {
			return
		}
		if ok {
			delete(f.byID, f.order[0])
			f.bytes -= fa.bytes
		}
		f.order = f.order[1:]
	}
}

// ShareFirstAttempts makes s hand the targets of the first attempts of the
// deliveries it publishes over through f, and take them there when it
// begins one: give the same f to the stores of a process's API and of the
// worker that eagerly starts its deliveries, and to no other.
func (s *Store) ShareFirstAttempts(f *FirstAttempts) { s.firsts = f }

// opensAtOnce reports whether the first attempt of a delivery to sub, whose
// endpoint is in state with limits l, goes out as soon as its workflow
// starts: a Delivery workflow (not queued, not ordered, not an Event Grid
// subscription awaiting its handshake or batching), to an endpoint that lets
// an attempt go (policies.MayAttempt) and has no limits to check.
func opensAtOnce(sub Subscription, queued bool, state string, l Limits) bool {
	if queued || sub.Ordered || l.Limited() || !policies.MayAttempt(state, false) {
		return false
	}
	eg := eventgrid.Of(sub.Options)
	return !eg.Awaiting() && !eg.Batching()
}

// mayBegin reports whether BeginTarget, asked for states and unlimitedOnly,
// would begin an attempt to t.
func mayBegin(t Target, states []string, unlimitedOnly bool) bool {
	return slices.Contains(states, t.EndpointState) && (!unlimitedOnly || !t.Limited())
}

// subscriptionTarget is the part of a Target that a delivery's
// subscription sub and its endpoint (in state, with limits l) give, with
// previous, sub's previous signing secret as it signs now
// (previousSecretSQL).
func subscriptionTarget(sub Subscription, state string, l Limits, previous string) Target {
	return Target{
		SubscriptionID: sub.ID, AccountID: sub.AccountID, SubscriptionName: sub.Name, Options: sub.Options,
		URL: sub.URL, EndpointID: sub.EndpointID, EndpointState: state, SigningSecret: sub.SigningSecret,
		PreviousSigningSecret: previous, Limits: l, Status: policies.StatusPending,
	}
}

// reservation is the room a publish reserved: each bytes for every one of
// n targets.
type reservation struct{ each, n int }

// keepFirsts keeps the targets of ds that f has room for (all of them, or
// none), to be handed over once published; it clears them for a nil f.
func keepFirsts(f *FirstAttempts, ev Event, ds []Delivery) reservation {
	r := reservation{each: len(ev.Data) + len(ev.Fields.Extensions) + firstAttemptOverhead}
	for _, d := range ds {
		if d.first != nil {
			r.n++
		}
	}
	if r.n > 0 && f != nil && f.reserve(r.each*r.n) {
		return r
	}
	for i := range ds {
		ds[i].first = nil
	}
	return reservation{}
}

// anyFirst reports whether any of ds is to be handed over.
func anyFirst(ds []Delivery) bool {
	return slices.ContainsFunc(ds, func(d Delivery) bool { return d.first != nil })
}

// handOver holds the targets of the deliveries a publish stored (res),
// once it succeeded (err nil), and gives back the room r held for the rest.
func (f *FirstAttempts) handOver(res PublishResult, r reservation, err error) {
	if r.n == 0 {
		return
	}
	ds, ev := res.Deliveries, res.Event
	if err != nil {
		ds = nil // nothing stored: every reservation goes back
	}
	for _, d := range ds {
		if d.first == nil || r.n == 0 {
			continue
		}
		t := *d.first
		t.DeliveryID, t.CreatedAt = d.ID, d.CreatedAt
		t.EventID, t.ExternalID, t.EventType, t.Subject, t.Data = ev.ID, ev.ExternalID, ev.Type, ev.Subject, ev.Data
		t.OccurredAt, t.DataVersion, t.Source = ev.OccurredAt, ev.Fields.DataVersion, ev.Fields.Source
		t.DataContentType, t.Extensions = ev.Fields.DataContentType, ev.Fields.Extensions
		f.put(t, r.each)
		r.n--
	}
	f.release(r.each * r.n)
}
